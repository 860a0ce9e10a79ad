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
    missing_dinov2,
    stage_units,
)
from jepa_geometry.profiles import Profile
from jepa_geometry.study.spec import HEADLINE_BUDGET, StudySpec
from jepa_geometry.wm.arms import DINOWM


def _ref(art: Artifact) -> str:
    return f"{art.kind}/{art.name}/{art.key}"


def needed_whole(units: Sequence[Unit], todo: Sequence[Unit]) -> list[Unit]:
    """``todo`` (units to run) and the units of ``units`` whose outputs one of them opens while
    the cache holds them without their heavy files
    (:meth:`~jepa_geometry.artifacts.Artifact.heavy_missing`): the job that opens them builds
    them again first (a dataset collected again for a model to train, a model trained again for
    a cell to plan), so they are work to run too. Closed under the same rule (a model trained
    again needs its dataset's frames); in the order of ``units``."""
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
            if art.exists() and art.heavy_missing():
                run.add((maker.stage, maker.label))
                queue.append(maker)
    return [u for u in units if (u.stage, u.label) in run]


def _rows(units: Sequence[Unit], run: set[tuple[str, str]], base: Profile) -> pd.DataFrame:
    """The rows :func:`dry_run` lists for ``units``; ``run``: the (stage, label) of those to
    run (:func:`needed_whole`)."""
    rows = []
    for u in units:
        r = getattr(base.cluster, u.kind)
        stored = bool(u.outputs) and u.cached
        rows.append(
            {
                "stage": u.stage,
                "kind": u.kind,
                "task": u.task,
                "unit": u.label,
                "hours": u.hours,
                "cached": stored and (u.stage, u.label) not in run,
                "rebuilt": stored and (u.stage, u.label) in run,
                "gpus": r["gpus"],
                "cpus": r["cpus"],
                "mem_gb": r["mem_gb"],
                "time_limit_h": r["hours"],
            }
        )
    return pd.DataFrame(rows)


def dry_run(
    specs: Sequence[StudySpec], base: Profile, extensions: Sequence[Extension] = ()
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
    headline seeds add nothing at this profile, or all of it is cached."""
    check_specs(specs)
    left_out = missing_dinov2(specs, base)
    specs = [
        s.with_arms([a for a in s.arms if a != DINOWM]) if s.task in left_out else s for s in specs
    ]
    every = [u for stage in STAGES for u in stage_units(stage, specs, base, extensions)]
    run = needed_whole(every, [u for u in every if not (u.outputs and u.cached)])
    out = _rows(every, {(u.stage, u.label) for u in run}, base)
    plain = [replace(s, headline_seeds=None) for s in specs]
    before = {(u.stage, u.label) for st in STAGES for u in stage_units(st, plain, base, extensions)}
    added = [u for u in every if (u.stage, u.label) not in before]
    work = needed_whole(every, [u for u in added if not (u.outputs and u.cached)])
    out.attrs["left_out"] = left_out
    out.attrs["headline"] = _rows(work, {(u.stage, u.label) for u in work}, base)
    return out


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
