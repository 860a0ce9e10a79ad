"""Adding a task touches its module and its study file, nothing else (README, *Adding a task*).

The test copies the library, adds a toy task's two files to the copy and nothing more, and in a
fresh process (the copy first on the path) collects its dataset, trains two arms, plans a CEM
cell and measures the geometry at the smoke profile: every fact the library needs comes from
the task's own class, so the copy's other files are the repository's, byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.library_copy import PACKAGE, copy_library, differences, run_with_copy

TOY_MODULE = '''"""A toy task: a dot moving in a square, drawn with numpy (no simulator)."""

from __future__ import annotations

import numpy as np

from .base import Task

SPEED = 0.1  # the dot moves at most this far per step, on each axis


class ToyTask(Task):
    name = "toy"
    title = "Toy"
    env_id = "none (numpy)"
    action_dim = 2
    q_names = ("x", "y")
    success_rule = "||xy - goal xy|| < 0.15"
    behaviour_policy = "uniform random actions"
    scale_weight = 0.1
    aux_weight = 0.1
    mppi_t_star = 64.0
    hard_threshold = 0.5
    hard_rule = "the dot moves > 0.5"
    landscape_spans = "dot positions in the square"
    landscape_distance = "the Euclidean distance"
    episodes = {}
    collect_frames_per_s = {"smoke": 1000.0, "laptop": 1000.0, "paper": 1000.0}
    ceiling_rollout_ms = 0.01

    def __init__(self, image_size: int, seed: int = 0) -> None:
        super().__init__(image_size, seed)
        self.state = np.zeros(2)

    def reset(self, seed: int | None = None) -> None:
        self.state = np.random.default_rng(seed).uniform(-0.9, 0.9, 2)

    def get_state(self) -> np.ndarray:
        return self.state.copy()

    def set_state(self, state: np.ndarray) -> None:
        self.state = self._check_state(state, 2).copy()

    def step(self, action: np.ndarray) -> None:
        self.state = np.clip(self.state + SPEED * self._check_action(action), -1.0, 1.0)

    def render(self) -> np.ndarray:
        n = self.image_size
        img = np.zeros((n, n, 3), dtype=np.uint8)
        i, j = np.round((self.state + 1.0) / 2.0 * (n - 3)).astype(int)
        img[j : j + 3, i : i + 3] = (255, 64, 64)
        return img

    def q(self, state: np.ndarray) -> np.ndarray:
        return np.asarray(state, dtype=np.float32)[:2].copy()

    def is_success(self, state: np.ndarray, goal_state: np.ndarray) -> bool:
        return self.goal_distance(state, goal_state) < 0.15

    def goal_distance(self, state: np.ndarray, goal_state: np.ndarray) -> float:
        return float(np.linalg.norm(np.asarray(state)[:2] - np.asarray(goal_state)[:2]))

    def landscape_axes(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        return np.linspace(-1.0, 1.0, n), np.linspace(-1.0, 1.0, n)

    def behaviour_action(self, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, 2).astype(np.float32)

    def behaviour_success(self) -> bool:
        return False
'''

TOY_STUDY = """task: toy
arms: [lewm, scale]
protocols: [goal25_budget50]
solver_seeds: [0]
secondary_seeds: [0]
about: A dot in a square; q is its position.
"""

RUN = """
import numpy as np
from jepa_geometry import envs
from jepa_geometry.analysis.measurements import measure
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.planning.evaluator import PlanningCell, evaluate_cell
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.spec import available_studies, load_study
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.training import train_world_model

assert envs.TASKS[-1] == "toy" and "toy" in available_studies(), envs.TASKS
spec = load_study("toy")
profile = spec.profile(load_profile("smoke"))
data = load_dataset("toy", profile, progress=False)
assert data.q.shape[1] == 2 and len(data.pixels) > 0
assert arm_weights("scale", "toy").scale == 0.1
for arm in spec.arms:
    train_world_model("toy", arm, 0, profile, progress=False)
cell = PlanningCell("toy", "scale", 0, profile, solver="cem", tier="T1",
                    protocol=spec.main_protocol)
result = evaluate_cell(cell, progress=False)
assert len(result.episodes) == profile.eval.episodes
geometry = measure("toy", "scale", 0, profile)
assert np.isfinite(geometry["probe"]["r2_full_ridge"]) and len(geometry["landscape"]) > 0
print("toy task: collected, trained, planned, measured")
"""


@pytest.mark.slow
def test_a_new_task_is_its_module_and_its_study_file(tmp_path: Path) -> None:
    copy = copy_library(tmp_path)
    (copy / "envs" / "toy.py").write_text(TOY_MODULE)
    (copy / "study" / "specs" / "toy.yaml").write_text(TOY_STUDY)
    added = {"envs/toy.py", "study/specs/toy.yaml"}
    assert differences(PACKAGE, copy) == added  # the two files, and no other file touched
    said = run_with_copy(tmp_path, RUN)
    assert "toy task: collected, trained, planned, measured" in said
