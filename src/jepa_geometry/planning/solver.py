"""Latent goal-reaching planning with stable-worldmodel's solvers, at named compute budgets.

Both papers plan by model-predictive control in latent space. A candidate plan is a sequence
of ``H`` z-scored action blocks ``a_{1:H}`` (each block = ``frameskip`` env actions); the world
model rolls it out autoregressively from the encoded current frame and the plan is scored by
the squared Euclidean distance of the *terminal* prediction to the encoded goal image,

    C(a_{1:H}) = || ẑ_H(z_context, a_{1:H}) - z_goal ||²   (summed over the D dimensions),

exactly LeWM's ``criterion`` (``jepa.py`` of ``lucas-maes/le-wm``) / swm's
``GoalMSE(reduction="sum")``. The optimisers are stable-worldmodel 0.1.1's
``CEMSolver``, ``ICEMSolver`` and ``MPPISolver`` -- the ones the SCALE authors used -- called
directly through :class:`LatentGoalCost`, which implements swm's ``Costable`` protocol
(``get_cost(info_dict, candidates) -> (B, S)``).

What this module adds to those solvers, thinly:

* **Budget tiers** ``T1``…``T5`` (samples × iterations) from ``profile.plan.tiers`` and SCALE's
  elite rule ``elites = max(round(0.1 · samples), 2)`` (SCALE authors' repository,
  ``scripts/budget_sweep.py``; stated in ``eval_results/RESULTS_multiseed_sr.md``).
* **MPPI temperature as a parameter.** swm ships ``T = 0.5``; on LeWM's cost, summed over
  192 dimensions, that makes the softmax an argmax. The default here is SCALE's pre-registered
  per-task ``T*`` (tuned for ``D = 192``; SCALE authors' repository,
  ``eval_results/RESULTS_mppi_temp.md``) rescaled by ``D / 192``, since the summed cost of a
  whitened latent grows linearly with ``D`` (our choice: see the book's *Reconstructions*
  page, section rec-mppi-temperature, ``book/reconstructions.md``).
* **iCEM bounds in the planning space.** iCEM clamps candidates to the action space it is
  given; swm's examples hand it the raw env bounds although candidates are z-scored
  (stable-worldmodel's ``ICEMSolver`` and its example configurations). We give it the
  z-scored images of the raw bounds.
* **Seeding per solve**: the solver's generator is re-seeded before each call, so the same
  seed gives the same plan, and two world models planned on one episode set with one seed see
  identical sampling noise (paired comparisons).
* **Silence**: the solvers ``print`` their solve time on every call; it is swallowed here and
  measured with ``time.perf_counter`` instead.

All episodes of a call are planned in one solver call (swm's ``batch_size`` = number of
episodes), so a plan costs ``iterations`` batched rollouts of ``active episodes × samples``
candidates (episodes already at their goal are not rolled out: :class:`LatentGoalCost`).
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn

from jepa_geometry.envs import task_class
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.profiles import Profile


def _cem(common: dict[str, Any], spec: SolverSpec) -> Any:
    from stable_worldmodel.solver import CEMSolver

    return CEMSolver(**common)


def _icem(common: dict[str, Any], spec: SolverSpec) -> Any:
    from stable_worldmodel.solver import ICEMSolver

    return ICEMSolver(**common)  # swm defaults: beta 2, alpha 0.1, 5 elites kept, mean


def _mppi(common: dict[str, Any], spec: SolverSpec) -> Any:
    from stable_worldmodel.solver import MPPISolver

    return MPPISolver(**common, temperature=spec.temperature)


SOLVERS: dict[str, Callable[[dict[str, Any], SolverSpec], Any]] = {
    "cem": _cem,
    "icem": _icem,
    "mppi": _mppi,
}
"""Every planning algorithm: its name -> the factory of its solver, given the arguments every
stable-worldmodel solver takes (``model`` the cost, ``num_samples``, ``var_scale``,
``n_steps``, ``topk``, ``device``) and the :class:`SolverSpec`. A new algorithm is one entry
here (a solver with swm's ``configure``/``solve`` interface) and, to be planned by the
studies, one in :data:`STUDY_SOLVERS`."""
TIERS: tuple[str, ...] = ("T1", "T2", "T3", "T4", "T5")

MPPI_T_STAR_DIM = 192
MPPI_SWEEP_192: tuple[float, ...] = (2.0, 8.0, 32.0, 64.0, 128.0, 256.0, 512.0)
"""SCALE's pre-registered MPPI temperature sweep (for D = 192); a study scales it by D / 192
for its embeddings and chooses ``T*`` on the LeWM arm (``study.plan.select_mppi_temperature``)."""
"""The embedding width of SCALE's pre-registered MPPI temperatures T* (each task's
``mppi_t_star``: tuned on the LeWM arm, D = 192, episode seed 101); :func:`mppi_temperature`
scales them by D / 192."""
SWM_MPPI_TEMPERATURE = 0.5  # swm's shipped default, for reference and ablations


@dataclass(frozen=True)
class StudySolver:
    """One solver label a study plans (a results table's ``solver`` column): the solver of
    :data:`SOLVERS` it plans with, its name in the book, its temperature (``"t_star"``: the
    study's chosen ``T*``; ``"swm"``: stable-worldmodel's shipped ``T = 0.5`` scaled by
    D / 192), the solver of SCALE's main grid it regenerates at the same footing (``paper``),
    and the one protocol it is planned under (``None``: every protocol of the study)."""

    solver: str
    name: str
    temperature: str | None = None
    paper: str | None = None
    protocol: str | None = None


MPPI_SWM = "mppi_swm"
STUDY_SOLVERS: dict[str, StudySolver] = {
    "cem": StudySolver("cem", "CEM", paper="cem"),
    "icem": StudySolver("icem", "iCEM", paper="icem"),
    "mppi": StudySolver("mppi", "MPPI", temperature="t_star"),
    MPPI_SWM: StudySolver(
        "mppi", "MPPI at T = 0.5", temperature="swm", paper="mppi", protocol=SCALE_PROTOCOL
    ),
}
"""Every solver label a study plans, in the order of its tables. ``mppi`` plans at the study's
``T*``; :data:`MPPI_SWM` at swm's shipped temperature, the temperature of SCALE's main grid,
where LeWM's cost is summed over D = 192 coordinates (so it is nearly an argmax), planned under
SCALE's protocol only, beside the ``mppi`` cells. A new planner is one entry here (and, when
it is a new algorithm, its factory in :data:`SOLVERS`)."""
SOLVER_NAMES: dict[str, str] = {label: s.name for label, s in STUDY_SOLVERS.items()}
"""How the book names each solver label."""
PAPER_SOLVER: dict[str, str] = {
    label: s.paper for label, s in STUDY_SOLVERS.items() if s.paper is not None
}
"""Each of our solver labels -> the solver of SCALE's main grid (and its per-tier and per-seed
tables) at the same temperature: SCALE's ``mppi`` there is at swm's 0.5, so our ``mppi`` at
``T*`` has no counterpart in them (SCALE's ``T*`` table is its counterpart)."""


class PlanningError(ValueError):
    """A solver, budget or shape does not fit the planning problem."""


class RolloutModel(Protocol):
    """The part of ``models.WorldModel`` the planner needs."""

    embed_dim: int
    action_block_dim: int

    def rollout(self, z_context: torch.Tensor, action_blocks: torch.Tensor) -> torch.Tensor: ...


@dataclass(frozen=True)
class SolverSpec:
    """Everything that defines one planner configuration (it also keys cached results)."""

    solver: str  # one of SOLVERS
    tier: str  # the budget tier's name, e.g. "T1" (or "custom")
    samples: int  # candidates per iteration
    iterations: int
    elites: int  # top-k used to refit the sampling distribution
    horizon: int = 5  # action blocks per plan
    var_scale: float = 1.0  # initial std of the z-scored action distribution
    temperature: float | None = None  # MPPI only

    def __post_init__(self) -> None:
        if self.solver not in SOLVERS:
            raise PlanningError(f"unknown solver {self.solver!r}; valid: {', '.join(SOLVERS)}")
        if not 2 <= self.elites <= self.samples:
            raise PlanningError(
                f"need 2 <= elites <= samples, got elites={self.elites}, samples={self.samples}"
            )
        if self.iterations < 1 or self.horizon < 1 or self.var_scale <= 0:
            raise PlanningError(f"iterations, horizon and var_scale must be positive: {self}")
        if (self.solver == "mppi") != (self.temperature is not None):
            raise PlanningError("a temperature is required for mppi and meaningless otherwise")
        if self.temperature is not None and self.temperature <= 0:
            raise PlanningError(f"MPPI temperature must be > 0, got {self.temperature}")

    @property
    def rollouts(self) -> int:
        """Candidate rollouts per plan (the compute measure of SCALE's tiers)."""
        return self.samples * self.iterations

    def as_dict(self) -> dict[str, Any]:
        """The fields, keyed as cached results were first keyed (``tier`` spelled ``budget``)."""
        return {("budget" if k == "tier" else k): v for k, v in asdict(self).items()}

    def __str__(self) -> str:
        t = f", T={self.temperature:g}" if self.temperature is not None else ""
        return (
            f"{self.solver} {self.tier} ({self.samples} samples x {self.iterations} it, "
            f"top {self.elites}{t})"
        )


def n_elites(samples: int, fraction: float = 0.1) -> int:
    """SCALE's elite count ``max(round(fraction · samples), 2)``, capped at ``samples``."""
    return min(samples, max(round(fraction * samples), 2))


def budget_tiers(profile: Profile) -> dict[str, tuple[int, int]]:
    """The profile's tiers ``{name: (samples, iterations)}``, checked to be ordered T1 ≥ … ≥ T5."""
    tiers = dict(profile.plan.tiers)
    names = list(tiers)
    if names != list(TIERS):
        raise PlanningError(f"profile {profile.name!r} must define tiers {TIERS}, got {names}")
    rollouts = [s * i for s, i in tiers.values()]
    if any(a < b for a, b in zip(rollouts, rollouts[1:], strict=False)):
        raise PlanningError(f"tiers of {profile.name!r} must shrink from T1 to T5: {tiers}")
    return tiers


def mppi_temperature(task: str, embed_dim: int) -> float:
    """Default MPPI temperature: SCALE's ``T*`` for the task, times ``embed_dim / 192``."""
    try:
        t_star = task_class(task).mppi_t_star
    except ValueError as e:
        raise PlanningError(str(e)) from None
    return t_star * embed_dim / MPPI_T_STAR_DIM


def solver_spec(
    solver: str,
    tier: str,
    profile: Profile,
    *,
    temperature: float | None = None,
    task: str | None = None,
    embed_dim: int | None = None,
) -> SolverSpec:
    """The spec of ``solver`` at budget tier ``tier`` of ``profile``.

    MPPI needs a temperature: pass it, or pass ``task`` (and optionally ``embed_dim``,
    default ``profile.model.embed_dim``) to use :func:`mppi_temperature`.
    """
    if solver not in SOLVERS:
        raise PlanningError(f"unknown solver {solver!r}; valid: {', '.join(SOLVERS)}")
    tiers = budget_tiers(profile)
    if tier not in tiers:
        raise PlanningError(f"unknown budget tier {tier!r}; valid: {', '.join(tiers)}")
    samples, iterations = tiers[tier]
    if solver == "mppi" and temperature is None:
        if task is None:
            raise PlanningError("mppi needs a temperature, or the task for its default T*")
        temperature = mppi_temperature(task, embed_dim or profile.model.embed_dim)
    return SolverSpec(
        solver=solver,
        tier=tier,
        samples=samples,
        iterations=iterations,
        elites=n_elites(samples, profile.plan.topk_fraction),
        horizon=profile.plan.horizon,
        temperature=temperature if solver == "mppi" else None,
    )


class LatentGoalCost(nn.Module):
    """swm ``Costable``: terminal squared distance ``||ẑ_H - z_goal||²`` of each candidate.

    ``info_dict`` carries precomputed embeddings, which the solver broadcasts over its
    candidates: ``z_context`` (B, S, h, D) and ``z_goal`` (B, S, D). Candidates are
    (B, S, H, action_block_dim). Encoding once per plan, outside the solver, keeps the
    encoder out of the ``iterations × samples`` inner loop.

    An optional ``active`` (B, S) bool entry marks the episodes whose plan will be executed:
    the others (episodes that already reached their goal) are not rolled out and get cost 0.
    swm's solvers treat the B episodes independently (sampling noise is drawn for all B from
    one generator, elites and refits are per episode), so skipping them leaves every active
    episode's plan exactly as it would have been, and keeps the noise paired across world
    models, at a fraction of the rollouts.
    """

    def __init__(self, model: RolloutModel) -> None:
        super().__init__()
        self.model = model

    def criterion(self, info_dict: dict, action_candidates: torch.Tensor) -> torch.Tensor:
        z_ctx, z_goal = info_dict["z_context"], info_dict["z_goal"]
        b, s = action_candidates.shape[:2]
        h, d = z_ctx.shape[2:]
        if "active" in info_dict:
            rows = info_dict["active"][:, 0].nonzero().flatten()
            cost = action_candidates.new_zeros(b, s)
            if len(rows):
                sub = {"z_context": z_ctx[rows], "z_goal": z_goal[rows]}
                cost[rows] = self.criterion(sub, action_candidates[rows])
            return cost
        blocks = action_candidates.reshape(b * s, *action_candidates.shape[2:])
        z_pred = self.model.rollout(z_ctx.reshape(b * s, h, d), blocks)
        return (z_pred[:, -1] - z_goal.reshape(b * s, d)).pow(2).sum(-1).reshape(b, s)

    def get_cost(self, info_dict: dict, action_candidates: torch.Tensor) -> torch.Tensor:
        return self.criterion(info_dict, action_candidates)


@dataclass(frozen=True)
class Plan:
    """A batch of plans: z-scored action blocks (N, H, action_block_dim) and their cost."""

    actions: torch.Tensor
    cost: torch.Tensor  # (N,) cost of the returned plan under the model
    seconds: float  # wall time of the whole batched solve


class BlockPlanner:
    """Drives one swm solver over plans of ``H`` z-scored action blocks, for any cost model.

    ``cost`` is a swm ``Costable`` (``get_cost(info_dict, candidates) -> (B, S)``);
    ``action_dim`` is the env's action dimension ``A`` and ``frameskip`` the env steps per
    block, so a block has ``frameskip · A`` entries. ``action_bounds`` (low, high), each of
    shape (A,), are the bounds *in the z-scored planning space*; only iCEM uses them (it
    clamps candidates). All N episodes of a call are solved in one batch (swm's
    ``batch_size = N``); callers chunk larger sets (see ``evaluator.evaluate_planner``).
    Subclasses say what a plan starts from: :class:`Planner` (a learned latent model) and
    ``ceiling.SimulatorPlanner`` (the simulator itself).
    """

    def __init__(
        self,
        cost: Any,
        spec: SolverSpec,
        action_dim: int,
        frameskip: int,
        action_bounds: tuple[np.ndarray, np.ndarray] | None = None,
        device: str = "cpu",
    ) -> None:
        if action_bounds is None:
            action_bounds = (np.full(action_dim, -np.inf), np.full(action_dim, np.inf))
        low, high = (np.asarray(b, dtype=np.float32).reshape(-1) for b in action_bounds)
        if low.shape != (action_dim,) or high.shape != (action_dim,) or not (low < high).all():
            raise PlanningError(
                f"action_bounds must be two arrays of shape ({action_dim},) with low < high"
            )
        self.spec = spec
        self.action_dim = action_dim
        self.frameskip = frameskip
        self.bounds = (low, high)
        self.cost = cost
        self.solver = _make_solver(cost, spec, device)

    def _configure(self, n: int) -> None:
        import gymnasium as gym
        from stable_worldmodel.policy import PlanConfig

        low = np.broadcast_to(self.bounds[0], (n, self.action_dim))
        high = np.broadcast_to(self.bounds[1], (n, self.action_dim))
        cfg = PlanConfig(
            horizon=self.spec.horizon,
            receding_horizon=self.spec.horizon,
            action_block=self.frameskip,
            warm_start=False,
        )
        space = gym.spaces.Box(low=low, high=high, dtype=np.float32)
        self.solver.batch_size = n
        self.solver.configure(action_space=space, n_envs=n, config=cfg)

    @staticmethod
    def _active(active: np.ndarray | torch.Tensor | None, n: int) -> torch.Tensor | None:
        """``active`` as an (n,) bool tensor (None stays None)."""
        if active is None:
            return None
        active = torch.as_tensor(np.asarray(active, dtype=bool))
        if active.shape != (n,):
            raise PlanningError(f"active must be ({n},) bool, got {tuple(active.shape)}")
        return active

    def _solve(self, info: dict, n: int, seed: int) -> tuple[torch.Tensor, float]:
        """The solver's plans (n, H, frameskip·A) for ``info`` and its wall time; the solver's
        generator is re-seeded first, so the same seed gives the same sampling noise."""
        self._configure(n)
        self.solver.torch_gen.manual_seed(int(seed))
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # swm prints "<solver> solve time"
            out = self.solver.solve(info)
        return out["actions"].to(torch.float32), time.perf_counter() - t0

    def env_actions(self, plan_actions: torch.Tensor) -> np.ndarray:
        """Unfold z-scored blocks (N, H, frameskip·A) into per-step actions (N, H·frameskip, A).

        Within a block the ``frameskip`` actions are stored time-major, as the dataset's
        clips concatenate them.
        """
        n, h, _ = plan_actions.shape
        return plan_actions.reshape(n, h * self.frameskip, self.action_dim).cpu().numpy()


class Planner(BlockPlanner):
    """Plans batches of episodes with one swm solver against one learned world model.

    The model's ``action_block_dim`` must equal ``frameskip · A``; ``options`` are
    :class:`BlockPlanner`'s ``action_bounds`` and ``device``.
    """

    def __init__(
        self, model: RolloutModel, spec: SolverSpec, action_dim: int, frameskip: int, **options: Any
    ) -> None:
        if model.action_block_dim != frameskip * action_dim:
            raise PlanningError(
                f"world model action block dim {model.action_block_dim} != frameskip "
                f"{frameskip} x task action dim {action_dim}; was it trained on this task?"
            )
        self.model = model
        super().__init__(LatentGoalCost(model), spec, action_dim, frameskip, **options)

    @torch.no_grad()
    def plan(
        self,
        z_context: torch.Tensor,
        z_goal: torch.Tensor,
        seed: int,
        active: np.ndarray | torch.Tensor | None = None,
    ) -> Plan:
        """Plan for N episodes at once from context (N, h, D) and goal (N, D) embeddings.

        ``active`` (N,) bool, if given, marks the episodes whose plans are needed; the others
        are not rolled out (see :class:`LatentGoalCost`) and their returned plan and cost are
        meaningless. The active episodes' plans equal those of a call without ``active``.
        """
        d = self.model.embed_dim
        if z_context.ndim != 3 or z_context.shape[-1] != d:
            raise PlanningError(f"z_context must be (N, h, {d}), got {tuple(z_context.shape)}")
        if z_goal.shape != (z_context.shape[0], d):
            raise PlanningError(
                f"z_goal must be ({z_context.shape[0]}, {d}), got {tuple(z_goal.shape)}"
            )
        n = z_context.shape[0]
        info = {"z_context": z_context.float(), "z_goal": z_goal.float()}
        active = self._active(active, n)
        if active is not None:
            info["active"] = active
        actions, seconds = self._solve(info, n, seed)
        cost = self.cost.get_cost(
            {k: v[:, None] for k, v in info.items()}, actions[:, None].to(z_goal.device)
        )[:, 0]
        return Plan(actions=actions, cost=cost.cpu(), seconds=seconds)


def _make_solver(cost: Any, spec: SolverSpec, device: str) -> Any:
    common = dict(
        model=cost,
        num_samples=spec.samples,
        var_scale=spec.var_scale,
        n_steps=spec.iterations,
        topk=spec.elites,
        device=device,
    )
    return SOLVERS[spec.solver](common, spec)


def plan_seed(eval_seed: int, *parts: int) -> int:
    """A 31-bit solver seed derived from the evaluation seed and integer labels (e.g. the
    replanning round), independent of the world model, so all arms share it."""
    return int(np.random.SeedSequence([eval_seed, *parts]).generate_state(1)[0] & 0x7FFFFFFF)


__all__ = [
    "MPPI_SWEEP_192",
    "MPPI_SWM",
    "PAPER_SOLVER",
    "SOLVERS",
    "SOLVER_NAMES",
    "STUDY_SOLVERS",
    "StudySolver",
    "TIERS",
    "BlockPlanner",
    "LatentGoalCost",
    "Plan",
    "Planner",
    "PlanningError",
    "SolverSpec",
    "budget_tiers",
    "mppi_temperature",
    "n_elites",
    "plan_seed",
    "solver_spec",
]
