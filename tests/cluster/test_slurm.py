"""The study grid on a real SLURM cluster: Debian's slurm-wlm and munge on localhost, one node
of two CPUs, ``select/cons_tres``, no accounting daemon (``tests/services.py``).

The smoke Two-Room study runs through ``jepa-geometry grid --executor slurm`` from an empty
cache, each kind of unit with its own resources, and a rerun submits nothing; a training job
preempted through the scheduler resumes with bit-identical weights; a failing unit and a job
the scheduler cancels are reported while the others finish. Every count comes from the
scheduler (``scontrol show job``), not from the grid's own report.
"""

from __future__ import annotations

import operator
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from jepa_geometry import cluster
from jepa_geometry.artifacts import Artifact
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.profiles import load_profile, with_overrides
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.training import train_world_model, world_model_artifact
from tests.cluster.test_run import assert_failed_unit_reported
from tests.conftest import REPO
from tests.services import PARTITION, Slurm, slurm_cluster, wait_for

pytestmark = pytest.mark.cluster
# each kind of unit asks for its own memory and time, so the jobs show which kind they are
RESOURCES = {
    "collect": {"mem_gb": 1, "hours": 0.25},
    "train": {"mem_gb": 3, "hours": 1.0},
    "plan": {"mem_gb": 2, "hours": 0.5},
    "measure": {"mem_gb": 1, "hours": 0.2},
}
OVERRIDES = {f"cluster.{k}.{f}": v for k, r in RESOURCES.items() for f, v in r.items()}
SMOKE = with_overrides(load_profile("smoke"), OVERRIDES)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory) -> Slurm:
    """The module's cluster; SLURM_CONF points this process's submitit at it."""
    with slurm_cluster(tmp_path_factory.mktemp("slurm")) as c, pytest.MonkeyPatch.context() as m:
        m.setenv("SLURM_CONF", str(c.conf))
        yield c


@dataclass
class Grid:
    """What one ``jepa-geometry grid`` invocation did, seen from outside."""

    run: subprocess.CompletedProcess
    seconds: float
    queue_after: list[str]  # squeue right after the command returned
    jobs: list[dict[str, str]]  # every job the scheduler knows after it


def grid(slurm: Slurm, cache: Path, folder: Path) -> Grid:
    sets = [a for k, v in OVERRIDES.items() for a in ("--set", f"{k}={v}")]
    cmd = [sys.executable, "-m", "jepa_geometry.cli", "grid", "--profile", "smoke"]
    cmd += ["--tasks", "tworoom", "--executor", "slurm", "--partition", PARTITION]
    cmd += ["--folder", str(folder), *sets]
    env = {**slurm.env, "JEPA_GEOMETRY_DATA": str(cache), "MUJOCO_GL": "egl"}
    t0 = time.perf_counter()
    run = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - t0
    return Grid(run, seconds, slurm.queue(), slurm.jobs())


@pytest.fixture(scope="module")
def study(slurm, tmp_path_factory) -> tuple[Path, Grid, Grid]:
    """The smoke Two-Room study from an empty cache, then the same command again."""
    root = tmp_path_factory.mktemp("study")
    first = grid(slurm, root / "data", root / "jobs")
    again = grid(slurm, root / "data", root / "jobs")
    return root / "data", first, again


def _kind(job: dict[str, str]) -> str:
    return job["JobName"].removeprefix("jepa-geometry-")


def test_the_smoke_study_runs_on_slurm_from_an_empty_cache_and_a_rerun_submits_nothing(
    study, monkeypatch
):
    cache, first, again = study
    assert first.run.returncode == 0, first.run.stdout + first.run.stderr
    spec = load_study("tworoom")
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(cache))
    # the grid's units as the built cache lists them: the units an empty cache could only
    # estimate (the MPPI cells, the chosen ΛReg variant's work) as they turned out
    expected = Counter(cluster.dry_run([spec], SMOKE).kind)
    ran = Counter(_kind(j) for j in first.jobs)
    print(f"slurm study: {sum(ran.values())} jobs {dict(ran)} in {first.seconds:.0f} s")
    assert ran == expected  # every unit of the grid, once, as a job of its kind
    assert {j["JobState"] for j in first.jobs} == {"COMPLETED"}
    assert first.queue_after == []  # the grid returned once every job had left the queue
    # no accounting daemon: the grid never asks sacct, so nothing warns about it
    assert "sacct" not in first.run.stderr, first.run.stderr
    said = first.run.stderr.splitlines()
    assert len(said) == len(set(said)), first.run.stderr  # and says nothing twice
    for stage in cluster.STAGES:
        assert all(u.cached for u in cluster.stage_units(stage, [spec], SMOKE)), stage

    assert again.run.returncode == 0, again.run.stdout + again.run.stderr
    print(f"slurm rerun: {len(again.jobs) - len(first.jobs)} jobs in {again.seconds:.0f} s")
    assert [j["JobId"] for j in again.jobs] == [j["JobId"] for j in first.jobs]
    rows = [line.split() for line in again.run.stdout.splitlines()]
    header = next(r for r in rows if r[:2] == ["stage", "cached"])
    counts = {
        r[0]: dict(zip(header[1:], map(int, r[1:]), strict=True))
        for r in rows
        if r[0] in cluster.STAGES
    }
    assert set(counts) == set(cluster.STAGES)
    assert sum(c["cached"] for c in counts.values()) == sum(expected.values())
    assert all(c["done"] == c["failed"] == c["blocked"] == 0 for c in counts.values())


