"""The study grid through submitit's local executor: a whole smoke study of one task, read
back from the cache alone by the cross-task page's reader, a second run that submits nothing,
a preempted training that resumes bit-identically, and a failing unit reported while the rest
finish."""

from __future__ import annotations

import operator
import os
import re
import shutil
import signal
import time
from pathlib import Path

import pytest
import torch
from filelock import FileLock
from submitit.core.utils import JobPaths

from jepa_geometry.artifacts import CACHE_ONLY_ENV, Artifact, environ
from jepa_geometry.planning.protocol import make_protocol
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import load_profile, with_overrides
from jepa_geometry.study import across, cluster
from jepa_geometry.study.levers import LADDERS
from jepa_geometry.study.rules.gate import study_choice
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.training import train_world_model, world_model_artifact

SMOKE = load_profile("smoke")


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
    with pytest.raises(cluster.GridError, match="collect_frames_per_s has no entry for 'cube'"):
        cluster.collect_hours("cube", partial)


def test_dry_run_counts_and_costs_every_unit_without_building(data_root):
    spec = load_study("tworoom")
    units = cluster.dry_run([spec], SMOKE)
    models = len(spec.arms) * len(SMOKE.seeds.train)
    counts = units.groupby(["stage", "kind"]).size().to_dict()
    # DINO-WM's stand-in learns from all five tasks' datasets: Two-Room's and four more
    assert "dinowm" in spec.arms
    assert counts == {
        ("collect", "collect"): 5,
        ("pretrain", "train"): 1,
        ("train", "train"): models,
        # and the MPPI sweep, one per ceiling cell, and the protocol gate's alternatives (its
        # first cell, LeWM under SCALE's protocol, is the study's own)
        ("plan", "plan"): models + 1 + 5 + 1,
        ("plan", "measure"): models,
        ("chosen", "plan"): models,
    }
    ceiling = units[units.unit.str.contains("ceiling")]
    # the ceiling's cost: pairs x plans x rollouts per replan x the simulator's time per rollout
    pairs = min(spec.ceiling, SMOKE.eval.episodes)
    plans = make_protocol(SMOKE, spec.main_protocol).plans
    rollouts = [s * i for s, i in budget_tiers(SMOKE).values()]
    per_rollout = SMOKE.cluster.ceiling_rollout_ms["tworoom"] / 1e3
    expected = [pairs * plans * r * per_rollout / 3600 for r in rollouts]
    assert sorted(ceiling.hours) == pytest.approx(sorted(expected))
    train = units[units.stage == "train"]
    assert train.hours.tolist() == pytest.approx(
        [SMOKE.train.steps / SMOKE.cluster.train_steps_per_s / 3600] * models
    )
    pretrain = units[units.stage == "pretrain"]
    assert pretrain.hours.tolist() == pytest.approx(
        [SMOKE.dinowm.standin_steps / SMOKE.cluster.pretrain_steps_per_s / 3600]
    )
    # two studies share one stand-in and each dataset once
    both = cluster.dry_run([spec, load_study("pusht")], SMOKE)
    assert (both.stage == "pretrain").sum() == 1
    assert both[both.stage == "collect"].unit.is_unique
    assert not units.cached.any()
    assert list(data_root.rglob("manifest.json")) == []  # a dry run builds nothing
    summary = cluster.dry_run_summary(units)
    total = summary[summary.stage == "total"]
    assert total["units"].sum() == len(units) and set(total.device) == {"CPU"}  # smoke: no GPU
    assert total["all (h)"].sum() == pytest.approx(units.hours.sum())
    # a task with a ladder: every rung's gate cell is planned, on that rung's LeWM
    ladder = cluster.dry_run([load_study("pusht")], SMOKE)
    for lever in LADDERS["pusht"]:
        assert f"plan pusht lewm seed 0 (gate, rung {lever.name})" in set(ladder.unit)
    with pytest.raises(cluster.GridError, match="unknown executor 'pbs'; valid: local, slurm"):
        cluster.run_grid([spec], SMOKE, executor="pbs")


