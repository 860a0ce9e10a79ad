"""The scaling study: how the papers' effects move as training compute grows toward theirs.

The laptop book trains for about 1 % of the papers' optimizer steps and sees 64-96 px frames
against 224. This study retrains the arms of ``scaling.yaml`` on Two-Room, Push-T and Cube at
several training budgets (multiples of each task study's own steps, each a complete run with
LeWM's warm-up and cosine schedule: an intermediate checkpoint of a cosine run is not a shorter
run) and at one higher resolution for the manipulation tasks, plans each model with CEM at the
five tiers under its task's main protocol, measures its geometry, and reads every claim of
both papers at every point (:func:`claim_effects`) with the trend of each effect against
training FLOPs (:func:`trend`).

**The rule, fixed before the first model trains** (:func:`choose_units`; the book's section
rec-scaling). A *unit* is one (point, task, arm) with every training seed of the file. The 1x
point is each task study's own models and cells (same artifacts: nothing is retrained). The
other units are taken in a fixed priority order: every step point below the top one, then the
resolution point, then the top step point; within a point the arms in the file's order, within
an arm the tasks in the file's order. A unit enters when the running cost with it stays within
``budget_hours``; otherwise it is cut (and named). An arm's unit needs its point's ``lewm``
unit on that task, since every effect is against LeWM. Cube is gated again at each point
(:func:`~jepa_geometry.study.rules.gate.protocol_gate`, LeWM's first seed on validation pairs);
its planning cells are costed as if the gate passes (the worst case) and planned only if it does.

**The cost** (:func:`unit_cost`) is in seconds of the 2-core machine, ``workers`` one-thread
jobs at once: Σ job seconds / workers. A model's training seconds are its steps times the
seconds per step at the task study's setting, from the steps/s its cached models' manifests
record, else the file's stated laptop figure (``model_seconds``), else the profile's
``cluster.train_steps_per_s``; times ``image_factor²`` at the higher resolution (the encoder's
work grows with the pixels). Planning, geometry and a new dataset use the profile's cluster
estimates (:mod:`jepa_geometry.study.cluster`).

Factors here are not ladder rungs: they are applied with
:func:`~jepa_geometry.profiles.with_overrides`, never capped by ``profile.ladder.max_factor``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
import yaml

from jepa_geometry import artifacts, cluster, stats
from jepa_geometry.analysis.measurements import Geometry, measure_arms
from jepa_geometry.envs import SIMULATOR_PRELOAD, TASK_CLASSES, TASKS, check_task, task_title
from jepa_geometry.envs.dataset import dataset_artifact, load_dataset
from jepa_geometry.jobs import check_workers, run_parallel
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.planning.solver import TIERS
from jepa_geometry.profiles import PROFILES, Profile, with_overrides
from jepa_geometry.study import claims, verdict
from jepa_geometry.study.build import cell_jobs
from jepa_geometry.study.grid import (
    EPISODE_COLUMNS,
    Cell,
    ceiling_cells,
    ceiling_pairs,
    evaluate_arms,
    evaluate_ceiling_cells,
    planning_cell,
)
from jepa_geometry.study.reference import reference_numbers
from jepa_geometry.study.rules.gate import gate_cell, protocol_gate
from jepa_geometry.study.spec import BASELINE, load_study
from jepa_geometry.study.tables.geometry import training_diagnostics
from jepa_geometry.wm.arms import arm_weights, check_arms
from jepa_geometry.wm.flops import train_step_flops
from jepa_geometry.wm.training import (
    last_logged,
    model_untrained,
    train_world_model,
    world_model_artifact,
)

SCALING_FILE = "scaling.yaml"
_FIELDS = (
    "tasks",
    "arms",
    "seeds",
    "steps",
    "resolution",
    "budget_hours",
    "workers",
    "model_seconds",
)
PAPER_STEPS_TABLE = "lewm_training_steps"
"""The reference file's table of LeWM's training budget per task (optimizer steps)."""
GATED_TASKS: tuple[str, ...] = ("cube",)
"""Tasks whose study does not plan at laptop: gated again at every point of this study."""


class ScalingError(ValueError):
    """The scaling study's file or a request names an unknown or out-of-range value."""


@dataclass(frozen=True, order=True)
class Point:
    """One compute point: ``steps`` times the task study's training steps, ``image`` times its
    image size."""

    steps: float
    image: float = 1.0

    @property
    def name(self) -> str:
        s = f"{self.steps:g}x steps"
        return s if self.image == 1.0 else f"{s}, {self.image:g}x pixels"


