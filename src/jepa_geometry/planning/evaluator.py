"""Planning the pairs of a protocol with a trained world model, and the cached results.

For each pair (:mod:`jepa_geometry.planning.protocol`):

1. **Planning.** Encode the current frame (history 1, as LeWM's evaluation does) and the
   goal frame; plan ``H`` blocks of ``frameskip`` env steps with a solver at a budget tier;
   **execute the whole plan, then replan**, until ``budget`` env steps are spent.
2. **Success** if the task's success test fires after any executed step; an episode stops
   (is frozen) once it succeeded.

**Pairing.** The episode set depends only on (task, dataset, protocol, eval seed, n), never on
the arm; episodes are planned in fixed chunks whose solver seed depends only on (eval seed,
replanning round, chunk), and a chunk is planned whole while any of its episodes is unfinished,
so each episode sees the same sampling noise under every world model. Differences between arms
are therefore paired differences (:func:`compare`).

Why not swm's ``World`` / ``WorldModelPolicy`` loop: ``World`` drives swm gym vector envs and
swm datasets, while our tasks are :class:`~jepa_geometry.envs.Task` objects whose states are
swapped in and out of one simulator (building one MuJoCo Cube env takes seconds); and the
policy asks for an observation every env step, whereas this protocol needs a frame only at the
replanning steps (a Cube frame costs 33 ms to render here). The solvers themselves are swm's.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from jepa_geometry import stats
from jepa_geometry.artifacts import Artifact, get_or_build, stable_spec
from jepa_geometry.envs import Task, q_names, shared_task, task_class
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.envs.episodes import EpisodeData
from jepa_geometry.jobs import JOB_THREADS, job_threads, progress_bar
from jepa_geometry.planning.ceiling import CEILING, CEILING_COST, SimulatorPlanner
from jepa_geometry.planning.protocol import (
    EpisodeSet,
    EvaluationError,
    Protocol,
    draw_episode_set,
    episode_set_spec,
    make_protocol,
    pair_subset,
)
from jepa_geometry.planning.solver import (
    BlockPlanner,
    Plan,
    Planner,
    SolverSpec,
    budget_tiers,
    plan_seed,
    solver_spec,
)
from jepa_geometry.profiles import Profile
from jepa_geometry.wm.arms import arm_name, key_arm
from jepa_geometry.wm.training import load_world_model, world_model_artifact

EPISODE_BATCH = 25  # episodes per batched solve (see evaluate_planner)


RANDOM_ROUND = 1_000_003  # label of the random policy's seeds, distinct from plan rounds


class _Runner:
    """Steps all episodes of a set in one :class:`Task`, freezing each once it succeeds."""

    def __init__(self, task: Task, episodes: EpisodeSet, seed: int) -> None:
        self.task, self.eps = task, episodes
        task.reset(seed=seed)
        n = len(episodes)
        self.states = episodes.start_states.copy()
        self.success = np.zeros(n, dtype=bool)
        self.steps = np.zeros(n, dtype=np.int64)  # env steps executed
        self.final = episodes.pairs["start_distance"].to_numpy(dtype=np.float64).copy()
        self.closest = self.final.copy()

    def _load(self, i: int) -> None:
        self.task.set_state(self.states[i])
        set_goal = getattr(self.task, "set_goal_state", None)  # env-side target, if any
        if set_goal is not None:
            set_goal(self.eps.goal_states[i])

    def observe(self, rows: np.ndarray) -> np.ndarray:
        """Current frames of the episodes ``rows``, (len(rows), H, W, 3) uint8."""
        frames = []
        for i in rows:
            self._load(i)
            frames.append(self.task.render())
        return np.stack(frames)

    def execute(self, actions: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Run raw actions (len(rows), T, A) on the unfinished episodes among ``rows`` (default:
        all), checking success after every step."""
        rows = np.arange(len(self.states)) if rows is None else rows
        for i, acts in zip(rows, actions, strict=True):
            if self.success[i]:
                continue
            self._load(i)
            goal = self.eps.goal_states[i]
            for a in acts:
                self.task.step(a)
                self.steps[i] += 1
                state = self.task.get_state()
                d = self.task.goal_distance(state, goal)
                self.final[i], self.closest[i] = d, min(self.closest[i], d)
                if self.task.is_success(state, goal):
                    self.success[i] = True
                    break
            self.states[i] = self.task.get_state()

    def table(self) -> pd.DataFrame:
        out = self.eps.pairs.copy()
        out["success"] = self.success
        out["steps"] = self.steps
        out["final_distance"] = self.final
        out["min_distance"] = self.closest
        return out


