"""The run loop through submitit's local executor: a whole smoke study of one task, read back
from the cache alone by the cross-task page's reader, a second run that submits nothing, a
failing unit reported while the rest finish, and bad input stopped in one line; and an
extension's units built on this machine (``build_here``)."""

from __future__ import annotations

import operator
import os
import re
import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from jepa_geometry import cluster
from jepa_geometry.artifacts import CACHE_ONLY_ENV, Artifact, environ, get_or_build
from jepa_geometry.profiles import load_profile
from jepa_geometry.study import load
from jepa_geometry.study.decisions import lambdareg, sigreg
from jepa_geometry.study.decisions.gate import study_choice
from jepa_geometry.study.spec import DECISION_TASK, load_study

SMOKE = load_profile("smoke")


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
        studies = load.load_studies(SMOKE, ["tworoom"], require_planned=True)
        chosen, _, gates = study_choice("tworoom", SMOKE)  # the gate the pages show first
        # chapter 7's decisions and the chosen ΛReg variant's planning, all in the grid's cache
        sigreg.sigreg_strength_decision(DECISION_TASK, SMOKE)
        variant, _ = lambdareg.choose_variant(lambdareg.variant_table(DECISION_TASK, SMOKE))
        vplan = lambdareg.study_variant_planning(spec, SMOKE, variant, progress=False)
    assert variant == lambdareg.decided_variant(DECISION_TASK, SMOKE)
    assert len(vplan) == (3 if variant != "published" else 1) * len(
        lambdareg.lambdareg_arms(spec.arms)
    )
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


def test_two_grids_in_one_folder_stop_the_second_in_one_line(tmp_path):
    folder = tmp_path / "grid"
    folder.mkdir()
    with FileLock(str(folder / cluster.GRID_LOCK)):
        with pytest.raises(cluster.ClusterError, match=r"another grid is running with the folder"):
            cluster.run_grid([load_study("tworoom")], load_profile("smoke"), folder=folder)
    assert sorted(p.name for p in folder.iterdir()) == [cluster.GRID_LOCK]


def test_an_unknown_executor_stops_the_grid_in_one_line():
    spec = load_study("tworoom")
    with pytest.raises(cluster.ClusterError, match="unknown executor 'pbs'; valid: local, slurm"):
        cluster.run_grid([spec], SMOKE, executor="pbs")


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


def test_a_stage_submits_its_longest_units_first_and_loses_none(data_root):
    units = cluster.stage_units("plan", [load_study("tworoom")], SMOKE)
    order = cluster.run.submission_order(units)
    hours = [u.hours for u in order]
    assert hours == sorted(hours, reverse=True) and hours[0] > hours[-1]
    assert sorted(u.label for u in order) == sorted(u.label for u in units)
    ties = [u.label for u in units if u.hours == hours[-1]]  # equals keep their listed order
    assert [u.label for u in order if u.hours == hours[-1]] == ties


def _write(art: Artifact, order: list[str]) -> None:
    """A unit's job: build ``art`` (one small file), noting the order the jobs ran in."""
    order.append(art.name)
    get_or_build(art, lambda tmp: (tmp / "x.txt").write_text(art.name) and None)


def test_build_here_runs_an_extensions_stages_in_turn_longest_first_and_resumes(data_root):
    """``cluster.build_here`` (``jepa-geometry kappa`` / ``scaling``): the cost stated first, each
    stage listed only once the one before is built (a result decides the next stage's work),
    its uncached units longest first, one row per stage; a rerun builds nothing."""
    order: list[str] = []
    first = Artifact("results", "first", {"n": 1})

    def unit(stage: str, name: str, hours: float, inputs=()) -> cluster.Unit:
        art = Artifact("results", name, {"n": 1})
        return cluster.Unit(
            stage, "plan", "tworoom", name, _write, (art, order), (art,), inputs, hours
        )

    def units(stage: str, base) -> list[cluster.Unit]:
        if stage == "train":
            return [unit(stage, "first", 0.1)]
        if stage == "plan":  # known only once the train stage's result is cached
            if not first.exists():
                return [cluster.waiting_unit(stage, "tworoom", "later", 1.0, "the first")]
            return [unit(stage, "short", 0.1, (first,)), unit(stage, "long", 2.0, (first,))]
        return []

    said: list[str] = []
    ext = cluster.Extension("toy", units, lambda base: "toy: 3 units, about 2.2 h")
    stages = cluster.build_here(ext, SMOKE, 1, progress=False, say=said.append)
    assert said == ["toy: 3 units, about 2.2 h"]
    assert order == ["first", "long", "short"]
    assert list(stages["stage"]) == list(cluster.STAGES)
    by = stages.set_index("stage")
    assert by.loc["train", "built"] == 1 and by.loc["plan", "built"] == 2
    assert stages["waiting"].sum() == 0 and stages["built"].sum() == 3
    again = cluster.build_here(ext, SMOKE, 1, progress=False, say=said.append)
    assert again["built"].sum() == 0 and order == ["first", "long", "short"]
