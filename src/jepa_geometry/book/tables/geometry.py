"""Chapter 7's tables and sentences: probes of q, the rank channels, the cost landscapes,
ΛReg's spectra and diagnostics, the claims' dashboard, and the papers' geometry beside ours.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.book.style import shown
from jepa_geometry.book.tables.shared import arm_order, mark_papers, verdict_style
from jepa_geometry.book.toc import section_link
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.stats import bootstrap_interval
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.verdict.reference import reference_numbers, source_with_caveats
from jepa_geometry.verdict.rule import judged, seed_level_evidence, tested_by_task, verdict_table
from jepa_geometry.wm.objective import DIAGNOSTICS
from jepa_geometry.wm.training import last_logged

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
    one row per arm of the paper (lewm, scale, aux, dinowm), never our results; arms and
    columns by their display names."""
    values: dict[tuple[str, str], float] = {}
    for table, (column, factor) in PAPER_PROBE_TABLES.items():
        for _, r in reference_numbers(table=table, task=task, allow_empty=True).iterrows():
            values[(r["arm"], column.format(**r.dropna().to_dict()))] = factor * r["value"]
    if not values:  # SCALE reports no geometry for this task
        return shown(pd.DataFrame(columns=list(PROBE_COLUMNS), index=pd.Index([], name="arm")))
    table = pd.Series(values).unstack().reindex(columns=list(PROBE_COLUMNS))
    order = [a for a in ("lewm", "scale", "aux", "dinowm") if a in table.index]
    return shown(table.loc[order + sorted(set(table.index) - set(order))])


def lambda_table(lambda_spectra: dict) -> pd.DataFrame:
    """One row per ΛReg model: coordinates above the mean target variance (AnisoWM's count),
    the embedding width D and the learned condition number ``cond Λ`` (bounded by κ)."""
    rows = [
        {
            "arm": m,
            "train_seed": s,
            "above_mean": sp["above_mean"],
            "D": len(sp["final_sorted"]),
            "cond": sp["cond"],
        }
        for (m, s), sp in sorted(lambda_spectra.items())
    ]
    return pd.DataFrame(rows, columns=["arm", "train_seed", "above_mean", "D", "cond"])


def final_diagnostics(diagnostics: pd.DataFrame, last: int = 3) -> pd.DataFrame:
    """Per arm and diagnostic: the mean over seeds of each model's mean over its ``last``
    logged steps, ``± sd`` across seeds, as text (rows in the book's arm order, columns in
    :data:`~jepa_geometry.wm.objective.DIAGNOSTICS` order; empty where an arm has none), arms
    and diagnostics by their display names."""
    per_model = (
        last_logged(diagnostics, last)
        .groupby(["arm", "diagnostic", "train_seed"])["value"]
        .mean()
        .reset_index()
    )
    agg = per_model.groupby(["arm", "diagnostic"])["value"].agg(["mean", "std"])
    text = {
        (m, d): f"{r['mean']:.3f}" + ("" if np.isnan(r["std"]) else f" ± {r['std']:.3f}")
        for (m, d), r in agg.iterrows()
    }
    arms = arm_order(list(per_model["arm"].unique()))
    cols = [d for d in DIAGNOSTICS if d in set(per_model["diagnostic"])]
    return shown(
        pd.DataFrame([[text.get((m, d), "") for d in cols] for m in arms], index=arms, columns=cols)
    )


PROBE_COLUMNS: tuple[str, ...] = (
    "var_top2",
    "var_top4",
    "var_top8",
    "r2_top2",
    "r2_top4",
    "r2_top8",
    "r2_full_ridge",
    "r2_full_mlp",
    "ratio_p90_over_p10",
)


def probe_summary(probes: pd.DataFrame, columns: Sequence[str] = PROBE_COLUMNS) -> pd.DataFrame:
    """Per arm, each probe measure's mean over training seeds, ``± sd`` across seeds where
    there are several, as text (rows in the book's arm order; arms and measures by their
    display names)."""
    agg = probes.groupby("arm")[list(columns)].agg(["mean", "std"])
    text = {
        c: [
            f"{m:.3f}" + ("" if np.isnan(s) else f" ± {s:.3f}")
            for m, s in zip(agg[(c, "mean")], agg[(c, "std")], strict=True)
        ]
        for c in columns
    }
    return shown(pd.DataFrame(text, index=agg.index).loc[arm_order(list(agg.index))])


_TAU_CHANNEL = {"predictor": "tau_pred", "geometry": "tau_geom", "total": "tau_total"}


_ORDERING_COST = {"J_enc": "agree_enc", "J_pred": "agree_pred"}


