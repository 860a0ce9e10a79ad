"""The goal-reaching protocol on a toy task whose world model is exact (fake contract objects)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from jepa_geometry.planning import evaluator
from jepa_geometry.planning import protocol as ev
from jepa_geometry.planning.solver import PlanningError, SolverSpec, n_elites
from jepa_geometry.profiles import load_profile

STEP = 0.2  # toy env: xy += STEP * clip(action, -1, 1)
RADIUS = 0.1  # toy success test: ||xy - goal|| < RADIUS
ACTION_STD = 0.5  # dataset action statistics (z-scoring)


class ToyTask:
    """A point mass in the plane following the Task contract; frames encode xy exactly."""

    name, action_dim, q_dim = "toy", 2, 2
    action_low, action_high = -np.ones(2, np.float32), np.ones(2, np.float32)

    def __init__(self) -> None:
        self.xy = np.zeros(2)
        self.steps_taken = 0

    def reset(self, seed: int | None = None) -> None:
        self.xy = np.zeros(2)

    def get_state(self) -> np.ndarray:
        return self.xy.copy()

    def set_state(self, state: np.ndarray) -> None:
        self.xy = np.asarray(state, dtype=np.float64).copy()

    def step(self, action: np.ndarray) -> None:
        assert action.shape == (2,)
        self.xy = self.xy + STEP * np.clip(action, -1, 1)
        self.steps_taken += 1

    def render(self) -> np.ndarray:
        return encode_xy(self.xy)

    def q(self, state):
        return np.asarray(state, np.float32)

    def goal_distance(self, state, goal_state) -> float:
        return float(np.linalg.norm(np.asarray(state) - np.asarray(goal_state)))

    def is_success(self, state, goal_state) -> bool:
        return self.goal_distance(state, goal_state) < RADIUS

    def close(self) -> None:
        pass


def encode_xy(xy: np.ndarray) -> np.ndarray:
    """8x8 frame: xy in [-20, 20] stored as 16-bit fixed point in two pixels per coordinate."""
    img = np.zeros((8, 8, 3), np.uint8)
    for k, v in enumerate(xy):
        u = int(round((v + 20.0) / 40.0 * 65535))
        img[k, 0, 0], img[k, 1, 0] = u // 256, u % 256
    return img


class ExactModel(nn.Module):
    """The toy's exact world model: decode xy from the frame, z_{k+1} = z_k + STEP Σ_j a_j."""

    embed_dim, action_block_dim, history = 2, 10, 1

    def __init__(self, gain: float = 1.0) -> None:
        super().__init__()
        self.gain = gain  # != 1: a wrong model (for pairing tests)

    def encode(self, pixels: torch.Tensor) -> torch.Tensor:
        p = pixels.to(torch.float64)
        u = p[..., 0, :2, 0] * 256 + p[..., 0, :2, 1]
        return (u / 65535 * 40.0 - 20.0).float()

    def rollout(self, z_context: torch.Tensor, action_blocks: torch.Tensor) -> torch.Tensor:
        b, h, _ = action_blocks.shape
        raw = (ACTION_STD * action_blocks).reshape(b, h, 5, 2).clamp(-1, 1)
        return z_context[:, -1:] + self.gain * STEP * torch.cumsum(raw.sum(2), dim=1)


