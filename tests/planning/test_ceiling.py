"""The ceiling (the simulator as the world model) on Two-Room: restoring a state reproduces the
environment's own trajectory, the dataset's own actions cost nothing, the planner reaches
easy goals far more often than the random policy, and results are deterministic and cached."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from jepa_geometry.envs import make_task
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.planning.ceiling import (
    CEILING,
    SimulatorGoalCost,
    SimulatorPlanner,
    simulate,
)
from jepa_geometry.planning.evaluator import (
    PlanningCell,
    evaluate_ceiling,
    evaluate_random,
)
from jepa_geometry.planning.protocol import (
    draw_episode_set,
    make_protocol,
    pair_subset,
)
from jepa_geometry.planning.solver import PlanningError, mppi_temperature, solver_spec
from jepa_geometry.profiles import load_profile

TASK = "tworoom"
HORIZON_STEPS = 25  # smoke: horizon 5 blocks x frameskip 5


@pytest.fixture(scope="module")
def smoke():
    return load_profile("smoke")


@pytest.fixture(scope="module")
def data(smoke, _isolated_data_root):
    return load_dataset(TASK, smoke, workers=1, progress=False)


@pytest.fixture(scope="module")
def task(smoke):
    t = make_task(TASK, smoke.data.image_size, seed=smoke.seeds.eval)
    yield t
    t.close()


def _dataset_segment(data, length: int, which: int = 0) -> tuple[int, np.ndarray]:
    """A held-out row with ``length`` recorded actions after it in its episode, and them."""
    ep = int(data.heldout_episodes[which])
    row = int(data.starts[ep]) + 3
    assert row + length < data.starts[ep] + data.lengths[ep]
    return row, data.action[row : row + length]


def test_restore_then_step_reproduces_the_recorded_trajectory(data, task) -> None:
    """The collector recorded states by stepping one environment continuously; restoring a
    recorded state in another, after an unrelated scene, and stepping the recorded actions
    reaches every later recorded state bit for bit."""
    row, actions = _dataset_segment(data, HORIZON_STEPS)
    task.set_state(np.array([40.0, 40.0]))
    task.step(np.ones(2, np.float32))  # an unrelated scene first
    for k in (1, 7, HORIZON_STEPS):
        reached = simulate(task, data.state[row], actions[:k])
        np.testing.assert_array_equal(reached, data.state[row + k])


def test_restore_then_step_equals_an_uninterrupted_environment(smoke, task) -> None:
    """An independent environment stepped without interruption from reset against the ceiling's
    restore-then-step from the same start, on random actions that hit walls and borders."""
    other = make_task(TASK, smoke.data.image_size, seed=5)
    try:
        other.reset(seed=5)
        start = other.get_state()
        acts = np.random.default_rng(0).uniform(-1, 1, size=(60, 2)).astype(np.float32) * 3
        trajectory = []
        for a in acts:
            other.step(a)
            trajectory.append(other.get_state())
    finally:
        other.close()
    for k in (1, 30, 60):
        np.testing.assert_array_equal(simulate(task, start, acts[:k]), trajectory[k - 1])


def test_dataset_actions_cost_about_zero_and_less_than_random(data, task) -> None:
    """The actions the dataset episode took from a start to the frame 25 steps later reach
    that goal: their ceiling cost is ~0 (float32 z-scoring round trip) and below every random
    candidate's; a random candidate's cost is the closed form sum((s_H - g)² / σ_q²)."""
    row, actions = _dataset_segment(data, HORIZON_STEPS, which=1)
    cost = SimulatorGoalCost(task, data, frameskip=5)
    cost.load(data.state[row][None], data.state[row + HORIZON_STEPS][None])
    taken = torch.as_tensor(data.zscore_action(actions.reshape(5, 10)))[None, None]
    rand = torch.randn(1, 32, 5, 10, generator=torch.Generator().manual_seed(0))
    cand = torch.cat([taken, rand], dim=1)
    info = {"row": torch.zeros(1, 33, dtype=torch.int64)}
    c = cost.get_cost(info, cand)[0].numpy()
    assert c[0] < 1e-6
    assert c[0] < c[1:].min()
    raw = np.clip(data.unzscore_action(rand[0, 5].numpy()).reshape(25, 2), -1, 1)
    end = simulate(task, data.state[row], raw)
    goal = data.state[row + HORIZON_STEPS]
    expected = float((((end - goal) / data.q_std.astype(np.float64)) ** 2).sum())
    assert c[6] == pytest.approx(expected, rel=1e-5)


def test_inactive_episodes_are_not_simulated(data, task) -> None:
    cost = SimulatorGoalCost(task, data, frameskip=5)
    row, _ = _dataset_segment(data, HORIZON_STEPS)
    cost.load(data.state[[row, row + 1]], data.state[[row + 25, row + 26]])
    info = {
        "row": torch.tensor([[0] * 4, [1] * 4]),
        "active": torch.tensor([[False] * 4, [True] * 4]),
    }
    c = cost.get_cost(info, torch.randn(2, 4, 5, 10, generator=torch.Generator().manual_seed(1)))
    assert cost.simulated == 4
    assert (c[0] == 0).all() and (c[1] > 0).all()


@pytest.fixture(scope="module")
def episodes(smoke, data, task):
    proto = make_protocol(smoke, "goal25_budget50")
    return draw_episode_set(task, data, proto, 10, smoke.seeds.eval)


def test_ceiling_reaches_goals_far_more_often_than_random(smoke, data, task, episodes) -> None:
    """At smoke's T1 (30 samples x 3 iterations) the simulator-as-model reaches nearly every
    25-step goal; the uniform random policy on the same pairs reaches few of them."""
    spec = solver_spec("cem", "T1", smoke)
    ceiling = evaluate_ceiling(task, data, episodes, spec, smoke.seeds.eval, progress=False)
    rand = evaluate_random(task, episodes, smoke.seeds.eval)
    assert list(ceiling["episode"]) == list(range(len(episodes)))
    assert ceiling["success"].mean() >= 0.8
    assert ceiling["success"].sum() >= rand["success"].sum() + 4
    moved = ~ceiling["solved_at_start"]
    assert (ceiling["min_distance"][moved] < ceiling["start_distance"][moved]).all()


def test_same_seed_same_result_and_a_subset_plans_as_the_whole_set(
    smoke, data, task, episodes
) -> None:
    """Two runs with one seed give identical tables; an episode of a pair subset is planned
    exactly as in the run on every pair (same chunk, same noise); another seed differs."""
    spec = solver_spec("cem", "T3", smoke)
    seed = smoke.seeds.eval
    cols = ["episode", "success", "steps", "final_distance", "min_distance", "plans"]
    a = evaluate_ceiling(task, data, episodes, spec, seed, progress=False)[cols]
    b = evaluate_ceiling(task, data, episodes, spec, seed, progress=False)[cols]
    assert a.equals(b)
    subset = pair_subset(len(episodes), 4, seed)
    part = evaluate_ceiling(task, data, episodes, spec, seed, subset, progress=False)[cols]
    assert part.equals(a[subset].reset_index(drop=True))
    other = evaluate_ceiling(task, data, episodes, spec, seed + 1, progress=False)[cols]
    assert not other["final_distance"].equals(a["final_distance"])


def test_planner_returns_the_simulated_cost_of_its_plan(smoke, data, task, episodes) -> None:
    planner = SimulatorPlanner(task, data, solver_spec("cem", "T3", smoke), frameskip=5)
    starts, goals = episodes.start_states[:3], episodes.goal_states[:3]
    plan = planner.plan(starts, goals, seed=7)
    raw = planner.cost.raw_actions(plan.actions.numpy())
    for i in range(3):
        end = simulate(task, starts[i], raw[i])
        diff = (end - goals[i]) / data.q_std.astype(np.float64)
        assert float(plan.cost[i]) == pytest.approx(float((diff**2).sum()), rel=1e-5)


def test_pair_subsets_are_nested_and_seeded() -> None:
    small, large = pair_subset(200, 20, 3), pair_subset(200, 50, 3)
    assert small.sum() == 20 and large.sum() == 50
    assert not (small & ~large).any()
    assert (pair_subset(200, 20, 3) == small).all() and not (pair_subset(200, 20, 4) == small).all()


def test_ceiling_cell_is_cached_under_a_key_naming_the_arm(smoke, data) -> None:
    """The cell's key names the arm and every input that changes its result (solver, tier,
    pairs), not the training seed; a second evaluation reads the cache; the chunks are
    cached on their own (an interrupted cell resumes)."""
    cell = PlanningCell(TASK, CEILING, 0, smoke, "cem", "T5", n_pairs=6, subset=3)
    art = cell.artifacts()[0]
    assert art.spec["arm"] == CEILING and "checkpoint" not in art.spec
    keys = {
        art.key,
        dataclasses.replace(cell, tier="T4").artifacts()[0].key,
        dataclasses.replace(cell, solver="icem").artifacts()[0].key,
        dataclasses.replace(cell, subset=4).artifacts()[0].key,
        dataclasses.replace(cell, n_pairs=7, subset=3).artifacts()[0].key,
    }
    assert len(keys) == 5
    assert dataclasses.replace(cell, train_seed=1).artifacts()[0].key == art.key
    first = cell.evaluate(progress=False)
    assert len(first.episodes) == 3 and (first.episodes["arm"] == CEILING).all()
    assert list(first.random["episode"]) == list(first.episodes["episode"])  # same pairs
    assert all(a.exists() for a, _ in cell.ceiling_chunks())
    stamp = (art.path / "episodes.parquet").stat().st_mtime_ns
    again = cell.evaluate(progress=False)
    assert (again.episodes.drop(columns="plan_seconds")).equals(
        first.episodes.drop(columns="plan_seconds")
    )
    assert (art.path / "episodes.parquet").stat().st_mtime_ns == stamp


def test_mppi_temperature_is_rescaled_to_the_q_dimension(smoke) -> None:
    """Without a study's temperature the ceiling's MPPI takes SCALE's T* at q_dim = 2."""
    cell = PlanningCell(TASK, CEILING, 0, smoke, "mppi", "T1")
    expected = mppi_temperature(TASK, 192) * 2 / 192
    assert cell.plan()[2].temperature == pytest.approx(expected)


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"arm": "ceilng"}, ["'ceilng'", "ceiling", "lewm"]),
        ({"arm": "lewm", "subset": 3}, ["subset=3", "ceiling"]),
        ({"arm": CEILING, "subset": 0}, ["1..4", "0"]),
        ({"arm": CEILING, "subset": 9}, ["1..4", "9"]),
        ({"arm": CEILING, "weights": {"scale": 1.0}}, ["ceiling", "weights"]),
        ({"arm": CEILING, "tier": "T9"}, ["'T9'", "T1"]),
    ],
)
def test_bad_input_stops_before_work_in_one_line(smoke, kw, words) -> None:
    args = {"task": TASK, "arm": CEILING, "train_seed": 0, "profile": smoke, **kw}
    with pytest.raises(ValueError) as e:
        PlanningCell(**args).plan()
    msg = str(e.value)
    assert "\n" not in msg and all(w in msg for w in words), msg