def paper_ranking_table(task: str) -> pd.DataFrame:
    """The papers' rank measures of ``task`` in our columns: SCALE's τ channels and rollout
    error, AnisoWM's ordering agreement; rows (paper, arm); arms and measures by their display
    names. Never our results."""
    tau = reference_numbers(table="scale_rollout_ranking", task=task, allow_empty=True)
    err = reference_numbers(table="scale_rollout_error", task=task, allow_empty=True)
    order = reference_numbers(table="aniso_cost_ordering", task=task, allow_empty=True)
    papers = pd.concat(
        [
            tau.assign(metric=tau.channel.map(_TAU_CHANNEL)),
            err.assign(metric="rollout_error"),
            order.assign(metric=order["cost"].map(_ORDERING_COST)),
        ]
    )
    return shown(papers.pivot_table(index=["paper", "arm"], columns="metric", values="value"))


def landscape_summary(landscape_rows: pd.DataFrame, arms: Sequence[str]) -> pd.DataFrame:
    """Per arm, mean / min / max over training seeds of each model's mean landscape IoU and
    Spearman ρ (each model's mean is over its random goals)."""
    per_model = landscape_rows.groupby(["arm", "train_seed"])[["iou", "spearman"]].mean()
    return per_model.groupby("arm").agg(["mean", "min", "max"]).loc[list(arms)]


def dashboard(
    items: Sequence[tuple[str, Any, Any]], failed: Mapping[str, Collection[str]] | None = None
) -> pd.DataFrame:
    """Every claim of both papers on the tasks of ``items``: the paper's value and where it is
    published, ours with its 95 % interval, the verdict, and the chapter section that measures
    it; Holm's correction within each family (each paper's primary claims, its secondary ones,
    our extensions: :func:`~jepa_geometry.verdict.rule.family_holm`).

    ``items`` are ``(task, claim, evidence)``, the claims of
    :func:`~jepa_geometry.verdict.records.paper_claims` tagged with their task; ``failed`` maps a
    task to the preconditions that fail on it, and a claim that requires one of them (its
    subject absent) is not tested there. The paper's source is read from the reference file
    (the table the claim cites), never typed here.
    """
    mask = tested_by_task(items, failed)
    table = verdict_table([(claim, ev) for _, claim, ev in items], mask)
    sources = []
    for task, claim, _ in items:
        on = {"task": task} if task in TASKS else {}  # a claim about all tasks: the whole table
        ref = (
            reference_numbers(table=claim.reference, allow_empty=True, **on)
            if claim.reference
            else pd.DataFrame()
        )
        if len(ref):
            sources.append(f"{ref['paper'].iloc[0]}: {source_with_caveats(ref)}")
        elif claim.reference:
            sources.append(f"{claim.paper}: no number for this task")
        else:
            sources.append("no number published (figure only)" if claim.paper_note else "")
    table.insert(0, "task", [task_title(t) if t in TASKS else t for t, _, _ in items])
    table["paper's source"] = sources
    table["computed in"] = [section_link(claim.computed_in, task) for task, claim, _ in items]
    cols = [
        "task",
        "paper",
        "claim",
        "measure",
        "paper's effect",
        "paper's source",
        "our effect [95% CI]",
        "min effect",
        "resolution",
        "p (Holm)",
        "units",
        "requires",
        "informed by",
        "family",
        "verdict",
        "reason",
        "seeds to decide",
        "computed in",
    ]
    return table[cols]


def probe_means(probes: pd.DataFrame) -> pd.DataFrame:
    """Per arm, the mean over training seeds of every probe measure."""
    return probes.groupby("arm").mean(numeric_only=True)


def probe_difference_word(
    probes: pd.DataFrame, a: str, b: str, column: str, words: tuple[str, str, str]
) -> str:
    """How arm ``a``'s probe measure ``column`` compares with arm ``b``'s, in a word that never
    says more than the verdict's interval: ``words`` is ``(above, below, neither)``.

    The interval is the one the verdict reads for a per-model probe claim
    (:func:`~jepa_geometry.verdict.rule.seed_level_evidence`: the paired difference
    ``m(a) - m(b)`` per training seed, its Student t 95 % interval). ``above`` only when that
    interval lies above 0, ``below`` only when it lies below 0, ``neither`` otherwise, and also
    when the interval measures nothing (one seed, or no width:
    :func:`~jepa_geometry.verdict.rule.judged`): comparing the means alone would call any
    difference "more", however small next to the spread between seeds.
    """
    ev = seed_level_evidence(probes, a, b, column)
    above, below, neither = words
    if judged(ev) and ev.low > 0:
        return above
    if judged(ev) and ev.high < 0:
        return below
    return neither