def _time_limit(hours: float) -> str:
    """SLURM's spelling of a time limit under a day: ``HH:MM:SS``."""
    minutes = max(int(round(60 * hours)), 1)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


def test_each_kind_of_job_asks_the_scheduler_for_its_profiles_resources(study):
    _, first, _ = study
    assert set(_kind(j) for j in first.jobs) == set(RESOURCES)
    for job in first.jobs:
        r = getattr(SMOKE.cluster, _kind(job))
        assert job["Partition"] == PARTITION
        assert job["TimeLimit"] == _time_limit(r["hours"]), job
        assert job["MinMemoryNode"] == f"{int(r['mem_gb'])}G", job
        assert job["NumCPUs"] == str(int(r["cpus"])), job
        gpus = re.search(r"gpu:(\d+)", job.get("TresPerNode", ""))
        assert (int(gpus[1]) if gpus else 0) == int(r["gpus"]), job


def _weights(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=False)["state"]


def test_a_training_job_preempted_by_the_scheduler_resumes_bit_identical(
    slurm, tmp_path, monkeypatch
):
    """SLURM's preemption notice, sent by the scheduler (``scancel --signal``): SIGTERM, which
    submitit lets pass, then SIGUSR2, whose handler checkpoints the call and asks SLURM to
    requeue the job; the requeued job resumes from the trainer's resume file."""
    profile = with_overrides(SMOKE, {"train.steps": 120, "train.checkpoint_every": 10})
    unit = cluster.stage_units("train", [load_study("tworoom")], profile)[0]
    task, arm, seed, p, _ = unit.args
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path / "slurm"))
    load_dataset(task, p, progress=False)
    shutil.copytree(tmp_path / "slurm" / "datasets", tmp_path / "fresh" / "datasets")
    umask = os.umask(0o002)  # a group's shared cache: SLURM runs the job with this umask
    try:
        job = cluster.make_executor("slurm", tmp_path / "jobs", "train", p, PARTITION).submit(
            unit.call, *unit.args
        )
    finally:
        os.umask(umask)
    art = world_model_artifact(task, arm, seed, p)
    resume = art.write_path.parent / f".{art.key}.resume.pt"
    wait_for("the training's first checkpoint", resume.exists, timeout_s=300)
    assert not art.exists() and slurm.job(job.job_id)["JobState"] == "RUNNING"
    for sig in ("TERM", "USR2"):
        slurm.run("scancel", f"--signal={sig}", job.job_id)
    wait_for("the requeued job to end", lambda: job.job_id not in slurm.queue(), timeout_s=300)
    state = slurm.job(job.job_id)
    assert state["JobState"] == "COMPLETED" and int(state["Restarts"]) >= 1, state
    job.result()
    resumed = art.manifest()["summary"]["resumed_from"]
    print(f"slurm preemption: resumed from step {resumed} of {p.train.steps}")
    assert 0 < resumed < p.train.steps
    assert art.path.stat().st_mode & 0o777 == 0o775  # the group reads and writes it
    assert (art.path / "model.pt").stat().st_mode & 0o777 == 0o664
    interrupted = _weights(art.path / "model.pt")
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path / "fresh"))
    fresh = train_world_model(task, arm, seed, p, progress=False)
    assert fresh.manifest()["summary"]["resumed_from"] == 0
    clean = _weights(fresh.path / "model.pt")
    assert clean.keys() == interrupted.keys()
    assert all(torch.equal(clean[k], interrupted[k]) for k in clean)


def test_a_failing_unit_and_a_cancelled_job_are_reported_and_the_rest_finish(
    slurm, data_root, tmp_path
):
    good = cluster.stage_units("collect", [load_study("tworoom")], SMOKE)[0]
    bad = cluster.Unit(
        "plan",
        "plan",
        "tworoom",
        "divide by zero",
        operator.truediv,
        (1, 0),
        (Artifact("results", "never-built", {"n": 1}),),
        (),
        0.0,
    )
    sleeper = cluster.Unit(
        "plan",
        "measure",
        "tworoom",
        "cancelled by the scheduler",
        time.sleep,
        (600,),
        (Artifact("results", "never-built", {"n": 2}),),
        (),
        0.0,
    )

    def cancel_the_sleeper() -> None:  # as an administrator would, while the grid waits
        def queued() -> list[str]:
            fmt = ["squeue", "--noheader", "--format=%i", "--name=jepa-geometry-measure"]
            return slurm.run(*fmt, "--states=RUNNING").split()

        wait_for("the sleeping job", queued, timeout_s=120)
        slurm.run("scancel", *queued())

    canceller = threading.Thread(target=cancel_the_sleeper)
    canceller.start()
    rows = cluster.run_stage(
        [bad, sleeper, good], "slurm", tmp_path / "jobs", SMOKE, 3, PARTITION, progress=False
    )
    canceller.join()
    by = assert_failed_unit_reported(rows)
    assert good.cached
    cancelled = by["cancelled by the scheduler"]
    assert cancelled["status"] == "failed", cancelled
    assert cancelled["error"].startswith("the job left the queue without a result: CANCELLED")
    assert slurm.queue() == []
