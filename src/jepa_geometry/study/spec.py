"""One specification per task study: which arms, protocols and seeds its chapters use.

A task's study is presented by several chapters (planning, then geometry and verdict). They
must never disagree on what was run, or one of them would silently plan new cells, so every
chapter of a task loads the same :class:`StudySpec` from ``specs/<task>.yaml`` and passes it
on; none re-declares an arm, a protocol or a seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

from jepa_geometry.envs import check_task
from jepa_geometry.planning.protocol import PROTOCOLS
from jepa_geometry.planning.solver import STUDY_SOLVERS
from jepa_geometry.profiles import MAX_SEED, PROFILES, Profile
from jepa_geometry.study.levers import Lever, ladder_rung
from jepa_geometry.wm.arms import ARMS, check_arms

BASELINE = "lewm"
DECISION_TASK = "tworoom"
"""The task on which the book's one-off modelling decisions were taken, each by a rule written
before its models were trained: SIGReg's strength (``tables.sigreg_strength_decision``) and the
ΛReg variant (``lambdareg.choose_variant``). Every task's study applies them; its pages show
the decision as taken there."""
HEADLINE_BUDGET: dict[str, tuple[float, int]] = {"laptop": (8.0, 2)}
"""Per profile, the budget of the headline seeds' added work: wall-clock hours on that many
cores (8 hours of the 2-core machine that builds the laptop book). The dry run states
their work against it (``jepa-geometry grid --dry-run``); were it over, the cost rule fixed
before any of their models was trained would choose within it (README, *Five seeds for the
headline claims*)."""
_FIELDS = ("task", "arms", "protocols", "solver_seeds", "secondary_seeds", "about")
_OPTIONAL = ("solvers", "ladder", "settings", "plans", "ceiling", "headline_seeds")


class SpecError(ValueError):
    """A study specification names an unknown task, arm, protocol or seed."""


@dataclass(frozen=True)
class HeadlineSeeds:
    """Training seeds added, per profile, to the arms that the papers' headline claims compare
    (the primary families of :mod:`jepa_geometry.verdict.records`).

    A headline claim compares two arms on one task; at a small scale its effect can be smaller
    than three seeds resolve. The added seeds train ``arms`` again, plan them with CEM at every
    tier of the main protocol (the cells the success claims read) and measure them (the probes
    and rank channels the geometry claims read); every other cell, arm and solver keeps the
    profile's training seeds, so nothing else is recomputed (README, *Five seeds for the headline
    claims*)."""

    arms: tuple[str, ...]
    seeds: dict[str, tuple[int, ...]]
    """Profile name -> the seeds added there (a profile not named adds none)."""


@dataclass(frozen=True)
class StudySpec:
    """The grid of one task's study.

    ``protocols[0]`` is the main protocol: the MPPI temperature is chosen under it and CEM
    plans with every training seed there; iCEM and MPPI plan with ``solver_seeds``; the other
    protocols plan every cell with ``secondary_seeds``. ``None`` means every training seed.
    The arms of ``headline_seeds`` are also trained with its added seeds, planned with CEM
    under the main protocol and measured (:meth:`models`).
    """

    task: str
    arms: tuple[str, ...]
    protocols: tuple[str, ...]
    solver_seeds: tuple[int, ...] | None
    secondary_seeds: tuple[int, ...] | None
    about: str
    solvers: tuple[str, ...] | None = None
    """The solver labels the study plans (``planning.solver.STUDY_SOLVERS``); None: every
    registered one, so a planner added there is planned by every study that names none."""
    ladder: tuple[Lever, ...] = ()
    """The task's ladder (:mod:`.levers`): the rungs its gate may climb, each adding one lever
    to the rung before, fixed before any gate ran; empty for a task that plans as profiled."""
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
    headline_seeds: HeadlineSeeds | None = None
    """Seeds added to the headline claims' arms (:class:`HeadlineSeeds`); None: none."""

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
        unknown = [s for s in self.solvers or () if s not in STUDY_SOLVERS]
        if unknown or (self.solvers is not None and not self.solvers):
            raise SpecError(
                f"study {self.task!r}: solvers {list(self.solvers or ())}; valid: null or a "
                f"non-empty list of {', '.join(STUDY_SOLVERS)}"
            )
        if self.ceiling is not None and (
            isinstance(self.ceiling, bool) or not isinstance(self.ceiling, int) or self.ceiling < 1
        ):
            raise SpecError(
                f"study {self.task!r}: ceiling must be null or a number of pairs >= 1, "
                f"got {self.ceiling!r}"
            )
        if self.headline_seeds is not None:
            object.__setattr__(self, "headline_seeds", self._checked_headline(self.headline_seeds))
        for name, rung in self.settings.items():
            if name not in PROFILES:
                raise SpecError(
                    f"study {self.task!r}: settings for unknown profile {name!r}; "
                    f"valid: {', '.join(PROFILES)}"
                )
            try:
                lever = ladder_rung(self.ladder, self.task, rung)
            except ValueError as e:
                raise SpecError(f"study {self.task!r}: {e}") from None
            if lever.protocol != self.main_protocol:
                raise SpecError(
                    f"study {self.task!r}: the {name} rung {rung!r} plans under "
                    f"{lever.protocol}, but the main protocol is {self.main_protocol}"
                )

    def _checked_headline(self, given: HeadlineSeeds) -> HeadlineSeeds:
        """``given`` with canonical arm names, or a one-line :class:`SpecError`: its arms must
        be distinct arms of the study, the baseline among them (every headline claim is paired
        against it, seed by seed); its seeds, per profile, distinct integers in the profiles'
        range."""
        where = f"study {self.task!r}: headline_seeds"
        try:
            arms = check_arms(list(given.arms))
        except ValueError as e:
            raise SpecError(f"{where}: {e}") from None
        bad = [a for a in arms if a not in self.arms]
        if bad or BASELINE not in arms:
            raise SpecError(
                f"{where}: arms {list(given.arms)} must be arms of the study, {BASELINE!r} "
                f"among them; valid: {', '.join(self.arms)}"
            )
        for name, seeds in given.seeds.items():
            if name not in PROFILES:
                raise SpecError(
                    f"{where}: seeds for unknown profile {name!r}; valid: {', '.join(PROFILES)}"
                )
            if (
                not isinstance(seeds, tuple | list)
                or not seeds
                or len(set(seeds)) != len(seeds)
                or any(
                    isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= MAX_SEED
                    for s in seeds
                )
            ):
                raise SpecError(
                    f"{where}: the {name} seeds must be a non-empty list of distinct integers "
                    f"in [0, {MAX_SEED}], got {seeds!r}"
                )
        ordered = tuple(a for a in self.arms if a in arms)  # the study's order, as models()
        return HeadlineSeeds(ordered, {k: tuple(v) for k, v in given.seeds.items()})

    def added_seeds(self, profile: Profile) -> list[int]:
        """The headline seeds added under ``profile``: those :attr:`headline_seeds` names for
        its name that are not already training seeds of it (those train every arm anyway)."""
        if self.headline_seeds is None:
            return []
        named = self.headline_seeds.seeds.get(profile.name, ())
        return [s for s in named if s not in profile.seeds.train]

    def headline_models(self, profile: Profile) -> list[tuple[str, int]]:
        """The (arm, training seed) models the headline seeds add under ``profile``: each
        headline arm with each :meth:`added_seeds`, seed by seed."""
        added = self.added_seeds(profile)
        return [(arm, s) for s in added for arm in self.headline_seeds.arms] if added else []

    def models(self, profile: Profile) -> list[tuple[str, int]]:
        """Every (arm, training seed) model of the study under ``profile``: each arm with each
        of the profile's training seeds, seed by seed, then :meth:`headline_models`."""
        every = [(arm, s) for s in profile.seeds.train for arm in self.arms]
        return every + self.headline_models(profile)

    def seeds_label(self, profile: Profile) -> str:
        """The training seeds per model in words: ``"3"``, or ``"3; 5 for lewm, scale,
        anisowm"`` where the headline seeds add some."""
        n = len(profile.seeds.train)
        added = self.added_seeds(profile)
        if not added:
            return str(n)
        return f"{n}; {n + len(added)} for {', '.join(self.headline_seeds.arms)}"

    def headline_sentence(self, profile: Profile) -> str:
        """What the headline seeds add under ``profile``, in one sentence for a page (empty
        where they add none)."""
        added = self.added_seeds(profile)
        if not added:
            return ""
        n, words = len(profile.seeds.train), [str(s) for s in added]
        seeds = ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]
        return (
            f"The arms the papers' headline claims compare ({', '.join(self.headline_seeds.arms)})"
            f" are also trained with seed{'s' if len(words) > 1 else ''} {seeds}, planned with "
            "CEM at every tier of the main protocol and measured, so those claims rest on "
            f"{n + len(words)} training seeds; every other cell keeps {n}."
        )

    def with_arms(self, arms: Sequence[str]) -> StudySpec:
        """This study with ``arms`` instead of its own (``grid --arms``, a study without an
        arm it cannot build). The headline seeds stay with those of their arms it still has,
        and go when the baseline alone is left: a headline claim compares two arms."""
        try:
            names = check_arms(list(arms))
        except ValueError as e:
            raise SpecError(f"study {self.task!r}: {e}") from e
        head = self.headline_seeds
        if head is not None:
            kept = tuple(a for a in head.arms if a in names)
            head = replace(head, arms=kept) if set(kept) - {BASELINE} else None
        return replace(self, arms=tuple(names), headline_seeds=head)

    def lever(self, profile: Profile) -> Lever | None:
        """The rung this study runs at under ``profile`` (``None``: as profiled)."""
        rung = self.settings.get(profile.name)
        return None if rung is None else ladder_rung(self.ladder, self.task, rung)

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
        solvers=None if raw.get("solvers") is None else listed("solvers", "solver labels"),
        ladder=_ladder(path, raw.get("ladder", [])),
        settings=_settings(task, raw.get("settings", {})),
        plans=_plans(task, raw.get("plans", True)),
        ceiling=raw.get("ceiling"),
        headline_seeds=_headline_seeds(path, raw.get("headline_seeds")),
    )