def _replan_rounds(
    task: Task,
    data: EpisodeData,
    runner: _Runner,
    planner: BlockPlanner,
    plan_chunk: Callable[[int, int, np.ndarray, np.ndarray], Plan],
    chunks: Sequence[tuple[int, np.ndarray]],
    include: np.ndarray,
    bar: Any,
    share_among_active: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Model-predictive control of the episodes ``include`` of the given chunks: plan, execute
    the whole plan, replan, until the protocol's budget is spent or the episode succeeded.

    ``chunks`` are ``(chunk index, episode rows)``; ``plan_chunk(round, chunk, rows, active)``
    plans a whole chunk (``active`` marks its unfinished included episodes; the others keep
    their place, so each episode's sampling noise is that of the whole chunk's solve) with the
    solver seeded by (eval seed, round, chunk). Returns the plans per episode and each
    episode's share of its chunks' solve wall time: divided among the chunk's episodes, or
    with ``share_among_active`` among its active ones (when only they cost anything, as
    simulated rollouts do).
    """
    proto = runner.eps.protocol
    n = len(runner.eps)
    plans = np.zeros(n, dtype=np.int64)
    seconds = np.zeros(n)
    for r in range(proto.plans):
        steps = min(proto.plan_steps, proto.budget - r * proto.plan_steps)
        for c, rows in chunks:
            bar.update(1)
            active = include[rows] & ~runner.success[rows]
            todo = rows[active]
            if len(todo) == 0:
                continue
            plan = plan_chunk(r, c, rows, active)
            plans[todo] += 1
            seconds[todo] += plan.seconds / (len(todo) if share_among_active else len(rows))
            raw = data.unzscore_action(planner.env_actions(plan.actions[active])[:, :steps])
            runner.execute(np.clip(raw, task.action_low, task.action_high), todo)
            bar.set_postfix(success=f"{runner.success[include].sum()}/{include.sum()}")
    return plans, seconds


def _chunks(n: int, episode_batch: int) -> list[tuple[int, np.ndarray]]:
    """The fixed chunks ``(index, rows)`` of ``episode_batch`` episodes each, by episode index."""
    if episode_batch < 1:
        raise EvaluationError(f"episode_batch must be >= 1, got {episode_batch}")
    return [
        (c, np.arange(i, min(i + episode_batch, n)))
        for c, i in enumerate(range(0, n, episode_batch))
    ]


def evaluate_planner(
    task: Task,
    model: Any,
    data: EpisodeData,
    episodes: EpisodeSet,
    spec: SolverSpec,
    seed: int,
    episode_batch: int = EPISODE_BATCH,
    progress: bool = True,
    skip_finished: bool = True,
) -> pd.DataFrame:
    """Plan and execute every episode of ``episodes``; one row per episode.

    Episodes are planned in fixed chunks of ``episode_batch`` (by episode index), each chunk in
    one batched solver call seeded by (``seed``, round, chunk): a chunk is skipped once all its
    episodes succeeded, and every other episode keeps the same sampling noise under every world
    model. (Batches beyond ~25 episodes do not plan faster on 2 CPU cores; 200 are slower.)
    Within a chunk only unfinished episodes are rendered and rolled out; ``skip_finished=False``
    rolls out the finished ones too, as before the throughput work (the same plans for every
    unfinished episode, at more cost: ``benchmarks/bench_throughput.py`` compares the two).

    Columns: the pair columns of :class:`EpisodeSet` plus ``success``, ``steps`` (env steps
    executed), ``final_distance``, ``min_distance`` (``Task.goal_distance`` units), ``plans``
    and ``plan_seconds`` (this episode's share of its chunk's solve wall time).
    """
    proto = episodes.protocol
    if spec.horizon != proto.horizon:
        raise EvaluationError(f"solver horizon {spec.horizon} != protocol horizon {proto.horizon}")
    chunks = _chunks(len(episodes), episode_batch)
    device = model_device(model)
    planner = Planner(
        model,
        spec,
        action_dim=task.action_dim,
        frameskip=proto.frameskip,
        action_bounds=(data.zscore_action(task.action_low), data.zscore_action(task.action_high)),
        device=str(device),
    )
    was_training = model.training
    model.eval()
    runner = _Runner(task, episodes, seed)
    z_goal = _encode(model, episodes.goal_pixels)

    def plan_chunk(r: int, c: int, rows: np.ndarray, active: np.ndarray) -> Plan:
        # Only unfinished episodes are rendered, encoded and rolled out; the finished
        # ones keep their place in the chunk (zeros), so the solver's noise per
        # episode is the same as when the whole chunk is planned (LatentGoalCost).
        z_now = torch.zeros(len(rows), 1, z_goal.shape[1], device=device)
        z_now[torch.as_tensor(active, device=device)] = _encode(
            model, runner.observe(rows[active])
        )[:, None]
        return planner.plan(
            z_now,
            z_goal[rows],
            seed=plan_seed(seed, r, c),
            active=active if skip_finished else None,
        )

    bar = progress_bar(
        total=proto.plans * len(chunks), desc=f"{episodes.task} {spec}", progress=progress
    )
    try:
        include = np.ones(len(episodes), dtype=bool)
        plans, seconds = _replan_rounds(
            task, data, runner, planner, plan_chunk, chunks, include, bar
        )
    finally:
        bar.close()
        model.train(was_training)
    out = runner.table()
    out["plans"] = plans
    out["plan_seconds"] = seconds
    return out


def evaluate_ceiling(
    task: Task,
    data: EpisodeData,
    episodes: EpisodeSet,
    spec: SolverSpec,
    seed: int,
    include: np.ndarray | None = None,
    episode_batch: int = EPISODE_BATCH,
    progress: bool = True,
) -> pd.DataFrame:
    """:func:`evaluate_planner` with the simulator as the world model (the ceiling,
    :mod:`jepa_geometry.planning.ceiling`), on the episodes ``include`` (n,) bool (default:
    all); one row per included episode, with :func:`evaluate_planner`'s columns.

    The chunks, their solver seeds and the replanning loop are the learned arms', and an
    episode left out is treated as finished (kept in its chunk, never simulated), so each
    included episode is planned exactly as in a run on every episode. ``plan_seconds`` is the
    episode's share of its solves' wall time among the episodes simulated in them.
    """
    proto = episodes.protocol
    if spec.horizon != proto.horizon:
        raise EvaluationError(f"solver horizon {spec.horizon} != protocol horizon {proto.horizon}")
    n = len(episodes)
    include = np.ones(n, dtype=bool) if include is None else np.asarray(include, dtype=bool)
    if include.shape != (n,):
        raise EvaluationError(f"include must be ({n},) bool, got shape {include.shape}")
    chunks = [(c, rows) for c, rows in _chunks(n, episode_batch) if include[rows].any()]
    planner = SimulatorPlanner(task, data, spec, proto.frameskip)
    bar = progress_bar(
        total=proto.plans * len(chunks), desc=f"{episodes.task} {CEILING} {spec}", progress=progress
    )

    def run_chunk(c: int, rows: np.ndarray) -> pd.DataFrame:
        # a fresh runner per chunk: a chunk's result does not depend on the chunks run
        # before it in this process (so it can be cached and resumed on its own)
        runner = _Runner(task, episodes, seed)

        def plan_chunk(r: int, c: int, rows: np.ndarray, active: np.ndarray) -> Plan:
            states, goals = runner.states[rows], episodes.goal_states[rows]
            return planner.plan(states, goals, seed=plan_seed(seed, r, c), active=active)

        plans, seconds = _replan_rounds(
            task, data, runner, planner, plan_chunk, [(c, rows)], include, bar, True
        )
        out = runner.table()
        out["plans"] = plans
        out["plan_seconds"] = seconds
        return out.iloc[rows[include[rows]]]

    try:
        tables = [run_chunk(c, rows) for c, rows in chunks]
    finally:
        bar.close()
    return pd.concat(tables, ignore_index=True)


def evaluate_random(task: Task, episodes: EpisodeSet, seed: int) -> pd.DataFrame:
    """The floor: uniform random raw actions in the task's bounds for the whole budget."""
    proto = episodes.protocol
    runner = _Runner(task, episodes, seed)
    low, high = np.asarray(task.action_low), np.asarray(task.action_high)
    acts = np.stack(
        [
            np.random.default_rng(plan_seed(seed, RANDOM_ROUND, i)).uniform(
                low, high, size=(proto.budget, task.action_dim)
            )
            for i in range(len(episodes))
        ]
    ).astype(np.float32)
    runner.execute(acts)
    return runner.table()


def model_device(model: Any) -> torch.device:
    """Where ``model`` runs: its first parameter's or buffer's device; a model with neither
    (a toy or an oracle) runs on the CPU."""
    if isinstance(model, nn.Module):
        for tensor in itertools.chain(model.parameters(), model.buffers()):
            return tensor.device
    return torch.device("cpu")


@torch.no_grad()
def _encode(model: Any, frames: np.ndarray) -> torch.Tensor:
    """(n, H, W, 3) uint8 frames -> (n, D) embeddings (eval-mode BatchNorm)."""
    x = torch.as_tensor(np.ascontiguousarray(frames)).permute(0, 3, 1, 2)
    return model.encode(x.to(model_device(model))).float()


@dataclass(frozen=True)
class EvalResult:
    """Per-episode tables of one arm and of the random floor on the same pairs."""

    task: str
    arm: str
    train_seed: int
    spec: SolverSpec
    protocol: Protocol
    episodes: pd.DataFrame
    random: pd.DataFrame
    eval_seconds: float  # wall time of the planner's episode loop when it was built


@dataclass(frozen=True)
class PlanningCell:
    """One planning cell of one trained model: everything its cached results depend on.

    The model is (``task``, ``arm``, ``train_seed``, ``profile``, ``weights``: the arm's weight
    overrides, None for the papers' defaults); the cell is the ``solver`` at a budget ``tier``
    under a ``protocol`` ("profile": ``profile.eval``), MPPI's ``temperature`` (None: the
    profile's), and ``n_pairs`` start/goal pairs (None: the profile's count). A record is a
    job: pools and the cluster pass it whole, and :meth:`evaluate` plans it (or reads it from
    the cache).

    The arm :data:`~jepa_geometry.planning.ceiling.CEILING` plans with the simulator as the
    model (no training seed, no weights: its key names neither), optionally on a seeded
    ``subset`` of that many of the cell's pairs
    (:func:`~jepa_geometry.planning.protocol.pair_subset`), cached per chunk of
    :data:`EPISODE_BATCH` episodes so an interrupted cell resumes.
    """

    task: str
    arm: str
    train_seed: int
    profile: Profile
    solver: str = "cem"
    tier: str = "T1"
    protocol: str = "profile"
    temperature: float | None = None
    n_pairs: int | None = None
    weights: dict[str, float] | None = None
    subset: int | None = None

    def plan(self) -> tuple[Protocol, int, SolverSpec, Artifact, Artifact]:
        """Protocol, pair count, solver spec and the two cached artifacts of the cell."""
        profile = self.profile
        proto = make_protocol(profile, self.protocol)
        n = profile.eval.episodes if self.n_pairs is None else self.n_pairs
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise EvaluationError(
                f"n_pairs must be an integer >= 1 (or None: the profile's), got {n!r}"
            )
        ceiling = self.arm == CEILING
        if not ceiling:
            try:
                arm_name(self.arm)
            except ValueError as e:
                raise EvaluationError(f"{e}; or {CEILING!r} (the simulator as the model)") from None
            if self.subset is not None:
                raise EvaluationError(
                    f"subset={self.subset!r}: a subset of pairs is for the {CEILING!r} arm only "
                    f"(the learned arms plan every pair); use None"
                )
        elif self.weights:
            raise EvaluationError(f"the {CEILING!r} arm has no loss weights, got {self.weights}")
        if self.subset is not None:
            pair_subset(n, self.subset, profile.seeds.eval)  # checks the count before any work
        spec = solver_spec(
            self.solver,
            self.tier,
            profile,
            temperature=self.temperature,
            task=self.task,
            embed_dim=len(q_names(self.task)) if ceiling else None,
        )
        set_spec = episode_set_spec(self.task, profile, proto, n, profile.seeds.eval)
        rand_art = Artifact("results", f"random-{self.task}", {**set_spec, "policy": "uniform"})
        if ceiling:
            key = {**self._ceiling_key(set_spec, spec), "pairs": self.subset}  # its first spelling
            return proto, n, spec, Artifact("results", f"plan-{self.task}", key), rand_art
        ckpt = world_model_artifact(self.task, self.arm, self.train_seed, profile, self.weights)
        plan_art = Artifact(
            "results",
            f"plan-{self.task}",
            stable_spec(
                {
                    **set_spec,
                    "arm": key_arm(self.arm),  # an objective file by its name: not its path
                    "train_seed": self.train_seed,
                    "weights": self.weights,
                    "checkpoint": ckpt.key,
                    "solver": spec.as_dict(),
                    "episode_batch": EPISODE_BATCH,
                    "torch_threads": JOB_THREADS,
                    "device": profile.cluster.device,  # a GPU's plans are its own
                },
                added={"device": "cpu"},
            ),
        )
        return proto, n, spec, plan_art, rand_art

    @staticmethod
    def _ceiling_key(set_spec: dict[str, Any], spec: SolverSpec) -> dict[str, Any]:
        """What a ceiling result depends on besides its pairs: the episode set (the dataset's
        key, hence its q statistics and simulator versions), the cost, the solver and the
        chunking (the solver's seeds and noise are per chunk)."""
        return {
            **set_spec,
            "arm": CEILING,
            "cost": CEILING_COST,
            "solver": spec.as_dict(),
            "episode_batch": EPISODE_BATCH,
        }

    def ceiling_chunks(self) -> list[tuple[Artifact, np.ndarray]]:
        """The ceiling cell's chunks that hold planned pairs: each chunk's cached result and
        its (n,) bool mask of planned pairs. A chunk is keyed by its own pairs, so subsets
        that share a chunk's pairs share its result."""
        if self.arm != CEILING:
            raise EvaluationError(f"arm {self.arm!r} is not planned in chunks; only {CEILING!r}")
        _, n, spec, _, _ = self.plan()
        proto = make_protocol(self.profile, self.protocol)
        seed = self.profile.seeds.eval
        base = self._ceiling_key(episode_set_spec(self.task, self.profile, proto, n, seed), spec)
        include = np.ones(n, bool) if self.subset is None else pair_subset(n, self.subset, seed)
        out = []
        for c, rows in _chunks(n, EPISODE_BATCH):
            mask = np.zeros(n, dtype=bool)
            mask[rows] = include[rows]
            if mask.any():
                key = {**base, "chunk": c, "rows": np.flatnonzero(mask).tolist()}
                out.append((Artifact("results", f"ceiling-chunk-{self.task}", key), mask))
        return out

    def artifacts(self) -> tuple[Artifact, Artifact]:
        """The cell's two cached results (built or not): the arm's per-episode table and the
        random floor of the same pairs."""
        return self.plan()[3:]

    def unbuilt(self) -> bool:
        """Whether the cell still has to plan: the ``pending`` test of a pool of cells (built
        cells run without a pool)."""
        return not all(a.exists() for a in self.artifacts())

    def rollouts(self) -> int:
        """Rollouts per replan at the cell's budget tier (samples x iterations)."""
        samples, iterations = budget_tiers(self.profile)[self.tier]
        return samples * iterations

    def evaluate(self, progress: bool = True) -> EvalResult:
        """:func:`evaluate_cell` of this cell."""
        return evaluate_cell(self, progress)


def evaluate_arm(
    task: str, arm: str, train_seed: int, profile: Profile, progress: bool = True, **cell: Any
) -> EvalResult:
    """Evaluate one trained world model (trained if missing), or the simulator (arm
    ``"ceiling"``), in one planning cell: ``PlanningCell(task, arm, train_seed, profile,
    **cell)`` (its fields ``solver``, ``tier``, ``protocol``, ``temperature``, ``episodes``,
    ``weights``, ``pairs``), planned by :func:`evaluate_cell`."""
    return evaluate_cell(PlanningCell(task, arm, train_seed, profile, **cell), progress)


def evaluate_cell(cell: PlanningCell, progress: bool = True) -> EvalResult:
    """Plan one cell (the model trained first if missing; the ceiling by
    :func:`evaluate_ceiling`, chunk by chunk) on its episode set.

    Results are cached: ``results/plan-<task>/<key>/episodes.parquet`` for the arm and
    ``results/random-<task>/<key>/episodes.parquet`` for the floor (shared by all arms). The
    solve times, which depend on the machine, live in the arm's manifest and are joined back as
    the ``plan_seconds`` column, so a payload's bytes depend on its inputs alone.
    """

    proto, n, spec, plan_art, rand_art = cell.plan()
    task, arm, train_seed, profile = cell.task, cell.arm, cell.train_seed, cell.profile
    seed = profile.seeds.eval
    state: dict[str, Any] = {}

    def context() -> tuple[Any, Any, EpisodeSet]:
        if not state:
            data = load_dataset(task, profile)
            env = shared_task(task, profile.data.image_size, seed=seed)
            state["ctx"] = (env, data, draw_episode_set(env, data, proto, n, seed))
        return state["ctx"]

    def build_plan(tmp) -> dict:
        env, data, eps = context()
        model = load_world_model(task, arm, train_seed, profile, cell.weights)
        model.to(profile.cluster.device)
        t0 = time.perf_counter()
        with job_threads():  # the same plans on any machine (jepa_geometry.jobs)
            table = evaluate_planner(env, model, data, eps, spec, seed, progress=progress)
        # solve times go to the manifest: the payload's bytes depend on the inputs alone
        seconds = table.pop("plan_seconds").round(6).tolist()
        table.to_parquet(tmp / "episodes.parquet", index=False)
        return {
            "eval_seconds": time.perf_counter() - t0,
            "torch_threads": JOB_THREADS,
            "plan_seconds": seconds,
        }

    def build_ceiling(tmp) -> dict:
        tables, seconds, eval_seconds = [], [], 0.0
        for chunk_art, mask in cell.ceiling_chunks():

            def build_chunk(ctmp, mask=mask) -> dict:
                env, data, eps = context()
                t0 = time.perf_counter()
                with job_threads():
                    table = evaluate_ceiling(env, data, eps, spec, seed, mask, progress=progress)
                times = table.pop("plan_seconds").round(6).tolist()
                table.to_parquet(ctmp / "episodes.parquet", index=False)
                return {"eval_seconds": time.perf_counter() - t0, "plan_seconds": times}

            path = get_or_build(chunk_art, build_chunk)
            manifest = chunk_art.manifest()
            tables.append(pd.read_parquet(path / "episodes.parquet"))
            seconds += manifest["plan_seconds"]
            eval_seconds += float(manifest["eval_seconds"])
        pd.concat(tables, ignore_index=True).to_parquet(tmp / "episodes.parquet", index=False)
        return {"eval_seconds": eval_seconds, "plan_seconds": seconds}

    def build_random(tmp) -> None:
        env, _, eps = context()
        evaluate_random(env, eps, seed).to_parquet(tmp / "episodes.parquet", index=False)

    plan_path = get_or_build(plan_art, build_ceiling if arm == CEILING else build_plan)
    rand_path = get_or_build(rand_art, build_random)
    manifest = plan_art.manifest()
    tab = pd.read_parquet(plan_path / "episodes.parquet")
    tab["plan_seconds"] = manifest["plan_seconds"]
    for col, val in (("task", task), ("arm", arm), ("train_seed", train_seed)):
        tab.insert(0, col, val)
    for col, val in (("solver", cell.solver), ("budget", cell.tier), ("protocol", proto.name)):
        tab[col] = val
    rand = pd.read_parquet(rand_path / "episodes.parquet")
    rand = rand[rand["episode"].isin(tab["episode"])].reset_index(drop=True)  # a subset's pairs
    return EvalResult(
        task=task,
        arm=arm,
        train_seed=train_seed,
        spec=spec,
        protocol=proto,
        episodes=tab,
        random=rand,
        eval_seconds=float(manifest["eval_seconds"]),
    )


def summary(result: EvalResult) -> dict[str, Any]:
    """Success with Wilson 95 % CIs overall and on the hard subset, the floor, and timing."""
    ep, rnd = result.episodes, result.random
    hard = ep["hard"].to_numpy()
    out: dict[str, Any] = {
        "success": stats.success_rate(ep["success"].to_numpy()),
        "random": stats.success_rate(rnd["success"].to_numpy()),
        "solved_at_start": float(ep["solved_at_start"].mean()),
        "hard_pairs": int(hard.sum()),
        "plan_seconds": float(ep["plan_seconds"].sum() / max(ep["plans"].sum(), 1)),
    }
    if hard.any():
        out["hard_success"] = stats.success_rate(ep["success"].to_numpy()[hard])
        out["hard_random"] = stats.success_rate(rnd["success"].to_numpy()[hard])
    return out


def summary_text(result: EvalResult) -> str:
    """Human-readable summary (what ``jepa-geometry plan`` prints)."""
    s = summary(result)
    p = result.protocol
    lines = [
        f"{result.task} {result.arm} (train seed {result.train_seed}), {result.spec}, "
        f"protocol {p.name} (goal +{p.goal_offset}, budget {p.budget} steps)",
        f"  success          {s['success']}",
        f"  random policy    {s['random']}",
        f"  solved at start  {100 * s['solved_at_start']:.1f}%",
    ]
    rule = task_class(result.task).hard_rule
    if "hard_success" in s:
        lines += [
            f"  hard subset ({rule}, {s['hard_pairs']} pairs)",
            f"    success        {s['hard_success']}",
            f"    random policy  {s['hard_random']}",
        ]
    else:
        lines.append(f"  hard subset ({rule}): no such pair in this set")
    lines.append(f"  planning time    {s['plan_seconds'] * 1e3:.1f} ms per plan (batched)")
    return "\n".join(lines)


def compare(a: EvalResult | pd.DataFrame, b: EvalResult | pd.DataFrame, **kw: Any) -> Any:
    """Paired difference ``success(a) - success(b)`` with bootstrap CI and exact McNemar.

    Refuses tables that were not evaluated on identical start/goal pairs.
    """
    ta = a.episodes if isinstance(a, EvalResult) else a
    tb = b.episodes if isinstance(b, EvalResult) else b
    keys = ["episode", "data_episode", "start_step", "goal_row"]
    ka, kb = ta[keys].to_numpy(), tb[keys].to_numpy()
    if ka.shape != kb.shape or not (ka == kb).all():
        raise EvaluationError("the two results were not evaluated on the same episode set")
    return stats.paired_difference(ta["success"].to_numpy(), tb["success"].to_numpy(), **kw)