class ToyData:
    """EpisodeData contract: directed random walks, 60 steps; the last 6 episodes held out."""

    task = "toy"

    def __init__(self, episodes: int = 12, length: int = 60, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        env = ToyTask()
        states, actions, pixels, ep, st = [], [], [], [], []
        for e in range(episodes):
            env.set_state(rng.uniform(-3, 3, 2))
            heading = rng.normal(0, 1, 2)
            for t in range(length):
                a = np.clip(0.6 * heading / np.linalg.norm(heading) + rng.normal(0, 0.3, 2), -1, 1)
                states.append(env.get_state())
                pixels.append(env.render())
                actions.append(a)
                ep.append(e)
                st.append(t)
                env.step(a.astype(np.float32))
        self.state, self.action = np.array(states), np.array(actions, np.float32)
        self.pixels, self.episode, self.step = np.array(pixels), np.array(ep), np.array(st)
        self.q = self.state.astype(np.float32)
        self.train_episodes = np.arange(episodes - 6)
        self.heldout_episodes = np.arange(episodes - 6, episodes)
        self.action_mean = np.zeros(2, np.float32)
        self.action_std = np.full(2, ACTION_STD, np.float32)

    def zscore_action(self, a):
        return (np.asarray(a) - self.action_mean) / self.action_std

    def unzscore_action(self, a):
        return np.asarray(a) * self.action_std + self.action_mean


PROTO = ev.Protocol("goal25_budget50", goal_offset=25, budget=50)


@pytest.fixture(scope="module")
def toy():
    task, data = ToyTask(), ToyData()
    return task, data, ev.draw_episode_set(task, data, PROTO, n=24, seed=3, hard=3.0)


def _spec(solver: str = "cem", samples: int = 100, iterations: int = 10) -> SolverSpec:
    t = 0.5 if solver == "mppi" else None
    return SolverSpec(solver, "custom", samples, iterations, n_elites(samples), 5, temperature=t)


def test_episode_set_rows_and_diagnostics_are_correct(toy) -> None:
    task, data, eps = toy
    p = eps.pairs
    assert len(eps) == 24 and p["start_row"].is_unique and 0 < p["hard"].sum() < 24
    # goal = same episode, goal_offset env steps later, held out, with the dataset frame
    assert (data.episode[p.goal_row] == p.data_episode).all()
    assert (data.step[p.goal_row] - p.start_step == 25).all()
    assert np.isin(p.data_episode, data.heldout_episodes).all()
    assert (eps.goal_pixels == data.pixels[p.goal_row]).all()
    dist = np.linalg.norm(data.state[p.start_row] - data.state[p.goal_row], axis=1)
    assert np.allclose(p.start_distance, dist)
    assert (p.solved_at_start == (dist < RADIUS)).all() and (p.hard == (dist > 3.0)).all()
    again = ev.draw_episode_set(task, data, PROTO, n=24, seed=3, hard=3.0)
    other = ev.draw_episode_set(task, data, PROTO, n=24, seed=4, hard=3.0)
    pd.testing.assert_frame_equal(eps.pairs, again.pairs)
    assert not eps.pairs["start_row"].equals(other.pairs["start_row"])


def test_runner_counts_success_at_any_step_and_freezes(toy) -> None:
    task, data, eps = toy
    one = ev.EpisodeSet(
        "toy",
        PROTO,
        0,
        eps.pairs.iloc[:1].reset_index(drop=True),
        np.zeros((1, 2)),
        np.array([[0.4, 0.0]]),
        eps.goal_pixels[:1],
    )
    one.pairs.loc[0, "start_distance"] = 0.4
    runner = evaluator._Runner(task, one, seed=0)
    # pass through the goal at step 2 (x = 0.4) and beyond: success fires, episode frozen
    runner.execute(np.ones((1, 5, 2), np.float32) * [[1.0, 0.0]])
    t = runner.table()
    assert bool(t.success[0]) and t.steps[0] == 2
    assert t.final_distance[0] == pytest.approx(0.0, abs=1e-12)
    runner.execute(np.ones((1, 5, 2), np.float32))
    assert runner.table().steps[0] == 2


@pytest.mark.parametrize("solver", ["cem", "icem", "mppi"])
def test_planner_solves_toy_task_far_above_random(toy, solver) -> None:
    task, data, eps = toy
    res = evaluator.evaluate_planner(
        task, ExactModel(), data, eps, _spec(solver), seed=0, progress=False
    )
    rnd = evaluator.evaluate_random(task, eps, seed=0)
    assert res.success.mean() >= 0.9, res[["start_distance", "final_distance", "success"]]
    assert rnd.success.mean() <= 0.3
    assert res.success[eps.pairs.hard].mean() >= 0.9  # the hard pairs too
    assert set(res.plans) <= {1, 2} and (res.plan_seconds > 0).all()
    assert (res.steps <= PROTO.budget).all()
    assert ((res.final_distance < RADIUS) == res.success).all()


def test_arms_are_paired_and_deterministic(toy) -> None:
    task, data, eps = toy
    good = evaluator.evaluate_planner(
        task, ExactModel(), data, eps, _spec(), seed=0, progress=False
    )
    again = evaluator.evaluate_planner(
        task, ExactModel(), data, eps, _spec(), seed=0, progress=False
    )
    bad = evaluator.evaluate_planner(
        task, ExactModel(0.3), data, eps, _spec(), seed=0, progress=False
    )
    cols = ["success", "steps", "final_distance", "min_distance", "plans"]
    pd.testing.assert_frame_equal(good[cols], again[cols])
    keys = ["episode", "data_episode", "start_step", "goal_row"]
    pd.testing.assert_frame_equal(good[keys], bad[keys])
    d = evaluator.compare(good, bad, n_boot=500)
    assert d.diff == pytest.approx(good.success.mean() - bad.success.mean())
    assert d.diff > 0.3 and d.p_mcnemar < 0.01
    other = ev.draw_episode_set(task, data, PROTO, n=24, seed=9, hard=3.0)
    moved = evaluator.evaluate_random(task, other, seed=0)
    with pytest.raises(ev.EvaluationError, match="same episode set"):
        evaluator.compare(good, moved)


def test_chunks_are_seeded_independently(toy) -> None:
    """Chunk c's plans depend on (seed, round, c) and its own episodes only, so an episode's
    noise does not change when episodes of other chunks finish early or are absent."""
    task, data, eps = toy
    k = slice(0, 8)
    head = ev.EpisodeSet(
        "toy", PROTO, 3, eps.pairs[k], eps.start_states[k], eps.goal_states[k], eps.goal_pixels[k]
    )
    kw = dict(seed=0, episode_batch=4, progress=False)
    spec = _spec(samples=20, iterations=3)
    full = evaluator.evaluate_planner(task, ExactModel(0.7), data, eps, spec, **kw)
    part = evaluator.evaluate_planner(task, ExactModel(0.7), data, head, spec, **kw)
    cols = ["success", "steps", "final_distance", "plans"]
    pd.testing.assert_frame_equal(full[cols].iloc[:8], part[cols])
    assert not full.success.all()  # some chunks still planning in round 2


def test_protocols_are_the_profile_s_and_bad_input_stops_naming_the_fault(toy) -> None:
    task, data, eps = toy
    laptop = load_profile("laptop")
    assert ev.make_protocol(laptop) == ev.Protocol("profile", 25, 50, 5, 5)
    tworoom = ev.make_protocol(laptop, "goal100_budget150")
    assert (tworoom.goal_offset, tworoom.budget, tworoom.plans) == (100, 150, 6)
    with pytest.raises(ev.EvaluationError, match="unknown protocol 'dino'; valid: profile"):
        ev.make_protocol(laptop, "dino")
    with pytest.raises(ev.EvaluationError, match=r"goal offset 100 .*longest: 60 frames"):
        ev.draw_episode_set(task, data, tworoom, n=4, seed=0, hard=1.0)
    with pytest.raises(ev.EvaluationError, match="asked for 999 episodes but only 210"):
        ev.draw_episode_set(task, data, PROTO, n=999, seed=0, hard=1.0)
    with pytest.raises(ev.EvaluationError, match="unknown task 'toy'; valid: tworoom"):
        ev.draw_episode_set(task, data, PROTO, n=4, seed=0)

    class WrongModel(ExactModel):
        action_block_dim = 15

    with pytest.raises(PlanningError, match="action block dim 15 != frameskip 5 x task action"):
        evaluator.evaluate_planner(task, WrongModel(), data, eps, _spec(), seed=0, progress=False)


# --------------------------------------------------------------------------------------
# End to end with the real tasks, data and models at the smoke profile
# --------------------------------------------------------------------------------------


def test_two_arms_planned_end_to_end_at_smoke_are_paired(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from jepa_geometry.cli import main

    smoke = load_profile("smoke")
    kw = dict(solver="icem", tier="T5", progress=False)
    a = evaluator.evaluate_arm("tworoom", "lewm", 0, smoke, **kw)
    b = evaluator.evaluate_arm("tworoom", "scale", 0, smoke, **kw)
    n, budget = smoke.eval.episodes, smoke.eval.budget
    assert len(a.episodes) == len(a.random) == n
    keys = ["episode", "data_episode", "start_step", "goal_row"]
    pd.testing.assert_frame_equal(a.episodes[keys], b.episodes[keys])
    assert (a.episodes.goal_row - a.episodes.start_row == smoke.eval.goal_offset).all()
    for t in (a.episodes, b.episodes, a.random):
        # protocol semantics with the real success test: 16 px on Two-Room
        assert (t.final_distance[t.success] < 16.0).all()
        assert (t.steps[~t.success] == budget).all() and (t.steps <= budget).all()
    assert evaluator.compare(a, b, n_boot=200).n == n
    again = evaluator.evaluate_arm("tworoom", "lewm", 0, smoke, **kw)  # cached: identical
    pd.testing.assert_frame_equal(a.episodes, again.episodes)
    capsys.readouterr()
    cli = ["plan", "--task", "tworoom", "--arm", "lewm", "--profile", "smoke"]
    assert main([*cli, "--solver", "icem", "--tier", "T5"]) == 0
    out = capsys.readouterr().out
    assert "success" in out and "random policy" in out and "solved at start" in out
    with pytest.raises(SystemExit) as stop:  # argparse: one line naming the valid choices
        main([*cli, "--tier", "T9"])
    assert stop.value.code == 2
    assert "invalid choice: 'T9' (choose from 'T1', 'T2', 'T3', 'T4', 'T5')" in (
        capsys.readouterr().err
    )


def test_pair_difficulty_counts_pairs_and_solved_at_start():
    from types import SimpleNamespace

    from jepa_geometry.planning.protocol import pair_difficulty

    # Two held-out episodes of a 1-D "task": state = position; success if |start - goal| < 1.5.
    pos = np.array([0, 1, 2, 3, 10, 10, 10, 10], dtype=float)[:, None]
    data = SimpleNamespace(
        episode=np.array([0, 0, 0, 0, 1, 1, 1, 1]),
        step=np.array([0, 1, 2, 3] * 2),
        heldout_episodes=np.array([0, 1]),
        state=pos,
    )
    task = SimpleNamespace(
        is_success=lambda a, b: abs(a[0] - b[0]) < 1.5, goal_distance=lambda a, b: abs(a[0] - b[0])
    )
    out = pair_difficulty(task, data, goal_offset=2)
    # pairs: (0,2), (1,3) in episode 0 (distance 2, not solved); two in episode 1 (distance 0).
    assert out == {"pairs": 4, "solved at start": 0.5, "median start-goal distance": 1.0}


def test_skipping_finished_episodes_changes_no_result(toy) -> None:
    """Finished episodes are neither rendered nor rolled out; every result column is the same
    as when whole chunks are planned (only the planning time may differ)."""
    task, data, eps = toy
    kw = dict(seed=0, episode_batch=8, progress=False)
    spec = _spec(samples=20, iterations=3)
    fast = evaluator.evaluate_planner(task, ExactModel(0.7), data, eps, spec, **kw)
    slow = evaluator.evaluate_planner(
        task, ExactModel(0.7), data, eps, spec, skip_finished=False, **kw
    )
    cols = [c for c in fast if c != "plan_seconds"]
    pd.testing.assert_frame_equal(fast[cols], slow[cols])
    assert 0 < fast.success.mean() < 1 and (fast.plans > 1).any()  # some finish early, some not
