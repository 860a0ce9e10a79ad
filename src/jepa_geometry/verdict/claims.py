"""The claims the book tests, as data: the two papers' (:data:`PAPER_CLAIMS`) and our cross-lens
questions (:data:`LENS_CLAIMS`), each a :class:`ClaimSpec` evaluated by one function per kind of
evidence.

A record says which paper makes the claim, its statement, the two arms, the direction, the
measure and where our evidence for it is computed, and where the paper's number sits in the
reference file (:class:`PaperNumber`). :func:`evaluate` turns a record into a
:class:`~jepa_geometry.verdict.rule.Claim` with its
:class:`~jepa_geometry.verdict.rule.Evidence` for one task, or into nothing when the task's
study did not run the arms or cells the claim needs; the verdict itself is the rule of
:mod:`jepa_geometry.verdict.rule`.

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
judged on its κ sweep of trained models (:mod:`jepa_geometry.extensions.kappa.build`), by
:mod:`jepa_geometry.verdict.kappa_claims`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.envs import task_title
from jepa_geometry.planning.solver import PAPER_SOLVER, SOLVER_NAMES
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.verdict.preconditions import claim_premises, claim_requires
from jepa_geometry.verdict.reference import paper_tasks, reference_numbers
from jepa_geometry.verdict.rule import (
    MIN_EFFECTS,
    RELATIVE_MIN_EFFECTS,
    Claim,
    Evidence,
    every_evidence,
    paired_unit_evidence,
    pooled_evidence,
    relative_min_effect,
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

# Where each kind of evidence is measured in the book: the MyST label of the chapter's section
# (on a task chapter, the default task's; the book links each claim to its own task's page,
# ``book.toc.section_link``, and tests/verdict/test_sections.py checks every label exists).
PLANNING = "sec-ch06-cells"
SCALE_MAIN_TABLE = "sec-ch08-scale-main"
PROBES = "sec-ch07-probes"
RANKING = "sec-ch07-ranking"
LANDSCAPE = "sec-ch07-landscape"


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
    :data:`~jepa_geometry.verdict.rule.MIN_EFFECTS`, which fixes the smallest effect that
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
    on a task the paper never evaluated (:func:`~jepa_geometry.verdict.reference.paper_tasks`)
    is our extension of it, judged outside the paper's family.

    ``headline``: the paper's own sentence (abstract or its statement of results, with where
    it stands) when the claim is one of its headline claims: such a claim is in the paper's
    primary family on the tasks the paper evaluated (:func:`~jepa_geometry.verdict.rule.
    family_of`). ``by_construction``: our implementation makes the claim true whatever the data
    (:data:`~jepa_geometry.verdict.rule.BY_CONSTRUCTION`).
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
    headline: str = ""
    by_construction: bool = False

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


def _values(column: pd.Series) -> set:
    """The distinct values of ``column``: ``set(column)`` without iterating every row in Python
    (an episodes table has a row per pair, and the cross-task page asked 4.5 million times)."""
    return set(column.unique())


def _evidence(spec: ClaimSpec, m: Measurements) -> tuple[str, Evidence] | None:
    """``(measure in words, evidence)`` of a claim on one task, or None where the study lacks
    the arms or the cell it needs."""
    if spec.needs and set(spec.needs) - _values(m.geometry.probes["arm"]):
        return None
    eps = m.episodes
    if spec.column == "success":
        protocol = m.protocol(spec)
        arms = _values(eps["arm"]) if "arm" in eps else set()
        if protocol is None or (spec.kind == SUCCESS and {spec.a, spec.b} - arms):
            return None
        cell = eps[(eps["protocol"] == protocol) & (eps["solver"] == spec.solver)]
        if cell.empty:
            return None
        budgets = list(spec.budgets or sorted(_values(cell["budget"])))
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
    if {spec.a, spec.b} - _values(tab["arm"]):
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
    extension = spec.paper != LENS and m.task not in (spec.tasks or paper_tasks(spec.paper))
    arms = spec.needs if spec.kind == INTERACTION else (spec.a, spec.b)
    timing = spec.source == "timing"  # the planner's wall time: what Λ or q did is moot
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
        paper_value=value,
        unit="pp" if success else "",
        display_scale=100.0 if success else 1.0,
        reference=spec.number.table if spec.number is not None and spec.number.cite else "",
        computed_in=spec.where,
        min_effect=_min_effect(spec, m),
        requires=() if timing else claim_requires(arms),
        extension=extension,
        primary=bool(spec.headline) and not extension,
        headline=spec.headline,
        informs=() if timing else claim_premises(arms, spec.paper),
        by_construction=spec.by_construction,
    )
    return claim, ev


def _min_effect(spec: ClaimSpec, m: Measurements) -> float:
    """The claim's smallest effect that matters: its own (a claim of non-inferiority), the
    measure's, or for a measure relative by nature a share of arm ``b``'s mean level on this
    task (:func:`~jepa_geometry.verdict.rule.relative_min_effect`)."""
    if spec.min_effect is not None:
        return spec.min_effect
    if spec.column not in RELATIVE_MIN_EFFECTS:
        return MIN_EFFECTS[spec.column]
    tab = m.table(spec.source)
    return relative_min_effect(spec.column, tab[tab["arm"] == spec.b][spec.column].mean())


ALL_TASKS = "all tasks"
"""The task label of a claim about every task together (:data:`ACROSS_CLAIMS`)."""
POOLED, EVERY = "pooled", "every"


@dataclass(frozen=True)
class AcrossSpec:
    """A claim about the tasks together, on planning success under SCALE's protocol.

    ``combine`` :data:`POOLED`: the mean over the tasks of each task's paired effect of ``a``
    over ``b`` (:func:`~jepa_geometry.verdict.rule.pooled_evidence`, tasks independent), per
    ``solver``; :data:`EVERY`: every task x solver cell of ``solvers`` shows the effect
    (:func:`~jepa_geometry.verdict.rule.every_evidence`), SCALE's "all 15 task-solver
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


