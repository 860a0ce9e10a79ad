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

from .base import SIMULATOR_PRELOAD, FastMujocoRenderer, RenderError, Task, gl_errors
from .cube import CubeTask
from .pointmaze import PointMazeTask
from .pusht import PushTTask
from .reacher import ReacherTask
from .tworoom import TwoRoomTask

TASK_CLASSES: dict[str, type[Task]] = {
    "tworoom": TwoRoomTask,
    "pusht": PushTTask,
    "reacher": ReacherTask,
    "cube": CubeTask,
    "pointmaze": PointMazeTask,
}
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
