"""Push-T (``swm/PushT-v1``): a round pusher moves a T-shaped block onto a goal pose.

State (swm's 7-d ``state``): [agent x, agent y, block x, block y, block angle, agent vx, vy]
in the 512-unit physics frame. q = [agent xy, block xy, cos theta, sin theta] (6); the
half-q variant keeps the block only (the pusher is directly actuated).
Success (swm ``eval_state``, as DINO-WM): ``||(agent xy, block xy) - goal|| < 20`` and
block-angle error ``< pi/9``.

Behaviour policy. LeWM trained on ~18.7k expert episodes, but stable-worldmodel 0.1.1 ships
only a ``WeakPolicy`` (random relative targets near the block); a model trained on such data
did not represent the block angle here (probe R^2 0.1 in our exploratory runs; see the book's
*Reconstructions* page, section rec-pusht-expert, ``book/reconstructions.md``). So this
module adds a small scripted pushing expert (:class:`PushTExpert`), see its docstring.
"""

from __future__ import annotations

import numpy as np

from .base import Task, make_env

POS_TOL = 20.0  # physics units (512-unit frame)
ANGLE_TOL = np.pi / 9
EXPERT_NOISE = 0.1  # std of Gaussian noise on the expert's relative action
LANDSCAPE_PARK = (40.0, 40.0)  # the pusher's position while the block moves over the landscape
LANDSCAPE_ANGLE = np.pi / 4  # the block's angle on the landscape: that of the env's goal T
LANDSCAPE_WINDOW = (120.0, 390.0)  # the landscape's block xy: the expert's goal positions' range


