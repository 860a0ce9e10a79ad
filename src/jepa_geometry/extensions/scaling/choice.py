"""The scaling study's cost and its rule: which units run within the stated budget.

**The rule, fixed before the first model trains** (:func:`choose_units`; the book's section
rec-scaling). A *unit* is one (point, task, arm) with every training seed of the file. The 1x
point is each task study's own models and cells (same artifacts: nothing is retrained). The
other units are taken in a fixed priority order (:func:`priority`): every step point below the
top one, then the resolution point, then the top step point; within a point the arms in the
file's order, within an arm the tasks in the file's order. A unit enters when the running cost
with it stays within ``budget_hours``; otherwise it is cut (and named). An arm's unit needs its
point's ``lewm`` unit on that task, since every effect is against LeWM. Cube is gated again at
each point (:func:`~jepa_geometry.study.decisions.gate.protocol_gate`, LeWM's first seed on
validation pairs); its planning cells are costed as if the gate passes (the worst case) and
planned only if it does.

**The cost** (:func:`unit_cost`) is in seconds of the 2-core machine, ``workers`` one-thread
jobs at once: Σ job seconds / workers. A model's training seconds are its steps times the
seconds per step at the task study's setting (:func:`seconds_per_step`), from the steps/s its
cached models' manifests record, else the file's stated laptop figure (``model_seconds``), else
the profile's ``cluster.train_steps_per_s``; times ``image_factor²`` at the higher resolution
(the encoder's work grows with the pixels). Planning, geometry and a new dataset use the
profile's cluster estimates (:mod:`jepa_geometry.cluster`).

The rule's cost reads whatever 1x models are cached, so the first build keeps the table it
chose (:func:`stated_units`) and every later build and page reads that one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry import artifacts, cluster
from jepa_geometry.envs import task_title
from jepa_geometry.extensions.scaling.spec import (
    GATED_TASKS,
    Point,
    ScalingError,
    ScalingSpec,
    model_cells,
    point_profile,
    study_profile,
)
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import Profile
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.wm.training import world_model_artifact


def seconds_per_step(spec: ScalingSpec, task: str, base: Profile) -> tuple[float, str]:
    """Training seconds per step of one model at ``task``'s study setting, and where the figure
    comes from: the mean steps/s recorded by the cached 1x models of the study's arms, else the
    file's stated laptop seconds per model, else the profile's ``train_steps_per_s``."""
    p = study_profile(spec, task, base)
    rates = []
    for arm in spec.arms:
        for seed in p.seeds.train:
            art = world_model_artifact(task, arm, seed, p)
            if art.exists():
                rates.append(float(art.manifest()["summary"]["steps_per_s"]))
    if rates:
        return 1.0 / float(np.mean(rates)), f"measured ({len(rates)} cached models)"
    if base.name == "laptop" and task in spec.model_seconds:
        return spec.model_seconds[task] / p.train.steps, "stated (scaling.yaml)"
    return 1.0 / p.cluster.train_steps_per_s, "profile (cluster.train_steps_per_s)"


def unit_cost(
    spec: ScalingSpec, task: str, arm: str, point: Point, base: Profile, per_step: float
) -> dict[str, float]:
    """Job seconds of one unit (every seed): ``train`` (steps x ``per_step`` x image factor²),
    ``plan`` (the CEM cells), ``measure`` (geometry), ``collect`` (a new dataset, on the
    ``lewm`` unit of the resolution point) and ``gate`` (a gated task's lewm unit)."""
    p = point_profile(spec, task, point, base)
    seeds = p.seeds.train
    train = len(seeds) * p.train.steps * per_step * point.image**2
    cells = [cell for s in seeds for cell in model_cells(task, arm, s, p)]
    plan = 3600 * sum(cluster.cell_hours(c) for c in cells)
    measure = 3600 * len(seeds) * p.cluster.measure_hours
    lead = arm == BASELINE
    collect = 3600 * cluster.collect_hours(task, p) if lead and point.image != 1.0 else 0.0
    gate = 0.0
    if lead and task in GATED_TASKS:
        cell = PlanningCell(task, arm, seeds[0], p, solver="cem", tier="T1")
        gate = 3600 * cluster.cell_hours(cell)
    return {"train": train, "plan": plan, "measure": measure, "collect": collect, "gate": gate}


def priority(spec: ScalingSpec, profile: Profile) -> list[tuple[Point, str, str]]:
    """Every unit but the 1x point's, in the rule's order (module docstring)."""
    steps = spec.points(profile)[: len(spec.steps[profile.name])]
    order = [*steps[1:-1], *spec.points(profile)[len(steps) :], steps[-1]]
    return [(pt, t, a) for pt in order for a in spec.arms for t in spec.point_tasks(pt, profile)]


def choose_units(
    spec: ScalingSpec, base: Profile, per_step: dict[str, float] | None = None
) -> pd.DataFrame:
    """The rule: which units run within ``budget_hours`` (module docstring).

    One row per unit, the 1x point first: ``point``, ``steps`` (factor), ``image`` (factor),
    ``task``, ``arm``, the job seconds of each part (:func:`unit_cost`), ``seconds`` (their sum
    / workers), ``cumulative``, ``status`` (``reused``, ``run`` or ``cut``) and ``why``.
    ``per_step`` gives the training seconds per step per task (default:
    :func:`seconds_per_step`).
    """
    if base.name not in spec.steps:
        raise ScalingError(f"profile {base.name!r}; valid: {', '.join(spec.steps)}")
    tasks = spec.tasks_at(base)
    rates = per_step or {t: seconds_per_step(spec, t, base)[0] for t in tasks}
    missing = [t for t in tasks if t not in rates]
    if missing:
        raise ScalingError(f"no seconds per step for tasks {missing}")
    budget = 3600 * spec.budget_hours[base.name]
    rows, total, lewm_in = [], 0.0, set()
    one = spec.points(base)[0]
    for a in spec.arms:
        for t in tasks:
            rows.append(_row(one, t, a, dict.fromkeys(UNIT_PARTS, 0.0), 0.0, "reused", _REUSED))
    for pt, t, a in priority(spec, base):
        cost = unit_cost(spec, t, a, pt, base, rates[t])
        seconds = sum(cost.values()) / spec.workers
        if a != BASELINE and (pt, t) not in lewm_in:
            rows.append(_row(pt, t, a, cost, seconds, "cut", "its LeWM unit was cut"))
        elif total + seconds > budget:
            rows.append(_row(pt, t, a, cost, seconds, "cut", "over the budget"))
        else:
            total += seconds
            if a == BASELINE:
                lewm_in.add((pt, t))
            rows.append(_row(pt, t, a, cost, seconds, "run", ""))
    out = pd.DataFrame(rows)
    out["cumulative"] = out["seconds"].where(out["status"] == "run", 0.0).cumsum()
    return out


UNIT_PARTS: tuple[str, ...] = ("train", "plan", "measure", "collect", "gate")
_REUSED = "the task study's own models and cells"


def _row(
    pt: Point, task: str, arm: str, cost: dict[str, float], seconds: float, status: str, why: str
) -> dict[str, Any]:
    return {
        "point": pt.name,
        "steps": pt.steps,
        "image": pt.image,
        "task": task,
        "arm": arm,
        **{k: cost[k] for k in UNIT_PARTS},
        "seconds": seconds,
        "status": status,
        "why": why,
    }


def cost_statement(units: pd.DataFrame, spec: ScalingSpec, profile: str) -> str:
    """The study's total cost and what the rule cut, in one paragraph (printed before the
    first model trains)."""
    run = units[units["status"] == "run"]
    cut = units[units["status"] == "cut"]
    hours = run["seconds"].sum() / 3600
    text = (
        f"Scaling study at {profile}: {len(run)} units beyond the 1x point, estimated "
        f"{hours:.2f} h of the machine with {spec.workers} workers (budget "
        f"{spec.budget_hours[profile]:g} h); the 1x point's "
        f"{int((units['status'] == 'reused').sum())} units are the task studies' own."
    )
    if cut.empty:
        return text + " Nothing was cut."
    names = "; ".join(f"{r.point} {task_title(r.task)} {r.arm} ({r.why})" for r in cut.itertuples())
    return text + f" Cut by the rule: {names}."


CHOICE = "scaling-choice"


def _choice_spec(spec: ScalingSpec, base: Profile) -> dict[str, Any]:
    """What the rule's statement depends on: the study file and the key of every candidate
    model (which carries the profile's settings at each point)."""
    models = [
        world_model_artifact(t, a, s, point_profile(spec, t, pt, base)).key
        for pt in spec.points(base)
        for t in spec.point_tasks(pt, base)
        for a in spec.arms
        for s in spec.seeds[base.name]
    ]
    return {"spec": dataclasses.asdict(spec), "profile": base.name, "models": models}


def stated_units(spec: ScalingSpec, base: Profile, state: bool = False) -> pd.DataFrame:
    """The rule's units (:func:`choose_units`) as the first build stated them.

    The rule's cost reads the steps/s of whatever 1x models are cached, so run later it could
    choose differently from the build it describes. The first build therefore keeps its table
    (``state``: as a small result, ``results/scaling-choice/<key>``) and every later build and
    page reads that one; with nothing kept and ``state`` false (a dry run, a page that does not
    build) the rule runs now and nothing is written."""
    key = _choice_spec(spec, base)
    if state or artifacts.Artifact("results", CHOICE, key).exists():
        return artifacts.memo(CHOICE, key, lambda: choose_units(spec, base))
    return choose_units(spec, base)


def chosen(units: pd.DataFrame) -> list[tuple[Point, str, str]]:
    """The (point, task, arm) units that run or are reused."""
    keep = units[units["status"] != "cut"]
    return [(Point(r.steps, r.image), r.task, r.arm) for r in keep.itertuples()]


def by_point(units: Sequence[tuple[Point, str, str]]) -> dict[tuple[Point, str], list[str]]:
    """The chosen (point, task, arm) units grouped by (point, task), the arms in their order:
    one (point, task) is one profile, one dataset and one gate."""
    out: dict[tuple[Point, str], list[str]] = {}
    for pt, t, a in units:
        out.setdefault((pt, t), []).append(a)
    return out


__all__ = [
    "CHOICE",
    "UNIT_PARTS",
    "by_point",
    "choose_units",
    "chosen",
    "cost_statement",
    "priority",
    "seconds_per_step",
    "stated_units",
    "unit_cost",
]
