"""What a chapter parameter may be: one rule per parameter name, checked before any work.

A chapter's ``parameters`` cell gives each parameter a default (:func:`parameters_of` reads
it), and :func:`validate_parameters` checks a given value against the default's type.
That says nothing about ranges, names or parameters whose default is ``None``; the rules below
do, for every chapter alike, so ``trained_seed = -1``, ``trained_task = "foo"``,
``num_seeds = "abc"`` or ``arms = []`` stop with one line naming the valid values instead of
failing mid-notebook after figures were written. ``tests/book/test_book.py`` checks that every
parameter of every chapter is covered (a default that fixes its type, or a rule here).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

from jepa_geometry.envs import TASKS
from jepa_geometry.extensions.own_objective import PLANNERS
from jepa_geometry.profiles import MAX_SEED, PROFILES, ProfileError
from jepa_geometry.study.spec import available_studies, load_study, task_ladder
from jepa_geometry.theory.toy2d import REGULARIZERS
from jepa_geometry.wm.arms import check_arms
from jepa_geometry.wm.user_objective import SIGNATURE, load_term

MAX_COUNT = 10_000
"""The largest count a page takes (frames in a strip, examples, seeds, workers): nothing a page
shows or builds has that many of anything, so a larger value is a typo, stopped before the
kernel starts instead of failing (or running for days) inside it."""


def _int(v: Any, low: int, high: int = MAX_COUNT) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _number(v: Any, low: float, strict: bool) -> bool:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    if isinstance(v, float) and not math.isfinite(v):
        return False
    return v > low if strict else v >= low


def _numbers(v: Any, low: float, strict: bool, distinct: bool = True) -> bool:
    """A non-empty list of finite numbers above ``low``; with ``distinct`` (a sweep: each value
    is one run) no value twice."""
    return (
        isinstance(v, list | tuple)
        and len(v) > 0
        and all(_number(x, low, strict) for x in v)
        and (not distinct or len(set(v)) == len(v))
    )


def _arms(v: Any) -> bool:
    if not isinstance(v, list | tuple) or not v or not all(isinstance(a, str) for a in v):
        return False
    try:
        check_arms(list(v))
    except ValueError:
        return False
    return True


def _objective(v: Any) -> bool:
    """The path of a Python file that loads and defines its term (:func:`load_term`). What is
    wrong with a file that is there (no ``term``, a syntax error, a bad signature) is the
    loader's own line, raised as it is (:func:`check_parameter` names the parameter): the
    rule's "must be the path of a Python file" would read as a wrong path."""
    if not isinstance(v, str) or not v.endswith(".py"):
        return False
    load_term(v)
    return True


def _seeds(v: Any) -> bool:
    return (
        isinstance(v, list | tuple)
        and len(v) > 0
        and all(_int(x, 0, MAX_SEED) for x in v)
        and len(set(v)) == len(v)
    )


def _choices(v: Any, valid: tuple[str, ...]) -> bool:
    return (
        isinstance(v, list | tuple)
        and len(v) > 0
        and all(x in valid for x in v)
        and len(set(v)) == len(v)
    )


_TASK = (f"one of {', '.join(TASKS)}", lambda v: v in TASKS)
_SEED = (f"an integer from 0 to {MAX_SEED}", lambda v: _int(v, 0, MAX_SEED))
_COUNT = (f"an integer from 1 to {MAX_COUNT}", lambda v: _int(v, 1))
_POSITIVE = ("a finite number > 0", lambda v: _number(v, 0, True))

RULES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "task": _TASK,
    "trained_task": _TASK,
    "seed": _SEED,
    "trained_seed": _SEED,
    "trained_arm": (
        "an arm: lewm, scale, aux, anisowm or a sum such as scale+anisowm",
        lambda v: _arms([v]),
    ),
    "arms": ("a non-empty list of distinct arms (lewm, scale, aux, anisowm, or sums)", _arms),
    "regularizers": (
        f"a non-empty list of distinct regularizers ({', '.join(REGULARIZERS)})",
        lambda v: _choices(v, REGULARIZERS),
    ),
    "num_seeds": (f"null or an integer from 1 to {MAX_COUNT}", lambda v: v is None or _int(v, 1)),
    "workers": (f"null or an integer from 1 to {MAX_COUNT}", lambda v: v is None or _int(v, 1)),
    "kappa": ("null or a finite number >= 1", lambda v: v is None or _number(v, 1, False)),
    "noise_levels": (
        "null or a non-empty list of distinct finite numbers > 0",
        lambda v: v is None or _numbers(v, 0, True),
    ),
    "state_scales": (
        "a non-empty list of distinct finite numbers > 0",
        lambda v: _numbers(v, 0, True),
    ),
    "etas": ("a non-empty list of distinct finite numbers > 0", lambda v: _numbers(v, 0, True)),
    "kappas": ("a non-empty list of distinct finite numbers >= 1", lambda v: _numbers(v, 1, False)),
    "sigma_eigenvalues": (
        "two finite numbers > 0, the major one first",
        lambda v: _numbers(v, 0, True, distinct=False) and len(v) == 2 and v[0] >= v[1],
    ),
    "sigma_angle": ("a finite number of degrees", lambda v: _number(v, float("-inf"), False)),
    "lam": _POSITIVE,
    "half_width": _POSITIVE,
    "goal_offset": _POSITIVE,
    "strip_frames": _COUNT,
    "strip_stride": _COUNT,
    "landscape_examples": _COUNT,
    "objective": (
        f"the path of a Python file defining {SIGNATURE} (relative: from the repository root)",
        _objective,
    ),
    "solvers": (
        f"a non-empty list of distinct solvers of {', '.join(PLANNERS)} (MPPI needs the "
        "study's T*, which the page does not choose)",
        lambda v: _choices(v, PLANNERS),
    ),
    "seeds": (  # a bare integer is refused: [3] (seed 3) or three seeds? the list says which
        f"null or a non-empty list of distinct integers from 0 to {MAX_SEED}, such as [0] or "
        "[0, 1, 2]",
        lambda v: v is None or _seeds(v),
    ),
}


