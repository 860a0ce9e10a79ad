"""Chapters 2 and 3: the 2-D toy's results as a page shows them."""

from __future__ import annotations

import numpy as np
import pandas as pd


def headline_table(
    results: pd.DataFrame,
    summary: pd.DataFrame,
    reference: float,
    columns: tuple[str, ...] = ("heldout_error", "normalized_regret", "metric_regret"),
) -> pd.DataFrame:
    """The chapter's headline table: per (regularizer, noise) each column as
    ``"mean [lo, hi]"`` (the mean over seeds and its 95 % bootstrap interval from
    :func:`~jepa_geometry.theory.toy2d.toy_summary`), the median normalized regret over seeds, and
    the Σ⁻¹ reference.

    Why the median beside the mean: one seed whose encoder folds the plane can move the mean
    a lot; the median shows whether the typical seed follows the reference.
    """
    keys = ["regularizer", "noise"]
    show = summary[[*keys, "seeds"]].copy()
    for c in columns:
        show[c] = [
            f"{m:.4f} [{lo:.4f}, {hi:.4f}]"
            for m, lo, hi in zip(summary[c], summary[f"{c}_lo"], summary[f"{c}_hi"], strict=True)
        ]
    median = results.groupby(keys).normalized_regret.median()
    show["median regret"] = np.array(
        [median[k] for k in zip(summary.regularizer, summary.noise, strict=True)]
    ).round(4)
    show["reference"] = round(reference, 4)
    return show


def long_table(results: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """``results`` melted to one row per (regularizer, noise, seed, measure), the ``measure``
    and ``value`` columns that a faceted seaborn plot takes."""
    return results.melt(
        id_vars=["regularizer", "noise", "seed"],
        value_vars=measures,
        var_name="measure",
        value_name="value",
    )


def lambda_budget_sentence(table: pd.DataFrame, kappa: float, reference: float) -> str:
    """:func:`~jepa_geometry.theory.toy2d.lambda_budget_table` in one sentence: each arm's cond Λ
    (against κ) and normalized regret (against the Σ⁻¹ reference), with their intervals."""
    parts = [
        f"{r['arm']}: cond Λ {r['target_cond']:.2f} [{r['target_cond_lo']:.2f}, "
        f"{r['target_cond_hi']:.2f}], regret {r['normalized_regret']:.3f} "
        f"[{r['normalized_regret_lo']:.3f}, {r['normalized_regret_hi']:.3f}]"
        for _, r in table.iterrows()
    ]
    return f"against κ = {kappa:g} and the Σ⁻¹ reference regret {reference:.3f}: " + "; ".join(
        parts
    )
