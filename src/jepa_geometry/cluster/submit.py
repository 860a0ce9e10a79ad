"""Submission: submitit's executors for each kind of unit, the job folders, and SLURM's queue.

A unit is submitted through a submitit executor (:func:`make_executor`): SLURM's, or its local
executor on one machine, with the profile's resources for the unit's kind (GPUs, CPUs, memory,
time limit). submitit keeps each job's pickles and logs in a folder of its own under the grid's
folder; :func:`tidy_job_folders` removes what ended runs left there and nothing else. On SLURM
the run loop asks ``squeue`` which jobs have left the queue (:class:`SlurmQueue`, not submitit's
``sacct`` calls, which fail on a cluster without accounting) and ``scontrol`` how a job that
left without a result ended (:func:`slurm_state`).

A reader's objective file (an arm such as ``lewm+mine.py``) is read by every job of its arm,
on whichever node runs it: a file under ``/tmp`` or a home folder the nodes do not mount
would fail each job there. The grid copies it into its own folder, which its jobs already
read (submitit's pickles are there), under the file's sha256 (:func:`share_objectives`), and
its jobs read the copy. The models' keys hold the file's name and sha256, not its path, so
the copy's keys are the file's.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import submitit

from jepa_geometry.cluster.estimate import ClusterError
from jepa_geometry.profiles import Profile
from jepa_geometry.study.spec import StudySpec
from jepa_geometry.wm.arms import HALF_Q_SUFFIX, arm_name, objective_file, parse_arm, q_variant
from jepa_geometry.wm.user_objective import ObjectiveFileError, file_sha256, resolve

EXECUTORS: tuple[str, ...] = ("local", "slurm")
SQUEUE_S = 5.0  # how often, at most, it asks SLURM which of its jobs are still queued
JOB_FOLDER = "%j"  # submitit's job folders: <folder>/<job id>/, named when a job is submitted
_TEMP_PICKLE = re.compile(r"[0-9a-f]{32}\.pkl")  # a submission's pickle before it has a job id
OBJECTIVES = "objectives"
"""The folder of the grid's folder holding the copies of reader's objective files that its
jobs read: ``objectives/<sha256>/<file name>``."""


def shared_objective(file: str, folder: Path) -> Path:
    """Where the grid with folder ``folder`` keeps its jobs' copy of the objective file
    ``file``: under its sha256, so two versions of a file never share a copy, and with its own
    name, which names its models."""
    return folder.resolve() / OBJECTIVES / file_sha256(file) / Path(file).name


def _with_file(arm: str, path: Path) -> str:
    """``arm`` with its objective file read from ``path`` instead."""
    comps = [str(path) if c == objective_file(arm) else c for c in parse_arm(arm)]
    return arm_name("+".join(comps) + (HALF_Q_SUFFIX if q_variant(arm) == "half" else ""))


def share_objectives(
    specs: Sequence[StudySpec], folder: Path, copy: bool
) -> tuple[list[StudySpec], list[str]]:
    """``specs`` with every reader's arm reading its objective file from the grid's folder
    (:func:`shared_objective`), and one line per file saying so. With ``copy`` the file is
    copied there (atomically; a copy already there, the same bytes by its sha256, is kept);
    without (the dry run) nothing is written and the lines say what a run copies. A file that
    cannot be read, or changes while it is copied, stops here in one line, before any job."""
    moved: dict[str, str] = {}
    lines = []
    for arm in dict.fromkeys(a for spec in specs for a in spec.arms):
        file = objective_file(arm)
        if file is None:
            continue
        target = shared_objective(file, folder)
        moved[arm] = _with_file(arm, target)
        if not copy:
            lines.append(f"objective file {file}: a run copies it to {target} for its jobs")
            continue
        if target.is_file() and file_sha256(target) == target.parent.name:
            lines.append(f"objective file {file}: its jobs read its copy {target} (already there)")
            continue
        data = resolve(file).read_bytes()
        if hashlib.sha256(data).hexdigest() != target.parent.name:
            raise ObjectiveFileError(
                f"objective file {file} changed while the grid copied it; run the command again"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_bytes(data)
        os.replace(partial, target)
        lines.append(f"objective file {file}: copied to {target}, which its jobs read")
    return [spec.with_arms([moved.get(a, a) for a in spec.arms]) for spec in specs], lines


def _submitit_files(job_id: str) -> re.Pattern[str]:
    """The files submitit writes in job ``job_id``'s folder (its pickles, logs, script)."""
    j = re.escape(job_id)
    return re.compile(rf"{j}_(submitted\.pkl|submission\.sh|\d+_(log\.out|log\.err|result\.pkl))")


def drop_unnamed_job_folder(folder: Path) -> bool:
    """Remove submitit's unnamed job folder (``%j``, made with the executor) when it is empty
    (and a real folder); whether it was removed."""
    unnamed = folder / JOB_FOLDER
    if unnamed.is_dir() and not unnamed.is_symlink() and not any(unnamed.iterdir()):
        unnamed.rmdir()
        return True
    return False