def _study_task() -> tuple[str, Callable[[Any], bool]]:
    studies = available_studies()
    return f"a task with a study file: {', '.join(studies)}", lambda v: v in studies


def _planning_task() -> tuple[str, Callable[[Any], bool]]:
    tasks = [t for t in available_studies() if load_study(t).plans]
    return f"a task whose study plans: {', '.join(tasks)}", lambda v: v in tasks


def _ladder_task() -> tuple[str, Callable[[Any], bool]]:
    tasks = [t for t in available_studies() if task_ladder(t)]
    return (f"a task with a study file and a ladder: {', '.join(tasks)}", lambda v: v in tasks)


CHAPTER_RULES: dict[tuple[str, str], Callable[[], tuple[str, Callable[[Any], bool]]]] = {
    # the task chapters present a task's study, so their task must have one
    ("ch06_planning", "task"): _planning_task,
    ("ch06_gate", "task"): _ladder_task,
    ("ch07_geometry", "task"): _study_task,
    ("ch10_own_objective", "task"): _planning_task,
}
"""Rules for one chapter's parameter, checked instead of the name's rule in :data:`RULES`."""
LISTS: frozenset[tuple[str, str]] = frozenset({("ch10_own_objective", "task")})
"""The (chapter, parameter) pairs that take one value or a non-empty list of distinct values,
each checked by the parameter's rule: chapter 10 judges the reader's arm on every task it is
given, on one page."""


def _one_or_list(one: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """The rule ``one`` of a value, extended to a list of distinct values each obeying it."""

    def ok(v: Any) -> bool:
        if isinstance(v, list | tuple):
            return all(one(x) for x in v) and len(set(v)) == len(v)
        return one(v)

    return ok


def check_parameter(chapter: str, name: str, value: Any) -> None:
    """Raise ``ValueError`` (one line: the parameter, its valid values, the value given) when
    ``value`` breaks the rule for ``name`` (or the chapter's own rule for it,
    :data:`CHAPTER_RULES`); an empty list is refused for every parameter. A rule that knows
    better than its valid values what is wrong raises its own ``ValueError`` (an objective
    file without ``term``), which is passed on with the parameter's name."""
    if isinstance(value, list | tuple) and not value:
        raise ValueError(f"{chapter}: parameter {name!r} must not be an empty list")
    rule = CHAPTER_RULES.get((chapter, name))
    if rule is not None or name in RULES:
        what, ok = rule() if rule is not None else RULES[name]
        if (chapter, name) in LISTS:
            what, ok = f"{what}, or a list of distinct such values", _one_or_list(ok)
        try:
            good = ok(value)
        except ValueError as e:
            raise ValueError(f"{chapter}: parameter {name!r}: {e}") from None
        if not good:
            raise ValueError(f"{chapter}: parameter {name!r} must be {what}, got {value!r}")


class ChapterError(RuntimeError):
    """A chapter failed, or was asked to run with invalid parameters."""


def parameters_of(nb: Any) -> dict[str, Any]:
    """Names and default values of the cell tagged ``parameters`` (literals only)."""
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ChapterError(
            f"a chapter needs exactly one cell tagged 'parameters', found {len(cells)}"
        )
    params: dict[str, Any] = {}
    for node in ast.parse(cells[0].source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            raise ChapterError("the parameters cell may only hold 'name = literal' lines")
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            raise ChapterError("the parameters cell may only hold 'name = literal' lines")
        try:
            params[target.id] = ast.literal_eval(node.value)
        except ValueError as e:
            raise ChapterError(f"parameter {target.id!r} is not a literal: {e}") from e
    if "profile" not in params:
        raise ChapterError("the parameters cell must define 'profile'")
    return params


def _same_type(default: Any, value: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float)
    if isinstance(default, list | tuple):
        return isinstance(value, list | tuple)
    if default is None:
        return True
    return isinstance(value, type(default))


def validate_parameters(name: str, defaults: dict[str, Any], given: dict[str, Any]) -> None:
    """Fail early on an unknown parameter, a wrong type, a value outside its rule
    (:mod:`jepa_geometry.book.parameters`), or an unknown profile."""
    for key, value in given.items():
        if key not in defaults:
            raise ChapterError(
                f"{name}: unknown parameter {key!r}; valid: {', '.join(sorted(defaults))}"
            )
        listed = (name, key) in LISTS and isinstance(value, list | tuple)
        if not listed and not _same_type(defaults[key], value):
            raise ChapterError(
                f"{name}: parameter {key!r} must be {type(defaults[key]).__name__} "
                f"(default {defaults[key]!r}), got {value!r}"
            )
        try:
            check_parameter(name, key, value)
        except ValueError as e:
            raise ChapterError(str(e)) from None
    profile = given.get("profile", defaults["profile"])
    if profile not in PROFILES:
        raise ProfileError(f"{name}: unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
