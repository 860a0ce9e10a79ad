"""The scaling study as written: how the papers' effects move as training compute grows
toward theirs, its file (``scaling.yaml``), its compute points and each point's profile.

The laptop book trains for about 1 % of the papers' optimizer steps and sees 64-96 px frames
against 224. This study retrains the arms of ``scaling.yaml`` on Two-Room, Push-T and Cube at
several training budgets (multiples of each task study's own steps, each a complete run with
LeWM's warm-up and cosine schedule: an intermediate checkpoint of a cosine run is not a shorter
run) and at one higher resolution for the manipulation tasks, plans each model with CEM at the
five tiers under its task's main protocol, measures its geometry, and reads every claim of
both papers at every point with the trend of each effect against training FLOPs.

The study in modules, one concept each: this one (the spec, a point's profile and its
training FLOPs); :mod:`.choice` (the cost of a unit and the rule that chooses the units
within the budget); :mod:`.build` (building the chosen units, and their units of the
study grid); :mod:`.results` (what each built point measured, every claim's effect
there); :mod:`.trend` (each effect's trend against compute);
:mod:`jepa_geometry.book.tables.scaling` (chapter 9's tables and sentences).

A point's factors are not ladder rungs: they are applied with
:func:`~jepa_geometry.profiles.with_overrides`, never capped by ``profile.ladder.max_factor``
(:func:`point_profile`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from jepa_geometry import artifacts
from jepa_geometry.envs import TASK_CLASSES, TASKS, check_task
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.solver import TIERS
from jepa_geometry.profiles import PROFILES, Profile, with_overrides
from jepa_geometry.study.cells import Cell
from jepa_geometry.study.spec import BASELINE, load_study
from jepa_geometry.wm.arms import check_arms
from jepa_geometry.wm.flops import train_step_flops

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
    text = resources.files("jepa_geometry.extensions.scaling").joinpath(SCALING_FILE).read_text()
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


def model_cells(task: str, arm: str, seed: int, profile: Profile) -> list[PlanningCell]:
    """The planning cells of one model at a point (``profile``): :func:`cem_cells`, costed by
    the rule and planned by the build."""
    return [
        PlanningCell(task, arm, seed, profile, solver=c.solver, tier=c.tier, protocol=c.protocol)
        for c in cem_cells(task)
    ]


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


def point_flops(spec: ScalingSpec, task: str, point: Point, base: Profile) -> int:
    """FLOPs of one training step of ``task``'s model at ``point`` (:func:`step_flops`)."""
    return step_flops(task, point_profile(spec, task, point, base))


__all__ = [
    "GATED_TASKS",
    "Point",
    "SCALING_FILE",
    "ScalingError",
    "ScalingSpec",
    "cem_cells",
    "load_scaling",
    "main_protocol",
    "point_flops",
    "point_profile",
    "scaling_from_dict",
    "step_flops",
    "step_flops_artifact",
    "study_profile",
]
