"""The task interface shared by the five environments, and the fast MuJoCo renderer.

A :class:`Task` wraps one stable-worldmodel environment with what the book needs on top of
gymnasium's API: the raw simulator state (restorable, so evaluation can start at a dataset
frame and aim at a later one), the task state q that SCALE correlates latent distances with,
the papers' success test, and the behaviour policy that collects the offline dataset.

Conventions used by every task:

* ``step`` takes ONE raw env action; a planner's action block of ``frameskip`` actions is
  executed as ``frameskip`` calls.
* ``render`` returns ``uint8 (image_size, image_size, 3)``.
* ``q(state)`` is a pure function of the stored state, so restoring a recorded state
  reproduces the recorded q exactly.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import io
import os
import sys
import warnings
import weakref
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

# Headless defaults, set before MuJoCo / pygame are imported (lazily, by the task modules).
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
# swm passes lists to gymnasium Box.contains when setting variation values; harmless.
warnings.filterwarnings("ignore", message=".*Casting input x to numpy array.*")


class RenderError(RuntimeError):
    """No OpenGL backend is available for MuJoCo's offscreen renderer."""


SWM = "stable_worldmodel"
# what a process that simulates imports: a build pool's server loads it once (envs.preload)
SIMULATOR_PRELOAD = ("jepa_geometry.envs.preload",)


def import_swm() -> Any:
    """stable-worldmodel's package with its environments, solvers and policies, imported
    quietly (it warns about optional Atari support and prints).

    Its root ``__init__`` also imports the dataset formats (lancedb, pyarrow, torchvision's
    I/O): about 4.5 s of every process that builds an environment here, for code this library
    never calls, and a lancedb thread that makes forking the process unsafe. So the package is
    entered without running that ``__init__``: submodules (``stable_worldmodel.envs``,
    ``from stable_worldmodel import spaces``) import as usual, and the first other name read
    from the package (``stable_worldmodel.World``) runs the ``__init__`` then, once: a caller
    that needs all of swm gets all of it. A process that imported swm before keeps its module.

    One thing of swm's ``__init__`` is kept: it loaded torch's compiler stack (through
    torchvision) before any environment. Triton's library carries its own LLVM, and loading
    it after MuJoCo's software OpenGL has loaded Mesa's LLVM crashes the process (a later
    ``import torch._dynamo``, by ``torch.optim`` or torchvision, then segfaults). So Triton,
    when installed, is loaded here first (0.2 s).
    """
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        if importlib.util.find_spec("triton") is not None:
            importlib.import_module("triton")
        root = sys.modules.get(SWM)
        if root is None:
            spec = importlib.util.find_spec(SWM)
            root = importlib.util.module_from_spec(spec)

            def complete(name: str) -> Any:  # PEP 562: a submodule, or the rest, once
                if importlib.util.find_spec(f"{SWM}.{name}") is not None:
                    return importlib.import_module(f"{SWM}.{name}")
                del root.__getattr__
                with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    spec.loader.exec_module(root)
                return getattr(root, name)

            root.__getattr__ = complete
            sys.modules[SWM] = root
        importlib.import_module(f"{SWM}.envs")
    return root


_GL_HINT = (
    "Set MUJOCO_GL=egl (headless GPU or Mesa EGL) or MUJOCO_GL=osmesa, and install that "
    "backend (e.g. apt-get install libegl1 libgl1-mesa-dri, or libosmesa6)."
)


def _from_gl(e: BaseException) -> bool:
    """Whether an exception was raised inside an OpenGL binding or a MuJoCo GL backend."""
    tb = e.__traceback__
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename.replace("\\", "/")
        if "/OpenGL/" in f or "/_render/" in f or "/mujoco/egl/" in f or "/mujoco/osmesa/" in f:
            return True
        tb = tb.tb_next
    return False


@contextlib.contextmanager
def gl_errors(what: str) -> Any:
    """Turn a failure of the OpenGL backend into a :class:`RenderError` that says what to do
    (instead of an AttributeError deep inside PyOpenGL)."""
    try:
        yield
    except RenderError:
        raise
    except Exception as e:
        if not _from_gl(e):
            raise
        raise RenderError(
            f"{what}: no usable OpenGL backend for MuJoCo "
            f"(MUJOCO_GL={os.environ.get('MUJOCO_GL')!r}): {type(e).__name__}: {e}. {_GL_HINT}"
        ) from e


