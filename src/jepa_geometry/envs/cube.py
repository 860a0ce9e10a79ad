"""OGBench Cube, single (``swm/OGBCube-v0``): a UR5e arm with a Robotiq gripper moves a cube.

State: MuJoCo's full integration state (``mj_getState(..., mjSTATE_INTEGRATION)``: time,
qpos, qvel, actuator activations, controls, warm-start accelerations, mocap target pose, ...).
Restoring it reproduces the scene exactly; qpos/qvel alone would leave the controls of the
previous scene (a 0-3 cm replay drift in our exploratory runs; see the book's
*Reconstructions* page, section rec-simulators, ``book/reconstructions.md``).
q = [effector xyz, cos 2psi, sin 2psi, gripper opening, cube xyz] (9), with the gripper yaw
psi doubled because a parallel-jaw gripper is pi-symmetric; the half-q variant keeps the
effector (its first 5 entries). Success (OGBench / swm ``_compute_successes``):
``||cube - goal cube|| <= 0.04 m``. Frames: :class:`~.base.FastMujocoRenderer`, camera
``front_pixels``; the 185k-triangle arm makes this the costliest task to render (~30 ms).
"""

from __future__ import annotations

import numpy as np

from .base import FastMujocoRenderer, Task, make_env

CUBE_TOL = 0.04  # m
ORACLE_NOISE = 0.1  # per-episode noise level xi ~ U(0, 0.1), std [xi, xi, xi, 3xi, 10xi]
_DEFAULT_VARIATIONS = (
    "cube.start_position",
    "cube.start_yaw",
    "cube.goal_position",
    "cube.goal_yaw",
)


