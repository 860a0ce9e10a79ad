"""Plot helpers that compute something: checked against direct evaluation."""

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.book.plots import figure_path


def test_figure_ids_are_checked():
    with pytest.raises(ValueError, match="bad figure id 'Bad Id'"):
        figure_path("Bad Id", "smoke")


def _png(fig) -> bytes:
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def _ranking_rows() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [
        {
            "arm": a,
            "train_seed": s,
            "source": src,
            "start": k,
            "tau_pred": rng.uniform(),
            "tau_geom": rng.uniform(),
            "tau_total": rng.uniform(),
            "agree_enc": rng.uniform(),
            "agree_pred": rng.uniform(),
        }
        for a in ("lewm", "scale")
        for s in (0, 1)
        for src in ("gaussian", "dataset")
        for k in range(6)
    ]
    return pd.DataFrame(rows)


def test_ranking_figure_is_the_same_on_every_run():
    """Its bootstrap intervals are seeded: two renders are byte-identical (issue: 22,051
    pixels differed between two identical runs when seaborn drew its own seed)."""
    from jepa_geometry.book.plots import plot_ranking

    rows = _ranking_rows()
    assert _png(plot_ranking(rows, ["lewm", "scale"], seed=3)) == _png(
        plot_ranking(rows, ["lewm", "scale"], seed=3)
    )


def test_ranking_figure_shows_each_source_s_own_metrics():
    from jepa_geometry.book.plots import RANK_METRICS, plot_ranking

    fig = plot_ranking(_ranking_rows(), ["lewm", "scale"], seed=0)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == [m for cols in RANK_METRICS.values() for m in cols]


def test_cumulative_leverage_ends_at_the_whole_cost():
    from jepa_geometry.book.plots import plot_cumulative_leverage

    lev = pd.DataFrame({"pc": [1, 2, 3], "leverage_share": [0.5, 0.3, 0.2]})
    y = plot_cumulative_leverage(lev, "t").axes[0].lines[0].get_ydata()
    np.testing.assert_allclose(y, [0.5, 0.8, 1.0])


def test_training_diagnostics_figure_draws_one_line_per_model_and_the_references():
    from jepa_geometry.book.plots import plot_training_diagnostics

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
    assert _png(fig)  # renders


def _scaling_effects() -> pd.DataFrame:
    rows = []
    for task, paper in (("tworoom", 0.1), ("pusht", np.nan)):
        for image, flops in ((1.0, 1e12), (1.0, 3e12), (1.0, 1e13), (1.5, 2e12)):
            e = 0.05 * np.log10(flops / 1e12)
            rows.append({"task": task, "claim": "c", "image": image, "flops": flops,
                         "effect": e, "low": e - 0.02, "high": e + 0.02, "direction": 1,
                         "threshold": 0.0, "min_effect": 0.03, "paper_effect": paper})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_scaling_figure_draws_each_point_the_references_and_the_papers_budget():
    from jepa_geometry.book.plots import plot_scaling_effects

    budgets = pd.DataFrame({"task": ["tworoom", "pusht"], "flops": [3e17, 7e17]})
    fig = plot_scaling_effects(_scaling_effects(), ["c"], budgets)
    ax = fig.axes[0]
    # per task, one line through its step points and one marker at its resolution point
    xs = sorted(tuple(c.lines[0].get_xdata()) for c in ax.containers)
    assert xs == [(1e12, 3e12, 1e13)] * 2 + [(2e12,)] * 2
    horizontal = {round(float(line.get_ydata()[0]), 6) for line in ax.lines
                  if len(set(line.get_ydata())) == 1 and len(line.get_xdata()) == 2}  # fmt: skip
    assert {0.1, 0.03, 0.0} <= horizontal  # the paper's effect, the minimum effect, zero
    vertical = {float(line.get_xdata()[0]) for line in ax.lines
                if len(set(line.get_xdata())) == 1 and len(line.get_xdata()) == 2}  # fmt: skip
    assert vertical == {3e17, 7e17}
    assert _png(fig)
