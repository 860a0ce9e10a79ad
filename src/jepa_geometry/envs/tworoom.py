"""Two-Room (``swm/TwoRoom-v1``): a dot navigates between two rooms joined by a door.

State: the agent's xy in the 224-px frame's pixel units (the env's own physical units).
q = state (2). Success (LeWM, swm env): ``||agent - goal|| < 16`` px of the 224-px frame.
"""

from __future__ import annotations

import numpy as np

from .base import Task, import_swm, make_env, resize

SUCCESS_RADIUS = 16.0  # px of the 224-px frame (swm TwoRoomEnv.step)
EXPERT_NOISE = 2.0  # LeWM's dataset: ExpertPolicy(action_noise=2.0)


class TwoRoomTask(Task):
    name = "tworoom"
    title = "Two-Room"
    env_id = "swm/TwoRoom-v1"
    action_dim = 2
    q_names = ("agent_x", "agent_y")
    state_names = ("agent_x", "agent_y")
    success_rule = "||agent xy - goal xy|| < 16 px (224-px frame)"
    behaviour_policy = (
        "swm two_room ExpertPolicy (heads for the door, then the target) with Gaussian action "
        f"noise std {EXPERT_NOISE}, as in LeWM's dataset; a new random target is drawn whenever "
        "the current one is reached, so episodes last the full length (>= 150 steps are needed "
        "for the 100-step goal protocol)"
    )

    scale_weight = 0.1
    aux_weight = 0.1
    mppi_t_star = 64.0
    hard_threshold = 50.0
    hard_rule = "agent moves > 50 px of the 224-px frame (success: 16 px)"
    landscape_spans = "agent positions in the arena"
    landscape_distance = "the Euclidean distance in pixels"
    episodes = {"laptop": (150, 50)}
    collect_frames_per_s = {"smoke": 200.0, "laptop": 337.0, "paper": 490.0}
    ceiling_rollout_ms = 2.9

    def __init__(self, image_size: int, seed: int = 0) -> None:
        super().__init__(image_size, seed)
        import_swm()
        from stable_worldmodel.envs.two_room.expert_policy import ExpertPolicy

        self.env = make_env(self.env_id)
        self._expert = ExpertPolicy(action_noise=0.0, seed=seed)
        self._expert.set_env(self.env)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.env.reset(seed=seed)

    def get_state(self) -> np.ndarray:
        return self.env.agent_position.numpy().astype(np.float64)

    def set_state(self, state: np.ndarray) -> None:
        self.env._set_state(self._check_state(state, 2).astype(np.float32))

    def set_goal_state(self, goal_state: np.ndarray) -> None:
        """Move the env's target (used by the behaviour policy and the env's own test)."""
        self.env._set_goal_state(self._check_state(goal_state, 2).astype(np.float32))

    def step(self, action: np.ndarray) -> None:
        self.env.step(self._check_action(action))

    def render(self) -> np.ndarray:
        # The env rasterises 224 px frames with torch ops; on a busy 2-core machine torch's
        # intra-op threads make that 15x slower (48 ms vs 3 ms measured), so use one thread.
        import torch

        n = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            frame = self.env.render()
        finally:
            torch.set_num_threads(n)
        return resize(frame, self.image_size)

    def q(self, state: np.ndarray) -> np.ndarray:
        return np.asarray(state, dtype=np.float32)[:2].copy()

    def is_success(self, state: np.ndarray, goal_state: np.ndarray) -> bool:
        return self.goal_distance(state, goal_state) < SUCCESS_RADIUS

    def goal_distance(self, state: np.ndarray, goal_state: np.ndarray) -> float:
        return float(np.linalg.norm(np.asarray(state)[:2] - np.asarray(goal_state)[:2]))

    def landscape_axes(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The arena inside the border clamp of the env's collision code."""
        env = self.env
        radius = float(env.variation_space["agent"]["radius"].value.item())
        lo, hi = env.BORDER_SIZE + radius, env.IMG_SIZE - env.BORDER_SIZE - radius
        return np.linspace(lo, hi, n), np.linspace(lo, hi, n)

    def behaviour_action(self, rng: np.random.Generator) -> np.ndarray:
        target = self.env.target_position.numpy()
        if self.behaviour_success():
            # New target on arrival (our addition): resample the env's target variation.
            target = self.env.variation_space["target"]["position"].sample()
            self.set_goal_state(target)
        info = {"state": self.get_state(), "goal_state": np.asarray(target)}
        direction = self._expert.get_action(info)  # unit vector towards door / target
        noisy = direction + rng.normal(0.0, EXPERT_NOISE, size=2)
        return np.clip(noisy, -1.0, 1.0).astype(np.float32)

    def behaviour_success(self) -> bool:
        return self.is_success(self.get_state(), self.env.target_position.numpy())
