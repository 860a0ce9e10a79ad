"""Build a task's whole study into the cache, many jobs at once.

The chapters read a study through serial, cached calls (``study.cells.train_arms``,
``study.cells.plan_study``); on an empty cache those calls would build
every model and cell one after the other. :func:`build_study` builds the same artifacts first,
``workers`` jobs at a time, each on a fixed number of threads (:mod:`jepa_geometry.jobs`),
in four stages:

1. the dataset (its collector has its own worker processes);
2. every (arm, training seed) model (:meth:`~jepa_geometry.study.spec.StudySpec.models`: the
   headline seeds' too);
3. the MPPI temperature sweep and every cell that needs no sweep (CEM, iCEM, MPPI at swm's
   shipped temperature; the ceiling's among them), longest first;
4. the MPPI cells at ``T*``, once the sweep has fixed it.

Every job is an ordinary cached build, so the numbers are those a serial run produces (each
job runs with the same thread count either way), an interrupted build resumes, and two jobs
that need the same artifact (the random floor of a cell's pairs) build it once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

import pandas as pd

from jepa_geometry.envs import SIMULATOR_PRELOAD
from jepa_geometry.envs.dataset import dataset_artifact, load_dataset
from jepa_geometry.jobs import check_workers, log_line, run_parallel
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.solver import STUDY_SOLVERS
from jepa_geometry.profiles import Profile
from jepa_geometry.study.cells import (
    Cell,
    ceiling_cells,
    ceiling_pairs,
    cell_groups,
    mppi_sweep_jobs,
    planning_cell,
    select_mppi_temperature,
)
from jepa_geometry.study.job_calls import plan_cell, train_model
from jepa_geometry.study.spec import StudySpec
from jepa_geometry.wm.training import model_untrained, world_model_artifact

STAGES: tuple[str, ...] = ("collect", "pretrain", "train", "plan", "chosen")
"""The stages of a build, in order, the same for a study built here and for the grid on a job
engine (:mod:`jepa_geometry.cluster`): collect the datasets, pretrain DINO-WM's stand-in
encoder, train the models, plan every cell that needs no chosen MPPI temperature (the sweep
that chooses it among them), then the cells at the chosen ``T*``. A study built here trains
the stand-in with its models."""
STAGE_WORDS: dict[str, str] = {
    "collect": "collect: the dataset",
    "pretrain": "pretrain: the stand-in encoder",
    "train": "train: the models",
    "plan": "plan: the MPPI sweep and every cell but MPPI at T*",
    "chosen": "chosen: MPPI at the chosen T*",
}
"""Each stage in a sentence, as a page's table of build times names it."""


def _needs_t_star(cell: Cell) -> bool:
    """Whether ``cell`` plans at the study's chosen MPPI temperature (known after the sweep)."""
    return STUDY_SOLVERS[cell.solver].temperature == "t_star"


def cell_jobs(spec: StudySpec, profile: Profile, temperature: float | None) -> list[PlanningCell]:
    """The planning cells of the study's grid, one per (training seed, arm, cell) of each of
    its :func:`~jepa_geometry.study.cells.cell_groups` when the study plans, and the ceiling's
    (:func:`~jepa_geometry.study.cells.ceiling_cells`, on
    :func:`~jepa_geometry.study.cells.ceiling_pairs` pairs) when it has one.

    ``temperature=None`` lists the cells that need no MPPI sweep (CEM, iCEM, and MPPI at swm's
    shipped temperature); a number lists the MPPI cells at that ``T*``. Sorted by rollouts per
    plan, largest first, so the longest jobs start first and the pool ends with short ones.
    """
    jobs = []
    for cells, seeds, arms in cell_groups(spec, profile) if spec.plans else []:
        mine = [c for c in cells if _needs_t_star(c) == (temperature is not None)]
        for seed in seeds:
            for arm in arms:
                jobs += [planning_cell(spec.task, arm, seed, profile, c, temperature) for c in mine]
    pairs = ceiling_pairs(spec, profile)
    if pairs is not None and temperature is None:
        cells = ceiling_cells(spec)
        jobs += [planning_cell(spec.task, CEILING, -1, profile, c, None, pairs) for c in cells]
    return sorted(jobs, key=lambda j: -j.rollouts())


def _span(manifests: list[dict]) -> tuple[float, float, float]:
    """(first start, last end, summed build seconds) of built artifacts, in epoch seconds."""
    ends = [datetime.strptime(m["created"], "%Y-%m-%dT%H:%M:%S%z").timestamp() for m in manifests]
    walls = [float(m["wall_time_s"]) for m in manifests]
    starts = [e - w for e, w in zip(ends, walls, strict=True)]
    return min(starts), max(ends), sum(walls)