def make_env(env_id: str, **kwargs: Any) -> Any:
    """``gymnasium.make(env_id).unwrapped`` without the passive checker's extra steps."""
    import gymnasium as gym

    with gl_errors(f"building {env_id}"):
        import_swm()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return gym.make(env_id, disable_env_checker=True, **kwargs).unwrapped


def resize(img: np.ndarray, size: int) -> np.ndarray:
    """Area-average resize of an RGB uint8 frame to ``size x size`` (no-op if already there)."""
    if img.shape[0] == size and img.shape[1] == size:
        return np.ascontiguousarray(img, dtype=np.uint8)
    import cv2

    return cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA).astype(np.uint8)


def _close_at_exit(ref: weakref.ref) -> None:
    renderer = ref()
    if renderer is not None:
        renderer.close()


class FastMujocoRenderer:
    """A persistent ``mujoco.Renderer`` with shadows, reflections and multisampling off.

    Why not the environments' own render paths: under software OpenGL (EGL on a CPU
    machine) dm_control's default ``physics.render`` costs about 24 ms per 64 px frame,
    almost all of it the 2048^2 shadow map and 4x MSAA, while this renderer costs 1.3-2 ms
    (measured in our exploratory runs: see the book's *Reconstructions* page, section
    rec-simulators, ``book/reconstructions.md``). Data and evaluation both use it, so frames
    are consistent; the price is some aliasing of thin geometry.
    """

    def __init__(self, model: Any, size: int, camera: Any) -> None:
        import mujoco

        self._mujoco = mujoco
        self._renderer = None
        self.model = model
        self.camera = camera
        model.vis.quality.offsamples = 0
        try:
            self._renderer = mujoco.Renderer(model, size, size)
        except Exception as e:  # no GL context: mujoco raises various types here
            raise RenderError(
                f"MuJoCo could not create an offscreen OpenGL context "
                f"(MUJOCO_GL={os.environ.get('MUJOCO_GL')!r}): {type(e).__name__}: {e}. "
                f"{_GL_HINT}"
            ) from e
        flags = self._renderer.scene.flags
        flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
        flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
        # atexit runs the last-registered first: registered after the context exists (whose
        # backend registered its own eglTerminate on import), this close runs before it
        atexit.register(_close_at_exit, weakref.ref(self))

    def render(self, data: Any) -> np.ndarray:
        """The frame of ``data``'s current qpos. After ``mj_step`` the body poses in ``data``
        are those of the last substep's start (kinematics runs before integration), so they
        are recomputed first: the frame is then a function of the state alone, and a restored
        state renders exactly as recorded. Dynamics do not read these fields."""
        mj = self._mujoco
        mj.mj_kinematics(self.model, data)
        mj.mj_camlight(self.model, data)
        self._renderer.update_scene(data, camera=self.camera)
        return self._renderer.render().copy()

    def close(self) -> None:
        """Free the renderer's GL objects in its own context, then the context.

        ``mujoco.Renderer.close`` frees its ``MjrContext`` (framebuffers, textures: names
        that every context numbers from 1) in whatever context is current, which after
        another task's frame is that task's: it would delete the other renderer's
        framebuffer, and every frame that one renders after is uninitialised memory. So the
        renderer's own context is made current first; an uncollected renderer does the same
        (``__del__``).
        """
        if self._renderer is not None:
            with contextlib.suppress(Exception):
                if self._renderer._gl_context is not None:
                    self._renderer._gl_context.make_current()
                self._renderer.close()
            self._renderer = None

    def __del__(self) -> None:
        self.close()


TASK_FACTS: tuple[str, ...] = (
    "name",
    "title",
    "env_id",
    "action_dim",
    "q_names",
    "success_rule",
    "behaviour_policy",
    "scale_weight",
    "aux_weight",
    "mppi_t_star",
    "hard_threshold",
    "hard_rule",
    "landscape_spans",
    "landscape_distance",
    "episodes",
    "collect_frames_per_s",
    "ceiling_rollout_ms",
)
"""What every task states about itself (:class:`Task`'s annotated class attributes): a concrete
subclass that lacks one fails when it is defined, not when a study first reads it."""


