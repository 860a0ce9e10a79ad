"""What a job runs: every call that a process pool or submitit hands to another process.

A job's call travels to its process pickled, by its module and name, so it must be a function
or class defined at a module's top level (a lambda, a closure or a local function cannot
travel). Every build that runs jobs takes its calls from here, one per kind of work: a task's
study (:func:`~jepa_geometry.study.build.build_study`), a rule's variants
(:mod:`~jepa_geometry.study.decisions.lambdareg`), the extensions and the reader's own objective,
and the cluster's units (:mod:`jepa_geometry.cluster`). The same work is then one function
whichever engine runs it, and each call is an ordinary cached build: it leaves its artifacts in
the cache and returns at most its wall time in seconds, so the engine that ran it can report it.

* process-pool jobs (:func:`jepa_geometry.jobs.run_parallel`): :func:`train_model`,
  :func:`plan_cell`, :func:`run_call` (one unit's own call, for a build that lists units);
* cluster jobs (submitit): :func:`run_collect`, :func:`run_pretrain`, :class:`TrainModel`,
  :class:`PlanCells`, :func:`run_measure`. The training and planning ones are submitit
  ``Checkpointable``: a preempted or timed-out job is requeued and resumes from the trainer's
  checkpoint or the cells already cached. A job of an arm with an objective file first checks
  that the file is the one its unit was listed with (:func:`check_digest`).

The name says what the module holds, the calls: :mod:`jepa_geometry.jobs` is the engine they
run in (one thread per job, the process pool, the progress line).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import submitit

from jepa_geometry.analysis.measurements import GeometrySettings, measure
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.jobs import job_threads
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import Profile
from jepa_geometry.wm.arms import objective_key
from jepa_geometry.wm.dinowm import standin_settings
from jepa_geometry.wm.selfdistill import train_standin
from jepa_geometry.wm.training import check_objective_digest, train_world_model


def train_model(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None = None
) -> float:
    """Train (or find) one model; its training wall time in seconds, as its manifest records
    it (a cached model's is the time of the run that built it)."""
    art = train_world_model(task, arm, seed, profile, weights, progress=False)
    return float(art.manifest()["summary"]["train_wall_s"])


def plan_cell(cell: PlanningCell) -> float:
    """Plan (or find) one cell; its planning wall time in seconds."""
    return cell.evaluate(progress=False).eval_seconds


def run_call(call: Callable[..., Any], args: tuple) -> None:
    """``call(*args)``: one listed unit's own job (:class:`~jepa_geometry.cluster.units.Unit`'s
    ``call`` and ``args``), so a build that lists units runs each in a pool as the cluster
    would."""
    call(*args)


def run_collect(task: str, profile: Profile) -> None:
    """Collect (or find) ``task``'s dataset."""
    load_dataset(task, profile, progress=False)


def run_pretrain(profile: Profile) -> None:
    """Pretrain (or find) DINO-WM's stand-in encoder at ``profile``."""
    train_standin(profile, standin_settings(profile), progress=False)


def objective_digest(arm: str) -> str | None:
    """The sha256 of ``arm``'s objective file as the grid lists its units (None: a built-in
    arm). The unit's job gets it with the file's path (in the arm) and checks the file it reads
    against it (:func:`check_digest`), so a file edited after the grid listed a unit stops
    that job instead of training, planning or measuring another objective's model."""
    key = objective_key(arm)
    return None if key is None else key["sha256"]


def check_digest(arm: str, sha256: str | None) -> None:
    """In a job: stop when ``arm``'s objective file is no longer the one its unit was listed
    with (``sha256``; None: nothing to check)."""
    if sha256 is not None:
        check_objective_digest(arm, objective_digest(arm), sha256)


class TrainModel(submitit.helpers.Checkpointable):
    """Train one model. On preemption or timeout submitit calls :meth:`checkpoint` (inherited:
    resubmit the same call), and the requeued job resumes from the trainer's resume file."""

    def __call__(
        self,
        task: str,
        arm: str,
        seed: int,
        profile: Profile,
        weights: dict | None = None,
        objective_sha256: str | None = None,
    ) -> float:
        check_digest(arm, objective_sha256)
        return train_model(task, arm, seed, profile, weights)


class PlanCells(submitit.helpers.Checkpointable):
    """Plan a list of cells; each cell is cached on its own, so a requeued job skips the cells
    already planned."""

    def __call__(self, cells: list[PlanningCell], objective_sha256: str | None = None) -> float:
        if cells and cells[0].arm != CEILING:  # the cells of one model
            check_digest(cells[0].arm, objective_sha256)
        t0 = time.perf_counter()
        with job_threads():
            for cell in cells:
                plan_cell(cell)
        return time.perf_counter() - t0


def run_measure(
    task: str, arm: str, seed: int, profile: Profile, objective_sha256: str | None = None
) -> None:
    """Measure one model's geometry (chapter 7's probes, rank channels and landscape)."""
    check_digest(arm, objective_sha256)
    with job_threads():
        measure(task, arm, seed, profile, GeometrySettings.of(profile))
