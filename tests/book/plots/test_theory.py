"""Chapters 1-3's figures: what they draw, against direct evaluation."""

import numpy as np
import pandas as pd

from jepa_geometry.book.plots.theory import plot_cumulative_leverage


def test_cumulative_leverage_ends_at_the_whole_cost():
    lev = pd.DataFrame({"pc": [1, 2, 3], "leverage_share": [0.5, 0.3, 0.2]})
    y = plot_cumulative_leverage(lev, "t").axes[0].lines[0].get_ydata()
    np.testing.assert_allclose(y, [0.5, 0.8, 1.0])
