"""The figures' shared style and saving: a figure id is checked before any path is made."""

import pytest

from jepa_geometry.book.plots.shared import figure_path


def test_a_figure_id_that_is_not_snake_case_is_refused():
    with pytest.raises(ValueError, match="bad figure id 'Bad Id'"):
        figure_path("Bad Id", "smoke")
