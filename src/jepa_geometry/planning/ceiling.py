"""The ceiling: planning with the simulator itself as the world model.

The learned arms score a candidate plan ``a_{1:H}`` (``H`` z-scored action blocks of
``frameskip`` env steps) by the terminal latent distance ``||ẑ_H - z_goal||²``
(:class:`~jepa_geometry.planning.solver.LatentGoalCost`). The ceiling replaces the model by the
simulator and the latent by SCALE's standardized task state:

    C(a_{1:H}) = || q̃(s_H) - q̃(s_goal) ||²,   q̃(s) = (q(s) - μ_q) / σ_q,

where ``s_H`` is the state the simulator reaches from the current true state after executing
the candidate's ``H · frameskip`` raw actions (un-z-scored and clipped to the action bounds,
exactly as the executed plan is), ``q`` is the task's ``Task.q`` and ``μ_q, σ_q`` the training
split's statistics (``EpisodeData.standardize_q``): the q and the standardization SCALE's
loss correlates latent distances with. Solvers, tiers, elite rule, seeds and sampling noise,
the z-scored planning space, the replanning loop, the success test and the pairs are the
learned arms' own; only the cost model differs. It is what a perfect model with SCALE's ideal
geometry reaches under our planner and budget: a reference, not a strict bound, since a
learned cost need not equal the q distance.

Each candidate is simulated by restoring the task's full simulator state
(``Task.set_state``: MuJoCo's integration state for Cube, qpos/qvel for Reacher and PointMaze,
the pymunk bodies in a fresh space for Push-T, the agent position for Two-Room) and stepping
the environment's own ``step`` one raw action at a time: a loop over candidates, since none
of the five environments steps a batch of states (Two-Room's collisions and Push-T's pymunk
space are scalar Python; the MuJoCo tasks' ``step`` wraps controllers and substeps).
"""

from __future__ import annotations

import numpy as np
import torch

from jepa_geometry.envs import Task
from jepa_geometry.envs.episodes import EpisodeData
from jepa_geometry.planning.solver import (
    BlockPlanner,
    Plan,
    PlanningError,
    SolverSpec,
)

CEILING = "ceiling"
"""The arm name of the simulator-as-model planner (in artifact keys and tables)."""
CEILING_COST = "standardized-q-sq-distance"
"""The ceiling's cost in artifact keys: ``||q̃(s_H) - q̃(s_goal)||²`` (full q)."""


