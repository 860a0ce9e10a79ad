"""The five goal-reaching tasks of SCALE and AnisoWM, on stable-worldmodel 0.1.1.

========== ======================== ============================================ ========
task       environment              q (SCALE)                                    half q
========== ======================== ============================================ ========
tworoom    swm/TwoRoom-v1           agent xy (2)                                 --
pusht      swm/PushT-v1             agent xy, block xy, cos/sin theta (6)        block
reacher    swm/ReacherDMControl-v0  cos/sin of both joints (4)                   shoulder
cube       swm/OGBCube-v0 (single)  effector xyz, cos/sin 2psi, grip, cube (9)   effector
pointmaze  swm/OGBMaze-v0 (medium)  xy (2)                                       --
========== ======================== ============================================ ========

>>> task = make_task("reacher", image_size=64)      # doctest: +SKIP
>>> task.reset(0); task.step(np.zeros(2)); frame = task.render()  # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import importlib
import pkgutil

from .base import SIMULATOR_PRELOAD, FastMujocoRenderer, RenderError, Task, gl_errors

BOOK_TASKS: tuple[str, ...] = ("tworoom", "pusht", "reacher", "cube", "pointmaze")
"""The papers' five tasks, in the order the book shows them."""
_NOT_TASKS = frozenset({"base", "clips", "collect", "dataset", "episodes", "preload"})


def _task_classes() -> dict[str, type[Task]]:
    """Every Task defined in a module of this package, by name: the book's five first (in
    :data:`BOOK_TASKS` order), then any other in the order of its name. A task is found by its
    module alone (``envs/<task>.py``), so adding one changes no list here (README, *Adding a
    task*); a module that defines no Task, or two tasks of one name, is an error."""
    found: dict[str, type[Task]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in _NOT_TASKS or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        tasks = [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Task) and v.__module__ == module.__name__
        ]
        concrete = [c for c in tasks if not getattr(c, "__abstractmethods__", None)]
        if not concrete:
            raise ImportError(f"module envs.{info.name} defines no Task (every task module does)")
        for cls in concrete:
            if cls.name in found:
                raise ImportError(f"two tasks are named {cls.name!r}: {found[cls.name]}, {cls}")
            found[cls.name] = cls
    order = [t for t in BOOK_TASKS if t in found] + sorted(set(found) - set(BOOK_TASKS))
    return {name: found[name] for name in order}


TASK_CLASSES: dict[str, type[Task]] = _task_classes()
TASKS: tuple[str, ...] = tuple(TASK_CLASSES)
Q_VARIANTS: tuple[str, ...] = ("full", "half")


def task_class(name: str) -> type[Task]:
    """The Task subclass of a task name (no environment is built)."""
    return TASK_CLASSES[check_task(name)]


def check_task(name: str) -> str:
    """Return ``name`` if it is one of :data:`TASKS`, else raise ValueError listing them."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; valid: {', '.join(TASKS)}")
    return name


def make_task(name: str, image_size: int, seed: int = 0) -> Task:
    """Build a task at ``image_size`` px (the environment is constructed here: seconds)."""
    cls = task_class(check_task(name))
    with gl_errors(f"building task {name!r}"):
        return cls(image_size, seed)


_SHARED: dict[tuple[str, int, int], Task] = {}


def shared_task(name: str, image_size: int, seed: int = 0) -> Task:
    """This process's one :func:`make_task` of ``(name, image_size, seed)``, built on first use
    and kept (closed at exit). For callers that reset it before each use: the planning
    protocol's runner calls ``reset(seed)`` and then sets every episode's full state, so a
    reused simulator plans exactly as a new one (``tests/envs/test_tasks.py``), and a process
    that plans many cells builds its environment and GL renderer once, not once per cell."""
    key = (check_task(name), int(image_size), int(seed))
    if key not in _SHARED:
        if not _SHARED:
            atexit.register(_close_shared)
        _SHARED[key] = make_task(*key)
    return _SHARED[key]


def _close_shared() -> None:
    while _SHARED:
        _SHARED.popitem()[1].close()


def task_title(name: str) -> str:
    """The task's name in prose and page titles (``"Two-Room"`` for ``"tworoom"``)."""
    return task_class(check_task(name)).title


def q_names(name: str) -> tuple[str, ...]:
    """Names of the q coordinates of a task, without building its environment."""
    return task_class(check_task(name)).q_names


def q_indices(name: str, variant: str = "full") -> tuple[int, ...]:
    """Columns of q used by a SCALE q variant: ``full`` or ``half`` (Push-T block only,
    Reacher shoulder only, Cube effector only). The half variant's standardization is the
    full variant's restricted to these columns."""
    cls = task_class(check_task(name))
    if variant == "full":
        return tuple(range(len(cls.q_names)))
    if variant == "half":
        if cls.half_q is None:
            raise ValueError(
                f"task {name!r} has no half-q variant; tasks with one: "
                + ", ".join(t for t in TASKS if task_class(t).half_q is not None)
            )
        return cls.half_q
    raise ValueError(f"unknown q variant {variant!r}; valid: {', '.join(Q_VARIANTS)}")


__all__ = [
    "Q_VARIANTS",
    "TASKS",
    "FastMujocoRenderer",
    "SIMULATOR_PRELOAD",
    "RenderError",
    "Task",
    "check_task",
    "make_task",
    "shared_task",
    "task_class",
    "q_indices",
    "q_names",
    "task_title",
]