@dataclass(frozen=True)
class ScalingSpec:
    """The scaling study as written in ``scaling.yaml`` (see the module docstring)."""

    tasks: dict[str, tuple[str, ...]]
    arms: tuple[str, ...]
    seeds: dict[str, tuple[int, ...]]
    steps: dict[str, tuple[float, ...]]
    resolution_tasks: tuple[str, ...]
    image_factor: float
    budget_hours: dict[str, float]
    workers: int
    model_seconds: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            arms = check_arms(list(self.arms))
        except ValueError as e:
            raise ScalingError(f"scaling arms: {e}") from None
        if not arms or arms[0] != BASELINE:
            raise ScalingError(f"scaling arms {arms} must start with the baseline {BASELINE!r}")
        for name in ("tasks", "seeds", "steps", "budget_hours"):
            missing = [p for p in PROFILES if p not in getattr(self, name)]
            unknown = [p for p in getattr(self, name) if p not in PROFILES]
            if missing or unknown:
                raise ScalingError(
                    f"scaling {name} must name each profile once ({', '.join(PROFILES)}); "
                    f"missing {missing}, unknown {unknown}"
                )
        for p, tasks in self.tasks.items():
            bad = [t for t in tasks if t not in TASKS]
            if bad or not tasks or len(set(tasks)) != len(tasks):
                raise ScalingError(
                    f"scaling tasks for {p} {list(tasks)}; valid: distinct tasks of "
                    f"{', '.join(TASKS)}"
                )
        every = [t for t in TASKS if any(t in ts for ts in self.tasks.values())]
        for p, seeds in self.seeds.items():
            if not seeds or len(set(seeds)) != len(seeds) or not all(_int(s, 0) for s in seeds):
                raise ScalingError(f"scaling seeds for {p}: distinct integers >= 0, got {seeds!r}")
        for p, factors in self.steps.items():
            ok = all(_number(f) for f in factors)
            if not (
                ok
                and len(factors) >= 3
                and factors[0] == 1
                and list(factors) == sorted(set(factors))
            ):
                raise ScalingError(
                    f"scaling steps for {p}: at least three increasing factors starting at 1 "
                    f"(a trend needs three points), got {list(factors)!r}"
                )
        for p, hours in self.budget_hours.items():
            if not (_number(hours) and hours > 0):
                raise ScalingError(f"scaling budget_hours for {p} must be > 0, got {hours!r}")
        bad = [t for t in self.resolution_tasks if t not in every]
        if bad:
            raise ScalingError(f"scaling resolution tasks {bad} are not among its tasks {every}")
        if not (_number(self.image_factor) and self.image_factor > 1):
            raise ScalingError(
                f"scaling resolution image factor must be a number > 1, got {self.image_factor!r}"
            )
        if not _int(self.workers, 1):
            raise ScalingError(f"scaling workers must be an integer >= 1, got {self.workers!r}")
        for t, s in self.model_seconds.items():
            if t not in every or not (_number(s) and s > 0):
                raise ScalingError(
                    f"scaling model_seconds: {t!r}: {s!r}; valid: seconds > 0 for tasks "
                    f"{', '.join(every)}"
                )
        object.__setattr__(self, "arms", tuple(arms))

    def tasks_at(self, profile: Profile) -> tuple[str, ...]:
        """The tasks the study runs at ``profile`` (smoke: fewer, to keep the tests short)."""
        return self.tasks[profile.name]

    def points(self, profile: Profile) -> list[Point]:
        """The step points of ``profile``, then the resolution point (at 1x steps) where one of
        its tasks has one."""
        steps = [Point(float(f)) for f in self.steps[profile.name]]
        res = Point(1.0, float(self.image_factor))
        return [*steps, res] if self.point_tasks(res, profile) else steps

    def point_tasks(self, point: Point, profile: Profile) -> tuple[str, ...]:
        """The tasks a point runs on at ``profile`` (the resolution point: the manipulation
        tasks among them only)."""
        tasks = self.tasks_at(profile)
        if point.image == 1.0:
            return tasks
        return tuple(t for t in tasks if t in self.resolution_tasks)


