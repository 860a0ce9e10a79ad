"""The dry run: every unit of the grid, its estimated device-hours and whether it is cached,
nothing submitted, built or stated (``jepa-geometry grid --dry-run``).

Units come from :func:`~.units.stage_units`, hours from the cost model (:mod:`.estimate`), the
resources each kind of unit asks for from the profile's ``cluster`` section; the chapters'
cost statements read the same table (:func:`~jepa_geometry.book.run.cost_statement`).

A cache may hold an artifact without its heavy files (the evidence tree of a clone: a dataset's
manifest without its frames, a model's without its weights). Such an artifact is cached for a
reader of its small files, but a unit to run that opens it builds it again first, in its own
job (:func:`needed_whole`): the dry run counts that work too. The work that the study files'
headline seeds add (:class:`~jepa_geometry.study.spec.HeadlineSeeds`) is stated on its own,
against its budget (:func:`headline_statement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from jepa_geometry.artifacts import Artifact
from jepa_geometry.cluster.units import (
    STAGES,
    Extension,
    Unit,
    check_specs,
    decision_units,
    missing_dinov2,
    stage_units,
)
from jepa_geometry.profiles import Profile
from jepa_geometry.study.spec import DECISION_TASK, HEADLINE_BUDGET, StudySpec
from jepa_geometry.wm.arms import DINOWM


def _ref(art: Artifact) -> str:
    return f"{art.kind}/{art.name}/{art.key}"


def needed_whole(units: Sequence[Unit], todo: Sequence[Unit]) -> list[Unit]:
    """``todo`` (units to run) and the units of ``units`` whose outputs one of them opens while
    the cache lacks them, or holds them without their heavy files
    (:meth:`~jepa_geometry.artifacts.Artifact.heavy_missing`): the job that opens them builds
    them first (a dataset collected again for a model to train, a model trained again for a
    cell to plan, the stand-in pretrained for DINO-WM), so they are work to run too. Closed
    under the same rule (a model trained again needs its dataset's frames); in the order of
    ``units``."""
    making: dict[str, Unit] = {}
    for u in units:
        for art in u.outputs:
            making.setdefault(_ref(art), u)
    run = {(u.stage, u.label) for u in todo}
    queue = list(todo)
    while queue:
        for art in queue.pop().inputs:
            maker = making.get(_ref(art))
            if maker is None or (maker.stage, maker.label) in run:
                continue
            if not art.exists() or art.heavy_missing():
                run.add((maker.stage, maker.label))
                queue.append(maker)
    return [u for u in units if (u.stage, u.label) in run]


def _rows(
    units: Sequence[Unit], run: set[tuple[str, str]], base: Profile, reads_only: bool = False
) -> pd.DataFrame:
    """The rows :func:`dry_run` lists for ``units``; ``run``: the (stage, label) of those to
    run (:func:`needed_whole`). ``read``: whether the build reads the unit (with
    ``reads_only``, an optional unit only when it runs)."""
    rows = []
    for u in units:
        runs = (u.stage, u.label) in run
        r = getattr(base.cluster, u.kind)
        stored = bool(u.outputs) and u.cached
        rows.append(
            {
                "stage": u.stage,
                "kind": u.kind,
                "task": u.task,
                "unit": u.label,
                "hours": u.hours,
                "cached": stored and not runs,
                "rebuilt": stored and runs,
                "read": not (reads_only and u.optional) or runs,
                "gpus": r["gpus"],
                "cpus": r["cpus"],
                "mem_gb": r["mem_gb"],
                "time_limit_h": r["hours"],
            }
        )
    return pd.DataFrame(rows)


def dry_run(
    specs: Sequence[StudySpec],
    base: Profile,
    extensions: Sequence[Extension] = (),
    decisions: bool = True,
    reads_only: bool = False,
) -> pd.DataFrame:
    """Every unit of the grid (the ``extensions`` too), nothing submitted or stated: stage,
    kind, task, label, estimated device-hours, whether it is cached (nothing to run), whether
    it is ``rebuilt`` (its outputs are in the cache without the heavy files that a unit to run
    opens, :func:`needed_whole`) and the resources its kind asks for. The ``chosen`` units
    that wait for a sweep or a gate not yet cached are estimates (their cells are fixed by it).

    A study that trains ``dinowm`` on DINOv2 without the weights file is listed without that
    arm (its checkpoints have no key yet); ``attrs["left_out"]`` names those tasks, so the
    caller can say so. ``attrs["headline"]`` lists, in the same columns, the units to run that
    the studies' headline seeds add (their models, CEM cells and geometry) with what those
    need built again: the same grid without the headline seeds lacks them. Empty when the
    headline seeds add nothing at this profile, or all of it is cached.
    ``attrs["decisions"]``: the rows the book's decisions add (:func:`decision_rows`); with
    ``decisions`` False they are left out (:func:`~.units.stage_units`) and it is empty.

    ``reads_only``: what a page or a ``study`` builds rather than the grid: an ``optional`` unit
    (:attr:`~.units.Unit.optional`: the stand-in's pretraining, a gate past its climb's stop)
    runs only when a unit to run needs it, and the ``read`` column says which units the build
    reads at all (:func:`cost_line` counts those)."""
    check_specs(specs)
    left_out = missing_dinov2(specs, base)
    specs = [
        s.with_arms([a for a in s.arms if a != DINOWM]) if s.task in left_out else s for s in specs
    ]
    every = [u for stage in STAGES for u in stage_units(stage, specs, base, extensions, decisions)]
    roots = [u for u in every if not (u.outputs and u.cached) and not (reads_only and u.optional)]
    run = needed_whole(every, roots)
    out = _rows(every, {(u.stage, u.label) for u in run}, base, reads_only)
    plain = [replace(s, headline_seeds=None) for s in specs]
    before = {
        (u.stage, u.label)
        for st in STAGES
        for u in stage_units(st, plain, base, extensions, decisions)
    }
    added = [u for u in every if (u.stage, u.label) not in before]
    work = needed_whole(every, [u for u in added if not (u.outputs and u.cached)])
    out.attrs["left_out"] = left_out
    out.attrs["decisions"] = decision_rows(out, specs, base) if decisions else out.iloc[:0]
    out.attrs["headline"] = _rows(work, {(u.stage, u.label) for u in work}, base)
    return out


def decision_rows(units: pd.DataFrame, specs: Sequence[StudySpec], base: Profile) -> pd.DataFrame:
    """The rows of ``units`` (:func:`dry_run`) that the book's decisions add
    (:func:`~.units.decision_units`): the decision task's models of SIGReg's strength and of
    the ΛReg variants, and the chosen variant's models and cells in a study with a ΛReg arm.
    A decision's dataset or model that a study has anyway is the study's row, not one of
    these (:func:`~.units.distinct` keeps the first)."""
    labels = {(u.stage, u.label) for st in STAGES for u in decision_units(st, specs, base)}
    return units[[(s, u) in labels for s, u in zip(units["stage"], units["unit"], strict=True)]]


def decisions_statement(units: pd.DataFrame, cores: int) -> str | None:
    """The decisions' rows of a dry run (``attrs["decisions"]``) in one line: the models the
    decisions train on their task, the chosen ΛReg variant's models of the studies' ΛReg
    arms, what is not cached of them (core-hours and wall time on ``cores`` cores), and how
    to leave them out; None when they add nothing. They used to be counted in the grid's
    hours without a word: a reader pricing one arm paid for six models they did not ask for."""
    rows = units.attrs.get("decisions")
    if rows is None or rows.empty:
        return None
    models = rows[rows["kind"] == "train"]["unit"].str.removeprefix("train ")
    decided = [m.removesuffix(" (decision)") for m in models if m.endswith(" (decision)")]
    variant = len(models) - len(decided)
    todo = rows[~rows["cached"]]
    cost = (
        f"{len(todo)} not in the cache: {core_hours(todo)}, about "
        f"{span(wall_hours(todo, cores))} on {cores} cores"
        if len(todo)
        else "all in the cache"
    )
    return (
        f"of these, the book's decisions (taken on {DECISION_TASK}, read by every task's "
        f"geometry page) add {len(rows)} units ({cost}): {len(decided)} decision models "
        f"({'; '.join(decided)})"
        + (f" and {variant} models of the chosen ΛReg variant" if variant else "")
        + "; --without-decisions leaves them out of a grid without a ΛReg arm (a reader's "
        "arm beside lewm and scale needs none of them)"
    )


def dry_run_summary(units: pd.DataFrame) -> pd.DataFrame:
    """:func:`dry_run` per stage and kind: units, cached, the device the kind asks for (GPU
    when its ``gpus`` > 0), the estimated hours of the units still to run and of all, and one
    total row per device."""
    t = units.assign(
        device=["GPU" if g > 0 else "CPU" for g in units["gpus"]],
        todo=units["hours"].where(~units["cached"], 0.0),
    )
    g = t.groupby(["stage", "kind", "device"], sort=False)
    out = pd.DataFrame(
        {
            "units": g.size(),
            "cached": g["cached"].sum().astype(int),
            "to run (h)": g["todo"].sum(),
            "all (h)": g["hours"].sum(),
        }
    )
    out = out.reset_index()
    totals = out.groupby("device", sort=False)[["units", "cached", "to run (h)", "all (h)"]].sum()
    totals = totals.reset_index().assign(stage="total", kind="")
    return pd.concat([out, totals[out.columns]], ignore_index=True)


def wall_hours(units: pd.DataFrame, cores: int) -> float:
    """Estimated wall-clock hours of ``units`` (rows of :func:`dry_run`) on ``cores`` cores:
    the stages one after another, and in each the units side by side, each on the cores its
    kind asks for (``cpus``), so a stage takes ``max(longest unit, Σ hours x cpus / cores)``."""
    total = 0.0
    for _, g in units.groupby("stage", sort=False):
        total += max(float(g["hours"].max()), float((g["hours"] * g["cpus"]).sum()) / cores)
    return total


def unit_table(units: Sequence[Unit], base: Profile) -> pd.DataFrame:
    """The rows :func:`dry_run` would list for ``units`` (a list of units of one's own, such
    as chapter 10's): what a cached unit still needs built again (:func:`needed_whole`)
    counts as work to run."""
    run = needed_whole(units, [u for u in units if not (u.outputs and u.cached)])
    return _rows(units, {(u.stage, u.label) for u in run}, base)


def core_hours(units: pd.DataFrame) -> str:
    """The core-hours of rows of :func:`dry_run` (``Σ hours x cpus``), as a reader reads them:
    one decimal from one core-hour on, two below (a smoke page's 0.03 is not "0.0")."""
    h = float((units["hours"] * units["cpus"]).sum())
    return f"{h:.1f} core-hours" if h >= 1 else f"{h:.2f} core-hours"


def span(hours: float) -> str:
    """``hours`` as a reader reads a duration: ``2.6 h`` from one hour on, else minutes."""
    return f"{hours:.1f} h" if hours >= 1 else f"{max(hours * 60, 1):.0f} min"


def cost_line(units: pd.DataFrame, cores: int, whose: str = "its") -> str:
    """What the rows of :func:`dry_run` (or :func:`unit_table`) not yet cached cost, in one
    clause: how many of ``whose`` units, their core-hours (``Σ hours x cpus``) and their
    wall time on ``cores`` cores (:func:`wall_hours`), or that the cache holds all of them.

    Every cost statement says both: a core-hour figure alone read as the time a build takes
    on the reader's machine (a laptop study's "2.6 h" is 1.4 h on two cores), and a wall time
    alone does not carry to a machine with another number of cores. ``study``, ``chapter``
    and the pages' statements (:func:`~jepa_geometry.book.run.cost_statement`) all say it
    with this one function, so they count alike. Units the build does not read (the ``read``
    column of a ``reads_only`` dry run) are left out of both counts."""
    if "read" in units:
        units = units[units["read"]]
    todo = units[~units["cached"]]
    if todo.empty:
        return f"all {len(units)} of {whose} units are in the cache, nothing to build"
    return (
        f"{len(todo)} of {whose} {len(units)} units are not in the cache: about "
        f"{core_hours(todo)} of work, about {span(wall_hours(todo, cores))} of wall time "
        f"on {cores} core{'s' if cores != 1 else ''} of this machine"
    )


def headline_statement(units: pd.DataFrame, base: Profile) -> str | None:
    """The headline seeds' added work (``attrs["headline"]`` of :func:`dry_run`) in one line:
    its units to run by kind, those built again, its core-hours (``Σ hours x cpus``) and, where
    the profile has a :data:`~jepa_geometry.study.spec.HEADLINE_BUDGET`, its wall-clock hours
    (:func:`wall_hours`) against it. None when the headline seeds add nothing to run."""
    work = units.attrs.get("headline")
    if work is None or work.empty:
        return None

    def count(rows: pd.DataFrame) -> str:
        return ", ".join(f"{n} {k}" for k, n in rows["kind"].value_counts(sort=False).items())

    again = work[work["rebuilt"]]
    core_h = float((work["hours"] * work["cpus"]).sum())
    text = f"headline seeds: {len(work)} units to run ({count(work[~work['rebuilt']])}"
    if len(again):
        text += f"; {count(again)} built again: the cache holds them without their heavy files"
    text += f"), {core_h:.2f} core-hours"
    if base.name not in HEADLINE_BUDGET:
        return text
    hours, cores = HEADLINE_BUDGET[base.name]
    wall = wall_hours(work, cores)
    fits = "within it, so the cost rule cuts nothing" if wall <= hours else "over it"
    return (
        f"{text}, about {wall:.2f} h on {cores} cores; the budget is {hours:g} h on {cores} "
        f"cores: {fits} (README, Five seeds for the headline claims)"
    )
