"""benchmarks/gpu_check.py, run on the CPU with tiny overrides: the path a GPU would take
(collect, train, plan one T1 cell, project the grid), checked for consistency; and the one
line it stops with when asked for a GPU that is not there."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from jepa_geometry.profiles import load_profile
from tests.conftest import REPO

TINY = [
    "--device",
    "cpu",
    "--steps",
    "3",
    "--episodes",
    "6",
    "--pairs",
    "2",
    "--laptop-steps",
    "2",
    "--set",
    "train.batch_size=4",
    "--set",
    "data.image_size=56",
    "--set",
    "train.pairs_per_batch=64",
    "--set",
    "data.max_episode_steps=160",
    "--set",
    "plan.tiers={'T1': [8, 2], 'T2': [4, 2], 'T3': [4, 1], 'T4': [2, 1], 'T5': [2, 1]}",
]


def _module():
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "benchmarks" / "gpu_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_the_gpu_check_runs_its_path_on_a_cpu(monkeypatch, tmp_path):
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path))  # restored after the test
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))  # as when run as a script there
    out = _module().main(TINY)
    paper = load_profile("paper")
    assert out["train_steps_per_s"] > 0 and out["plan_seconds"] > 0
    assert out["hours_per_model"] == pytest.approx(
        paper.train.steps / out["train_steps_per_s"] / 3600
    )
    assert out["plan_vs_lewm"] == pytest.approx(out["plan_seconds"] / 0.98)
    models = 5 * 5 * len(paper.seeds.train)  # five tasks x five arms x three seeds
    assert out["grid_gpu_hours"] > models * out["hours_per_model"]  # training and planning
    # the κ sweep and the scaling study add models and cells to the same grid
    assert out["grid_gpu_hours_with_kappa_scaling"] > out["grid_gpu_hours"]
    assert out["laptop_train_steps_per_s"] > 0
    assert list(tmp_path.iterdir()) == []  # it wrote only into its own temporary cache


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_the_gpu_check_says_so_when_there_is_no_gpu(monkeypatch, tmp_path):
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path))
    with pytest.raises(SystemExit, match="no CUDA device here"):
        _module().main(["--device", "cuda"])
