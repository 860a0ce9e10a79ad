"""Submission through submitit: a training job preempted and requeued resumes bit-identically,
and the next run tidies what a killed grid left in its folder, and nothing else."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
import torch
from submitit.core.utils import JobPaths

from jepa_geometry import cluster
from jepa_geometry.profiles import load_profile, with_overrides
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.training import train_world_model, world_model_artifact

SMOKE = load_profile("smoke")


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _weights(path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=False)["state"]


@pytest.mark.first
@pytest.mark.slow
def test_a_preempted_training_resumes_bit_identical(
    smoke_datasets, data_root, tmp_path, monkeypatch
):
    profile = with_overrides(SMOKE, {"train.steps": 120, "train.checkpoint_every": 10})
    unit = cluster.stage_units("train", [load_study("tworoom")], profile)[0]
    task, arm, seed, p, _ = unit.args
    # the run's shared smoke dataset (its key does not depend on the training settings)
    shutil.copytree(smoke_datasets / task, data_root / "datasets" / task)
    ex = cluster.make_executor("local", tmp_path / "jobs", "train", p)
    job = ex.submit(unit.call, *unit.args)
    art = world_model_artifact(task, arm, seed, p)
    resume = art.write_path.parent / f".{art.key}.resume.pt"
    deadline = time.time() + 300
    while not resume.exists() and time.time() < deadline:
        time.sleep(0.1)
    assert resume.exists() and not art.exists()
    # SLURM's preemption notice: SIGUSR2 to the job's task, whose submitit handler calls
    # TrainModel.checkpoint and exits for requeueing; the local controller then restarts it
    for pid in _children(int(job.job_id)):
        os.kill(pid, signal.SIGUSR2)
    job.result()
    summary = art.manifest()["summary"]
    assert summary["resumed_from"] > 0  # the requeued job went on from the trainer's checkpoint
    interrupted = _weights(art.path / "model.pt")
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path / "fresh"))
    shutil.copytree(smoke_datasets / task, tmp_path / "fresh" / "datasets" / task)
    fresh = train_world_model(task, arm, seed, p, progress=False)
    assert fresh.manifest()["summary"]["resumed_from"] == 0
    clean = _weights(fresh.path / "model.pt")
    assert clean.keys() == interrupted.keys()
    assert all(torch.equal(clean[k], interrupted[k]) for k in clean)


def test_a_killed_grids_leftovers_are_removed_by_the_next_run_and_nothing_else(tmp_path):
    """What a killed grid leaves in its folder (submitit's unnamed job folder, a submission
    pickle without a job, job folders holding only submitit's files of their job) goes at the
    next run; a user's file, a folder with a foreign file and a link stay."""
    folder = tmp_path / "grid"
    (folder / cluster.JOB_FOLDER).mkdir(parents=True)
    jobs = [JobPaths(folder / cluster.JOB_FOLDER, job_id=j, task_id=0) for j in ("4242", "77_3")]
    for paths in jobs:
        paths.folder.mkdir()
        for f in (paths.submitted_pickle, paths.stdout, paths.stderr, paths.result_pickle):
            f.write_bytes(b"submitit")
    (folder / f"{'ab' * 16}.pkl").write_bytes(b"a pickle never submitted")
    kept = JobPaths(folder / cluster.JOB_FOLDER, job_id="99", task_id=0)
    kept.folder.mkdir()
    kept.stdout.write_text("a log")
    (kept.folder / "NOTES.txt").write_text("the user's")
    (folder / "notes.txt").write_text("the user's")
    (folder / "123").symlink_to(tmp_path, target_is_directory=True)

    removed = cluster.tidy_job_folders(folder)
    assert sorted(p.name for p in removed) == sorted(["%j", "4242", "77_3", f"{'ab' * 16}.pkl"])
    assert sorted(p.name for p in folder.iterdir()) == ["123", "99", "notes.txt"]
    assert sorted(p.name for p in kept.folder.iterdir()) == ["99_0_log.out", "NOTES.txt"]
