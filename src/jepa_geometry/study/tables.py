"""The tables the chapters show: our measurements reshaped, and the papers' numbers beside them.

Chapters call these instead of reshaping data frames themselves, so every table of the book
is a named, tested function.
"""

from __future__ import annotations

import pandas as pd

from jepa_geometry.stats import bootstrap_interval
from jepa_geometry.study.reference import reference_numbers

RANKING_COLUMNS: dict[str, tuple[str, ...]] = {
    "gaussian": ("tau_pred", "tau_geom", "tau_total", "rollout_error"),  # SCALE's channels
    "dataset": ("agree_enc", "agree_pred"),  # AnisoWM's cost-ordering agreement
}


def ranking_table(ranking_rows: pd.DataFrame, arms: list[str]) -> pd.DataFrame:
    """Per arm: each ranking metric's mean over (seed, start) with its 95 % interval
    (two-stage bootstrap over training seeds and starts; starts with a NaN dropped), as text.

    SCALE's τ channels and rollout error come from the Gaussian candidates, AnisoWM's agreement
    from the recorded ones (:data:`RANKING_COLUMNS`).
    """
    out: dict[str, dict[str, str]] = {}
    for source, cols in RANKING_COLUMNS.items():
        r = ranking_rows[ranking_rows["source"] == source]
        for m in arms:
            for c in cols:
                x = r[r["arm"] == m].pivot(index="train_seed", columns="start", values=c)
                x = x.dropna(axis=1).to_numpy()
                lo, hi = bootstrap_interval(x if len(x) > 1 else x[0])
                out.setdefault(c, {})[m] = f"{x.mean():.3f} [{lo:.3f}, {hi:.3f}]"
    return pd.DataFrame(out).loc[arms]


# SCALE's geometry tables (reference file) -> our probe columns, with the factor to our units.
PAPER_PROBE_TABLES: dict[str, tuple[str, float]] = {
    "scale_pca_variance_share": ("var_top{k}", 0.01),
    "scale_topk_pc_probe_r2": ("r2_top{k}", 1.0),
    "scale_full_decodability": ("r2_full_{probe}", 1.0),
    "scale_distance_ratio_dispersion": ("ratio_p90_over_p10", 1.0),
}


def paper_probe_table(task: str) -> pd.DataFrame:
    """SCALE's reported geometry of ``task`` in the columns of :attr:`Geometry.probes`:
    one row per arm of the paper (lewm, scale, aux, dinowm), never our results."""
    values: dict[tuple[str, str], float] = {}
    for table, (column, factor) in PAPER_PROBE_TABLES.items():
        for _, r in reference_numbers(table=table, task=task).iterrows():
            values[(r["arm"], column.format(**r.dropna().to_dict()))] = factor * r["value"]
    return pd.Series(values).unstack()


def lambda_table(lambda_spectra: dict) -> pd.DataFrame:
    """One row per ΛReg model: coordinates above the mean target variance (AnisoWM's count),
    the embedding width D and the learned condition number ``cond Λ`` (bounded by κ)."""
    rows = [
        {"arm": m, "train_seed": s, "above_mean": sp["above_mean"],
         "D": len(sp["final_sorted"]), "cond": sp["cond"]}
        for (m, s), sp in sorted(lambda_spectra.items())
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["arm", "train_seed", "above_mean", "D", "cond"])
