"""The claims the book tests, as data: the two papers' (:data:`PAPER_CLAIMS`) and our cross-lens
questions (:data:`LENS_CLAIMS`), each a :class:`ClaimSpec` evaluated by one function per kind of
evidence.

A record says which paper makes the claim, its statement, the two arms, the direction, the
measure and where our evidence for it is computed, and where the paper's number sits in the
reference file (:class:`PaperNumber`). :func:`evaluate` turns a record into a
:class:`~jepa_geometry.study.verdict.Claim` with its
:class:`~jepa_geometry.study.verdict.Evidence` for one task, or into nothing when the task's
study did not run the arms or cells the claim needs; the verdict itself is the rule of
:mod:`jepa_geometry.study.verdict`.

Kinds of evidence:

* :data:`SUCCESS`: planning success, paired over (training seed, pair), averaged over the
  budget tiers of the cell (SCALE's per-solver mean) or at the tiers the record names;
* :data:`PER_MODEL`: one number per trained model (probes, spectra), paired by training seed;
* :data:`PER_UNIT`: one number per (model, start or goal) (rank channels, cost landscapes),
  paired over seeds and units;
* :data:`INTERACTION` (ours): whether ``scale+anisowm`` adds SCALE's and ΛReg's effects, an
  interaction contrast on success or on a per-unit measure.

Two more kinds of record: :data:`ACROSS_CLAIMS` (:class:`AcrossSpec`), SCALE's claims about
the tasks together (its count of cells, Aux's shortfall across tasks, the gain at each budget
for each solver), judged on evidence combined over the tasks (:func:`evaluate_across`); and
:data:`EVERY_CLAIMS` (:class:`EverySpec`), AnisoWM's claims about all four of its environments,
a per-task claim that must hold on each (:func:`evaluate_every`). AnisoWM's κ claims are
judged on its κ sweep of trained models, by the rules of :mod:`jepa_geometry.study.kappa`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.envs import task_title
from jepa_geometry.study.grid import MPPI_SWM, PAPER_SOLVER, SOLVER_NAMES
from jepa_geometry.study.reference import paper_tasks, reference_numbers
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.study.verdict import (
    MIN_EFFECTS,
    Claim,
    Evidence,
    claim_requires,
    every_evidence,
    paired_unit_evidence,
    pooled_evidence,
    seed_level_evidence,
    tier_mean_success,
)

SUCCESS, PER_MODEL, PER_UNIT, INTERACTION = "success", "per_model", "per_unit", "interaction"
KINDS: tuple[str, ...] = (SUCCESS, PER_MODEL, PER_UNIT, INTERACTION)
MAIN, CODE, MAIN_IF_NOT_CODE, CODE_IF_MAIN = "main", "code", "main_if_not_code", "code_if_main"
"""Protocols of a success claim: the study's main one, SCALE's code protocol, the main one only
where it differs from the code protocol, or the code protocol only where it is the main one.
The last two split one claim between its two records so that it has one test per task, under
the main protocol the study spec fixed before any result: a claim tested under two protocols
would have two chances to read "reproduced"."""
PROTOCOLS: tuple[str, ...] = (MAIN, CODE, MAIN_IF_NOT_CODE, CODE_IF_MAIN)
SOURCES: tuple[str, ...] = ("probes", "ranking:gaussian", "ranking:dataset", "landscape", "timing")
"""Where a per-model or per-unit measure is read: the probes, the rank channels of random
(``gaussian``) or recorded (``dataset``) candidates, the cost landscapes, the planning grid's
wall time per (model, cell)."""
PLAN_TIME_TOLERANCE = 0.1
""""No planning-time overhead" holds when an arm plans within 10 % of LeWM's wall time (on the
log scale, ``log 1.1``): the two arms share encoder and predictor, so any larger gap is
overhead, not the noise of a shared machine."""
COMBINED = "scale+anisowm"
INTERACTION_ARM = "both + base"  # the left side of an interaction contrast (interaction_table)
LENS = "ours (cross-lens)"

# Where each kind of evidence is measured in the book (chapter, section).
PLANNING = "chapter 6 ({title} planning), section 'Planning every cell'"
ACROSS_GRID = "chapter 8, section 'SCALE's main grid'"
PROBES = "chapter 7 ({title} geometry), section 'Where the variance sits, and what it carries'"
RANKING = "chapter 7 ({title} geometry), section 'Do imagined costs rank plans like reality?'"
LANDSCAPE = "chapter 7 ({title} geometry), section 'The shape of the cost around a goal'"


@dataclass(frozen=True)
class PaperNumber:
    """Where a claim's number sits in the reference file, and whether it is comparable.

    ``value(a) - value(b)`` of ``table`` (the mean over the rows matching the task and
    ``filters``), times ``scale`` (0.01 turns the papers' percent into our fractions); ``a`` and
    ``b`` default to the claim's arms (the reference file spells SCALE's half-q arm
    ``scale_half_q``); ``value(b)`` is read from ``table_b`` with ``filters_b`` where a claim
    compares two measures of one arm. A ``comparable`` number is set beside ours as the paper's
    effect; otherwise ``note`` shows it (``{pp}``: the difference in points, ``{value}``: in claim
    units; ``{<arm>}``: an arm's own value when ``per_arm``), and ``missing`` is the note where
    the file has no such rows. ``cite``: the claim names the table as its source.
    """

    table: str
    filters: tuple[tuple[str, str], ...] = ()
    scale: float = 1.0
    a: str = ""
    b: str = ""
    comparable: bool = True
    note: str = ""
    missing: str = ""
    per_arm: bool = False
    cite: bool = True
    table_b: str = ""
    filters_b: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class ClaimSpec:
    """One claim as data: who states it, what it says, and how our evidence is measured.

    ``direction`` +1 claims ``m(a) > m(b)``, -1 ``m(a) < m(b)``; 0 takes the sign of the
    paper's own difference on the task (a claim the paper makes per task; left out where the
    paper reports none or no difference), and ``{better}`` in the statement reads "better" or
    "worse" accordingly. ``threshold`` shifts the claim to ``direction (m(a) - m(b)) >
    threshold``. ``column`` is the measure (a key of
    :data:`~jepa_geometry.study.verdict.MIN_EFFECTS`, which fixes the smallest effect that
    matters); success claims name their ``protocol``, ``solver`` and ``budgets`` (empty: every
    tier the cell planned); the others their ``source`` (:data:`SOURCES`) and, per unit, their
    ``unit``. ``where`` names the chapter section holding the evidence; ``needs`` lists arms
    the study must have measured besides ``a`` and ``b`` (an interaction needs all four).
    ``column_a`` (per-model claims) is the measure of ``a`` where it differs from ``column``: an
    absolute claim about one arm (``a == b``) compares two of its measures, paired by seed.
    ``tasks`` are the tasks the paper states the claim on, where that is fewer than the tasks
    it evaluated (SCALE gives τ's geometry channel for Two-Room only): on the others the claim
    is our extension. ``min_effect`` replaces the measure's smallest effect that matters for a
    claim of non-inferiority, whose margin (its ``threshold``) is already what matters: adding
    the measure's would ask for a gain where the paper claims parity.

    A claim whose direction is the paper's (``direction`` 0) is stated on a task only where the
    paper's own difference there is at least the smallest effect that matters: a smaller one
    (AnisoWM's -0.005 of J_enc ordering on Push-T) is no claim either way. A claim of a paper
    on a task the paper never evaluated (:func:`~jepa_geometry.study.reference.paper_tasks`)
    is our extension of it, judged outside the paper's family.
    """

    paper: str
    statement: str
    kind: str
    a: str
    b: str
    column: str = "success"
    measure: str = ""
    direction: int = 1
    threshold: float = 0.0
    protocol: str = MAIN
    solver: str = "cem"
    budgets: tuple[str, ...] = ()
    source: str = ""
    unit: str = ""
    number: PaperNumber | None = None
    where: str = ""
    needs: tuple[str, ...] = ()
    column_a: str = ""
    tasks: tuple[str, ...] = ()
    min_effect: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.direction not in (1, -1, 0):
            raise ValueError(f"direction must be +1, -1 or 0, got {self.direction!r}")
        if self.column not in MIN_EFFECTS:
            raise ValueError(f"column must be one of {', '.join(MIN_EFFECTS)}, got {self.column!r}")
        if self.kind in (PER_MODEL, PER_UNIT) and self.source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {self.source!r}")
        if self.kind == SUCCESS and self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}: {self.protocol!r}")
        if self.column_a and self.kind != PER_MODEL:
            raise ValueError(f"column_a is for per_model claims, not {self.kind!r}")
        if self.a == self.b and not self.column_a:
            raise ValueError(f"a claim of {self.a!r} against itself needs column_a")
        if self.min_effect is not None and not (self.min_effect >= 0 and self.threshold < 0):
            raise ValueError(
                f"min_effect {self.min_effect!r} replaces the measure's only for a claim of "
                f"non-inferiority (threshold < 0, min_effect >= 0); threshold {self.threshold!r}"
            )


def _cem(protocol: str = MAIN) -> dict[str, Any]:
    return {"kind": SUCCESS, "protocol": protocol, "where": PLANNING}


def _per_solver(solver: str = "cem") -> tuple[tuple[str, str], ...]:
    return (("solver", solver),)


def _top2_share(statement: str, b: str) -> ClaimSpec:
    """SCALE's variance-redistribution claim against arm ``b`` (its PCA table)."""
    return ClaimSpec(
        "SCALE",
        statement,
        PER_MODEL,
        "scale",
        b,
        "var_top2",
        "variance share of the top-2 PCs",
        source="probes",
        number=PaperNumber("scale_pca_variance_share", (("k", "2"),), 0.01),
        where=PROBES,
    )


def _no_overhead(paper: str, arm: str, statement: str) -> ClaimSpec:
    """``paper``'s claim that ``arm`` plans in LeWM's wall time: a training-time change leaves
    the planner's encoder and predictor as they were, so ``log t(arm) - log t(lewm) <
    log(1 + PLAN_TIME_TOLERANCE)`` over the cells both planned."""
    return ClaimSpec(
        paper,
        f"{statement} (within {100 * PLAN_TIME_TOLERANCE:g} % of LeWM's wall time)",
        PER_UNIT,
        arm,
        BASELINE,
        "log_plan_seconds",
        "log wall time of planning a cell (same seed, protocol, solver and tier)",
        direction=-1,
        threshold=-float(np.log1p(PLAN_TIME_TOLERANCE)),
        source="timing",
        unit="cell",
        where=PLANNING,
    )


PAPER_CLAIMS: tuple[ClaimSpec, ...] = (
    # SCALE, Section 5: success of SCALE against LeWM per solver (mean over T1-T5)
    ClaimSpec(
        "SCALE",
        "SCALE plans better than LeWM (CEM)",
        a="scale",
        b="lewm",
        **_cem(MAIN_IF_NOT_CODE),
        number=PaperNumber(
            "scale_success_per_solver",
            _per_solver(),
            0.01,
            comparable=False,
            note="SCALE: {pp:+.1f} pp in the code protocol",
        ),
    ),
    ClaimSpec(
        "SCALE",
        "SCALE plans better than LeWM (CEM)",
        a="scale",
        b="lewm",
        **_cem(CODE_IF_MAIN),
        number=PaperNumber("scale_success_per_solver", _per_solver(), 0.01),
    ),
    ClaimSpec(
        "SCALE",
        "SCALE plans better than LeWM (iCEM)",
        a="scale",
        b="lewm",
        **_cem(),
        solver="icem",
        number=PaperNumber(
            "scale_success_per_tier",
            _per_solver("icem"),
            0.01,
            comparable=False,
            note="SCALE: {pp:+.1f} pp, code protocol, mean over T1-T5",
        ),
    ),
    ClaimSpec(
        "SCALE",
        "SCALE plans better than LeWM (MPPI at T*)",
        a="scale",
        b="lewm",
        **_cem(),
        solver="mppi",
        number=PaperNumber(
            "scale_success_mppi_tuned",
            scale=0.01,
            comparable=False,
            note="SCALE: {pp:+.1f} pp, code protocol",
        ),
    ),
    ClaimSpec(
        "SCALE",
        "SCALE on half of q still plans better than LeWM (CEM)",
        a="scale-halfq",
        b="lewm",
        **_cem(),
        number=PaperNumber(
            "scale_success_20cell",
            scale=0.01,
            a="scale_half_q",
            comparable=False,
            note="SCALE: {pp:+.1f} pp, mean over its 20 solver cells",
        ),
    ),
    # DINO-WM, SCALE's pretrained-features reference: strong on the navigation tasks, weak on
    # Push-T. Each claim's direction is the sign SCALE reports for the task (CEM, mean over
    # T1-T5, code protocol), so the claim is SCALE's own statement about this task.
    ClaimSpec(
        "SCALE",
        "DINO-WM plans {better} than LeWM (CEM)",
        a="dinowm",
        b="lewm",
        **_cem(CODE),
        direction=0,
        number=PaperNumber("scale_success_per_solver", _per_solver(), 0.01),
    ),
    ClaimSpec(
        "SCALE",
        "DINO-WM plans {better} than SCALE (CEM)",
        a="dinowm",
        b="scale",
        **_cem(CODE),
        direction=0,
        number=PaperNumber("scale_success_per_solver", _per_solver(), 0.01),
    ),
    # SCALE, Section 6: the geometry of the embeddings
    ClaimSpec(
        "SCALE",
        "Aux makes q as decodable as SCALE (within 0.01 R²)",
        PER_MODEL,
        "aux",
        "scale",
        "r2_full_ridge",
        "held-out ridge R² of q from the full embedding",
        threshold=-0.01,
        source="probes",
        number=PaperNumber(
            "scale_full_decodability",
            (("probe", "ridge"),),
            comparable=False,
            note="SCALE: {value:+.4f}",
        ),
        where=PROBES,
    ),
    _top2_share("SCALE moves variance into the top-2 PCs", "lewm"),
    _top2_share("SCALE moves more variance into the top-2 PCs than Aux", "aux"),
    ClaimSpec(
        "SCALE",
        "LeWM's q is decodable but not leveraged: its full embedding carries q, its top-2 "
        "PCs do not",
        PER_MODEL,
        "lewm",
        "lewm",
        "r2_top2",
        "ridge R² of q from the full embedding (a) minus from the top-2 PCs (b), LeWM",
        source="probes",
        column_a="r2_full_ridge",
        number=PaperNumber(
            "scale_full_decodability",
            (("probe", "ridge"),),
            table_b="scale_topk_pc_probe_r2",
            filters_b=(("k", "2"),),
        ),
        where=PROBES,
    ),
    ClaimSpec(
        "SCALE",
        "SCALE's top-2 PCs carry q (LeWM's do not)",
        PER_MODEL,
        "scale",
        "lewm",
        "r2_top2",
        "ridge R² of q from the top-2 PCs",
        source="probes",
        number=PaperNumber("scale_topk_pc_probe_r2", (("k", "2"),)),
        where=PROBES,
    ),
    ClaimSpec(
        "SCALE",
        "Decodability is not geometry: Aux's top-2 PCs do not carry q as SCALE's do",
        PER_MODEL,
        "scale",
        "aux",
        "r2_top2",
        "ridge R² of q from the top-2 PCs",
        source="probes",
        number=PaperNumber("scale_topk_pc_probe_r2", (("k", "2"),)),
        where=PROBES,
    ),
    # SCALE, its claims ("end-to-end flexibility"): SCALE reaches the favourable geometry of the
    # pretrained-feature DINO-WM (q in the leading PCs) while staying end to end; a claim of
    # parity, so its margin is the measure's smallest effect that matters and nothing more
    ClaimSpec(
        "SCALE",
        f"SCALE reaches DINO-WM-like geometry: its top-2 PCs carry q as DINO-WM's do "
        f"(within {MIN_EFFECTS['r2_top2']:g} R²)",
        PER_MODEL,
        "scale",
        "dinowm",
        "r2_top2",
        "ridge R² of q from the top-2 PCs",
        threshold=-MIN_EFFECTS["r2_top2"],
        source="probes",
        number=PaperNumber("scale_topk_pc_probe_r2", (("k", "2"),)),
        where=PROBES,
        min_effect=0.0,
    ),
    ClaimSpec(
        "SCALE",
        "SCALE makes latent distances closer to isometric in q",
        PER_MODEL,
        "scale",
        "lewm",
        "ratio_p90_over_p10",
        "distance-ratio dispersion P90/P10 of ||dz||/||dq||",
        direction=-1,
        source="probes",
        number=PaperNumber("scale_distance_ratio_dispersion"),
        where=PROBES,
    ),
    ClaimSpec(
        "SCALE",
        "SCALE improves the geometry channel of the ranking",
        PER_UNIT,
        "scale",
        "lewm",
        "tau_geom",
        "Kendall τ (tau_geom), 20 starts x 64 random candidates",
        source="ranking:gaussian",
        unit="start",
        number=PaperNumber("scale_rollout_ranking", (("channel", "geometry"),)),
        where=RANKING,
        tasks=("tworoom",),  # its only geometry-channel number; elsewhere our extension
    ),
    ClaimSpec(
        "SCALE",
        "SCALE improves the predictor channel of the ranking",
        PER_UNIT,
        "scale",
        "lewm",
        "tau_pred",
        "Kendall τ (tau_pred), 20 starts x 64 random candidates",
        source="ranking:gaussian",
        unit="start",
        number=PaperNumber("scale_rollout_ranking", (("channel", "predictor"),)),
        where=RANKING,
    ),
    ClaimSpec(
        "SCALE",
        "SCALE lowers the rollout error",
        PER_UNIT,
        "scale",
        "lewm",
        "rollout_error",
        "rollout error / scale, 20 starts x 64 random candidates",
        direction=-1,
        source="ranking:gaussian",
        unit="start",
        number=PaperNumber("scale_rollout_error"),
        where=RANKING,
    ),
    # SCALE, Section 3: a training-time regularizer, no overhead at planning time
    _no_overhead("SCALE", "scale", "SCALE adds no planning-time overhead"),
    # AnisoWM, Figure 3 (success), Table 3 (cost ordering) and Figure 4 (landscapes)
    ClaimSpec(
        "AnisoWM",
        "AnisoWM plans better than LeWM (CEM)",
        a="anisowm",
        b="lewm",
        **_cem(),
        budgets=("T1",),
        number=PaperNumber("aniso_success", scale=0.01),
    ),
    # J_enc: AnisoWM reports a gain on three tasks and none that matters on Push-T (-0.005 in
    # its text), so the claim is the paper's per task.
    ClaimSpec(
        "AnisoWM",
        "AnisoWM orders outcomes {better} by J_enc",
        PER_UNIT,
        "anisowm",
        "lewm",
        "agree_enc",
        "cost-ordering agreement of J_enc, recorded action sequences",
        direction=0,
        source="ranking:dataset",
        unit="start",
        number=PaperNumber("aniso_cost_ordering", (("cost", "J_enc"),)),
        where=RANKING,
    ),
    ClaimSpec(
        "AnisoWM",
        "AnisoWM orders outcomes better by J_pred",
        PER_UNIT,
        "anisowm",
        "lewm",
        "agree_pred",
        "cost-ordering agreement of J_pred, recorded action sequences",
        source="ranking:dataset",
        unit="start",
        number=PaperNumber("aniso_cost_ordering", (("cost", "J_pred"),)),
        where=RANKING,
    ),
    ClaimSpec(
        "AnisoWM",
        "AnisoWM's cost follows physical distance more closely (Figure 4)",
        PER_UNIT,
        "anisowm",
        "lewm",
        "spearman",
        "Spearman ρ(latent cost, distance) over the position grid, random goals",
        source="landscape",
        unit="goal_index",
        number=PaperNumber(
            "anisowm_landscape_spearman",
            comparable=False,
            per_arm=True,
            cite=False,
            note="AnisoWM (hand-picked goals; quoted by a summary, unverified): "
            "ρ {lewm:.2f} → {anisowm:.2f}",
            missing="figure only, no number",
        ),
        where=LANDSCAPE,
    ),
    # AnisoWM, its abstract and method: Λ is used only by the training loss and discarded, so
    # planning runs the same encoder and predictor as LeWM: no planning-time overhead
    _no_overhead(
        "AnisoWM",
        "anisowm",
        "AnisoWM adds no planning-time overhead: Λ is discarded after training",
    ),
)
"""Every claim of the two papers the book tests, in the order of the verdict tables."""

_CH7, _CH6 = "{title}, chapter 7", "{title}, chapter 6"
_ALL_FOUR = (COMBINED, "scale", "anisowm", BASELINE)
LENS_CLAIMS: tuple[ClaimSpec, ...] = (
    # SCALE under AnisoWM's lens
    ClaimSpec(
        LENS,
        "SCALE orders outcomes better by J_enc (AnisoWM's measure)",
        PER_UNIT,
        "scale",
        BASELINE,
        "agree_enc",
        "cost-ordering agreement of J_enc",
        source="ranking:dataset",
        unit="start",
        where=_CH7,
    ),
    ClaimSpec(
        LENS,
        "SCALE orders outcomes better by J_pred (AnisoWM's measure)",
        PER_UNIT,
        "scale",
        BASELINE,
        "agree_pred",
        "cost-ordering agreement of J_pred",
        source="ranking:dataset",
        unit="start",
        where=_CH7,
    ),
    ClaimSpec(
        LENS,
        "SCALE's cost follows physical distance more closely (AnisoWM Fig. 4)",
        PER_UNIT,
        "scale",
        BASELINE,
        "spearman",
        "landscape Spearman ρ",
        source="landscape",
        unit="goal_index",
        where=_CH7,
    ),
    # ΛReg under SCALE's lens
    ClaimSpec(
        LENS,
        "ΛReg moves variance into the top-2 PCs (SCALE's measure)",
        PER_MODEL,
        "anisowm",
        BASELINE,
        "var_top2",
        "var_top2",
        source="probes",
        where=_CH7,
    ),
    ClaimSpec(
        LENS,
        "ΛReg puts q in the top-2 PCs (SCALE's measure)",
        PER_MODEL,
        "anisowm",
        BASELINE,
        "r2_top2",
        "r2_top2",
        source="probes",
        where=_CH7,
    ),
    ClaimSpec(
        LENS,
        "ΛReg raises SCALE's τ geom channel",
        PER_UNIT,
        "anisowm",
        BASELINE,
        "tau_geom",
        "tau_geom",
        source="ranking:gaussian",
        unit="start",
        where=_CH7,
    ),
    ClaimSpec(
        LENS,
        "ΛReg raises SCALE's τ pred channel",
        PER_UNIT,
        "anisowm",
        BASELINE,
        "tau_pred",
        "tau_pred",
        source="ranking:gaussian",
        unit="start",
        where=_CH7,
    ),
    # the combination: does scale+anisowm beat scale, and do the two effects add up?
    ClaimSpec(
        LENS,
        "scale+anisowm plans better than scale alone",
        SUCCESS,
        COMBINED,
        "scale",
        where=_CH6,
        needs=_ALL_FOUR,
    ),
    ClaimSpec(
        LENS,
        "SCALE's and ΛReg's effects on success: do they add up?",
        INTERACTION,
        INTERACTION_ARM,
        "a + b",
        where=_CH6,
        needs=_ALL_FOUR,
    ),
    ClaimSpec(
        LENS,
        "SCALE's and ΛReg's effects on tau_geom: do they add up?",
        INTERACTION,
        INTERACTION_ARM,
        "a + b",
        "tau_geom",
        "interaction contrast of tau_geom",
        source="ranking:gaussian",
        unit="start",
        where=_CH7,
        needs=_ALL_FOUR,
    ),
    ClaimSpec(
        LENS,
        "SCALE's and ΛReg's effects on spearman: do they add up?",
        INTERACTION,
        INTERACTION_ARM,
        "a + b",
        "spearman",
        "interaction contrast of spearman",
        source="landscape",
        unit="goal_index",
        where=_CH7,
        needs=_ALL_FOUR,
    ),
)
"""Our questions across the two papers (not their claims), tested with the same rule as a family
of their own: SCALE by AnisoWM's measures, ΛReg by SCALE's, and whether the combination adds up
(:func:`interaction_table`); the combination's rows need all four arms."""


def interaction_table(
    table: pd.DataFrame,
    value: str,
    keys: Sequence[str],
    both: str = COMBINED,
    a: str = "scale",
    b: str = "anisowm",
    base: str = BASELINE,
) -> pd.DataFrame:
    """Does the combination add up? Per unit of ``keys`` the two sides of the interaction
    contrast ``(both - base) - [(a - base) + (b - base)] = (both + base) - (a + b)``: rows with
    arm :data:`INTERACTION_ARM` and ``"a + b"``, so a paired comparison of the two is the
    interaction (zero when the effects add, negative when they fight)."""
    wide = table[table["arm"].isin([both, a, b, base])].pivot(
        index=list(keys), columns="arm", values=value
    )
    wide = wide.dropna()
    left = (wide[both] + wide[base]).rename(value).reset_index().assign(arm=INTERACTION_ARM)
    right = (wide[a] + wide[b]).rename(value).reset_index().assign(arm="a + b")
    return pd.concat([left, right], ignore_index=True)


@dataclass(frozen=True)
class Measurements:
    """What one task's study measured, as the evaluators read it: the planning episodes (empty
    when the study does not plan), the geometry (:class:`~jepa_geometry.analysis.measurements.
    Geometry`), and the protocols its success claims name."""

    task: str
    episodes: pd.DataFrame
    geometry: Any
    main_protocol: str
    code_protocol: str
    timing: pd.DataFrame | None = None

    def table(self, source: str) -> pd.DataFrame:
        """The per-model or per-unit table of a :data:`SOURCES` entry (``timing``: one row per
        (arm, seed, cell) with ``log_plan_seconds``; empty when the study does not plan)."""
        g = self.geometry
        if source == "timing":
            t = self.timing
            if t is None or t.empty:
                return pd.DataFrame(columns=["arm", "train_seed", "cell", "log_plan_seconds"])
            t = t.assign(cell=t["protocol"] + "/" + t["solver"] + "/" + t["budget"])
            seeds = t.groupby("cell")["train_seed"].transform("nunique")
            t = t[seeds == t["train_seed"].nunique()]  # the cells every seed planned
            return t.assign(log_plan_seconds=np.log(t["eval_seconds"]))
        if source == "probes":
            return g.probes
        if source == "landscape":
            return g.landscape
        return g.ranking[g.ranking["source"] == source.split(":")[1]]

    def protocol(self, spec: ClaimSpec) -> str | None:
        """The protocol a success claim is measured under here (None: not on this task)."""
        same = self.main_protocol == self.code_protocol
        if (spec.protocol == MAIN_IF_NOT_CODE and same) or (
            spec.protocol == CODE_IF_MAIN and not same
        ):
            return None
        return self.code_protocol if spec.protocol in (CODE, CODE_IF_MAIN) else self.main_protocol


def paper_value(number: PaperNumber, task: str, a: str, b: str) -> float | None:
    """``scale * (value(a) - value(b))`` of the reference table on ``task`` (means over the
    matching rows), or None where the file has no such rows."""
    ref = reference_numbers(allow_empty=True, table=number.table, task=task, **dict(number.filters))
    ref_b = reference_numbers(
        allow_empty=True,
        table=number.table_b or number.table,
        task=task,
        **dict(number.filters if number.filters_b is None else number.filters_b),
    )
    va = ref[ref["arm"] == (number.a or a)]["value"]
    vb = ref_b[ref_b["arm"] == (number.b or b)]["value"]
    if va.empty or vb.empty:
        return None
    return float(number.scale * (va.mean() - vb.mean()))


def _paper_side(spec: ClaimSpec, task: str) -> tuple[float | None, str, float | None]:
    """``(paper's effect, note, raw difference)`` of a claim on ``task``."""
    number = spec.number
    if number is None:
        return None, "", None
    if number.per_arm:
        ref = reference_numbers(allow_empty=True, table=number.table, task=task)
        values = dict(zip(ref["arm"], ref["value"], strict=True))
        arms = {spec.a, spec.b}
        return None, number.note.format(**values) if arms <= set(values) else number.missing, None
    value = paper_value(number, task, spec.a, spec.b)
    if number.comparable:
        return value, "", value
    note = number.missing if value is None else number.note.format(value=value, pp=100 * value)
    return None, note, value


def _evidence(spec: ClaimSpec, m: Measurements) -> tuple[str, Evidence] | None:
    """``(measure in words, evidence)`` of a claim on one task, or None where the study lacks
    the arms or the cell it needs."""
    if spec.needs and set(spec.needs) - set(m.geometry.probes["arm"]):
        return None
    eps = m.episodes
    if spec.column == "success":
        protocol = m.protocol(spec)
        arms = set(eps["arm"]) if "arm" in eps else set()
        if protocol is None or (spec.kind == SUCCESS and {spec.a, spec.b} - arms):
            return None
        cell = eps[(eps["protocol"] == protocol) & (eps["solver"] == spec.solver)]
        if cell.empty:
            return None
        budgets = list(spec.budgets or sorted(set(cell["budget"])))
        t = tier_mean_success(eps, protocol, spec.solver, budgets)
        name = SOLVER_NAMES.get(spec.solver, spec.solver)
        if spec.kind == INTERACTION:
            inter = interaction_table(t, "success", ["train_seed", "episode"])
            ev = paired_unit_evidence(inter, spec.a, spec.b, "success", "episode")
            return f"interaction contrast of success, {protocol}, {name}", ev
        if spec.paper == LENS:
            measure = f"success, {protocol}, {name} (mean over tiers)"
        else:
            measure = f"success, {protocol} protocol, {name} at {'/'.join(budgets)}"
            measure += " (mean over tiers)" if len(budgets) > 1 else ""
        return measure, paired_unit_evidence(t, spec.a, spec.b, "success", "episode")
    tab = m.table(spec.source)
    if spec.kind == INTERACTION:
        tab = tab.dropna(subset=[spec.column])
        inter = interaction_table(tab, spec.column, ["train_seed", spec.unit])
        return spec.measure, paired_unit_evidence(inter, spec.a, spec.b, spec.column, spec.unit)
    if {spec.a, spec.b} - set(tab["arm"]):
        return None
    if spec.kind == PER_MODEL and spec.column_a:
        a = tab[tab["arm"] == spec.a].assign(arm="a", value=tab[spec.column_a])
        b = tab[tab["arm"] == spec.b].assign(arm="b", value=tab[spec.column])
        pair = pd.concat([a, b], ignore_index=True)
        return spec.measure, seed_level_evidence(pair, "a", "b", "value")
    if spec.kind == PER_MODEL:
        return spec.measure, seed_level_evidence(tab, spec.a, spec.b, spec.column)
    tab = tab.dropna(subset=[spec.column])
    return spec.measure, paired_unit_evidence(tab, spec.a, spec.b, spec.column, spec.unit)


def evaluate(spec: ClaimSpec, m: Measurements) -> tuple[Claim, Evidence] | None:
    """The claim of ``spec`` on ``m``'s task with our evidence, or None where the study did not
    run what it needs (or, for a claim whose direction is the paper's, where the paper reports
    no difference on the task)."""
    paper_effect, note, value = _paper_side(spec, m.task)
    direction, statement = spec.direction, spec.statement
    if direction == 0:
        if value is None or abs(value) < MIN_EFFECTS[spec.column]:
            return None  # the paper reports no difference that matters on this task
        direction = 1 if value > 0 else -1
        statement = statement.format(better="better" if direction > 0 else "worse")
    found = _evidence(spec, m)
    if found is None:
        return None
    measure, ev = found
    success = spec.column == "success"
    claim = Claim(
        spec.paper,
        statement,
        measure,
        spec.a,
        spec.b,
        direction,
        spec.threshold,
        paper_effect,
        note,
        unit="pp" if success else "",
        display_scale=100.0 if success else 1.0,
        reference=spec.number.table if spec.number is not None and spec.number.cite else "",
        computed_in=spec.where.format(title=task_title(m.task)),
        min_effect=MIN_EFFECTS[spec.column] if spec.min_effect is None else spec.min_effect,
        requires=claim_requires(
            spec.needs if spec.kind == INTERACTION else (spec.a, spec.b), spec.paper
        )
        if spec.source != "timing"  # the planner's wall time: what Λ or q did is moot
        else (),
        extension=spec.paper != LENS and m.task not in (spec.tasks or paper_tasks(spec.paper)),
    )
    return claim, ev


ALL_TASKS = "all tasks"
"""The task label of a claim about every task together (:data:`ACROSS_CLAIMS`)."""
POOLED, EVERY = "pooled", "every"


@dataclass(frozen=True)
class AcrossSpec:
    """A claim about the tasks together, on planning success under SCALE's protocol.

    ``combine`` :data:`POOLED`: the mean over the tasks of each task's paired effect of ``a``
    over ``b`` (:func:`~jepa_geometry.study.verdict.pooled_evidence`, tasks independent), per
    ``solver``; :data:`EVERY`: every task x solver cell of ``solvers`` shows the effect
    (:func:`~jepa_geometry.study.verdict.every_evidence`), SCALE's "all 15 task-solver
    averages", of which the statement's ``{tested}`` names the cells actually tested
    (:func:`tested_cells`). The success of a cell is the mean over the tiers planned, or
    ``tier`` alone. The paper's number is the same combination of its ``table`` over the same
    cells.
    """

    paper: str
    statement: str
    a: str
    b: str
    combine: str
    solvers: tuple[str, ...] = ("cem",)
    tier: str = ""
    table: str = "scale_success_per_solver"

    def __post_init__(self) -> None:
        if self.combine not in (POOLED, EVERY):
            raise ValueError(f"combine must be {POOLED} or {EVERY}, got {self.combine!r}")
        if self.combine == POOLED and len(self.solvers) != 1:
            raise ValueError(f"a pooled claim names one solver, got {self.solvers}")

    def number(self, solver: str) -> PaperNumber:
        """Where the paper's cell for our ``solver`` (at ``tier``, if any) sits in ``table``."""
        keys = (("solver", PAPER_SOLVER[solver]),) + ((("tier", self.tier),) if self.tier else ())
        return PaperNumber(self.table, keys, 0.01)


ACROSS_CLAIMS: tuple[AcrossSpec, ...] = (
    AcrossSpec(
        "SCALE",
        "SCALE plans better than LeWM in every task-solver average ({tested})",
        "scale",
        "lewm",
        EVERY,
        solvers=("cem", "icem", MPPI_SWM),  # its main grid's MPPI is at swm's temperature
    ),
    AcrossSpec(
        "SCALE",
        "Aux does not plan as well as SCALE, across the tasks (CEM)",
        "scale",
        "aux",
        POOLED,
    ),
    *(
        AcrossSpec(
            "SCALE",
            f"SCALE's gain over LeWM persists at budget {tier} ({SOLVER_NAMES[solver]}, mean "
            "over the tasks)",
            "scale",
            "lewm",
            POOLED,
            solvers=(solver,),
            tier=tier,
            table="scale_success_per_tier",
        )
        for solver in PAPER_SOLVER
        for tier in ("T1", "T2", "T3", "T4", "T5")
    ),
)
"""SCALE's claims about the tasks together: its count of cells, the consistency of its gain
over Aux (which it states across the tasks: Aux leads on Push-T in its own table), and its
gain at each compute budget, for each solver of its per-tier table (the paper states it for
its grid, not for CEM alone)."""


def _across_cells(
    spec: AcrossSpec, studies: Mapping[str, Measurements]
) -> list[tuple[str, str, Evidence, float | None]]:
    """``(task, solver, our evidence, SCALE's difference)`` of every cell the claim combines
    that the studies planned with both arms under SCALE's protocol."""
    cells = []
    for task, m in studies.items():
        eps = m.episodes
        if "arm" not in eps or {spec.a, spec.b} - set(eps["arm"]):
            continue
        for solver in spec.solvers:
            cell = eps[(eps["protocol"] == m.code_protocol) & (eps["solver"] == solver)]
            budgets = sorted(set(cell["budget"])) if not spec.tier else [spec.tier]
            if cell.empty or not set(budgets) <= set(cell["budget"]):
                continue
            t = tier_mean_success(eps, m.code_protocol, solver, budgets)
            ev = paired_unit_evidence(t, spec.a, spec.b, "success", "episode")
            paper = paper_value(spec.number(solver), task, spec.a, spec.b)
            cells.append((task, solver, ev, paper))
    return cells


def evaluate_across(
    spec: AcrossSpec, studies: Mapping[str, Measurements]
) -> tuple[Claim, Evidence] | None:
    """The claim of ``spec`` on the tasks of ``studies`` with our combined evidence, or None
    where no study planned its cells. The paper's effect is the same combination of its
    numbers over the same cells, shown as a note (its one training seed and 600 episodes per
    tier are another footing)."""
    cells = _across_cells(spec, studies)
    if not cells:
        return None
    tasks = ", ".join(task_title(t) for t in dict.fromkeys(t for t, *_ in cells))
    parts = [ev for *_, ev, _ in cells]
    papers = [p for *_, p in cells if p is not None]
    if spec.combine == POOLED:
        paper = sum(papers) / len(papers) if len(papers) == len(cells) else None
        what = "mean over the tasks"
    else:
        paper = min(papers) if len(papers) == len(cells) else None
        favour = sum(p > 0 for p in papers)
        what = f"smallest of the cells; {favour} of {len(papers)} favour {spec.a}"
    note = "" if paper is None else f"{spec.paper}: {100 * paper:+.2f} pp, {what}"
    solvers = "/".join(SOLVER_NAMES.get(x, x) for x in spec.solvers)
    tiers = spec.tier or "mean over tiers"
    statement = spec.statement
    if spec.combine == EVERY:
        statement = statement.format(tested=tested_cells(spec, [(t, s) for t, s, *_ in cells]))
    claim = Claim(
        spec.paper,
        statement,
        f"success, SCALE's protocol, {solvers} ({tiers}); {tasks}",
        spec.a,
        spec.b,
        1,
        0.0,
        None,
        note,
        unit="pp",
        display_scale=100.0,
        reference=spec.table,
        computed_in=ACROSS_GRID,
        min_effect=MIN_EFFECTS["success"],
    )
    if spec.combine == POOLED:
        return claim, pooled_evidence(parts)
    names = [f"{task_title(t)} {SOLVER_NAMES.get(s, s)}" for t, s, *_ in cells]
    return claim, every_evidence(claim, parts, names, "task x solver cells")


def tested_cells(spec: AcrossSpec, cells: Sequence[tuple[str, str]]) -> str:
    """What an :data:`EVERY` claim tests, in words: how many of the paper's task x solver
    cells of ``spec`` (those its ``table`` reports for both arms) ours are, and the paper's
    cells not tested here by task ("12 of SCALE's 15 cells tested; not tested: Cube (3)"), so
    the claim never reads as the paper's full count when it covers a subset."""
    ref = reference_numbers(table=spec.table)
    paper = []
    for task in dict.fromkeys(ref["task"]):
        for solver in spec.solvers:
            if paper_value(spec.number(solver), task, spec.a, spec.b) is not None:
                paper.append((task, solver))
    ours = set(cells)
    gone = [t for t, s in paper if (t, s) not in ours]
    text = f"{len(ours & set(paper))} of {spec.paper}'s {len(paper)} cells tested"
    if gone:
        text += "; not tested: " + ", ".join(
            f"{task_title(t)} ({gone.count(t)})" for t in dict.fromkeys(gone)
        )
    return text


def on_task(precondition: str, task: str) -> str:
    """``precondition`` on one task, as a claim about several tasks together requires it: such
    a claim is tested only where its precondition holds on each of its tasks."""
    return f"{precondition} on {task_title(task)}"


@dataclass(frozen=True)
class EverySpec:
    """A paper's claim that holds "in all" the tasks it evaluated (AnisoWM: "improves planning
    success over LeWM in all four"): the per-task ``claim`` on each of the paper's tasks whose
    study measures it, combined by the intersection-union test
    (:func:`~jepa_geometry.study.verdict.every_evidence`: the weakest task decides and is shown).
    ``{tested}`` in the statement names the paper's tasks tested and those not
    (:func:`tested_tasks`), so the label never says "all four" of three."""

    statement: str
    claim: ClaimSpec


EVERY_CLAIMS: tuple[EverySpec, ...] = (
    EverySpec(
        "AnisoWM plans better than LeWM in all four environments (CEM T1; {tested})",
        next(c for c in PAPER_CLAIMS if c.paper == "AnisoWM" and c.kind == SUCCESS),
    ),
    EverySpec(
        "AnisoWM orders outcomes better by J_pred in all four environments ({tested})",
        next(c for c in PAPER_CLAIMS if c.paper == "AnisoWM" and c.column == "agree_pred"),
    ),
)
"""AnisoWM's claims about all four of its environments (its abstract and Figure 3; its
J_pred ordering table), judged as stated: on every task it evaluated, not on average."""


def tested_tasks(paper: str, tested: Sequence[str]) -> str:
    """Which of ``paper``'s tasks (:func:`~jepa_geometry.study.reference.paper_tasks`) a claim
    about all of them tested, in words ("3 of AnisoWM's 4 tasks tested; not tested: Cube")."""
    tasks = paper_tasks(paper)
    gone = [task_title(t) for t in tasks if t not in tested]
    text = f"{sum(t in tested for t in tasks)} of {paper}'s {len(tasks)} tasks tested"
    return text + (f"; not tested: {', '.join(gone)}" if gone else "")


def evaluate_every(
    spec: EverySpec, studies: Mapping[str, Measurements]
) -> tuple[Claim, Evidence] | None:
    """The claim of ``spec`` on all of its paper's tasks that ``studies`` measure, or None where
    none does. Our extensions (a task the paper never evaluated) are not among its cells. It
    requires each cell's preconditions on that cell's task (:func:`on_task`)."""
    paper = spec.claim.paper
    cells = [
        (task, found)
        for task, m in studies.items()
        if task in paper_tasks(paper) and (found := evaluate(spec.claim, m)) is not None
    ]
    if not cells:
        return None
    first = cells[0][1][0]
    names = [task_title(t) for t, _ in cells]
    requires = tuple(on_task(r, t) for t, (c, _) in cells for r in c.requires)
    effects = [c.paper_effect for _, (c, _) in cells]
    note = ""
    if all(e is not None for e in effects):
        k, favour = first.display_scale, sum(e > 0 for e in effects)
        note = f"{paper}: smallest {k * min(effects):+.3g} {first.unit}".rstrip()
        note += f"; {favour} of {len(effects)} favour {first.a}"
    claim = replace(
        first,
        statement=spec.statement.format(tested=tested_tasks(paper, [t for t, _ in cells])),
        measure=f"{first.measure}; {', '.join(names)}",
        paper_effect=None,
        paper_note=note,
        computed_in=spec.claim.where.format(title="each task's"),
        requires=requires,
        extension=False,
    )
    parts = [ev for _, (_, ev) in cells]
    return claim, every_evidence(claim, parts, names, "tasks")


def every_claims(studies: Mapping[str, Measurements]) -> list[tuple[Claim, Evidence]]:
    """:func:`evaluate_every` of every :data:`EVERY_CLAIMS` record that has cells."""
    return [item for spec in EVERY_CLAIMS if (item := evaluate_every(spec, studies))]


def across_claims(studies: Mapping[str, Measurements]) -> list[tuple[Claim, Evidence]]:
    """:func:`evaluate_across` of every :data:`ACROSS_CLAIMS` record that has cells."""
    return [item for spec in ACROSS_CLAIMS if (item := evaluate_across(spec, studies))]


def evaluate_all(specs: Sequence[ClaimSpec], m: Measurements) -> list[tuple[Claim, Evidence]]:
    """:func:`evaluate` of every record that applies to ``m``'s task, in the records' order."""
    return [item for spec in specs if (item := evaluate(spec, m)) is not None]


def paper_claims(
    task: str,
    episodes: pd.DataFrame,
    geometry: Any,
    main_protocol: str = "goal100_budget150",
    code_protocol: str = "goal25_budget50",
    timing: pd.DataFrame | None = None,
) -> list[tuple[Claim, Evidence]]:
    """The two papers' claims about ``task`` (:data:`PAPER_CLAIMS`), each with our evidence.

    ``episodes`` is :func:`jepa_geometry.study.grid.evaluate_arms` output, ``geometry`` a
    :class:`jepa_geometry.analysis.measurements.Geometry`, ``timing`` the grid's per-cell wall
    times (:attr:`~jepa_geometry.study.grid.PlanningGrid.timing`; without it the planning-time
    claim is left out). A claim whose arms or cells were not
    run is left out. The papers' effects are attached only where the setting is comparable (same
    protocol and measure); otherwise the note says what the paper reported. A paper's claim on
    a task the paper never evaluated is marked as our extension (``Claim.extension``).
    """
    m = Measurements(task, episodes, geometry, main_protocol, code_protocol, timing)
    return evaluate_all(PAPER_CLAIMS, m)


def lens_claims_by_task(
    studies: Mapping[str, Measurements],
) -> list[tuple[str, Claim, Evidence]]:
    """:data:`LENS_CLAIMS` on every task's measurements, tagged with the task."""
    return [(task, c, e) for task, m in studies.items() for c, e in evaluate_all(LENS_CLAIMS, m)]


__all__ = [
    "ACROSS_CLAIMS",
    "ALL_TASKS",
    "CODE",
    "CODE_IF_MAIN",
    "COMBINED",
    "INTERACTION",
    "INTERACTION_ARM",
    "KINDS",
    "LENS",
    "LENS_CLAIMS",
    "MAIN",
    "MAIN_IF_NOT_CODE",
    "PAPER_CLAIMS",
    "PER_MODEL",
    "EVERY",
    "EVERY_CLAIMS",
    "PER_UNIT",
    "POOLED",
    "PROTOCOLS",
    "SUCCESS",
    "AcrossSpec",
    "ClaimSpec",
    "EverySpec",
    "Measurements",
    "PaperNumber",
    "across_claims",
    "evaluate",
    "evaluate_across",
    "evaluate_all",
    "evaluate_every",
    "every_claims",
    "interaction_table",
    "lens_claims_by_task",
    "on_task",
    "paper_claims",
    "paper_value",
    "tested_cells",
    "tested_tasks",
]