def _in_process(spec) -> list[cluster.Unit]:
    """Build ``spec``'s smoke grid unit by unit in this process, into the current cache, as a
    serial run without a job engine would (each unit's call as its job would run it)."""
    units = []
    for stage in cluster.STAGES:
        for u in cluster.stage_units(stage, [spec], SMOKE):
            if not u.cached:
                u.call(*u.args)
            units.append(u)
    return units


def _files(art: Artifact) -> dict[str, str]:
    return {f: rec["sha256"] for f, rec in art.manifest()["files"].items()}


@pytest.mark.first
def test_a_smoke_study_through_the_local_executor_then_read_from_cache(
    smoke_datasets, tmp_path, monkeypatch
):
    """The grid through submitit rebuilds what a cache lacks, bit-identical to an in-process
    build, and submits nothing once the cache is whole.

    The in-process build goes into the run's shared cache (the Two-Room pages read it there);
    this test's own cache is a copy of it without one unit of every stage: Two-Room's dataset,
    the DINO-WM stand-in, and the ``dinowm`` model with its cells and measurement, a chain that
    runs through every stage of the grid.
    """
    spec = load_study("tworoom")
    shared = smoke_datasets.parent
    units = _in_process(spec)
    rel = {u.label: [Path(a.kind, a.name, a.key) for a in u.outputs] for u in units}
    removed = {
        u.label
        for u in units
        if u.label == "collect tworoom" or u.stage == "pretrain" or " dinowm " in u.label
    }
    reference = [(a, _files(a)) for u in units if u.label in removed for a in u.outputs]
    own = tmp_path / "data"
    for label, paths in rel.items():
        for r in paths if label not in removed else ():
            if not (own / r).exists():  # a baseline cell can be an output of several units
                shutil.copytree(shared / r, own / r)
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(own))
    said: list[str] = []  # what a background build's log reads
    out = cluster.run_grid(
        [spec], SMOKE, "local", tmp_path / "jobs", max_parallel=2, progress=False, log=said.append
    )
    done = out[out.status != "cached"]
    assert set(done.unit) == removed, done.to_string()
    ended = [
        re.fullmatch(r"grid (\w+): (\d+) of (\d+) ended, (.+) done \(.+ s\)", ln) for ln in said
    ]
    assert sorted(m.group(4) for m in ended if m) == sorted(removed), said
    assert [ln.split(":")[0] for ln in said if ln.endswith(" s)") and "stage done" in ln] == [
        f"grid {stage}" for stage in cluster.STAGES
    ], said
    assert len(said) == len(removed) + len(cluster.STAGES), said
    assert (done.status == "done").all(), done[done.status != "done"].to_string()
    assert set(done.stage) == set(cluster.STAGES)
    for art, files in reference:  # the jobs' artifacts are the in-process ones
        assert _files(art) == files, f"{art.kind}/{art.name}/{art.key}"
    # the cross-task page's reader finds the whole study in the grid's cache alone (the page
    # itself renders from such a cache in test_chapters' evidence test)
    with environ({CACHE_ONLY_ENV: "1"}):
        studies = across.load_studies(SMOKE, ["tworoom"], require_planned=True)
        chosen, _, gates = study_choice("tworoom", SMOKE)  # the gate the pages show first
    assert list(studies.studies) == ["tworoom"] and studies.missing == {}
    assert chosen and len(gates) >= 1
    jobs = sorted(p.name for p in (tmp_path / "jobs").iterdir())
    assert cluster.JOB_FOLDER not in jobs and len(jobs) == len(removed) + 1  # + the grid's lock
    said.clear()
    again = cluster.run_grid(
        [spec], SMOKE, "local", tmp_path / "jobs", progress=False, log=said.append
    )
    assert (again.status == "cached").all() and not said  # it submits nothing, says nothing
    assert [p.name for p in (tmp_path / "jobs").iterdir()] == [cluster.GRID_LOCK]  # tidied
    assert len(again) == len(units)  # every unit of the grid, each found cached


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


