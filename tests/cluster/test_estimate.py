"""The cost model: each unit's estimated hours from the profile's measured rates."""

from __future__ import annotations

import pytest

from jepa_geometry import cluster
from jepa_geometry.profiles import load_profile, with_overrides


def test_a_dataset_costs_its_own_simulators_rate():
    laptop = load_profile("laptop")
    rates = laptop.cluster.collect_frames_per_s
    for task in ("tworoom", "cube"):
        train, held = laptop.data.task_episodes[task]
        frames = (train + held) * laptop.data.max_episode_steps
        assert cluster.collect_hours(task, laptop) == pytest.approx(frames / rates[task] / 3600)
    # Cube's simulator is the slow one: fewer episodes, yet the longest collection per frame
    assert rates["cube"] < min(r for t, r in rates.items() if t != "cube")
    partial = with_overrides(laptop, {"cluster.collect_frames_per_s": {"tworoom": 300.0}})
    with pytest.raises(cluster.ClusterError, match="collect_frames_per_s has no entry for 'cube'"):
        cluster.collect_hours("cube", partial)
