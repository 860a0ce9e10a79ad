"""The run loop: the grid's stages one after the other, each unit submitted once its inputs
are cached, resumable, with the artifact cache as the only record of what is done.

Dependencies are the order of the stages (:data:`~.units.STAGES`) plus the cache, on an
existing engine (submitit) rather than a scheduler of our own: a unit whose outputs are all
cached is skipped (so rerunning the grid submits only what is missing), a unit whose inputs are
missing is reported as *blocked* with the input it lacks (and the failed unit that should have
built it), and a unit that raises is reported with its log and the error while every unrelated
unit still runs. At most ``max_parallel`` jobs run at once; one grid at a time holds a folder
(:data:`GRID_LOCK`); an interrupted run cancels its jobs, and what they finished stays cached.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import submitit
from filelock import FileLock, Timeout

from jepa_geometry.cluster.estimate import ClusterError
from jepa_geometry.cluster.submit import (
    EXECUTORS,
    SlurmQueue,
    drop_unnamed_job_folder,
    last_error,
    make_executor,
    share_objectives,
    slurm_state,
    tidy_job_folders,
)
from jepa_geometry.cluster.units import (
    STAGES,
    Extension,
    Unit,
    check_dinov2,
    check_specs,
    check_without_decisions,
    distinct,
    stage_units,
)
from jepa_geometry.envs import SIMULATOR_PRELOAD
from jepa_geometry.jobs import check_workers, default_workers, log_line, progress_bar, run_parallel
from jepa_geometry.profiles import Profile
from jepa_geometry.study.job_calls import run_call
from jepa_geometry.study.spec import StudySpec

STATUSES: tuple[str, ...] = ("cached", "done", "failed", "blocked")
POLL_S = 0.5  # how often the runner looks at its jobs
GRID_LOCK = ".grid.lock"


@dataclass
class _Running:
    unit: Unit
    job: Any
    started: float


def _log_of(job: Any) -> str:
    return str(job.paths.stderr)


def _outcome(r: _Running, executor: str) -> tuple[str, str]:
    """A finished job's status (done or failed) and error: the exception of a unit that raised,
    or, for a SLURM job that left the queue without a result (cancelled, out of time or
    memory, its node lost), its state there."""
    if executor == "slurm" and not r.job.paths.result_pickle.exists():
        return "failed", f"the job left the queue without a result: {slurm_state(r.job.job_id)}"
    try:
        r.job.result()
    except Exception as e:  # noqa: BLE001 -- reported, the other units go on
        return "failed", last_error(e)
    return "done", ""


def _triage(
    units: Sequence[Unit], blocked_by: dict[str, str] | None
) -> tuple[list[dict[str, Any]], list[Unit]]:
    """The rows of the units that need no job (cached, or blocked by a missing input or a
    result not yet known) and the units to submit, in order."""
    rows: list[dict[str, Any]] = []
    todo: list[Unit] = []
    for u in units:
        if u.outputs and u.cached:
            rows.append(_row(u, "cached"))
            continue
        missing = u.missing_inputs()
        if missing or not u.outputs:
            art = missing[0] if missing else None
            why = (
                f"{u.pending} did not finish"
                if art is None
                else f"input {art.kind}/{art.name}/{art.key} missing"
                + (
                    f" ({blocked_by[art.key]} failed)"
                    if blocked_by and art.key in blocked_by
                    else ""
                )
            )
            rows.append(_row(u, "blocked", error=why))
            continue
        todo.append(u)
    return rows, todo


def submission_order(units: Sequence[Unit]) -> list[Unit]:
    """``units`` longest first by their estimated hours (ties in their listed order): with
    fewer workers than units, a long unit started last runs alone while the other workers
    idle (Two-Room's DINO-WM MPPI cells, 13 minutes against 3 for each other model's, ended
    its stage 4 minutes after the rest). The order changes no result: every unit is its own
    seeded job."""
    return sorted(units, key=lambda u: -u.hours)


def run_stage(
    units: Sequence[Unit],
    executor: str,
    folder: Path,
    base: Profile,
    max_parallel: int,
    partition: str | None = None,
    progress: bool = True,
    blocked_by: dict[str, str] | None = None,
    say: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Submit the units of one stage that are not cached and whose inputs exist, at most
    ``max_parallel`` at a time, and wait for them (on SLURM until each has left the queue,
    :class:`~.submit.SlurmQueue`). One row per unit: status (cached, done,
    failed, blocked), seconds, the job's log and the error (failed) or missing input
    (blocked). ``blocked_by`` maps an artifact key to the failed unit that should have built it,
    for the message. ``say`` (a log where no bar is drawn) gets one line per ended unit, e.g.
    ``grid train: 3 of 18 done, train tworoom lewm s1 (4 min 31 s)``, and one for the stage."""
    rows, todo = _triage(units, blocked_by)
    executors: dict[str, submitit.AutoExecutor] = {}
    running: list[_Running] = []
    bar = progress_bar(
        total=len(todo),
        desc=f"grid {todo[0].stage}" if todo else "grid",
        progress=progress and bool(todo),
    )
    queue = submission_order(todo)
    slurm = SlurmQueue()
    t0 = time.perf_counter()
    try:
        while queue or running:
            while queue and len(running) < max_parallel:
                u = queue.pop(0)
                if u.kind not in executors:
                    executors[u.kind] = make_executor(executor, folder, u.kind, base, partition)
                job = executors[u.kind].submit(u.call, *u.args)
                running.append(_Running(u, job, time.perf_counter()))
            time.sleep(POLL_S)
            jobs = [r.job for r in running]
            ended = slurm.left(jobs) if executor == "slurm" else [j for j in jobs if j.done()]
            for r in [r for r in running if r.job in ended]:
                running.remove(r)
                status, error = _outcome(r, executor)
                seconds = time.perf_counter() - r.started
                rows.append(_row(r.unit, status, seconds, _log_of(r.job), error))
                bar.update(1)
                if say is not None:
                    n = len(todo) - len(queue) - len(running)
                    what = f"grid {r.unit.stage}: {n} of {len(todo)} ended, {r.unit.label} {status}"
                    say(log_line(what, seconds))
        if say is not None and todo:
            say(log_line(f"grid {todo[0].stage}: stage done", time.perf_counter() - t0))
    finally:
        bar.close()
        for r in running:  # interrupted: the jobs are cancelled, their artifacts stay cached
            r.job.cancel(check=False)
    return rows