def simulate(task: Task, state: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The state reached from ``state`` after the raw actions ``(T, A)``, one env step each.

    The task's full simulator state is restored first (``Task.set_state``), so the result
    depends on ``state`` and ``actions`` alone, not on the scene the environment held before.
    """
    task.set_state(state)
    for a in np.asarray(actions, dtype=np.float32):
        task.step(a)
    return task.get_state()


class SimulatorGoalCost:
    """swm ``Costable``: ``||q̃(s_H) - q̃(s_goal)||²`` of each candidate, by simulation.

    The states to plan from and the goals' standardized q are loaded per batch
    (:meth:`load`); ``info_dict`` carries ``row`` (B, S) int, each episode's index into them
    (an integer tensor: swm's solvers cast floating entries to float32, which would round a
    MuJoCo state), and optionally ``active`` (B, S) bool: inactive episodes are not simulated
    and get cost 0. swm's solvers treat the B episodes independently, so skipping them leaves
    every active episode's plan and sampling noise as they would be (as
    :class:`~jepa_geometry.planning.solver.LatentGoalCost` does).
    """

    def __init__(self, task: Task, data: EpisodeData, frameskip: int) -> None:
        if data.task != task.name:
            raise PlanningError(f"dataset of task {data.task!r} given for task {task.name!r}")
        self.task, self.data, self.frameskip = task, data, frameskip
        self.states = np.zeros((0, 0))
        self.q_goal = np.zeros((0, task.q_dim), dtype=np.float32)
        self.simulated = 0  # candidate rollouts simulated so far (cost accounting)

    def load(self, states: np.ndarray, goal_states: np.ndarray) -> None:
        """The raw states (N, S) to plan from and the goal states (N, S) of a batch."""
        states = np.asarray(states, dtype=np.float64)
        goal_states = np.asarray(goal_states, dtype=np.float64)
        if states.ndim != 2 or goal_states.shape != states.shape:
            raise PlanningError(
                f"states and goal_states must be two (N, S) arrays of one shape, got "
                f"{states.shape} and {goal_states.shape}"
            )
        self.states = states
        self.q_goal = self.standardized_q(goal_states)

    def standardized_q(self, states: np.ndarray) -> np.ndarray:
        """``q̃`` of raw states (N, S) -> (N, q_dim) float32 (SCALE's loss's q)."""
        return self.data.standardize_q(self.task.q_batch(states))

    def raw_actions(self, candidates: np.ndarray) -> np.ndarray:
        """z-scored blocks (..., H, frameskip·A) -> raw clipped actions (..., H·frameskip, A),
        the same float32 operations the evaluation applies to the plan it executes."""
        a = self.task.action_dim
        raw = self.data.unzscore_action(np.asarray(candidates, dtype=np.float32))
        raw = raw.reshape(*raw.shape[:-2], -1, a)
        return np.clip(raw, self.task.action_low, self.task.action_high)

    def criterion(self, info_dict: dict, action_candidates: torch.Tensor) -> torch.Tensor:
        b, s = action_candidates.shape[:2]
        rows = np.asarray(info_dict["row"][:, 0].cpu(), dtype=np.int64)
        active = (
            np.asarray(info_dict["active"][:, 0].cpu(), dtype=bool)
            if "active" in info_dict
            else np.ones(b, dtype=bool)
        )
        raw = self.raw_actions(action_candidates.detach().cpu().numpy())
        cost = np.zeros((b, s), dtype=np.float64)
        for i in np.flatnonzero(active):
            start = self.states[rows[i]]
            reached = np.stack([simulate(self.task, start, raw[i, j]) for j in range(s)])
            diff = self.standardized_q(reached) - self.q_goal[rows[i]]
            cost[i] = np.square(diff.astype(np.float64)).sum(-1)
            self.simulated += s
        return torch.as_tensor(cost, dtype=torch.float32, device=action_candidates.device)

    def get_cost(self, info_dict: dict, action_candidates: torch.Tensor) -> torch.Tensor:
        return self.criterion(info_dict, action_candidates)


class SimulatorPlanner(BlockPlanner):
    """Plans batches of episodes with one swm solver against the simulator (the ceiling).

    Candidates live in the learned arms' z-scored planning space (the dataset's action
    statistics), with iCEM's bounds the z-scored images of the raw bounds, so that under one
    seed the solver draws the same noise as for every learned arm.
    """

    def __init__(self, task: Task, data: EpisodeData, spec: SolverSpec, frameskip: int) -> None:
        bounds = (data.zscore_action(task.action_low), data.zscore_action(task.action_high))
        super().__init__(
            SimulatorGoalCost(task, data, frameskip), spec, task.action_dim, frameskip, bounds
        )

    @torch.no_grad()
    def plan(
        self,
        states: np.ndarray,
        goal_states: np.ndarray,
        seed: int,
        active: np.ndarray | torch.Tensor | None = None,
    ) -> Plan:
        """Plan for N episodes at once from their raw states (N, S) towards goal states (N, S).

        ``active`` (N,) bool, if given, marks the episodes whose plans are needed; the others
        are not simulated and their returned plan and cost are meaningless. ``cost`` is the
        returned plan's simulated cost.
        """
        self.cost.load(states, goal_states)
        n = len(self.cost.states)
        info = {"row": torch.arange(n)}
        active = self._active(active, n)
        if active is not None:
            info["active"] = active
        actions, seconds = self._solve(info, n, seed)
        cost = self.cost.get_cost({k: v[:, None] for k, v in info.items()}, actions[:, None])
        return Plan(actions=actions, cost=cost[:, 0], seconds=seconds)


__all__ = [
    "CEILING",
    "CEILING_COST",
    "SimulatorGoalCost",
    "SimulatorPlanner",
    "simulate",
]