def _headline_seeds(path: Traversable, raw: Any) -> HeadlineSeeds | None:
    """The ``headline_seeds`` field's shape (its values are checked by :class:`StudySpec`):
    null, or ``{arms: [...], seeds: {<profile>: [...]}}``."""
    if raw is None:
        return None
    if (
        not isinstance(raw, dict)
        or set(raw) != {"arms", "seeds"}
        or not isinstance(raw["arms"], list)
        or not isinstance(raw["seeds"], dict)
        or not all(isinstance(v, list) for v in raw["seeds"].values())
    ):
        raise SpecError(
            f"study file {path}: headline_seeds must be null or "
            f"{{arms: [arm, ...], seeds: {{profile: [seed, ...]}}}}, got {raw!r}"
        )
    return HeadlineSeeds(tuple(raw["arms"]), {k: tuple(v) for k, v in raw["seeds"].items()})


def _ladder(path: Traversable, raw: Any) -> tuple[Lever, ...]:
    """The ``ladder`` field: a list of rungs ``{name: ..., image: 1.5, steps: 3.0,
    episodes: 2.0, protocol: ...}`` (every key but ``name`` optional, :class:`.levers.Lever`)."""
    fields = ("name", "image", "steps", "episodes", "protocol")
    if not isinstance(raw, list) or not all(
        isinstance(r, dict) and "name" in r and set(r) <= set(fields) for r in raw
    ):
        raise SpecError(
            f"study file {path}: ladder must be a list of rungs with keys {', '.join(fields)} "
            f"(name required), got {raw!r}"
        )
    try:
        return tuple(Lever(**r) for r in raw)
    except (TypeError, ValueError) as e:
        raise SpecError(f"study file {path}: ladder: {e}") from None


def task_ladder(task: str) -> tuple[Lever, ...]:
    """The ladder of ``task``'s study file (empty when the task has no study or no ladder)."""
    return load_study(task).ladder if task in available_studies() else ()


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
