"""Chapters 4-5's figures: what they draw, against the rows they are given."""

import pandas as pd

from jepa_geometry.book.plots.models import plot_training_diagnostics
from tests.book.plots import png


def test_training_diagnostics_figure_draws_one_line_per_model_and_the_references():
    rows = [
        {"arm": a, "train_seed": s, "step": t, "diagnostic": d, "value": 0.1 * t + s}
        for a in ("lewm", "anisowm")
        for s in (0, 1)
        for t in (1, 2, 3)
        for d in (
            ("top8_share",)
            if a == "lewm"
            else ("top8_share", "cond_lambda", "corr_v_var_z", "corr_v_rel_err")
        )
    ]
    fig = plot_training_diagnostics(pd.DataFrame(rows), kappa=2.0, isotropic_top8=0.24)
    cond, _, _, top8 = fig.axes[:4]
    assert len(cond.lines) == 2 + 1  # two anisowm seeds + the κ line
    assert len(top8.lines) == 4 + 1  # every model + the isotropic share
    assert cond.lines[-1].get_ydata()[0] == 2.0 and top8.lines[-1].get_ydata()[0] == 0.24
    assert png(fig)  # renders
