"""What the scaling study measured: per chosen (point, task) its CEM episodes, geometry,
training diagnostics and training FLOPs (:class:`PointResult`), and the tables read from them:
every claim's effect at every point (:func:`claim_effects`), each arm's success beside the
task's ceiling (:func:`success_by_point`), the papers' premises (:func:`premise_table`) and
LeWM's own training budget (:func:`paper_budget`).

At the profiles of :data:`BUILDS_IN_PAGE` the page builds what is missing; at the others it
reads the cache only, so a book build never starts hours of training inside a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry import artifacts, stats
from jepa_geometry.analysis.measurements import Geometry, measure_arms
from jepa_geometry.envs import task_title
from jepa_geometry.extensions.scaling.build import gate
from jepa_geometry.extensions.scaling.choice import by_point, chosen, stated_units
from jepa_geometry.extensions.scaling.spec import (
    Point,
    ScalingSpec,
    cem_cells,
    main_protocol,
    point_flops,
    point_profile,
    step_flops,
)
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.profiles import Profile
from jepa_geometry.study.cells import (
    EPISODE_COLUMNS,
    ceiling_cells,
    ceiling_pairs,
    evaluate_arms,
    evaluate_ceiling_cells,
)
from jepa_geometry.study.diagnostics import training_diagnostics
from jepa_geometry.study.spec import BASELINE, load_study
from jepa_geometry.verdict import claims, preconditions, records, rule
from jepa_geometry.verdict.reference import reference_numbers
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.training import (
    last_logged,
    train_world_model,
)

PAPER_STEPS_TABLE = "lewm_training_steps"
"""The reference file's table of LeWM's training budget per task (optimizer steps)."""


@dataclass(frozen=True)
class PointResult:
    """What one (point, task) measured: its profile, arms, whether it planned, the CEM
    episodes, the geometry, the training diagnostics and its training compute."""

    point: Point
    task: str
    profile: Profile
    arms: tuple[str, ...]
    plans: bool
    gate_reason: str
    episodes: pd.DataFrame
    geometry: Geometry
    diagnostics: pd.DataFrame
    step_flops: int

    @property
    def train_flops(self) -> float:
        return float(self.profile.train.steps) * self.step_flops

    @property
    def columns(self) -> dict[str, Any]:
        """The columns that name this result in a long table: task, point, image, steps and
        training FLOPs."""
        return {
            "task": self.task,
            "point": self.point.name,
            "image": self.point.image,
            "steps": self.profile.train.steps,
            "flops": self.train_flops,
        }


BUILDS_IN_PAGE: tuple[str, ...] = ("smoke",)
"""Profiles at which :func:`scaling_results` builds what is missing (serially, in the page);
at the others it reads the cache that ``jepa-geometry scaling`` built and reports the rest
as missing, so a book build never starts hours of training inside a page."""


@dataclass(frozen=True)
class ScalingResults:
    """The chosen (point, task) results the cache holds, and the missing ones with why."""

    results: list[PointResult]
    missing: dict[str, str]


def point_result(
    spec: ScalingSpec, task: str, point: Point, arms: Sequence[str], base: Profile
) -> PointResult:
    """One (point, task) through cached calls: train, gate, plan (CEM, five tiers), measure,
    and count a training step's FLOPs (:func:`~.spec.point_flops`)."""
    p = point_profile(spec, task, point, base)
    for a in arms:
        for s in p.seeds.train:
            train_world_model(task, a, s, p, progress=False)
    g = gate(spec, task, point, base)
    episodes = (
        evaluate_arms(task, arms, p, cem_cells(task), temperature=float("nan"), progress=False)[0]
        if g["plans"]
        else pd.DataFrame(columns=list(EPISODE_COLUMNS))
    )
    geo = measure_arms(task, list(arms), p, progress=False)
    diag = training_diagnostics(task, list(arms), p)
    flops = point_flops(spec, task, point, base)
    return PointResult(
        point, task, p, tuple(arms), g["plans"], g["reason"], episodes, geo, diag, flops
    )


