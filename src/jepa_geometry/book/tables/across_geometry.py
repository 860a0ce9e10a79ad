"""Chapter 8's geometry across the five tasks: every geometry measure per task and arm
(SCALE's probes and rank channels, AnisoWM's ordering agreement, landscape ρ and learned Λ)
beside the papers' values, AnisoWM's learned spectra per task, and SCALE's "PCs needed" table,
each read from the task studies :func:`~jepa_geometry.study.load.load_studies` found in the
cache (nothing here measures). The papers' numbers come from the reference-data file only
(:mod:`jepa_geometry.verdict.reference`), in their own columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from jepa_geometry.analysis.measurements import Geometry
from jepa_geometry.book.style import shown
from jepa_geometry.book.tables.geometry import lambda_table
from jepa_geometry.book.tables.shared import arm_order, paper_value
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.profiles import Profile
from jepa_geometry.study.load import Studies
from jepa_geometry.verdict.reference import reference_numbers

# --------------------------------------------------------------------------------------------
# Geometry across tasks
# --------------------------------------------------------------------------------------------

# Our measure -> (reference table, filters, factor to our units): the papers' geometry numbers.
PAPER_GEOMETRY: dict[str, tuple[str, dict[str, str], float]] = {
    "var_top2": ("scale_pca_variance_share", {"k": "2"}, 0.01),
    "r2_top2": ("scale_topk_pc_probe_r2", {"k": "2"}, 1.0),
    "r2_full_ridge": ("scale_full_decodability", {"probe": "ridge"}, 1.0),
    "r2_full_mlp": ("scale_full_decodability", {"probe": "mlp"}, 1.0),
    "ratio_p90_over_p10": ("scale_distance_ratio_dispersion", {}, 1.0),
    "tau_pred": ("scale_rollout_ranking", {"channel": "predictor"}, 1.0),
    "tau_geom": ("scale_rollout_ranking", {"channel": "geometry"}, 1.0),
    "tau_total": ("scale_rollout_ranking", {"channel": "total"}, 1.0),
    "rollout_error": ("scale_rollout_error", {}, 1.0),
    "agree_enc": ("aniso_cost_ordering", {"cost": "J_enc"}, 1.0),
    "agree_pred": ("aniso_cost_ordering", {"cost": "J_pred"}, 1.0),
    "spearman": ("anisowm_landscape_spearman", {}, 1.0),
}
GEOMETRY_MEASURES: tuple[str, ...] = tuple(PAPER_GEOMETRY)


def model_geometry(geo: Geometry) -> pd.DataFrame:
    """One row per (arm, training seed) model with every geometry measure: the probes, the
    rank channels (mean over starts: SCALE's Gaussian candidates for τ and rollout error,
    AnisoWM's recorded ones for the ordering agreement), the mean landscape ρ over goals, and
    the learned ``cond Λ`` (ΛReg arms; NaN otherwise)."""
    keys = ["arm", "train_seed"]
    probes = geo.probes[
        keys + ["var_top2", "r2_top2", "r2_full_ridge", "r2_full_mlp", "ratio_p90_over_p10"]
    ]
    gauss = (
        geo.ranking[geo.ranking.source == "gaussian"]
        .groupby(keys)[["tau_pred", "tau_geom", "tau_total", "rollout_error"]]
        .mean()
    )
    data = (
        geo.ranking[geo.ranking.source == "dataset"]
        .groupby(keys)[["agree_enc", "agree_pred"]]
        .mean()
    )
    land = geo.landscape.groupby(keys)[["spearman"]].mean()
    out = probes.set_index(keys).join([gauss, data, land], how="left")
    cond = {k: sp["cond"] for k, sp in geo.lambda_spectra.items()}
    out["cond_lambda"] = [cond.get(k, np.nan) for k in out.index]
    return out.reset_index()


def geometry_table(studies: Studies) -> pd.DataFrame:
    """Per task x arm, every geometry measure's mean over training seeds (long: task, arm,
    measure, ours, seeds) with the papers' value where they report it (``paper``, our units;
    ``source`` names the paper)."""
    rows = []
    for task, st in studies.studies.items():
        per_model = model_geometry(st.geometry)
        means = per_model.groupby("arm").mean(numeric_only=True)
        n = per_model.groupby("arm").size()
        for arm in arm_order(list(means.index)):
            for measure in (*GEOMETRY_MEASURES, "cond_lambda"):
                value = float(means.loc[arm, measure])
                if np.isnan(value):
                    continue
                paper, source = _paper_geometry(task, arm, measure)
                rows.append(
                    {
                        "task": task,
                        "arm": arm,
                        "measure": measure,
                        "ours": value,
                        "seeds": int(n[arm]),
                        "paper": paper,
                        "source": source,
                    }
                )
    return pd.DataFrame(
        rows, columns=["task", "arm", "measure", "ours", "seeds", "paper", "source"]
    )


def _paper_geometry(task: str, arm: str, measure: str) -> tuple[float, str]:
    if measure not in PAPER_GEOMETRY:
        return float("nan"), ""
    table, filters, factor = PAPER_GEOMETRY[measure]
    ref = reference_numbers(allow_empty=True, table=table, task=task, arm=arm, **filters)
    if ref.empty:
        return float("nan"), ""
    return float(factor * ref["value"].mean()), str(ref["paper"].iloc[0])


def geometry_display(geometry: pd.DataFrame) -> pd.DataFrame:
    """:func:`geometry_table` wide: rows task / arm, columns measures, each ``ours (paper)``;
    arms and measures by their display names."""

    def text(r: pd.Series) -> str:
        return f"{r.ours:.3g}" + ("" if np.isnan(r.paper) else f" ({r.paper:.3g})")

    t = geometry.assign(cell=geometry.apply(text, axis=1), task=geometry.task.map(task_title))
    wide = t.pivot(index=["task", "arm"], columns="measure", values="cell")
    cols = [m for m in (*GEOMETRY_MEASURES, "cond_lambda") if m in wide.columns]
    order = [(task_title(task), arm) for task in TASKS for arm in arm_order(list(t.arm))]
    out = wide.reindex([i for i in order if i in wide.index])[cols].fillna("").reset_index()
    return shown(out, cells=["arm"])


def lambda_by_task(studies: Studies, paper: Profile) -> pd.DataFrame:
    """AnisoWM's learned target spectra per task (it reports that they differ by task): per
    ΛReg arm, the mean over seeds of ``cond Λ`` and of the share of the D coordinates whose
    target variance is above the mean (1, since tr Λ = D), beside AnisoWM's share where it
    gives a count (its D is the ``paper`` profile's embedding width); arms by their display
    names."""
    rows = []
    for task, st in studies.studies.items():
        lam = lambda_table(st.geometry.lambda_spectra)
        count = paper_value("aniso_lambda_above_mean", task, "anisowm")
        for arm, g in lam.groupby("arm", sort=False):
            rows.append(
                {
                    "task": task_title(task),
                    "arm": arm,
                    "seeds": len(g),
                    "cond Λ": g["cond"].mean(),
                    "D": int(g["D"].iloc[0]),
                    "share above mean": float((g["above_mean"] / g["D"]).mean()),
                    "share above mean, AnisoWM": count / paper.model.embed_dim
                    if arm == "anisowm"
                    else np.nan,
                }
            )
    return shown(pd.DataFrame(rows), cells=["arm"])


def lambda_spectra_by_task(studies: Studies, arm: str = "anisowm") -> pd.DataFrame:
    """The final learned target variances of ``arm``, sorted, mean over seeds, per task (long:
    task, rank / D, variance)."""
    rows = []
    for task, st in studies.studies.items():
        finals = [
            np.asarray(sp["final_sorted"], float)
            for (m, _), sp in sorted(st.geometry.lambda_spectra.items())
            if m == arm
        ]
        if not finals:
            continue
        v = np.mean(finals, axis=0)
        rows += [
            {"task": task_title(task), "rank": (i + 0.5) / len(v), "variance": float(x)}
            for i, x in enumerate(v)
        ]
    return pd.DataFrame(rows, columns=["task", "rank", "variance"])


VARIANCE_LEVELS: tuple[int, ...] = (10, 50, 90)
"""The variance shares (percent) of SCALE's "PCs needed" table."""


def pcs_for_variance(
    spectra: pd.DataFrame, levels: Sequence[int] = VARIANCE_LEVELS
) -> pd.DataFrame:
    """Per (arm, training seed): the smallest number k of leading principal components whose
    cumulative variance share reaches each of ``levels`` percent (long: arm, train_seed,
    variance_pct, k, D), from the per-PC shares of ``spectra`` (sorted by PC)."""
    rows = []
    for (arm, seed), g in spectra.sort_values("pc").groupby(["arm", "train_seed"], sort=False):
        cum = np.cumsum(g["share"].to_numpy(float))
        cum = cum / cum[-1]
        for v in levels:
            k = int(np.searchsorted(cum, v / 100 - 1e-12) + 1)
            rows.append({"arm": arm, "train_seed": seed, "variance_pct": v, "k": k, "D": len(cum)})
    return pd.DataFrame(rows, columns=["arm", "train_seed", "variance_pct", "k", "D"])


def pcs_for_variance_table(
    studies: Studies, arms: Sequence[str] = ("lewm", "scale", "aux")
) -> pd.DataFrame:
    """SCALE's "PCs needed for 10 / 50 / 90 % of the variance", regenerated: per task, arm and
    level, our k (mean over training seeds) and the embedding width D, beside SCALE's k (its D
    is 192, ours the profile's: compare k / D, not k)."""
    rows = []
    for task, st in studies.studies.items():
        k = pcs_for_variance(st.geometry.spectra)
        k = k[k["arm"].isin(arms)]
        for (arm, v), g in k.groupby(["arm", "variance_pct"], sort=False):
            paper = paper_value("scale_pcs_for_variance", task, arm, variance_pct=str(v))
            rows.append(
                {
                    "task": task_title(task),
                    "arm": arm,
                    "variance (%)": v,
                    "k": float(g["k"].mean()),
                    "D": int(g["D"].iloc[0]),
                    "k / D": float((g["k"] / g["D"]).mean()),
                    "k, SCALE": paper,
                    "k / D, SCALE": paper / 192,
                }
            )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    rank = {
        "task": {task_title(t): i for i, t in enumerate(TASKS)},
        "arm": {a: i for i, a in enumerate(arms)},
    }
    return out.sort_values(
        ["task", "variance (%)", "arm"], key=lambda s: s.map(rank[s.name]) if s.name in rank else s
    ).reset_index(drop=True)
