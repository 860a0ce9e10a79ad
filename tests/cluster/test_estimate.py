"""The cost model: each unit's estimated hours from the profile's measured rates."""

from __future__ import annotations

import dataclasses

import pytest

from jepa_geometry import cluster
from jepa_geometry.envs import TASKS, task_class
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.protocol import make_protocol
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import load_profile


def test_a_dataset_costs_its_own_simulators_rate():
    laptop = load_profile("laptop")
    rates = {t: task_class(t).collect_frames_per_s["laptop"] for t in TASKS}
    for task in ("tworoom", "cube"):
        train, held = task_class(task).episodes["laptop"]
        frames = (train + held) * laptop.data.max_episode_steps
        assert cluster.collect_hours(task, laptop) == pytest.approx(frames / rates[task] / 3600)
    # Cube's simulator is the slow one: fewer episodes, yet the longest collection per frame
    assert rates["cube"] < min(r for t, r in rates.items() if t != "cube")
    mute = dataclasses.replace(laptop, name="elsewhere")  # a profile no task states a rate for
    with pytest.raises(cluster.ClusterError, match="'cube' states no collect_frames_per_s for "):
        cluster.collect_hours("cube", mute)


def test_a_planning_cell_costs_pairs_times_plans_times_its_tiers_rollouts():
    """``pairs x plans x plan_seconds x rollouts / T1's rollouts``, DINO-WM's arm
    ``dinowm_plan_factor`` times that: computed here from the profile's own numbers."""
    laptop = load_profile("laptop")
    samples, iterations = budget_tiers(laptop)["T1"]
    plans = make_protocol(laptop, "profile").plans
    for budget in ("T1", "T3"):
        lewm = PlanningCell("tworoom", "lewm", 0, laptop, tier=budget, n_pairs=40)
        s, i = budget_tiers(laptop)[budget]
        want = 40 * plans * laptop.cluster.plan_seconds * (s * i) / (samples * iterations) / 3600
        assert cluster.cell_hours(lewm) == pytest.approx(want)
        dino = PlanningCell("tworoom", "dinowm", 0, laptop, tier=budget, n_pairs=40)
        assert cluster.cell_hours(dino) == pytest.approx(want * laptop.cluster.dinowm_plan_factor)
    assert laptop.cluster.dinowm_plan_factor > 1  # measured: tokens cost more than one latent
