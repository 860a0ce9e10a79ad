"""One specification per task study: which arms, protocols and seeds its chapters use.

A task's study is presented by several chapters (planning, then geometry and verdict). They
must never disagree on what was run, or one of them would silently plan new cells, so every
chapter of a task loads the same :class:`StudySpec` from ``specs/<task>.yaml`` and passes it
on; none re-declares an arm, a protocol or a seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

from jepa_geometry.envs import check_task
from jepa_geometry.planning.protocol import PROTOCOLS
from jepa_geometry.profiles import PROFILES, Profile
from jepa_geometry.study.levers import Lever, ladder_lever
from jepa_geometry.wm.arms import ARMS, check_arms

BASELINE = "lewm"
DECISION_TASK = "tworoom"
"""The task on which the book's one-off modelling decisions were taken, each by a rule written
before its models were trained: SIGReg's strength (``tables.sigreg_strength_decision``) and the
ΛReg variant (``lambdareg.choose_variant``). Every task's study applies them; its pages show
the decision as taken there."""
_FIELDS = ("task", "arms", "protocols", "solver_seeds", "secondary_seeds", "about")
_OPTIONAL = ("settings", "plans", "ceiling")


class SpecError(ValueError):
    """A study specification names an unknown task, arm, protocol or seed."""


@dataclass(frozen=True)
class StudySpec:
    """The grid of one task's study.

    ``protocols[0]`` is the main protocol: the MPPI temperature is chosen under it and CEM
    plans with every training seed there; iCEM and MPPI plan with ``solver_seeds``; the other
    protocols plan every cell with ``secondary_seeds``. ``None`` means every training seed.
    """

    task: str
    arms: tuple[str, ...]
    protocols: tuple[str, ...]
    solver_seeds: tuple[int, ...] | None
    secondary_seeds: tuple[int, ...] | None
    about: str
    settings: dict[str, str] = field(default_factory=dict)
    """Profile name -> the rung of the task's ladder the study runs at there
    (:mod:`.levers`); a profile not named runs as profiled."""
    plans: bool = True
    """False for a task whose gate failed at every rung of its ladder: its arms are trained
    and measured (geometry needs no planner) but never compared by planning."""
    ceiling: int | None = None
    """Pairs of every planning cell also planned with the simulator as the world model (the
    ceiling, :mod:`jepa_geometry.planning.ceiling`): a seeded subset of that many pairs, or
    all of them when the profile draws fewer; None: no ceiling."""

    def __post_init__(self) -> None:
        check_task(self.task)
        try:
            names = check_arms(list(self.arms))
        except ValueError as e:
            raise SpecError(f"study {self.task!r}: {e}") from e
        if BASELINE not in names:
            raise SpecError(f"study {self.task!r}: arms {names} must include {BASELINE!r}")
        bad = [p for p in self.protocols if p not in PROTOCOLS]
        if bad or not self.protocols or len(set(self.protocols)) != len(self.protocols):
            raise SpecError(
                f"study {self.task!r}: protocols {list(self.protocols)}; valid: "
                f"a non-empty list of distinct protocols ({', '.join(PROTOCOLS)})"
            )
        for name in ("solver_seeds", "secondary_seeds"):
            seeds = getattr(self, name)
            if seeds is not None and (
                not seeds
                or len(set(seeds)) != len(seeds)
                or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds)
            ):
                raise SpecError(
                    f"study {self.task!r}: {name} must be null or distinct "
                    f"integers >= 0, got {seeds!r}"
                )
        object.__setattr__(self, "arms", tuple(names))
        if self.ceiling is not None and (
            isinstance(self.ceiling, bool) or not isinstance(self.ceiling, int) or self.ceiling < 1
        ):
            raise SpecError(
                f"study {self.task!r}: ceiling must be null or a number of pairs >= 1, "
                f"got {self.ceiling!r}"
            )
        for name, rung in self.settings.items():
            if name not in PROFILES:
                raise SpecError(
                    f"study {self.task!r}: settings for unknown profile {name!r}; "
                    f"valid: {', '.join(PROFILES)}"
                )
            try:
                lever = ladder_lever(self.task, rung)
            except ValueError as e:
                raise SpecError(f"study {self.task!r}: {e}") from None
            if lever.protocol != self.main_protocol:
                raise SpecError(
                    f"study {self.task!r}: the {name} rung {rung!r} plans under "
                    f"{lever.protocol}, but the main protocol is {self.main_protocol}"
                )

    def lever(self, profile: Profile) -> Lever | None:
        """The rung this study runs at under ``profile`` (``None``: as profiled)."""
        rung = self.settings.get(profile.name)
        return None if rung is None else ladder_lever(self.task, rung)

    def profile(self, base: Profile) -> Profile:
        """``base`` with the study's rung for it applied (the profile every chapter and
        build of this study uses)."""
        lever = self.lever(base)
        return base if lever is None else lever.apply(self.task, base)

    @property
    def main_protocol(self) -> str:
        return self.protocols[0]

    def seeds(self, which: str, profile: Profile) -> list[int]:
        """``solver_seeds`` or ``secondary_seeds`` resolved against the profile's training seeds."""
        given = getattr(self, which)
        seeds = list(profile.seeds.train if given is None else given)
        bad = [s for s in seeds if s not in profile.seeds.train]
        if bad:
            raise SpecError(
                f"study {self.task!r}: {which} {seeds} are not all training seeds of profile "
                f"{profile.name!r}: {list(profile.seeds.train)}"
            )
        return seeds