def scaling_results(spec: ScalingSpec, base: Profile) -> ScalingResults:
    """Every chosen (point, task) of the rule as stated (:func:`~.choice.stated_units`):
    built where missing at the profiles of :data:`BUILDS_IN_PAGE`, else read from the cache (a
    (point, task) not built is in ``missing`` with the artifact it lacks; none built at all is
    a one-line :class:`~jepa_geometry.artifacts.NotCached`)."""
    out, missing = [], {}
    build = base.name in BUILDS_IN_PAGE
    for (pt, t), arms in by_point(chosen(stated_units(spec, base, state=build))).items():
        if build:
            out.append(point_result(spec, t, pt, arms, base))
            continue
        try:
            with artifacts.cache_only():
                out.append(point_result(spec, t, pt, arms, base))
        except artifacts.NotCached as e:
            missing[f"{pt.name}, {task_title(t)}"] = str(e)
    if not out:
        raise artifacts.NotCached(
            f"no point of the scaling study is cached at profile {base.name!r}; build it with "
            f"`jepa-geometry scaling --profile {base.name}`"
        )
    return ScalingResults(out, missing)


def paper_budget(task: str, paper: Profile) -> dict[str, float | str]:
    """LeWM's training budget on ``task``: its optimizer steps (the reference file's
    :data:`PAPER_STEPS_TABLE`, else the ``paper`` profile's ``train.steps``) and FLOPs (those
    steps times a step of the ``paper`` profile's model)."""
    ref = reference_numbers(allow_empty=True, table=PAPER_STEPS_TABLE, task=task)
    steps = float(ref["value"].iloc[0]) if not ref.empty else float(paper.train.steps)
    source = "reference file" if not ref.empty else "paper profile"
    flops = steps * step_flops(task, paper)
    return {"task": task, "steps": steps, "flops": flops, "source": source}


def budget_table(spec: ScalingSpec, base: Profile, paper: Profile) -> pd.DataFrame:
    """:func:`paper_budget` of every task of the study at ``base``, one row each."""
    return pd.DataFrame([paper_budget(t, paper) for t in spec.tasks_at(base)])


def claim_effects(results: Sequence[PointResult]) -> pd.DataFrame:
    """Every claim of both papers (:data:`~jepa_geometry.verdict.records.PAPER_CLAIMS`) that a
    point measures, one row per (claim, task, point): ``task``, ``point``, ``steps`` (the
    run's optimizer steps), ``flops`` (its training FLOPs), ``paper``, ``claim``, ``column``,
    ``direction``, ``threshold``, ``min_effect``, ``effect``, ``low``, ``high`` (95 %), ``se``
    and ``df`` (its standard error and degrees of freedom, which the trend reads) and
    ``paper_effect`` (comparable papers' values only, else NaN)."""
    rows = []
    for r in results:
        m = claims.Measurements(
            r.task, r.episodes, r.geometry, main_protocol(r.task), SCALE_PROTOCOL
        )
        for spec in records.PAPER_CLAIMS:
            item = claims.evaluate(spec, m)
            if item is None:
                continue
            c, e = item
            rows.append(
                {
                    **r.columns,
                    "paper": c.paper,
                    "claim": c.statement,
                    "column": spec.column,
                    "direction": c.direction,
                    "threshold": c.threshold,
                    "min_effect": c.min_effect,
                    "effect": e.effect,
                    "low": e.low,
                    "high": e.high,
                    "se": e.standard_error() if np.isfinite(e.low) else np.nan,
                    "df": e.df if e.replicates is None else np.inf,
                    "paper_effect": np.nan if c.paper_effect is None else c.paper_effect,
                }
            )
    return pd.DataFrame(rows)


def task_ceilings(spec: ScalingSpec, base: Profile) -> dict[str, pd.DataFrame]:
    """Each task's ceiling (the simulator as the model, ``study.cells.evaluate_ceiling_cells``)
    as its task study planned it, read from the cache: it does not train, so one ceiling serves
    every training budget of the task. A task whose ceiling is not built has none here."""
    out = {}
    for task in spec.tasks_at(base):
        study = load_study(task)
        p = study.profile(base)
        if study.ceiling is None:
            continue
        try:
            with artifacts.cache_only():  # the ceiling's cells only, not the study's grid
                out[task] = evaluate_ceiling_cells(
                    task,
                    p,
                    ceiling_cells(study),
                    temperature=None,
                    subset=ceiling_pairs(study, p),
                    progress=False,
                )
        except artifacts.NotCached:
            continue
    return out


