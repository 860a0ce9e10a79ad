"""Plot helpers that compute something: checked against direct evaluation."""

import numpy as np
import pytest

from jepa_geometry.book.plots import figure_path, quadratic_form_grid


def test_quadratic_form_grid_is_the_quadratic_form():
    m = np.array([[2.0, 0.5], [0.5, 1.0]])
    x, y, c = quadratic_form_grid(m, (1.0, -2.0), 3.0, n=7)
    assert x.shape == y.shape == c.shape == (7, 7)
    i, j = 2, 5
    p = np.array([x[i, j] - 1.0, y[i, j] + 2.0])
    assert c[i, j] == pytest.approx(p @ m @ p)
    assert c[3, 3] == pytest.approx(0.0)  # the centre


def test_figure_ids_are_checked():
    with pytest.raises(ValueError, match="bad figure id 'Bad Id'"):
        figure_path("Bad Id", "smoke")