def _row(u: Unit, status: str, seconds: float = 0.0, log: str = "", error: str = "") -> dict:
    return {
        "stage": u.stage,
        "kind": u.kind,
        "task": u.task,
        "unit": u.label,
        "status": status,
        "seconds": seconds,
        "log": log,
        "error": error,
    }


def run_grid(
    specs: Sequence[StudySpec],
    base: Profile,
    executor: str = "local",
    folder: Path | str = Path("runs") / "grid",
    max_parallel: int | None = None,
    partition: str | None = None,
    progress: bool = True,
    extensions: Sequence[Extension] = (),
    say: Callable[[str], None] = print,
    log: Callable[[str], None] | None = None,
    decisions: bool = True,
) -> pd.DataFrame:
    """Run the studies ``specs`` and the ``extensions`` at ``base`` through submitit, stage
    after stage; one row per unit (:func:`run_stage`). Each extension states its cost first
    (``say``); ``log`` gets a line per ended unit and stage (:func:`run_stage`'s ``say``).
    ``max_parallel`` jobs at once (default: one per core with the local executor,
    unlimited on SLURM, whose queue does the limiting). A reader's objective file is copied
    into ``folder`` first and its jobs read the copy (:func:`~.submit.share_objectives`, one
    line each to ``say``): a node need not see the path it was given by. With ``decisions``
    False the book's decisions are left out (:func:`~.units.check_without_decisions`)."""
    if executor not in EXECUTORS:
        raise ClusterError(f"unknown executor {executor!r}; valid: {', '.join(EXECUTORS)}")
    check_specs(specs)
    check_dinov2(specs, base)
    if not decisions:
        check_without_decisions(specs)
    if max_parallel is None:
        max_parallel = default_workers() if executor == "local" else 10_000
    max_parallel = check_workers(max_parallel)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    failed_outputs: dict[str, str] = {}
    try:
        lock = FileLock(str(folder / GRID_LOCK), timeout=0)
        lock.acquire()
    except Timeout:
        raise ClusterError(
            f"another grid is running with the folder {folder} (it holds "
            f"{folder / GRID_LOCK}); wait for it or give another --folder"
        ) from None
    try:
        tidy_job_folders(folder)  # a killed run's leftovers
        specs, shared = share_objectives(specs, folder, copy=True)
        for line in shared:
            say(line)
        for ext in extensions:
            say(ext.state(base))
        for stage in STAGES:
            units = stage_units(stage, specs, base, extensions, decisions)
            out = run_stage(
                units,
                executor,
                folder,
                base,
                max_parallel,
                partition,
                progress,
                failed_outputs,
                say=log,
            )
            for u, r in zip(units, _by_label(units, out), strict=True):
                if r["status"] in ("failed", "blocked"):
                    failed_outputs.update({a.key: u.label for a in u.outputs})
            rows += out
    finally:
        drop_unnamed_job_folder(folder)
        lock.release()
    return pd.DataFrame(
        rows, columns=["stage", "kind", "task", "unit", "status", "seconds", "log", "error"]
    )