def _across_cells(
    spec: AcrossSpec, studies: Mapping[str, Measurements]
) -> list[tuple[str, str, Evidence, float | None]]:
    """``(task, solver, our evidence, SCALE's difference)`` of every cell the claim combines
    that the studies planned with both arms under SCALE's protocol."""
    cells = []
    for task, m in studies.items():
        eps = m.episodes
        if "arm" not in eps or {spec.a, spec.b} - _values(eps["arm"]):
            continue
        for solver in spec.solvers:
            cell = eps[(eps["protocol"] == m.code_protocol) & (eps["solver"] == solver)]
            budgets = sorted(_values(cell["budget"])) if not spec.tier else [spec.tier]
            if cell.empty or not set(budgets) <= _values(cell["budget"]):
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
        computed_in=SCALE_MAIN_TABLE,
        # "in every cell" is the sign in each cell, as the paper counts it; a mean over the
        # tasks is a gain that matters
        min_effect=0.0 if spec.combine == EVERY else MIN_EFFECTS["success"],
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
    (:func:`~jepa_geometry.verdict.rule.every_evidence`: the weakest task decides and is shown).
    ``{tested}`` in the statement names the paper's tasks tested and those not
    (:func:`tested_tasks`), so the label never says "all four" of three."""

    statement: str
    claim: ClaimSpec


def tested_tasks(paper: str, tested: Sequence[str]) -> str:
    """Which of ``paper``'s tasks (:func:`~jepa_geometry.verdict.reference.paper_tasks`) a claim
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
        computed_in=spec.claim.where,
        requires=requires,
        informs=tuple(on_task(r, t) for t, (c, _) in cells for r in c.informs),
        extension=False,
        primary=False,  # the conjunction of primary claims, each judged on its own task
        min_effect=0.0,  # "in all four": the sign on each task, as the paper counts it
    )
    parts = [ev for _, (_, ev) in cells]
    return claim, every_evidence(claim, parts, names, "tasks")


def evaluate_all(specs: Sequence[ClaimSpec], m: Measurements) -> list[tuple[Claim, Evidence]]:
    """:func:`evaluate` of every record that applies to ``m``'s task, in the records' order."""
    return [item for spec in specs if (item := evaluate(spec, m)) is not None]


BOUND, AFTER_SATURATION, TASK_SPECTRA, NON_MONOTONE, BEST_DIFFERS = (
    "bound",
    "after_saturation",
    "task_spectra",
    "non_monotone",
    "best_differs",
)
"""The kinds of evidence of a κ claim (:class:`KappaClaimSpec`), one evaluator each
(:data:`~jepa_geometry.verdict.kappa_claims.EVALUATORS`), which read the κ sweep's trained
models rather than a task study's."""


@dataclass(frozen=True)
class KappaClaimSpec:
    """One of AnisoWM's κ claims: its statement, the kind of evidence, the tasks it is judged
    on (``()``: every task of the sweep, each separately for :data:`NON_MONOTONE`)."""

    statement: str
    kind: str
    tasks: tuple[str, ...] = ()
    paper: str = "AnisoWM"