class CubeTask(Task):
    name = "cube"
    title = "Cube"
    env_id = "swm/OGBCube-v0"
    action_dim = 5
    q_names = (
        "eff_x",
        "eff_y",
        "eff_z",
        "cos_2psi",
        "sin_2psi",
        "gripper",
        "cube_x",
        "cube_y",
        "cube_z",
    )
    half_q = (0, 1, 2, 3, 4)
    success_rule = "||cube xyz - goal cube xyz|| <= 0.04 m"
    behaviour_policy = (
        "OGBench CubeMarkovOracle(min_norm=0.4) with per-episode Gaussian noise level "
        "xi ~ U(0, 0.1), std [xi, xi, xi, 3xi, 10xi] (LeWM's cube_single_expert recipe), "
        "a new random target each time the oracle finishes"
    )

    scale_weight = 0.1
    aux_weight = 0.1
    mppi_t_star = 32.0
    hard_threshold = 0.04
    hard_rule = "cube moves > 4 cm (the success radius: pairs not solved at start)"
    landscape_spans = "cube positions on the table (its yaw and the arm fixed as at a reset)"
    landscape_distance = "the distance between cube positions in metres"
    # smoke: Cube renders ~23 frames/s; 1 held-out episode still gives 86 moving pairs
    episodes = {"smoke": (1, 1), "laptop": (50, 10)}
    collect_frames_per_s = {"smoke": 200.0, "laptop": 52.5, "paper": 490.0}
    ceiling_rollout_ms = 79.5

    def __init__(self, image_size: int, seed: int = 0) -> None:
        super().__init__(image_size, seed)
        import mujoco
        from ogbench.manipspace.oracles.markov.cube_markov import CubeMarkovOracle

        self._mj = mujoco
        self.env = make_env(
            self.env_id,
            env_type="single",
            ob_type="states",
            mode="data_collection",
            visualize_info=False,
            terminate_at_goal=False,
            width=image_size,
            height=image_size,
        )
        self._oracle = CubeMarkovOracle(env=self.env, min_norm=0.4)
        self._renderer: FastMujocoRenderer | None = None
        self._xi = 0.0
        self.reset(seed)
        self._spec = mujoco.mjtState.mjSTATE_INTEGRATION
        self.state_dim = mujoco.mj_stateSize(self.model, self._spec)

    @property
    def model(self):
        return self.env._model

    @property
    def data(self):
        return self.env._data

    def reset(self, seed: int | None = None) -> None:
        """Seeded reset. swm's CubeEnv.reset re-seeds its variation space from entropy, so the
        start/goal variations are sampled here from a seeded copy and passed as values; the
        OGBench oracle draws from the global numpy RNG, which is seeded here too."""
        seed = 0 if seed is None else int(seed)
        vs = self.env.variation_space
        vs.seed(seed)
        vs.reset()
        vs.update(_DEFAULT_VARIATIONS)
        values = {k: _get(vs, k).copy() for k in _DEFAULT_VARIATIONS}
        self.env.np_random = np.random.default_rng(seed)
        np.random.seed(seed % 2**32)  # noqa: NPY002 - OGBench's oracle uses it
        self.env.reset(options={"variation": (), "variation_values": values})
        vs.seed(seed + 1)  # later behaviour targets
        self._xi = float(np.random.default_rng(seed).uniform(0.0, ORACLE_NOISE))
        self._oracle.reset(None, self.env.compute_ob_info())

    def get_state(self) -> np.ndarray:
        out = np.empty(self._mj.mj_stateSize(self.model, self._spec))
        self._mj.mj_getState(self.model, self.data, out, self._spec)
        return out

    def set_state(self, state: np.ndarray) -> None:
        s = self._check_state(state, self.state_dim)
        self._mj.mj_setState(self.model, self.data, s, self._spec)
        self._mj.mj_forward(self.model, self.data)

    def step(self, action: np.ndarray) -> None:
        self.env.step(self._check_action(action))

    def render(self) -> np.ndarray:
        if self._renderer is None or self._renderer.model is not self.model:
            if self._renderer is not None:
                self._renderer.close()
            self._renderer = FastMujocoRenderer(self.model, self.image_size, "front_pixels")
        return self._renderer.render(self.data)

    def q(self, state: np.ndarray) -> np.ndarray:
        """q from the state alone: forward kinematics on a scratch copy of the scene."""
        from ogbench.manipspace import lie

        mj, m = self._mj, self.model
        if getattr(self, "_scratch_model", None) is not m:
            self._scratch, self._scratch_model = mj.MjData(m), m
        scratch = self._scratch
        mj.mj_setState(m, scratch, np.asarray(state, dtype=np.float64), self._spec)
        mj.mj_kinematics(m, scratch)
        site = self.env._pinch_site_id
        eff = scratch.site_xpos[site]
        yaw = lie.SO3.from_matrix(scratch.site_xmat[site].reshape(3, 3)).compute_yaw_radians()
        grip_adr = m.jnt_qposadr[self.env._gripper_opening_joint_id]
        grip = np.clip(scratch.qpos[grip_adr] / 0.8, 0.0, 1.0)
        cube = self._cube_pos(scratch.qpos)
        return np.array([*eff, np.cos(2 * yaw), np.sin(2 * yaw), grip, *cube], dtype=np.float32)

    def _cube_pos(self, qpos: np.ndarray) -> np.ndarray:
        adr = self.model.jnt_qposadr[self.model.joint("object_joint_0").id]
        return np.asarray(qpos[adr : adr + 3], dtype=np.float64)

    def _qpos(self, state: np.ndarray) -> np.ndarray:
        # integration state layout: [time, qpos (nq), qvel (nv), ...]
        return np.asarray(state)[1 : 1 + self.model.nq]

    def is_success(self, state: np.ndarray, goal_state: np.ndarray) -> bool:
        return self.goal_distance(state, goal_state) <= CUBE_TOL

    def goal_distance(self, state: np.ndarray, goal_state: np.ndarray) -> float:
        """Cube displacement in m (the quantity the success test thresholds)."""
        a = self._cube_pos(self._qpos(state))
        b = self._cube_pos(self._qpos(goal_state))
        return float(np.linalg.norm(a - b))

    def landscape_axes(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The range the env draws the cube's start position from."""
        space = self.env.variation_space["cube"]["start_position"]
        lo, hi = (np.asarray(b, dtype=np.float64).reshape(-1) for b in (space.low, space.high))
        return np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)

    def landscape_coords(self, state: np.ndarray) -> np.ndarray:
        return self._cube_pos(self._qpos(state))[:2]

    def landscape_state(self, x: float, y: float, template: np.ndarray) -> np.ndarray:
        """``template`` (the state after a seeded reset) with the cube moved to (x, y)."""
        state = np.array(template, dtype=np.float64)
        adr = 1 + self.model.jnt_qposadr[self.model.joint("object_joint_0").id]  # after time
        state[adr : adr + 2] = (x, y)
        return state

    def behaviour_action(self, rng: np.random.Generator) -> np.ndarray:
        info = self.env.compute_ob_info()
        action = np.asarray(self._oracle.select_action(None, info), dtype=np.float64)
        xi = self._xi
        action = action + rng.normal(0.0, [xi, xi, xi, 3 * xi, 10 * xi])
        if self._oracle.done:
            # swm's CubeEnv.set_new_target reuses the goal variation sampled at reset, so the
            # goal variation is resampled first to give every sub-task a fresh target.
            vs = self.env.variation_space["cube"]
            vs["goal_position"].sample()
            vs["goal_yaw"].sample()
            ob, info = self.env.set_new_target(p_stack=0.0)
            self._oracle.reset(ob, info)
        return np.clip(action, -1.0, 1.0).astype(np.float32)

    def behaviour_success(self) -> bool:
        return bool(self.env._success)

    def close(self) -> None:
        """Free both GL contexts: this task's renderer and the one OGBench's environment holds
        (left to the interpreter's exit, it is freed after MuJoCo terminated EGL: an error)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.env.close()


def _get(space, dotted: str):
    for part in dotted.split("."):
        space = space[part]
    return np.asarray(space.value)