def test_planner_refuses_states_of_two_shapes(smoke, data, task) -> None:
    planner = SimulatorPlanner(task, data, solver_spec("cem", "T5", smoke), frameskip=5)
    with pytest.raises(PlanningError, match=r"\(N, S\)"):
        planner.plan(np.zeros((2, 2)), np.zeros((3, 2)), seed=0)


def test_the_grid_plans_the_ceiling_when_the_study_lists_it(smoke, data) -> None:
    """A study with ``ceiling: k`` gets the ceiling's table on min(k, n) pairs of every cell,
    kept apart from the arms' table; the study's MPPI temperature is rescaled by q_dim / D."""
    from jepa_geometry.study.cells import Cell, ceiling_temperature, evaluate_ceiling_cells

    cells = [Cell("goal25_budget50", "cem", "T5"), Cell("goal25_budget50", "mppi", "T5")]
    tab = evaluate_ceiling_cells(TASK, smoke, cells, temperature=16.0, subset=99, progress=False)
    assert len(tab) == 2 * 2 * smoke.eval.episodes  # the ceiling and the random policy
    assert tab.groupby("arm").size().to_dict() == {CEILING: 8, "random": 8}
    assert (tab["train_seed"] == -1).all()
    assert sorted(set(tab["solver"])) == ["cem", "mppi"]
    top, rnd = tab[tab["arm"] == CEILING], tab[tab["arm"] == "random"]
    assert list(top["episode"]) == list(rnd["episode"])  # the random policy on the same pairs
    assert ceiling_temperature(TASK, 16.0, smoke) == pytest.approx(16.0 * 2 / 32)


def test_the_plan_command_plans_the_ceiling(smoke, data, capsys) -> None:
    from jepa_geometry.cli import main

    argv = ["plan", "--task", TASK, "--arm", CEILING, "--profile", "smoke", "--tier", "T5"]
    assert main([*argv, "--subset", "2"]) == 0
    out = capsys.readouterr().out
    assert f"{TASK} {CEILING}" in out and "success" in out
    assert main([*argv, "--subset", "9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1..4" in err and "9" in err