def dinowm_geometry_sentence(probes: pd.DataFrame, ranking: pd.DataFrame) -> str:
    """Where the stand-in DINO-WM stands on the two halves of planning: do its frozen
    features carry q in their leading components (ridge R² of q from the top-2 PCs), and does
    its predictor rank candidates by their imagined outcomes (Kendall τ of the predictor
    channel, rollout error), each beside ``lewm``'s. Empty when the study has no ``dinowm``."""
    if "dinowm" not in set(probes["arm"]):
        return ""
    mean = probe_means(probes)
    rk = ranking[ranking["source"] == "gaussian"].groupby("arm")[["tau_pred", "rollout_error"]]
    r = rk.mean()
    text = (
        f"The stand-in DINO-WM's frozen features carry q in their top-2 components with ridge "
        f"R² {mean.loc['dinowm', 'r2_top2']:.2f} (lewm: {mean.loc[BASELINE, 'r2_top2']:.2f}); "
        f"its predictor channel ranks candidates with Kendall τ "
        f"{r.loc['dinowm', 'tau_pred']:.2f} (lewm: {r.loc[BASELINE, 'tau_pred']:.2f}) and "
        f"a rollout error of {r.loc['dinowm', 'rollout_error']:.2f} "
        f"(lewm: {r.loc[BASELINE, 'rollout_error']:.2f})."
    )
    features = mean.loc["dinowm", "r2_top2"] > mean.loc[BASELINE, "r2_top2"]
    dw, base = r.loc["dinowm"], r.loc[BASELINE]
    predictor = dw.tau_pred < base.tau_pred and dw.rollout_error > base.rollout_error
    if features and predictor:
        text += (
            " Features that carry the state with a predictor that ranks worse and rolls "
            "out further off point at the predictor, not the features: it does not follow "
            "how actions move the frozen tokens."
        )
    return text


def coordinate_table(coords: pd.DataFrame, by: str = "arm") -> pd.DataFrame:
    """Per-coordinate probes of q (:func:`~jepa_geometry.analysis.measurements.
    coordinate_probes`, or :func:`~jepa_geometry.study.decisions.gate.ladder_probes` with
    ``by="lever"``) as rows x coordinates (mean R² over training seeds); arms in the book's
    order, rungs in the ladder's, coordinates in q's order."""
    wide = coords.pivot_table(index=by, columns="coordinate", values="r2", aggfunc="mean")
    rows = arm_order(list(wide.index)) if by == "arm" else list(dict.fromkeys(coords[by]))
    return wide.loc[rows, list(dict.fromkeys(coords["coordinate"]))]


def coordinate_sentence(coords: pd.DataFrame) -> str:
    """The baseline's least and best decoded coordinates of q, and the arm that decodes the
    least decoded one best."""
    wide = coordinate_table(coords)
    base = wide.loc[BASELINE]
    worst, best = base.idxmin(), base.idxmax()
    top = wide[worst].idxmax()
    return (
        f"{BASELINE} decodes {best} best (R² {base[best]:.2f}) and {worst} worst "
        f"({base[worst]:.2f}); of all arms, {top} decodes {worst} best "
        f"({wide.loc[top, worst]:.2f})."
    )


def variant_planning_sentence(table: pd.DataFrame) -> str:
    """:func:`~jepa_geometry.study.decisions.lambdareg.variant_planning`'s rows in one sentence:
    each paired difference with its 95 % interval in percentage points and its McNemar p-value."""
    if table.empty:
        return (
            "the study does not plan on this task (its gate failed at every rung of its "
            "ladder), so no variant is compared by planning."
        )
    return "; ".join(
        f"{r['comparison']}: {100 * r['diff']:+.1f} pp [{100 * r['low']:+.1f}, "
        f"{100 * r['high']:+.1f}] (McNemar p = {r['p_mcnemar']:.3f})"
        for _, r in table.iterrows()
    )


KEY_COLUMNS: tuple[str, ...] = ("task", "claim", "verdict")
"""The columns a reader looks for first in a verdict table, shown first."""


def verdict_display(table: pd.DataFrame) -> Any:
    """A verdict table (:func:`~jepa_geometry.verdict.rule.verdict_table` or
    :func:`dashboard`) as a page shows it: task, claim and verdict first (a wide table scrolls,
    and the verdict must not be the column scrolled out of sight), verdicts coloured, the
    papers' columns marked, p-values to three digits."""
    first = [c for c in KEY_COLUMNS if c in table.columns]
    shown = table[first + [c for c in table.columns if c not in first]]
    styled = verdict_style(shown).format({"p (Holm)": "{:.3g}"}, na_rep="")
    return mark_papers(styled)