def angle_error(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray | float:
    """|a - b| wrapped to [0, pi] (the T has no rotational symmetry)."""
    d = np.abs(np.asarray(a) - np.asarray(b)) % (2 * np.pi)
    return np.minimum(d, 2 * np.pi - d)


class PushTExpert:
    """A scripted quasi-static pushing expert for Push-T.

    Push-T's space has damping 0 (pymunk keeps no velocity between steps), so the block
    moves only while it is pushed. Pushing at a contact point ``c`` of the block's outline
    along its inward normal ``d`` translates the block roughly along ``d`` and turns it at a
    rate proportional to ``(c - com) x d``. Each step the expert scores candidate contacts
    on the block's outline by how well they reduce the pose error,

        score = w_t * (e_hat . d) + w_r * sign(e_theta) * ((c - com) x d) / R,

    with ``w_t = min(|e| / 40, 1)`` and ``w_r = min(|e_theta| / (pi/9), 1)``, keeps its current
    contact unless another one scores clearly better (hysteresis), walks around the block to
    the pre-contact point (pusher radius away from ``c`` along ``-d``), then pushes through
    ``c``. Gaussian noise on the relative action diversifies the data.
    """

    def __init__(self, env, noise: float = EXPERT_NOISE) -> None:
        self.env = env
        self.noise = noise
        self.goal = np.array([256.0, 256.0, np.pi / 4])
        self._contact: tuple[np.ndarray, np.ndarray] | None = None  # body-frame (c, d)
        self._pushing = False

    def reset(self, goal: np.ndarray) -> None:
        self.goal = np.asarray(goal, dtype=np.float64)
        self._contact = None
        self._pushing = False

    # -- geometry ---------------------------------------------------------------------
    def _candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """Points on the block's outline and inward normals, in body coordinates."""
        import pymunk

        shapes = list(self.env.block.shapes)
        pts, nrm = [], []
        for shape in shapes:
            if not isinstance(shape, pymunk.Poly):
                continue
            verts = np.array([tuple(v) for v in shape.get_vertices()])
            centre = verts.mean(axis=0)
            for i in range(len(verts)):
                a, b = verts[i], verts[(i + 1) % len(verts)]
                edge = b - a
                length = float(np.linalg.norm(edge))
                n_out = np.array([edge[1], -edge[0]]) / max(length, 1e-9)
                if np.dot(n_out, (a + b) / 2 - centre) < 0:
                    n_out = -n_out
                for t in np.linspace(0.1, 0.9, max(2, int(length // 12))):
                    p = a + t * edge
                    probe = p + 2.0 * n_out  # just outside this poly: inside another?
                    inside_other = any(o is not shape and _inside(o, probe) for o in shapes)
                    if not inside_other:
                        pts.append(p)
                        nrm.append(-n_out)
        return np.array(pts), np.array(nrm)

    def _to_world(self, p: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        body = self.env.block
        c, s = np.cos(body.angle), np.sin(body.angle)
        rot = np.array([[c, -s], [s, c]])
        return np.asarray(body.position) + p @ rot.T, d @ rot.T

    def _blocked(self, a: np.ndarray, b: np.ndarray, clearance: float) -> bool:
        for t in np.linspace(0.0, 1.0, 12):
            p = a + t * (b - a)
            for shape in self.env.block.shapes:
                if shape.point_query(tuple(p)).distance < clearance:
                    return True
        return False

    # -- policy -----------------------------------------------------------------------
    def act(self, rng: np.random.Generator) -> np.ndarray:
        env = self.env
        agent = np.asarray(env.agent.position, dtype=np.float64)
        block = env.block
        com = np.asarray(block.local_to_world(block.center_of_gravity), dtype=np.float64)
        e = self.goal[:2] - np.asarray(block.position)
        e_theta = float((self.goal[2] - block.angle + np.pi) % (2 * np.pi) - np.pi)
        w_t = min(np.linalg.norm(e) / 40.0, 1.0)
        w_r = min(abs(e_theta) / ANGLE_TOL, 1.0)

        pts_b, nrm_b = self._candidates()
        pts, nrm = self._to_world(pts_b, nrm_b)
        r = pts - com
        radius = float(np.max(np.linalg.norm(r, axis=1)))
        e_hat = e / max(np.linalg.norm(e), 1e-9)
        torque = (r[:, 0] * nrm[:, 1] - r[:, 1] * nrm[:, 0]) / radius
        score = w_t * (nrm @ e_hat) + w_r * np.sign(e_theta) * torque
        best = int(np.argmax(score))
        if self._contact is not None:
            keep = np.flatnonzero(np.all(np.isclose(pts_b, self._contact[0]), axis=1))
            if keep.size and score[keep[0]] > score[best] - 0.25:
                best = int(keep[0])
            elif keep.size == 0 or best != keep[0]:
                self._pushing = False
        self._contact = (pts_b[best], nrm_b[best])
        c, d = pts[best], nrm[best]

        agent_r = float(env.variation_space["agent"]["scale"].value) * 0.375
        pre = c - d * (agent_r + 3.0)
        if self._pushing and np.linalg.norm(agent - pre) > agent_r + 10.0:
            self._pushing = False
        if not self._pushing and np.linalg.norm(agent - pre) < 4.0:
            self._pushing = True
        if self._pushing:
            target = c + d * 30.0
        elif self._blocked(agent, pre, agent_r + 1.0):
            # Walk around the block on a circle of clearance radius towards the contact side.
            clear = radius + agent_r + 15.0
            rel = agent - com
            if np.linalg.norm(rel) < clear - 5.0:
                target = com + rel / max(np.linalg.norm(rel), 1e-9) * (clear + 10.0)
            else:
                phi_a = np.arctan2(rel[1], rel[0])
                rel_p = pre - com
                phi_p = np.arctan2(rel_p[1], rel_p[0])
                turn = (phi_p - phi_a + np.pi) % (2 * np.pi) - np.pi
                phi = phi_a + np.sign(turn) * min(abs(turn), 0.6)
                target = com + clear * np.array([np.cos(phi), np.sin(phi)])
        else:
            target = pre
        action = (target - agent) / env.action_scale
        action = action + rng.normal(0.0, self.noise, size=2)
        return np.clip(action, -1.0, 1.0).astype(np.float32)


def _inside(shape, p: np.ndarray) -> bool:
    return shape.point_query(tuple(p)).distance < 0


class PushTTask(Task):
    name = "pusht"
    title = "Push-T"
    env_id = "swm/PushT-v1"
    action_dim = 2
    q_names = ("agent_x", "agent_y", "block_x", "block_y", "cos_theta", "sin_theta")
    half_q = (2, 3, 4, 5)
    state_names = (
        "agent_x",
        "agent_y",
        "block_x",
        "block_y",
        "block_theta",
        "agent_vx",
        "agent_vy",
    )
    success_rule = "||(agent xy, block xy) - goal|| < 20 and block angle error < pi/9"
    behaviour_policy = (
        "scripted quasi-static pushing expert (jepa_geometry.envs.pusht.PushTExpert; swm "
        "0.1.1 has no Push-T expert) with Gaussian noise std 0.1 on the relative action; "
        "first goal: the env's green T (256, 256, pi/4), then a new random block pose each "
        "time the block reaches its goal (position < 20, angle < pi/9)"
    )

    scale_weight = 0.1
    aux_weight = 0.3
    mppi_t_star = 64.0
    hard_threshold = 100.0
    hard_rule = "agent+block xy move > 100 units (5x the 20-unit success radius)"
    landscape_spans = (
        "block positions (its angle fixed at the goal's π/4, the pusher parked in a corner)"
    )
    landscape_distance = "the distance between block positions in physics units (512-unit frame)"
    # paper: the released Push-T file SCALE and AnisoWM train on
    episodes = {"laptop": (250, 50), "paper": (18685, 500)}
    collect_frames_per_s = {"smoke": 200.0, "laptop": 330.0, "paper": 490.0}
    ceiling_rollout_ms = 8.0

    def __init__(self, image_size: int, seed: int = 0) -> None:
        super().__init__(image_size, seed)
        self.env = make_env(self.env_id, resolution=image_size)
        self.expert = PushTExpert(self.env)
        self._goal_rng = np.random.default_rng(seed)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.env.reset(seed=seed)
        self._goal_rng = np.random.default_rng(seed)
        self.expert.reset(np.asarray(self.env.goal_pose, dtype=np.float64))

    def get_state(self) -> np.ndarray:
        return np.asarray(self.env._get_obs(), dtype=np.float64)

    def set_state(self, state: np.ndarray) -> None:
        """Set poses and the pusher velocity exactly, in a fresh pymunk space.

        swm's ``_set_state`` also advances the physics by one step (moving the pusher by its
        velocity times dt). The space is rebuilt so that no contact cache (pymunk warm-starts
        its solver from the previous step's impulses) leaks from the scene before: the same
        state then always has the same future, whatever came before it.
        """
        s = self._check_state(state, 7)
        env = self.env
        env._setup()
        env.agent.position = (s[0], s[1])
        env.agent.velocity = (s[5], s[6])
        env.block.angle = s[4]  # angle first: pymunk rotates about the centre of gravity
        env.block.position = (s[2], s[3])
        env.block.velocity = (0.0, 0.0)
        env.block.angular_velocity = 0.0
        env.space.reindex_shapes_for_body(env.agent)
        env.space.reindex_shapes_for_body(env.block)

    def step(self, action: np.ndarray) -> None:
        self.env.step(self._check_action(action))

    def render(self) -> np.ndarray:
        return np.ascontiguousarray(self.env.render(), dtype=np.uint8)

    def q(self, state: np.ndarray) -> np.ndarray:
        s = np.asarray(state, dtype=np.float64)
        return np.array([s[0], s[1], s[2], s[3], np.cos(s[4]), np.sin(s[4])], dtype=np.float32)

    def is_success(self, state: np.ndarray, goal_state: np.ndarray) -> bool:
        s, g = np.asarray(state), np.asarray(goal_state)
        pos = np.linalg.norm(s[:4] - g[:4])
        return bool(pos < POS_TOL and angle_error(s[4], g[4]) < ANGLE_TOL)

    def goal_distance(self, state: np.ndarray, goal_state: np.ndarray) -> float:
        return float(np.linalg.norm(np.asarray(state)[:4] - np.asarray(goal_state)[:4]))

    def landscape_axes(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Block positions in :data:`LANDSCAPE_WINDOW` on both axes."""
        return np.linspace(*LANDSCAPE_WINDOW, n), np.linspace(*LANDSCAPE_WINDOW, n)

    def landscape_coords(self, state: np.ndarray) -> np.ndarray:
        return np.asarray(state)[2:4]  # the block

    def landscape_state(self, x: float, y: float, template: np.ndarray) -> np.ndarray:
        """The block at (x, y) at :data:`LANDSCAPE_ANGLE`, the pusher at :data:`LANDSCAPE_PARK`."""
        return np.array([*LANDSCAPE_PARK, x, y, LANDSCAPE_ANGLE, 0.0, 0.0])

    def behaviour_action(self, rng: np.random.Generator) -> np.ndarray:
        if self.behaviour_success():
            g = self._goal_rng
            self.expert.reset(np.array([*g.uniform(120, 390, 2), g.uniform(0, 2 * np.pi)]))
        return self.expert.act(rng)

    def behaviour_success(self) -> bool:
        block = self.env.block
        goal = self.expert.goal
        pos = np.linalg.norm(np.asarray(block.position) - goal[:2])
        return bool(pos < POS_TOL and angle_error(block.angle, goal[2]) < ANGLE_TOL)

    def close(self) -> None:
        self.env.close()