def _cem_tier_means(episodes: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """Per (arm, seed, pair): CEM success under ``protocol`` averaged over the tiers planned
    (:func:`~jepa_geometry.verdict.rule.tier_mean_success`, which checks every arm planned
    them all)."""
    cem = episodes[(episodes["protocol"] == protocol) & (episodes["solver"] == "cem")]
    return rule.tier_mean_success(episodes, protocol, "cem", sorted(set(cem["budget"])))


def success_by_point(
    results: Sequence[PointResult], ceilings: dict[str, pd.DataFrame]
) -> pd.DataFrame:
    """Per (task, point) each arm's CEM success averaged over the five tiers of the task's main
    protocol (seeds and pairs pooled, 95 % bootstrap interval over both), and per task the
    ceiling's on its own pairs (a seeded subset; the same at every point).

    Columns: task, point, image, steps, flops, arm, rate, low, high, seeds, pairs."""
    rows = []

    def row(task: str, point: str, r: PointResult | None, arm: str, m: np.ndarray) -> dict:
        return {
            "task": task,
            "point": point,
            "image": r.point.image if r else np.nan,
            "steps": r.profile.train.steps if r else np.nan,
            "flops": r.train_flops if r else np.nan,
            "arm": arm,
            **stats.matrix_rate(m),
        }

    for r in results:
        if not r.plans:
            continue
        tm = _cem_tier_means(r.episodes, main_protocol(r.task))
        for arm in [a for a in r.arms if a in set(tm["arm"])]:
            m = stats.success_matrix(tm[tm["arm"] == arm])
            rows.append(row(r.task, r.point.name, r, arm, m))
    for task, top in ceilings.items():
        t = top[top["arm"] == CEILING] if len(top) else top
        if not t.empty:
            m = stats.success_matrix(_cem_tier_means(t, main_protocol(task)))
            rows.append(row(task, "any", None, CEILING, m))
    cols = ["task", "point", "image", "steps", "flops", "arm", "rate", "low", "high"]
    return pd.DataFrame(rows, columns=[*cols, "seeds", "pairs"])


def premise_table(results: Sequence[PointResult]) -> pd.DataFrame:
    """The papers' premises at every point, one row per (task, point, measure, arm) with the
    mean over seeds and its range: LeWM's top-8 variance share and an isotropic Gaussian's on
    as many frames (:func:`~jepa_geometry.verdict.preconditions.probe_isotropic_top8`, AnisoWM's
    premise as the verdict's precondition reads it), cond Λ and κ, and corr(v, relative
    prediction error) for the ΛReg arm, SCALE's top-2 PCs R², both Kendall-τ channels and the
    landscape Spearman ρ per arm."""
    rows = []

    def add(r: PointResult, measure: str, arm: str, values: Sequence[float], ref: float) -> None:
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        if v.size:
            rows.append(
                {
                    **r.columns,
                    "measure": measure,
                    "arm": arm,
                    "value": float(v.mean()),
                    "low": float(v.min()),
                    "high": float(v.max()),
                    "reference": ref,
                }
            )

    for r in results:
        g = r.geometry
        spec = g.spectra[g.spectra["arm"] == BASELINE]
        if not spec.empty:
            top8 = spec[spec["pc"] <= 8].groupby("train_seed")["share"].sum()
            add(
                r,
                "LeWM top-8 variance share",
                BASELINE,
                top8,
                preconditions.probe_isotropic_top8(r.profile),
            )
        conds: dict[str, list[float]] = {}
        for (arm, _), sp in g.lambda_spectra.items():  # one spectrum per (arm, seed)
            conds.setdefault(arm, []).append(sp["cond"])
        for arm, values in conds.items():
            add(r, "cond Λ", arm, values, arm_weights(arm, r.task).kappa)
        d = r.diagnostics
        if not d.empty:
            corr = last_logged(d[d["diagnostic"] == "corr_v_rel_err"])
            for arm, grp in corr.groupby("arm"):
                add(
                    r,
                    "corr(v, relative prediction error)",
                    arm,
                    grp.groupby("train_seed")["value"].mean(),
                    0.0,
                )
        p = g.probes
        if "scale" in set(p["arm"]):
            add(r, "SCALE top-2 PCs R²", "scale", p[p["arm"] == "scale"]["r2_top2"], np.nan)
        for col, name in (
            ("tau_geom", "Kendall τ, geometry"),
            ("tau_pred", "Kendall τ, predictor"),
        ):
            rk = g.ranking[g.ranking["source"] == "gaussian"]
            for arm, grp in rk.groupby("arm"):
                add(r, name, arm, grp.groupby("train_seed")[col].mean(), np.nan)
        for arm, grp in g.landscape.groupby("arm"):
            add(
                r, "landscape Spearman ρ", arm, grp.groupby("train_seed")["spearman"].mean(), np.nan
            )
    return pd.DataFrame(rows)


__all__ = [
    "BUILDS_IN_PAGE",
    "PAPER_STEPS_TABLE",
    "PointResult",
    "ScalingResults",
    "budget_table",
    "claim_effects",
    "paper_budget",
    "point_result",
    "premise_table",
    "scaling_results",
    "success_by_point",
    "task_ceilings",
]
