"""The task studies on a job engine (``jepa-geometry grid``): every unit of work submitted
through submitit (SLURM on a cluster, its local executor on one machine), resumable, with the
artifact cache as the only record of what is done.

* :mod:`.estimate`: the cost model, a unit's estimated device-hours from the profile's
  ``cluster`` rates, and :class:`ClusterError`, the grid's one-line error before any work;
* :mod:`.units`: a unit of work (:class:`Unit`: its call, outputs, inputs, hours), the five
  stages (:data:`STAGES`), the units of each stage for the task studies, their gates and the
  extensions (:class:`Extension`), the work they share done once, and the checks on a list of
  studies;
* :mod:`.dry_run`: every unit, its hours and whether it is cached, nothing submitted
  (``grid --dry-run``);
* :mod:`.submit`: submitit's executor per kind of unit, the job folders and their tidying,
  SLURM's queue and a left job's state, and the copies of reader's objective files the jobs
  read from the grid's folder;
* :mod:`.run`: the run loop, stage after stage, each unit's status (cached, done, failed,
  blocked) and the summary; and an extension's units built on this machine in a process
  pool (:func:`build_here`), the route of its own command.

What a job runs (its call, pickled by submitit) is in :mod:`jepa_geometry.study.job_calls`,
beside the process-pool jobs of the study's own builds. Training and planning jobs are
``Checkpointable``: a preempted or timed-out job is requeued by submitit and resumes from the
trainer's own checkpoint (or the cells already cached), so a killed model ends with the same
weights as an uninterrupted one (``tests/cluster/test_submit.py``).

The names below are the package's entry points, for ``from jepa_geometry import cluster``.
"""

from jepa_geometry.cluster.dry_run import (
    core_hours,
    cost_line,
    decisions_statement,
    dry_run,
    dry_run_summary,
    headline_statement,
    needed_whole,
    span,
    unit_table,
    wall_hours,
)
from jepa_geometry.cluster.estimate import (
    ClusterError,
    cell_hours,
    collect_hours,
    pretrain_hours,
    train_hours,
)
from jepa_geometry.cluster.run import (
    GRID_LOCK,
    STATUSES,
    build_here,
    grid_summary,
    run_grid,
    run_stage,
)
from jepa_geometry.cluster.submit import (
    EXECUTORS,
    JOB_FOLDER,
    OBJECTIVES,
    make_executor,
    share_objectives,
    tidy_job_folders,
)
from jepa_geometry.cluster.units import (
    STAGES,
    Extension,
    Unit,
    check_dinov2,
    check_specs,
    check_without_decisions,
    collect_unit,
    distinct,
    gate_units,
    measure_unit,
    missing_dinov2,
    model_label,
    plan_units,
    stage_units,
    train_unit,
    waiting_unit,
)

__all__ = [
    "EXECUTORS",
    "GRID_LOCK",
    "JOB_FOLDER",
    "OBJECTIVES",
    "STAGES",
    "STATUSES",
    "ClusterError",
    "Extension",
    "Unit",
    "build_here",
    "cell_hours",
    "check_dinov2",
    "check_specs",
    "check_without_decisions",
    "collect_hours",
    "collect_unit",
    "core_hours",
    "cost_line",
    "decisions_statement",
    "distinct",
    "dry_run",
    "dry_run_summary",
    "gate_units",
    "grid_summary",
    "headline_statement",
    "make_executor",
    "measure_unit",
    "missing_dinov2",
    "model_label",
    "needed_whole",
    "plan_units",
    "pretrain_hours",
    "run_grid",
    "run_stage",
    "share_objectives",
    "span",
    "stage_units",
    "tidy_job_folders",
    "train_hours",
    "train_unit",
    "unit_table",
    "waiting_unit",
    "wall_hours",
]