def available_studies() -> list[str]:
    """Tasks that have a study specification."""
    folder = resources.files("jepa_geometry.study").joinpath("specs")
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


def load_study(task: str) -> StudySpec:
    """The study specification of ``task`` (``specs/<task>.yaml``), validated."""
    valid = available_studies()
    if task not in valid:
        raise SpecError(f"no study specification for task {task!r}; valid: {', '.join(valid)}")
    path = resources.files("jepa_geometry.study").joinpath("specs", f"{task}.yaml")
    return read_study(path, task)


def read_study(path: Traversable, task: str) -> StudySpec:
    """The study specification of ``task`` in the file ``path``, validated.

    A study file is written by hand: every fault of it (not YAML, not a mapping, a field of
    the wrong kind) stops in one line naming the file, the field and what is valid, before a
    value reaches the code that would fail on it with a traceback (a string where a list
    belongs reads as its letters: ``arms: lewm`` as the arms l, e, w, m).
    """
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or type(e).__name__
        raise SpecError(f"study file {path}: not valid YAML{where}: {problem}") from None
    if not isinstance(raw, dict):
        raise SpecError(f"study file {path}: a mapping of fields, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(_FIELDS) - set(_OPTIONAL))
    missing = [f for f in _FIELDS if f not in raw]
    if unknown or missing:
        raise SpecError(
            f"study file {path}: unknown fields {unknown}, missing {missing}; "
            f"fields: {', '.join(_FIELDS)} (optional: {', '.join(_OPTIONAL)})"
        )
    if raw["task"] != task:
        raise SpecError(f"study file {path} describes task {raw['task']!r}")

    def listed(key: str, what: str, null: str = "") -> tuple[Any, ...] | None:
        value = raw[key]
        if value is None and null:
            return None
        if not isinstance(value, list) or not value:
            raise SpecError(
                f"study file {path}: {key} must be {null}a non-empty list of {what}, got {value!r}"
            )
        return tuple(value)

    seeds = ("integers >= 0", "null (every training seed) or ")
    return StudySpec(
        task=task,
        arms=listed("arms", f"arms ({', '.join(ARMS)} or a sum such as scale+aux)"),
        protocols=listed("protocols", f"protocols ({', '.join(PROTOCOLS)})"),
        solver_seeds=listed("solver_seeds", *seeds),
        secondary_seeds=listed("secondary_seeds", *seeds),
        about=str(raw["about"]).strip(),
        settings=_settings(task, raw.get("settings", {})),
        plans=_plans(task, raw.get("plans", True)),
        ceiling=raw.get("ceiling"),
    )


def _plans(task: str, raw: Any) -> bool:
    if not isinstance(raw, bool):
        raise SpecError(f"study file {task}.yaml: plans must be true or false, got {raw!r}")
    return raw


def _settings(task: str, raw: Any) -> dict[str, str]:
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise SpecError(
            f"study file {task}.yaml: settings must map profile names to rung names, got {raw!r}"
        )
    return dict(raw)