def _int(v: Any, low: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= low


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def load_scaling() -> ScalingSpec:
    """The scaling study of ``scaling.yaml``, validated (one-line :class:`ScalingError`)."""
    text = resources.files("jepa_geometry.study").joinpath(SCALING_FILE).read_text()
    return scaling_from_dict(yaml.safe_load(text) or {})


def scaling_from_dict(raw: dict[str, Any]) -> ScalingSpec:
    """A :class:`ScalingSpec` from the file's fields (the tests pass their own)."""
    if not isinstance(raw, dict):
        raise ScalingError(f"{SCALING_FILE} must be a mapping, got {type(raw).__name__}")
    unknown, missing = sorted(set(raw) - set(_FIELDS)), [f for f in _FIELDS if f not in raw]
    if unknown or missing:
        raise ScalingError(
            f"{SCALING_FILE}: unknown fields {unknown}, missing {missing}; "
            f"fields: {', '.join(_FIELDS)}"
        )
    res = raw["resolution"]
    if not isinstance(res, dict) or set(res) != {"tasks", "image"}:
        raise ScalingError(f"{SCALING_FILE}: resolution must give tasks and image, got {res!r}")
    for name in ("tasks", "seeds", "steps", "budget_hours", "model_seconds"):
        if not isinstance(raw[name], dict):
            raise ScalingError(
                f"{SCALING_FILE}: {name} must map names to values, got {raw[name]!r}"
            )
    return ScalingSpec(
        tasks={p: tuple(v) for p, v in raw["tasks"].items()},
        arms=tuple(raw["arms"]),
        seeds={p: tuple(v) for p, v in raw["seeds"].items()},
        steps={p: tuple(v) for p, v in raw["steps"].items()},
        resolution_tasks=tuple(res["tasks"]),
        image_factor=res["image"],
        budget_hours=dict(raw["budget_hours"]),
        workers=raw["workers"],
        model_seconds=dict(raw["model_seconds"]),
    )


# --------------------------------------------------------------------------------------------
# The points' profiles
# --------------------------------------------------------------------------------------------


def study_profile(spec: ScalingSpec, task: str, base: Profile) -> Profile:
    """``task``'s study profile at ``base`` (its rung of its ladder) with the scaling study's
    training seeds: the 1x point."""
    seeds = list(spec.seeds[base.name])
    return with_overrides(load_study(task).profile(base), {"seeds.train": seeds})


def point_profile(spec: ScalingSpec, task: str, point: Point, base: Profile) -> Profile:
    """The profile of ``task`` at ``point``: the study profile with ``train.steps`` and
    ``train.warmup_steps`` times ``point.steps`` (LeWM's warm-up is a fixed fraction of the run)
    and ``data.image_size`` times ``point.image``; never capped (module docstring)."""
    check_task(task)
    p = study_profile(spec, task, base)
    out: dict[str, Any] = {}
    if point.steps != 1.0:
        out["train.steps"] = round(point.steps * p.train.steps)
        out["train.warmup_steps"] = round(point.steps * p.train.warmup_steps)
    if point.image != 1.0:
        out["data.image_size"] = round(point.image * p.data.image_size)
    return with_overrides(p, out) if out else p


def main_protocol(task: str) -> str:
    """The task study's main protocol (every point plans under it)."""
    return load_study(task).main_protocol


def cem_cells(task: str) -> list[Cell]:
    """CEM at the five tiers under the task's main protocol: the cells of every point."""
    return [Cell(main_protocol(task), "cem", t) for t in TIERS]


# --------------------------------------------------------------------------------------------
# Cost and the rule
# --------------------------------------------------------------------------------------------


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
    cells = [
        PlanningCell(task, arm, s, p, solver=c.solver, budget=c.budget, protocol=c.protocol)
        for s in seeds
        for c in cem_cells(task)
    ]
    plan = 3600 * sum(cluster.cell_hours(c) for c in cells)
    measure = 3600 * len(seeds) * p.cluster.measure_hours
    lead = arm == BASELINE
    collect = 3600 * cluster.collect_hours(task, p) if lead and point.image != 1.0 else 0.0
    gate = 0.0
    if lead and task in GATED_TASKS:
        cell = PlanningCell(task, arm, seeds[0], p, solver="cem", budget="T1")
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


# --------------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------------


def _train(task: str, arm: str, seed: int, profile: Profile) -> float:
    """One model (a process-pool job); its training wall time."""
    art = train_world_model(task, arm, seed, profile, progress=False)
    return float(art.manifest()["summary"]["train_wall_s"])


def _evaluate(cell: PlanningCell) -> float:
    """One planning cell (a process-pool job); its planning wall time."""
    return cell.evaluate(progress=False).eval_seconds


def _by_point(units: Sequence[tuple[Point, str, str]]) -> dict[tuple[Point, str], list[str]]:
    out: dict[tuple[Point, str], list[str]] = {}
    for pt, t, a in units:
        out.setdefault((pt, t), []).append(a)
    return out


def gate(spec: ScalingSpec, task: str, point: Point, base: Profile) -> dict[str, Any]:
    """Whether ``task``'s arms are planned at ``point``: a task whose study plans always is;
    a gated task (:data:`GATED_TASKS`) is when LeWM passes the gate again there."""
    if task not in GATED_TASKS:
        return {"task": task, "point": point.name, "plans": True, "reason": "its study plans"}
    p = point_profile(spec, task, point, base)
    g = protocol_gate(task, p, main_protocol(task), "validation")
    return {
        "task": task,
        "point": point.name,
        "plans": bool(g["discriminates"]),
        "reason": g["reason"],
    }


def build_scaling(
    spec: ScalingSpec, base: Profile, workers: int, progress: bool = True
) -> pd.DataFrame:
    """Build every chosen unit into the cache (cached ones are reused; an interrupted build
    resumes): datasets, models (``workers`` jobs at once), the gated tasks' gates, the CEM
    cells of every unit that plans, and the geometry. One row per stage with its seconds."""
    workers = check_workers(workers)
    units = _by_point(chosen(stated_units(spec, base, state=True)))
    rows = []

    def stage(name: str, n: int, run) -> None:
        t0 = pd.Timestamp.now()
        run()
        rows.append(
            {"stage": name, "jobs": n, "seconds": (pd.Timestamp.now() - t0).total_seconds()}
        )

    profiles = {(pt, t): point_profile(spec, t, pt, base) for pt, t in units}
    data = {(t, dataset_artifact(t, p).key): (t, p) for (_, t), p in profiles.items()}
    todo = [v for v in data.values() if not dataset_artifact(*v).exists()]
    stage("datasets", len(todo), lambda: [load_dataset(t, p, progress=progress) for t, p in todo])
    stage("FLOP counts", len(units), lambda: [point_flops(spec, t, pt, base) for pt, t in units])
    models = [(t, a, s, profiles[pt, t]) for (pt, t), arms in units.items() for a in arms
              for s in profiles[pt, t].seeds.train]  # fmt: skip
    stage(
        "models",
        len(models),
        lambda: run_parallel(
            _train, models, workers, "train scaling", progress,
            pending=model_untrained, preload=SIMULATOR_PRELOAD,
        ),
    )  # fmt: skip
    gates = {(pt, t): gate(spec, t, pt, base)["plans"] for pt, t in units}
    cells = [
        (PlanningCell(t, a, s, profiles[pt, t], solver=c.solver, budget=c.budget,
                      protocol=c.protocol),)
        for (pt, t), arms in units.items() if gates[pt, t]
        for a in arms for s in profiles[pt, t].seeds.train for c in cem_cells(t)
    ]  # fmt: skip
    stage(
        "CEM cells",
        len(cells),
        lambda: run_parallel(
            _evaluate, cells, workers, "plan scaling", progress,
            pending=PlanningCell.unbuilt, preload=SIMULATOR_PRELOAD,
        ),
    )  # fmt: skip
    stage(
        "geometry",
        len(units),
        lambda: [
            measure_arms(t, arms, profiles[pt, t], progress=False)
            for (pt, t), arms in units.items()
        ],
    )
    return pd.DataFrame(rows)


def point_cells(spec: ScalingSpec, task: str, point: Point, arms: Sequence[str], base: Profile):
    """The planning cells of ``arms`` at ``point``: CEM at the five tiers under the task's
    main protocol, every training seed (:func:`point_result` plans the same cells)."""
    p = point_profile(spec, task, point, base)
    return [
        planning_cell(task, a, s, p, c, float("nan"))
        for a in arms
        for s in p.seeds.train
        for c in cem_cells(task)
    ]


def _count_flops(task: str, profile: Profile) -> None:
    step_flops(task, profile)


def grid_units(stage: str, base: Profile, spec: ScalingSpec | None = None) -> list[cluster.Unit]:
    """The study's units of one stage of the study grid (:mod:`~jepa_geometry.study.cluster`),
    for the units of the rule as stated (:func:`stated_units`): each point's dataset, models,
    FLOP count, geometry and CEM cells, and each task's ceiling (its task study's cells, the
    page's reference). A gated point plans its gate's cell first; its CEM cells are units of
    the ``chosen`` stage, submitted once the gate is cached and passes (before that, one
    placeholder per model, reported as blocked)."""
    spec = spec or load_scaling()
    out: list[cluster.Unit] = []
    points = _by_point(chosen(stated_units(spec, base)))
    for (pt, t), arms in points.items():
        p = point_profile(spec, t, pt, base)
        note = f" ({pt.name})"
        models = [(a, s) for a in arms for s in p.seeds.train]
        gate_job = gate_cell(t, p, main_protocol(t), "validation") if t in GATED_TASKS else None
        if stage == "collect":
            out.append(cluster.collect_unit(t, p, note))
        elif stage == "train":
            out += [cluster.train_unit(t, a, s, p, note=note) for a, s in models]
        elif stage == "plan":
            flops = step_flops_artifact(t, p)
            out.append(
                cluster.Unit(
                    stage, "measure", t, f"count FLOPs {t}{note}", _count_flops, (t, p),
                    (flops,), (), p.cluster.measure_hours,
                )
            )  # fmt: skip
            out += [cluster.measure_unit(t, a, s, p, note) for a, s in models]
            if gate_job is not None:
                out += cluster.plan_units(stage, t, [gate_job], f" gate{note}")
            else:
                out += cluster.plan_units(stage, t, point_cells(spec, t, pt, arms, base), note)
        elif stage == "chosen" and gate_job is not None:
            cells = point_cells(spec, t, pt, arms, base)
            try:
                with artifacts.cache_only():
                    plans = gate(spec, t, pt, base)["plans"]
            except artifacts.NotCached:
                out += [
                    cluster.waiting_unit(
                        stage,
                        t,
                        f"plan {cluster.model_label(t, a, s)}{note}",
                        sum(
                            cluster.cell_hours(c) for c in cells if (c.arm, c.train_seed) == (a, s)
                        ),
                        f"the gate at {pt.name}",
                        gate_job.artifacts(),
                    )
                    for a, s in models
                ]
                continue
            if plans:
                out += cluster.plan_units(stage, t, cells, note)
    if stage == "plan":  # each task's ceiling, the pages' reference at every point
        for t in dict.fromkeys(t for _, t in points):
            study = load_study(t)
            ceiling = [c for c in cell_jobs(study, study.profile(base), None) if c.arm == CEILING]
            out += cluster.plan_units(stage, t, ceiling)
    return out


def state_choice(base: Profile, spec: ScalingSpec | None = None) -> str:
    """The rule's cost statement (:func:`cost_statement`) for the units as stated, stating
    and keeping them now if no build has (:func:`stated_units`)."""
    spec = spec or load_scaling()
    return cost_statement(stated_units(spec, base, state=True), spec, base.name)


GRID = cluster.Extension("scaling", grid_units, state_choice)
"""The study as an extension of the study grid (``jepa-geometry grid --with scaling``)."""


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


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


def _flops_spec(task: str, profile: Profile) -> dict[str, Any]:
    return {
        "model": profile.section("model"),
        "train": profile.section("train"),
        "clips": [profile.data.image_size, profile.data.history, profile.data.frameskip],
        "action_dim": int(TASK_CLASSES[task].action_dim),
        "version": 1,
    }


def step_flops_artifact(task: str, profile: Profile) -> artifacts.Artifact:
    """``results/train-step-flops-<task>/<key>``: where :func:`step_flops` keeps its count."""
    return artifacts.Artifact("results", f"train-step-flops-{task}", _flops_spec(task, profile))


def step_flops(task: str, profile: Profile) -> int:
    """FLOPs of one training step of ``task``'s model at ``profile``
    (:func:`~jepa_geometry.wm.flops.train_step_flops`, for the task's raw action width),
    cached as a small result (:func:`step_flops_artifact`)."""
    dim = int(TASK_CLASSES[task].action_dim)
    art = step_flops_artifact(task, profile)
    return int(artifacts.memo(art.name, art.spec, lambda: train_step_flops(profile, dim)))


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
    and count a training step's FLOPs (:func:`point_flops`)."""
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


def point_flops(spec: ScalingSpec, task: str, point: Point, base: Profile) -> int:
    """FLOPs of one training step of ``task``'s model at ``point`` (:func:`step_flops`)."""
    return step_flops(task, point_profile(spec, task, point, base))


def scaling_results(spec: ScalingSpec, base: Profile) -> ScalingResults:
    """Every chosen (point, task) of the rule as stated (:func:`stated_units`): built where
    missing at the profiles of :data:`BUILDS_IN_PAGE`, else read from the cache (a (point,
    task) not built is in ``missing`` with the artifact it lacks; none built at all is a one-line
    :class:`~jepa_geometry.artifacts.NotCached`)."""
    out, missing = [], {}
    build = base.name in BUILDS_IN_PAGE
    for (pt, t), arms in _by_point(chosen(stated_units(spec, base, state=build))).items():
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


def compute_table(results: Sequence[PointResult], budgets: pd.DataFrame) -> pd.DataFrame:
    """Each built (task, point): image size, optimizer steps, training FLOPs per model and
    their fraction of LeWM's budget on the task; then one ``paper`` row per task."""
    paper = budgets.set_index("task")
    rows = [
        {
            "task": task_title(r.task),
            "point": r.point.name,
            "image (px)": r.profile.data.image_size,
            "steps": r.profile.train.steps,
            "training FLOPs": r.train_flops,
            "of the paper's FLOPs": r.train_flops / float(paper.loc[r.task, "flops"]),
        }
        for r in results
    ]
    rows += [
        {
            "task": task_title(b.task),
            "point": f"paper ({b.source})",
            "image (px)": 224,
            "steps": b.steps,
            "training FLOPs": b.flops,
            "of the paper's FLOPs": 1.0,
        }
        for b in budgets.itertuples()
    ]
    return pd.DataFrame(rows)


def decades_to_paper(results: Sequence[PointResult], budgets: pd.DataFrame) -> str:
    """How many decades of training FLOPs lie between each task's 1x point and LeWM's budget
    on the task, as ``"4.5 to 4.6"`` (lowest to highest over the tasks)."""
    paper = budgets.set_index("task")["flops"]
    gaps = [
        math.log10(float(paper[r.task]) / r.train_flops) for r in results if r.point == Point(1.0)
    ]
    if not gaps:
        return "unknown (no 1x point is built)"
    return f"{min(gaps):.1f} to {max(gaps):.1f}"


def gate_table(results: Sequence[PointResult]) -> pd.DataFrame:
    """Whether each built (task, point) was planned, and why."""
    return pd.DataFrame(
        [
            {"task": task_title(r.task), "point": r.point.name, "planned": r.plans,
             "why": r.gate_reason}
            for r in results
        ]
    )  # fmt: skip


def missing_sentence(built: ScalingResults) -> str:
    """The chosen (point, task) results not in the cache, in one line ("none" if none)."""
    if not built.missing:
        return "none"
    return "; ".join(f"{k}: {why}" for k, why in built.missing.items())


def claim_effects(results: Sequence[PointResult]) -> pd.DataFrame:
    """Every claim of both papers (:data:`~jepa_geometry.study.claims.PAPER_CLAIMS`) that a
    point measures, one row per (claim, task, point): ``task``, ``point``, ``steps`` (the
    run's optimizer steps), ``flops`` (its training FLOPs), ``paper``, ``claim``, ``column``,
    ``direction``, ``threshold``, ``min_effect``, ``effect``, ``low``, ``high`` (95 %) and
    ``paper_effect`` (comparable papers' values only, else NaN)."""
    rows = []
    for r in results:
        m = claims.Measurements(
            r.task, r.episodes, r.geometry, main_protocol(r.task), SCALE_PROTOCOL
        )
        for spec in claims.PAPER_CLAIMS:
            item = claims.evaluate(spec, m)
            if item is None:
                continue
            c, e = item
            rows.append(
                {
                    "task": r.task,
                    "point": r.point.name,
                    "image": r.point.image,
                    "steps": r.profile.train.steps,
                    "flops": r.train_flops,
                    "paper": c.paper,
                    "claim": c.statement,
                    "column": spec.column,
                    "direction": c.direction,
                    "threshold": c.threshold,
                    "min_effect": c.min_effect,
                    "effect": e.effect,
                    "low": e.low,
                    "high": e.high,
                    "paper_effect": np.nan if c.paper_effect is None else c.paper_effect,
                }
            )
    return pd.DataFrame(rows)


def task_ceilings(spec: ScalingSpec, base: Profile) -> dict[str, pd.DataFrame]:
    """Each task's ceiling (the simulator as the model, ``study.grid.evaluate_ceiling_cells``)
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
                    pairs=ceiling_pairs(study, p),
                    progress=False,
                )
        except artifacts.NotCached:
            continue
    return out


def _cem_tier_means(episodes: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """Per (arm, seed, pair): CEM success under ``protocol`` averaged over the tiers planned
    (:func:`~jepa_geometry.study.verdict.tier_mean_success`, which checks every arm planned
    them all)."""
    cem = episodes[(episodes["protocol"] == protocol) & (episodes["solver"] == "cem")]
    return verdict.tier_mean_success(episodes, protocol, "cem", sorted(set(cem["budget"])))


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
    as many frames (:func:`~jepa_geometry.study.verdict.probe_isotropic_top8`, AnisoWM's
    premise as the verdict's precondition reads it), cond Λ and κ, and corr(v, relative
    prediction error) for the ΛReg arm, SCALE's top-2 PCs R², both Kendall-τ channels and the
    landscape Spearman ρ per arm."""
    rows = []

    def add(r: PointResult, measure: str, arm: str, values: Sequence[float], ref: float) -> None:
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        if v.size:
            rows.append({
                "task": r.task, "point": r.point.name, "image": r.point.image,
                "steps": r.profile.train.steps, "flops": r.train_flops, "measure": measure,
                "arm": arm, "value": float(v.mean()), "low": float(v.min()),
                "high": float(v.max()), "reference": ref,
            })  # fmt: skip

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
                verdict.probe_isotropic_top8(r.profile),
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


# --------------------------------------------------------------------------------------------
# The trend
# --------------------------------------------------------------------------------------------

Z95 = verdict.Z95
N_TREND_BOOT = 2000
TREND_SEED = 0
SE_FLOOR = 1e-6  # guards the weights; trend_table leaves degenerate intervals out of the fit


def wls_line(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted least squares ``y = a + b x``: ``b = Σw(x - x̄)(y - ȳ) / Σw(x - x̄)²`` with
    weighted means; returns ``(a, b)``."""
    xm, ym = np.average(x, weights=w), np.average(y, weights=w)
    sxx = float(np.sum(w * (x - xm) ** 2))
    if sxx == 0:
        raise ScalingError("a trend needs at least two distinct compute points")
    b = float(np.sum(w * (x - xm) * (y - ym)) / sxx)
    return ym - b * xm, b


def trend(
    flops: Sequence[float],
    effect: Sequence[float],
    low: Sequence[float],
    high: Sequence[float],
    target: float,
    direction: int = 1,
    seed: int = TREND_SEED,
    n_boot: int = N_TREND_BOOT,
) -> dict[str, Any]:
    """The trend of an effect against log10 training FLOPs, and where it would reach ``target``.

    Each point's standard error is its 95 % interval's half-width / 1.96; the line is the
    weighted least-squares fit with weights 1 / se² (:func:`wls_line`). Its interval is a
    parametric bootstrap: each effect redrawn from ``N(effect, se²)``, the line refitted
    ``n_boot`` times; the 2.5 and 97.5 percentiles of the slope. The crossing is the compute
    beyond the largest one studied at which the line reaches ``target`` in the claim's
    ``direction`` (±1): ``log10 F* = (target - a) / b`` when ``direction · b > 0``; a line that
    is already at or beyond the target at the largest budget has *reached* it (its crossing is
    that budget); one moving away never reaches it (``inf``). The crossing's interval is the
    same percentiles over the redraws (nearest rank), unbounded when more than 2.5 % of the
    redraws never reach the target (then the crossing is *not estimable*). Three points make a
    weak extrapolation: the interval says how weak, under a straight line in log compute, which
    is itself an assumption. Keys: ``slope`` (per decade of FLOPs), ``slope_low``,
    ``slope_high``, ``cross`` (FLOPs, NaN when never), ``cross_low``, ``cross_high``,
    ``reached``, ``estimable``, ``points``.
    """
    if direction not in (1, -1):
        raise ScalingError(f"direction must be +1 or -1, got {direction!r}")
    x = np.log10(np.asarray(flops, dtype=float))
    y, lo, hi = (np.asarray(v, dtype=float) for v in (effect, low, high))
    if not (len(x) == len(y) == len(lo) == len(hi)) or len(x) < 2:
        raise ScalingError(f"a trend needs at least two points with intervals, got {len(x)}")
    if not all(np.all(np.isfinite(v)) for v in (x, y, lo, hi)):
        raise ScalingError("a trend needs finite FLOPs, effects and intervals")
    se = np.maximum((hi - lo) / (2 * Z95), SE_FLOOR)
    w = 1 / se**2
    a, b = wls_line(x, y, w)
    rng = np.random.default_rng(seed)
    draws = y + se * rng.standard_normal((n_boot, len(x)))
    fits = np.array([wls_line(x, d, w) for d in draws])
    slopes = fits[:, 1]
    top = x.max()

    def crossing(a_: np.ndarray, b_: np.ndarray) -> np.ndarray:
        reached = direction * (a_ + b_ * top - target) >= 0
        toward = direction * b_ > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.where(toward, (target - a_) / np.where(toward, b_, 1.0), np.inf)
        return np.where(reached, top, c)

    cs = crossing(fits[:, 0], slopes)
    c0 = float(crossing(np.array([a]), np.array([b]))[0])
    ranked = np.sort(cs)  # nearest-rank percentiles: an unbounded draw stays inf
    lo_c = ranked[math.floor(0.025 * (n_boot - 1))]
    hi_c = ranked[math.ceil(0.975 * (n_boot - 1))]
    estimable = bool(np.isfinite(hi_c) and np.isfinite(c0))
    return {
        "slope": b,
        "slope_low": float(np.percentile(slopes, 2.5)),
        "slope_high": float(np.percentile(slopes, 97.5)),
        "cross": _pow10(c0) if np.isfinite(c0) else np.nan,
        "cross_low": _pow10(float(lo_c)),
        "cross_high": _pow10(float(hi_c)),
        "reached": bool(direction * (a + b * top - target) >= 0),
        "estimable": estimable,
        "points": len(x),
    }


def _pow10(log10: float) -> float:
    """``10 ** log10`` FLOPs; ``inf`` for a crossing never reached and beyond a float's range
    (a line that flat reaches nothing a reader can compare)."""
    with np.errstate(over="ignore"):
        return float(np.power(10.0, log10))


READINGS: tuple[str, ...] = ("grows", "shrinks", "stays", "unclear")


def reading(t: dict[str, Any], direction: int, min_effect: float, decades: float) -> str:
    """How an effect moves with compute, in the claim's direction: **grows** when the slope's
    interval lies above zero, **shrinks** below; **stays** when the change its interval allows
    over the studied ``decades`` of FLOPs is within ± ``min_effect``; else **unclear**."""
    lo, hi = sorted((direction * t["slope_low"], direction * t["slope_high"]))
    if lo > 0:
        return "grows"
    if hi < 0:
        return "shrinks"
    if max(abs(lo), abs(hi)) * decades <= min_effect:
        return "stays"
    return "unclear"


def trend_table(effects: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, claim) measured at two or more step points (the resolution point
    is shown, not fitted): its :func:`trend` toward the verdict's minimum effect in the claim's
    direction (``target = direction (threshold + min_effect)``), its :func:`reading`, and the
    crossing in FLOPs with its interval (``not estimable`` where unbounded). A point whose
    interval is unbounded (a per-model measure of one training seed) or degenerate (every unit
    equal, e.g. both arms at 0 of n: inconclusive under the verdict rule too) carries no
    information on its precision and is left out of the fit; a claim with fewer than two
    points left reads **unclear**, its crossing not estimable."""
    rows = []
    steps_only = effects[effects["image"] == 1.0]
    for (task, claim), grp in steps_only.groupby(["task", "claim"], sort=False):
        grp = grp.sort_values("flops")
        if grp["flops"].nunique() < 2:
            continue
        bounded = grp[
            np.isfinite(grp["low"]) & np.isfinite(grp["high"]) & (grp["high"] > grp["low"])
        ]
        if bounded["flops"].nunique() < 2:
            rows.append({
                "task": task, "paper": grp["paper"].iloc[0], "claim": claim,
                "points": bounded["flops"].nunique(), "reading": "unclear",
                "crossing": "not estimable",
            })  # fmt: skip
            continue
        grp = bounded
        d = int(grp["direction"].iloc[0])
        target = d * (float(grp["threshold"].iloc[0]) + float(grp["min_effect"].iloc[0]))
        t = trend(grp["flops"], grp["effect"], grp["low"], grp["high"], target, d)
        decades = float(np.log10(grp["flops"].max() / grp["flops"].min()))
        rows.append({
            "task": task, "paper": grp["paper"].iloc[0], "claim": claim,
            "points": t["points"], "slope per decade": t["slope"],
            "slope low": t["slope_low"], "slope high": t["slope_high"],
            "reading": reading(t, d, float(grp["min_effect"].iloc[0]), decades),
            "target": target, "crossing (FLOPs)": t["cross"],
            "crossing low": t["cross_low"], "crossing high": t["cross_high"],
            "crossing": crossing_words(t),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=TREND_COLUMNS)


TREND_COLUMNS: tuple[str, ...] = (
    "task", "paper", "claim", "points", "slope per decade", "slope low", "slope high",
    "reading", "target", "crossing (FLOPs)", "crossing low", "crossing high", "crossing",
)  # fmt: skip


def crossing_words(t: dict[str, Any]) -> str:
    """The crossing as a reader reads it: ``1.2e+14 FLOPs [3.0e+13, 8.1e+15]`` or
    ``not estimable`` (the interval is unbounded)."""
    if not t["estimable"]:
        return "not estimable"
    if t["reached"]:
        return "reached within the studied budgets"
    return f"{t['cross']:.1e} FLOPs [{t['cross_low']:.1e}, {t['cross_high']:.1e}]"


__all__ = [
    "GATED_TASKS",
    "PAPER_STEPS_TABLE",
    "READINGS",
    "UNIT_PARTS",
    "Point",
    "PointResult",
    "ScalingError",
    "ScalingSpec",
    "budget_table",
    "build_scaling",
    "compute_table",
    "gate_table",
    "missing_sentence",
    "cem_cells",
    "choose_units",
    "chosen",
    "claim_effects",
    "cost_statement",
    "decades_to_paper",
    "crossing_words",
    "gate",
    "load_scaling",
    "paper_budget",
    "point_profile",
    "premise_table",
    "priority",
    "reading",
    "scaling_from_dict",
    "scaling_results",
    "point_flops",
    "point_result",
    "ScalingResults",
    "BUILDS_IN_PAGE",
    "seconds_per_step",
    "GRID",
    "grid_units",
    "point_cells",
    "state_choice",
    "step_flops_artifact",
    "stated_units",
    "step_flops",
    "study_profile",
    "trend",
    "trend_table",
    "unit_cost",
    "wls_line",
]