@pytest.mark.slow
def test_a_failing_unit_is_reported_and_the_rest_finish(data_root, tmp_path):
    spec = load_study("tworoom")
    good = cluster.stage_units("collect", [spec], SMOKE)[0]
    never = Artifact("results", "never-built", {"n": 1})
    bad = cluster.Unit(
        "plan", "plan", "tworoom", "divide by zero", operator.truediv, (1, 0), (never,), (), 0.0
    )
    after = cluster.Unit(
        "plan",
        "plan",
        "tworoom",
        "needs the failed one",
        operator.add,
        (1, 1),
        (Artifact("results", "after", {"n": 2}),),
        (never,),
        0.0,
    )
    rows = cluster.run_stage([bad, good], "local", tmp_path / "jobs", SMOKE, 2, progress=False)
    assert_failed_unit_reported(rows)
    assert good.cached
    blocked = cluster.run_stage(
        [after],
        "local",
        tmp_path / "jobs",
        SMOKE,
        2,
        progress=False,
        blocked_by={never.key: "divide by zero"},
    )
    assert blocked[0]["status"] == "blocked"
    assert blocked[0]["error"].endswith("missing (divide by zero failed)")


def test_dinowm_on_dinov2_without_the_file_stops_the_grid_and_is_left_out_of_a_dry_run(
    data_root, tmp_path
):
    real = with_overrides(
        SMOKE, {"dinowm.encoder": "dinov2", "dinowm.dinov2_weights": str(tmp_path / "missing.pth")}
    )
    spec = load_study("tworoom")
    with pytest.raises(cluster.GridError, match=r"tworoom train dinowm on DINOv2.*missing\.pth"):
        cluster.run_grid([spec], real, "local", tmp_path / "jobs", progress=False)
    assert not (tmp_path / "jobs").exists() or not any((tmp_path / "jobs").iterdir())
    units = cluster.dry_run([spec], real)
    assert units.attrs["left_out"] == ["tworoom"]
    assert not units.unit.str.contains("dinowm").any() and units.unit.str.contains("lewm").any()
    assert list(data_root.rglob("manifest.json")) == []


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


def test_two_grids_in_one_folder_stop_the_second_in_one_line(tmp_path):
    folder = tmp_path / "grid"
    folder.mkdir()
    with FileLock(str(folder / cluster.GRID_LOCK)):
        with pytest.raises(cluster.GridError, match=r"another grid is running with the folder"):
            cluster.run_grid([load_study("tworoom")], load_profile("smoke"), folder=folder)
    assert sorted(p.name for p in folder.iterdir()) == [cluster.GRID_LOCK]


def test_a_study_given_twice_stops_the_grid_before_any_work(tmp_path):
    spec = load_study("tworoom")
    with pytest.raises(cluster.GridError, match=r"study of tworoom is given more than once"):
        cluster.run_grid([spec, spec], SMOKE, "local", tmp_path / "jobs", progress=False)
    with pytest.raises(cluster.GridError, match=r"study of tworoom is given more than once"):
        cluster.dry_run([spec, load_study("pusht"), spec], SMOKE)
    assert not (tmp_path / "jobs").exists()


def assert_failed_unit_reported(rows: list[dict]) -> dict[str, dict]:
    """The stage's rows by unit, after checking that the failing unit is reported with its log
    while the good one finished (shared by the local-executor and SLURM tests)."""
    by = {r["unit"]: r for r in rows}
    assert by["collect tworoom"]["status"] == "done"
    assert by["divide by zero"]["status"] == "failed"
    assert "ZeroDivisionError" in by["divide by zero"]["error"]
    log = by["divide by zero"]["log"]
    assert os.path.isfile(log) and "ZeroDivisionError" in open(log).read()
    return by
