"""A reader's objective file on the grid: copied into the grid's folder (which its jobs read,
on whichever node) under its sha256, its jobs reading the copy, with the same keys as the file
it was copied from; the dry run says where a run copies it and writes nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

from jepa_geometry import cluster
from jepa_geometry.cli import main
from jepa_geometry.cluster import run as grid_run
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.job_calls import check_digest, objective_digest
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.arms import arm_label, arm_name, objective_file
from jepa_geometry.wm.training import world_model_artifact
from jepa_geometry.wm.user_objective import file_sha256

SMOKE = load_profile("smoke")
TERM = """
import torch

def term(z, z_hat, q, step):
    return 0.1 * (z.pow(2).mean() - 1.0).abs()
"""


def _term(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spread.py"
    path.write_text(textwrap.dedent(TERM))
    return path


def test_the_grid_copies_the_file_into_its_folder_and_its_jobs_read_the_copy(tmp_path):
    path = _term(tmp_path / "home")
    arm = arm_name(f"lewm+{path}")
    spec = load_study("tworoom").with_arms(["lewm", arm])
    folder = tmp_path / "grid"
    digest = file_sha256(path)
    copy = folder / cluster.OBJECTIVES / digest / "spread.py"

    (same,), said = cluster.share_objectives([spec], folder, copy=False)  # the dry run's
    assert said == [f"objective file {path}: a run copies it to {copy} for its jobs"]
    assert not folder.exists()

    (moved,), said = cluster.share_objectives([spec], folder, copy=True)
    assert said == [f"objective file {path}: copied to {copy}, which its jobs read"]
    assert copy.read_bytes() == path.read_bytes()
    (mine,) = [a for a in moved.arms if a != "lewm"]
    assert objective_file(mine) == str(copy) and arm_label(mine) == arm_label(arm)
    for s in (0, 1):  # the copy's models are the file's: the key has its name and sha256
        assert world_model_artifact("tworoom", mine, s, SMOKE).key == (
            world_model_artifact("tworoom", arm, s, SMOKE).key
        )
    train = cluster.train_unit("tworoom", mine, 0, SMOKE)
    assert train.args[1] == mine and train.args[-1] == digest == objective_digest(mine)
    path.unlink()  # a node that does not see the reader's path: the job reads the copy
    check_digest(mine, digest)

    _term(tmp_path / "home")
    again = cluster.share_objectives([spec], folder, copy=True)[1]
    assert again == [f"objective file {path}: its jobs read its copy {copy} (already there)"]


def test_a_run_and_a_dry_run_of_the_grid_say_where_the_jobs_read_the_file(
    tmp_path, capsys, monkeypatch
):
    """``grid --dry-run`` says where a run will copy the file and copies nothing; a run copies
    it before its first stage, says so, and lists its units with the copy."""
    path = _term(tmp_path / "home")
    folder = tmp_path / "grid"
    argv = ["grid", "--tasks", "tworoom", "--arms", f"lewm,lewm+{path}", "--folder", str(folder)]
    assert main([*argv, "--dry-run", "--profile", "smoke"]) == 0
    copy = folder.resolve() / cluster.OBJECTIVES / file_sha256(path) / "spread.py"
    assert f"objective file {path}: a run copies it to {copy}" in capsys.readouterr().out
    assert not (folder / cluster.OBJECTIVES).exists()

    listed = []

    def stage_units(stage, specs, base, extensions, decisions=True):  # what the run lists
        listed.extend(a for s in specs for a in s.arms)
        return []

    monkeypatch.setattr(grid_run, "stage_units", stage_units)
    said: list[str] = []
    spec = load_study("tworoom").with_arms(["lewm", f"lewm+{path}"])
    cluster.run_grid([spec], SMOKE, folder=folder, progress=False, say=said.append)
    assert said == [f"objective file {path}: copied to {copy}, which its jobs read"]
    assert set(listed) == {"lewm", arm_name(str(copy))} and copy.is_file()