class Task(ABC):
    """One goal-reaching task: environment, state, q, success test and behaviour policy, and
    everything else the library knows of the task (:data:`TASK_FACTS`).

    Subclasses set the class attributes and implement the abstract methods. ``seed`` seeds
    the environment's construction; every episode is then fixed by ``reset(seed)``. Every
    other module reads a task's facts from here (``envs.task_class(name).scale_weight``): a new
    task is its module, its study file and its page in ``_toc.yml`` (README, *Adding a task*).
    """

    name: str
    title: str  # the task's name in prose and page titles ("Two-Room")
    env_id: str
    action_dim: int
    q_names: tuple[str, ...]
    half_q: tuple[int, ...] | None = None  # indices of SCALE's half-q variant, if any
    state_names: tuple[str, ...] | None = None
    success_rule: str  # the papers' success test, in words
    behaviour_policy: str  # how the offline dataset was collected, in words
    # -- the objectives' weights (SCALE §5's per-task settings; book: rec-scale-weights) ----
    scale_weight: float  # λ of SCALE's loss λ (1 − ρ) on this task
    aux_weight: float  # w of the Aux arm's regression loss w ‖head(z) − q‖²
    # -- planning -------------------------------------------------------------------------
    mppi_t_star: float
    """MPPI's temperature T* at D = 192 (``planning.solver.MPPI_T_STAR_DIM``): SCALE's
    pre-registered per-task value, scaled by D / 192 for another embedding width."""
    hard_threshold: float  # a pair is in SCALE's hard subset when its start–goal distance
    # (:meth:`goal_distance`) exceeds this
    hard_rule: str  # the hard subset's rule, in words
    # -- the cost landscape (AnisoWM Figure 4; analysis.landscape) ---------------------
    landscape_spans: str  # what the landscape's positions span
    landscape_distance: str  # the physical distance the planning cost is compared with
    landscape_period: tuple[float | None, float | None] | None = None
    """The period of each landscape axis (None: not periodic), None when no axis wraps."""
    # -- sizes and rates per profile name -----------------------------------------------
    episodes: dict[str, tuple[int, int]]
    """(training, held-out) episodes per profile name; a profile not named here collects its
    own ``data.episodes`` and ``data.heldout_episodes`` (a profile's ``data.task_episodes``,
    a ladder's rung, overrides both). The laptop counts are sized so that the five tasks
    collect in under 10 minutes on 2 cores."""
    collect_frames_per_s: dict[str, float]
    """Frames per second of one collect job per profile name (the cost model's rate: the
    simulators differ tenfold). Laptop: measured from the laptop build's dataset manifests
    (64 px, two workers on 2 cores); smoke: a round figure; paper: Two-Room's rate on a GPU
    node, assumed for every task."""
    ceiling_rollout_ms: float
    """The simulator's milliseconds per planned candidate (horizon × frameskip steps from a
    restored state, one thread; ``benchmarks/bench_ceiling.py``): the cost model's rate for
    the ceiling cells, at every profile (the ceiling simulates on a CPU everywhere)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not any(getattr(getattr(cls, n, None), "__isabstractmethod__", 0) for n in dir(cls)):
            missing = [f for f in TASK_FACTS if not hasattr(cls, f)]
            if missing:
                raise TypeError(
                    f"task {cls.__name__} does not state {', '.join(missing)} "
                    f"(every Task states: {', '.join(TASK_FACTS)})"
                )

    def __init__(self, image_size: int, seed: int = 0) -> None:
        if not isinstance(image_size, int) or image_size < 8:
            raise ValueError(f"image_size must be an integer >= 8, got {image_size!r}")
        self.image_size = image_size
        self.seed = seed
        self.action_low = -np.ones(self.action_dim, dtype=np.float32)
        self.action_high = np.ones(self.action_dim, dtype=np.float32)

    @property
    def q_dim(self) -> int:
        return len(self.q_names)

    # -- simulator -------------------------------------------------------------------
    @abstractmethod
    def reset(self, seed: int | None = None) -> None:
        """Start a new episode; the same seed gives the same start and behaviour goal."""

    @abstractmethod
    def get_state(self) -> np.ndarray:
        """The raw simulator state (float64), enough to restore the scene exactly."""

    @abstractmethod
    def set_state(self, state: np.ndarray) -> None:
        """Restore a state returned by :meth:`get_state` (e.g. a dataset row)."""

    @abstractmethod
    def step(self, action: np.ndarray) -> None:
        """One env step with one raw action of shape ``(action_dim,)``."""

    @abstractmethod
    def render(self) -> np.ndarray:
        """The current frame, ``uint8 (image_size, image_size, 3)``."""

    # -- task state and success ------------------------------------------------------
    @abstractmethod
    def q(self, state: np.ndarray) -> np.ndarray:
        """SCALE's raw (unstandardized) task state of one raw state, shape ``(q_dim,)``."""

    @abstractmethod
    def is_success(self, state: np.ndarray, goal_state: np.ndarray) -> bool:
        """The papers' success test between a state and a goal state."""

    @abstractmethod
    def goal_distance(self, state: np.ndarray, goal_state: np.ndarray) -> float:
        """Physical distance between a state and a goal (for hard-subset selection)."""

    def q_batch(self, states: np.ndarray) -> np.ndarray:
        """q of many states, ``(N, S) -> (N, q_dim)`` float32."""
        states = np.asarray(states, dtype=np.float64)
        if states.ndim != 2:
            raise ValueError(f"q_batch expects (N, S) states, got shape {states.shape}")
        out = np.empty((len(states), self.q_dim), dtype=np.float32)
        for i, s in enumerate(states):
            out[i] = self.q(s)
        return out

    # -- the cost landscape's positions (analysis.landscape) ---------------------------
    @abstractmethod
    def landscape_axes(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The x and y coordinates (``n`` each) of the landscape's n × n positions: the range
        the task can hold (:attr:`landscape_spans`)."""

    def landscape_coords(self, state: np.ndarray) -> np.ndarray:
        """The two coordinates the landscape spans, read from a simulator state: the state's
        first two unless a task says otherwise."""
        return np.asarray(state)[:2]

    def landscape_state(self, x: float, y: float, template: np.ndarray) -> np.ndarray:
        """The simulator state at landscape position (x, y); ``template`` is the state after a
        seeded reset. Unless a task says otherwise: (x, y) first, every other entry 0 (at
        rest)."""
        state = np.zeros(len(np.asarray(template)), dtype=np.float64)
        state[:2] = (x, y)
        return state

    # -- behaviour policy ------------------------------------------------------------
    @abstractmethod
    def behaviour_action(self, rng: np.random.Generator) -> np.ndarray:
        """The data-collection policy's next action (may update its own goal)."""

    @abstractmethod
    def behaviour_success(self) -> bool:
        """Whether the behaviour policy's current goal is reached in the current state."""

    def close(self) -> None:  # noqa: B027 - optional hook, most tasks hold nothing
        """Release renderers and environment resources."""

    def _check_action(self, action: np.ndarray) -> np.ndarray:
        a = np.asarray(action, dtype=np.float32)
        if a.shape != (self.action_dim,):
            raise ValueError(
                f"{self.name}: action must have shape ({self.action_dim},), got {a.shape}"
            )
        return a

    def _qpos_qvel(self, data: Any) -> np.ndarray:
        """A MuJoCo scene's state as one vector ``[qpos, qvel]`` (float64)."""
        return np.concatenate([data.qpos, data.qvel]).astype(np.float64)

    def _set_qpos_qvel(self, state: np.ndarray, nq: int, nv: int) -> None:
        """Restore a :meth:`_qpos_qvel` vector through the gym env's ``set_state(qpos, qvel)``."""
        s = self._check_state(state, nq + nv)
        self.env.set_state(s[:nq].copy(), s[nq:].copy())

    def _check_state(self, state: np.ndarray, dim: int) -> np.ndarray:
        s = np.asarray(state, dtype=np.float64)
        if s.shape != (dim,):
            raise ValueError(f"{self.name}: state must have shape ({dim},), got {s.shape}")
        return s

    def __repr__(self) -> str:
        return f"<Task {self.name} ({self.env_id}) {self.image_size}px q_dim={self.q_dim}>"