def tidy_job_folders(folder: Path) -> list[Path]:
    """Remove what earlier, ended runs of the grid left under ``folder``: submitit's empty
    unnamed job folder (``%j``), its submission pickles that never got a job, and every job
    folder that holds submitit's files of that job and nothing else. Anything else (a file or
    folder of the user's, a job folder with a foreign file in it) is kept. The caller holds
    the folder's grid lock, so no job of a running grid is here; returns what was removed."""
    removed = [folder / JOB_FOLDER] if drop_unnamed_job_folder(folder) else []
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        if entry.is_symlink():
            continue
        if entry.is_file() and _TEMP_PICKLE.fullmatch(entry.name):
            entry.unlink()
        elif entry.is_dir() and re.fullmatch(r"\d+(_\d+)?", entry.name):
            files = list(entry.iterdir())
            own = _submitit_files(entry.name)
            if not all(f.is_file() and not f.is_symlink() and own.fullmatch(f.name) for f in files):
                continue
            shutil.rmtree(entry)
        else:
            continue
        removed.append(entry)
    return removed


def make_executor(
    executor: str, folder: Path, kind: str, profile: Profile, partition: str | None = None
) -> submitit.AutoExecutor:
    """A submitit executor for units of ``kind`` with the profile's resources for it (SLURM:
    GPUs, CPUs, memory, time limit, partition; local: the time limit and GPUs)."""
    if executor not in EXECUTORS:
        raise ClusterError(f"unknown executor {executor!r}; valid: {', '.join(EXECUTORS)}")
    r = getattr(profile.cluster, kind)
    ex = submitit.AutoExecutor(folder=folder / JOB_FOLDER, cluster=executor)
    params: dict[str, Any] = {
        "name": f"jepa-geometry-{kind}",
        "timeout_min": max(int(round(60 * r["hours"])), 1),
        "gpus_per_node": int(r["gpus"]),
    }
    if executor == "slurm":
        params.update(
            cpus_per_task=int(r["cpus"]), mem_gb=float(r["mem_gb"]), slurm_partition=partition
        )
    ex.update_parameters(**params)
    return ex


def last_error(e: Exception) -> str:
    """The exception line of a failed job's traceback (submitit's message appends the trace,
    then where the logs are): ``ZeroDivisionError: division by zero``."""
    lines = [ln.strip() for ln in str(e).splitlines()]
    lines = lines[
        : next((i for i, ln in enumerate(lines) if ln.startswith("You can check")), len(lines))
    ]
    text = [ln for ln in lines if ln and not set(ln) <= {"-"}]
    return text[-1] if text else repr(e)


class SlurmQueue:
    """Which of the grid's SLURM jobs are still in the queue, asked of ``squeue`` (one call
    for all of them, at most every :data:`SQUEUE_S` seconds).

    submitit's own status calls go to ``sacct``, which fails on every poll of a cluster that
    keeps no accounting (no ``slurmdbd``) and then reports every job as running, and its
    ``done()`` is true as soon as a job has written its result, while the job is still in the
    queue. ``squeue`` answers with or without accounting, so a job counts as ended only once
    it has left the queue (requeued jobs stay in it), and the grid returns only when every
    one of its jobs has. A failing ``squeue`` (a controller restarting) is said once, and the
    jobs count as queued until it answers again.
    """

    def __init__(self) -> None:
        self.queued: set[str] = set()
        self.asked = float("-inf")
        self.failing = False

    def left(self, jobs: Sequence[Any]) -> list[Any]:
        """The jobs among ``jobs`` that are no longer in the queue."""
        if time.monotonic() - self.asked >= SQUEUE_S:
            self.asked = time.monotonic()
            cmd = ["squeue", "--noheader", "--me", "--format=%i"]
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            except (OSError, subprocess.CalledProcessError) as e:
                if not self.failing:
                    why = getattr(e, "stderr", "") or str(e)
                    print(
                        f"grid: squeue failed ({why.strip()}); the jobs count as queued "
                        "until it answers",
                        file=sys.stderr,
                    )
                self.failing = True
                return []
            self.failing = False
            self.queued = set(out.split())
        return [j for j in jobs if str(j.job_id) not in self.queued]


def slurm_state(job_id: str) -> str:
    """The state SLURM gives a job that has left the queue (``scontrol show job``, which
    keeps an ended job for ``MinJobAge``, 300 s by default), with its reason:
    ``CANCELLED (None)``; ``unknown`` once it is forgotten."""
    res = subprocess.run(
        ["scontrol", "show", "job", "--oneliner", str(job_id)], capture_output=True, text=True
    )
    fields = dict(re.findall(r"(\w+)=(\S+)", res.stdout))
    if res.returncode or "JobState" not in fields:
        return "unknown"
    return f"{fields['JobState']} ({fields.get('Reason', 'None')})"