def build_times(spec: StudySpec, profile: Profile) -> pd.DataFrame:
    """How long each stage of :func:`build_study` took when the cache was filled, from the
    manifests of the artifacts it built (so a warm rerun reports the original build).

    Per stage: ``jobs``; ``job_seconds`` = Σ build wall times of its artifacts (the work);
    ``wall_seconds`` = last end - first start, where an artifact's start is its manifest's
    ``created`` time minus its build wall time (the elapsed time; smaller than the work when
    jobs ran in parallel, larger if the stage was interrupted and resumed later); and a
    ``total`` row spanning the first start to the last end of the study's own build. The
    headline claims' added seeds (:attr:`~jepa_geometry.study.spec.StudySpec.headline_seeds`)
    were built later, by another build: their models and cells are one stage of their own,
    ``headline seeds``, and the total adds its wall time to the study's span rather than
    spanning the days between the two builds. A random floor, shared by the cells planned on
    its pairs, counts in the stage that first needs it. Missing artifacts raise
    :class:`~jepa_geometry.artifacts.ArtifactError`: build the study first. Times have the
    manifests' one-second resolution.
    """
    task = spec.task
    first_build = replace(spec, headline_seeds=None)
    models = [
        world_model_artifact(task, m, s, profile).manifest() for m, s in first_build.models(profile)
    ]

    seen: set[str] = set()  # a random floor is shared by cells: count it where first built

    def cells(jobs: list[PlanningCell]) -> list[dict]:
        out = []
        for j in jobs:
            for art in j.artifacts():
                if art.key not in seen:
                    seen.add(art.key)
                    out.append(art.manifest())
        return out

    sweep = mppi_sweep_jobs(task, profile, protocol=spec.main_protocol)
    temperature, _ = select_mppi_temperature(
        task, profile, protocol=spec.main_protocol, progress=False
    )
    plain = sweep + cell_jobs(first_build, profile, None)
    mppi = cell_jobs(first_build, profile, temperature)
    stages = {
        "collect": [dataset_artifact(task, profile).manifest()],
        "train": models,
        "plan": cells(plain),
        "chosen": cells(mppi),
    }
    jobs = {"plan": len(plain), "chosen": len(mppi)}
    added = spec.headline_models(profile)
    if added:
        extra = [j for j in cell_jobs(spec, profile, None) if (j.arm, j.train_seed) in added]
        stages["headline seeds"] = [
            world_model_artifact(task, m, s, profile).manifest() for m, s in added
        ] + cells(extra)
        jobs["headline seeds"] = len(added) + len(extra)
    rows, spans = [], []
    for name, manifests in stages.items():
        first, last, work = _span(manifests)
        if name != "headline seeds":
            spans.append((first, last))
        rows.append(
            {
                "stage": name,
                "jobs": jobs.get(name, len(manifests)),
                "job_seconds": work,
                "wall_seconds": last - first,
            }
        )
    later = sum(r["wall_seconds"] for r in rows if r["stage"] == "headline seeds")
    rows.append(
        {
            "stage": "total",
            "jobs": sum(r["jobs"] for r in rows),
            "job_seconds": sum(r["job_seconds"] for r in rows),
            "wall_seconds": max(e for _, e in spans) - min(s for s, _ in spans) + later,
        }
    )
    out = pd.DataFrame(rows)
    out["wall_minutes"] = out.wall_seconds / 60
    return out


def build_study(
    spec: StudySpec,
    profile: Profile,
    workers: int,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Build every dataset, model and planning cell of ``spec`` (cached ones are reused).

    Returns one row per stage: ``stage``, ``jobs``, ``seconds`` (wall time of the stage in this
    call; near 0 when everything was cached) and ``workers``. ``say`` (a command's log where
    no bar is drawn) gets one line when a stage starts, one per built model or cell and one
    per finished stage: a stage of laptop models runs for half an hour before its first model
    is built, and the log said nothing until then.
    """
    workers = check_workers(workers)
    rows = []

    def stage(name: str, n: int, run) -> Any:
        if say is not None:
            say(f"{spec.task} study: {name} started ({n} job{'' if n == 1 else 's'})")
        t0 = time.perf_counter()
        out = run()
        seconds = time.perf_counter() - t0
        rows.append({"stage": name, "jobs": n, "seconds": seconds, "workers": workers})
        if say is not None:
            say(log_line(f"{spec.task} study: {name} done", seconds))
        return out

    models = [(spec.task, m, s, profile) for m, s in spec.models(profile)]
    sweep = mppi_sweep_jobs(spec.task, profile, protocol=spec.main_protocol) if spec.plans else []
    first = [(j,) for j in sweep + cell_jobs(spec, profile, None)]
    # the frames are loaded only for work that needs them: a study whose models and cells are
    # all cached (as in the evidence tree, which has no frames) loads no dataset
    needed = not dataset_artifact(spec.task, profile).exists()
    needed = needed or any(model_untrained(*m) for m in models)
    needed = needed or any(j.unbuilt() for (j,) in first)
    if needed:
        stage("collect", 1, lambda: load_dataset(spec.task, profile, progress=progress))
    stage(
        "train",
        len(models),
        lambda: run_parallel(
            train_model,
            models,
            workers,
            f"train {spec.task}",
            progress,
            pending=model_untrained,
            preload=SIMULATOR_PRELOAD,
            say=say,
        ),
    )
    stage(
        "plan",
        len(first),
        lambda: run_parallel(
            plan_cell,
            first,
            workers,
            f"plan {spec.task}",
            progress,
            pending=PlanningCell.unbuilt,
            preload=SIMULATOR_PRELOAD,
            say=say,
        ),
    )
    if not spec.plans:  # a task whose gate failed: its models are measured, only the ceiling
        return pd.DataFrame(rows)  # plans
    temperature, _ = select_mppi_temperature(
        spec.task, profile, protocol=spec.main_protocol, progress=False
    )
    mppi = [(j,) for j in cell_jobs(spec, profile, temperature)]
    stage(
        "chosen",
        len(mppi),
        lambda: run_parallel(
            plan_cell,
            mppi,
            workers,
            f"plan {spec.task} MPPI",
            progress,
            pending=PlanningCell.unbuilt,
            preload=SIMULATOR_PRELOAD,
            say=say,
        ),
    )
    return pd.DataFrame(rows)


__all__ = ["build_study", "build_times", "cell_jobs"]