def build_here(
    ext: Extension,
    base: Profile,
    workers: int,
    progress: bool = True,
    say: Callable[[str], None] = print,
    log: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Build the extension ``ext`` on this machine (``jepa-geometry kappa``, ``jepa-geometry
    scaling``, the book before its cross-task page): its cost stated first (``say``), then its
    units of each stage in turn (:data:`~.units.STAGES`), the uncached ones longest first,
    ``workers`` jobs at a time in a process pool (:func:`~jepa_geometry.jobs.run_parallel`;
    one worker runs them in this process). They are the units ``grid --with`` submits, each
    run as its job runs it, so the two routes write the same artifacts, and a stage is listed
    only once the one before is built (a gate decides the next stage's cells). A job that
    raises stops the build; what finished is cached, so a rerun resumes. ``log`` gets a line
    per built unit. One row per stage: its units, the ones built now, the ones still waiting
    for a result (``Unit.pending``), seconds."""
    workers = check_workers(workers)
    say(ext.state(base))
    rows = []
    for stage in STAGES:
        units = distinct(ext.units(stage, base))
        todo = submission_order([u for u in units if u.outputs and not u.cached])
        t0 = time.perf_counter()
        run_parallel(
            run_call,
            [(u.call, u.args) for u in todo],
            workers,
            f"{ext.name} {stage}",
            progress,
            preload=SIMULATOR_PRELOAD,
            say=log,
        )
        rows.append(
            {
                "stage": stage,
                "units": len(units),
                "built": len(todo),
                "waiting": sum(not u.outputs for u in units),
                "seconds": time.perf_counter() - t0,
            }
        )
    return pd.DataFrame(rows)


def _by_label(units: Sequence[Unit], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by = {r["unit"]: r for r in rows}
    return [by[u.label] for u in units]


def grid_summary(result: pd.DataFrame) -> pd.DataFrame:
    """:func:`run_grid` per stage: how many units were cached, done, failed, blocked."""
    t = pd.crosstab(result["stage"], result["status"]).reindex(
        index=[s for s in STAGES if s in set(result["stage"])], columns=list(STATUSES), fill_value=0
    )
    return t.reset_index()
