"""The task studies on a job engine: every unit of work submitted through submitit (SLURM on a
cluster, its local executor on one machine), resumable, with the artifact cache as the only
record of what is done.

A **unit** (:class:`Unit`) is one job: collect a task's dataset, train one (arm, seed) model,
plan the cells of one model (or the MPPI temperature sweep), or measure one model's geometry.
It names the artifacts it writes (``outputs``) and the ones it needs (``inputs``). The grid runs
five **stages** in order, each waiting for the previous one:

1. ``collect``: one dataset per task (and, where a study trains DINO-WM on the offline
   stand-in, the five datasets the stand-in learns from);
2. ``pretrain``: DINO-WM's stand-in encoder, once for every study that needs it (nothing when
   no study trains ``dinowm``, or when its encoder is DINOv2's file);
3. ``train``: every (task, arm, seed) model;
4. ``plan``: every model's cells that need no MPPI sweep (CEM, iCEM, MPPI at swm's shipped
   temperature), the ceiling's cells (one job each), each task's MPPI sweep (baseline, validation
   pairs), each task's gate (:func:`gate_units`) and every model's geometry;
5. ``chosen``: the units that stage 4's results choose: every model's MPPI cells at the
   temperature the sweep chose, and the scaling study's cells at a gated point whose gate
   passed.

Beside the task studies the grid runs **extensions** (:class:`Extension`, ``jepa-geometry grid
--with``): AnisoWM's κ sweep (:mod:`~jepa_geometry.study.kappa`) and the scaling study
(:mod:`~jepa_geometry.study.scaling`), whose units go into the same stages. Work that a task
study and an extension share (the κ sweep's κ = 2 models, the scaling study's 1x point) is one
unit (:func:`distinct`).

Dependencies are the order of the stages plus the cache, as the issue asks of an existing
engine rather than a scheduler of our own: a unit whose outputs are all cached is skipped (so
rerunning the grid submits only what is missing), a unit whose inputs are missing is reported
as *blocked* with the input it lacks, and a unit that raises is reported with its log and the
error while every unrelated unit still runs. Training and planning units are submitit
``Checkpointable``: a preempted or timed-out job is requeued by submitit and resumes from the
trainer's own checkpoint (or the cells already cached), so a killed model ends with the same
weights as an uninterrupted one (``tests/study/test_cluster.py``).

Resources per kind and the cost model come from the profile's ``cluster`` section
(:class:`~jepa_geometry.profiles.ClusterSettings`); :func:`dry_run` lists the units, their
estimated device-hours and which are cached, without submitting anything.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
import submitit
from filelock import FileLock, Timeout

from jepa_geometry.analysis.measurements import GeometrySettings, geometry_artifact, measure
from jepa_geometry.artifacts import Artifact, NotCached, cache_only
from jepa_geometry.envs import TASKS
from jepa_geometry.envs.dataset import dataset_artifact, load_dataset
from jepa_geometry.jobs import (
    check_workers,
    default_workers,
    job_threads,
    log_line,
    progress_bar,
)
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.protocol import SCALE_PROTOCOL, make_protocol
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import Profile
from jepa_geometry.study.build import cell_jobs
from jepa_geometry.study.grid import check_study_arms, mppi_sweep_jobs, select_mppi_temperature
from jepa_geometry.study.levers import LADDERS
from jepa_geometry.study.rules.gate import ALTERNATIVES, gate_cell
from jepa_geometry.study.spec import BASELINE, StudySpec
from jepa_geometry.wm.arms import DINOWM, objective_key
from jepa_geometry.wm.dino import DINOV2_VITS14_URL, DinoWeightsError
from jepa_geometry.wm.dinowm import encoder_identity, standin_settings
from jepa_geometry.wm.selfdistill import source_profile, standin_artifact, train_standin
from jepa_geometry.wm.training import (
    check_objective_digest,
    train_world_model,
    world_model_artifact,
)

STAGES: tuple[str, ...] = ("collect", "pretrain", "train", "plan", "chosen")
EXECUTORS: tuple[str, ...] = ("local", "slurm")
STATUSES: tuple[str, ...] = ("cached", "done", "failed", "blocked")
POLL_S = 0.5  # how often the runner looks at its jobs
SQUEUE_S = 5.0  # how often, at most, it asks SLURM which of its jobs are still queued


class GridError(ValueError):
    """Bad input to the grid (an unknown executor, a bad count): one line, before any work."""


# --------------------------------------------------------------------------------------------
# What a job runs (module level, so submitit can pickle it)
# --------------------------------------------------------------------------------------------


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


def _pinned(arm: str) -> tuple[str, ...]:
    """The trailing argument of a job of ``arm``: its file's sha256, or nothing."""
    digest = objective_digest(arm)
    return () if digest is None else (digest,)


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
        art = train_world_model(task, arm, seed, profile, weights, progress=False)
        return float(art.manifest()["summary"]["train_wall_s"])


class PlanCells(submitit.helpers.Checkpointable):
    """Plan a list of cells; each cell is cached on its own, so a requeued job skips the cells
    already planned."""

    def __call__(self, cells: list[PlanningCell], objective_sha256: str | None = None) -> float:
        if cells and cells[0].arm != CEILING:  # the cells of one model
            check_digest(cells[0].arm, objective_sha256)
        t0 = time.perf_counter()
        with job_threads():
            for cell in cells:
                cell.evaluate(progress=False)
        return time.perf_counter() - t0


def run_measure(
    task: str, arm: str, seed: int, profile: Profile, objective_sha256: str | None = None
) -> None:
    """Measure one model's geometry (chapter 7's probes, rank channels and landscape)."""
    check_digest(arm, objective_sha256)
    with job_threads():
        measure(task, arm, seed, profile, GeometrySettings.of(profile))


# --------------------------------------------------------------------------------------------
# Units and stages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """One job of the grid: ``call(*args)`` writes ``outputs`` and needs ``inputs``."""

    stage: str
    kind: str  # one of profiles.CLUSTER_UNITS: the profile's resources for it
    task: str
    label: str
    call: Callable[..., Any]
    args: tuple
    outputs: tuple[Artifact, ...]
    inputs: tuple[Artifact, ...]
    hours: float  # estimated device-hours (profile.cluster)
    pending: str = ""  # a unit known only later (no outputs yet): what it waits for

    @property
    def cached(self) -> bool:
        return all(a.exists() for a in self.outputs)

    def missing_inputs(self) -> list[Artifact]:
        return [a for a in self.inputs if not a.exists()]


def collect_hours(task: str, profile: Profile) -> float:
    """Estimated hours to collect ``task``'s dataset: at most ``max_episode_steps`` frames per
    episode at the profile's ``collect_frames_per_s[task]`` (a collect job's rate)."""
    rates = profile.cluster.collect_frames_per_s
    if task not in rates:
        raise GridError(
            f"profile {profile.name!r}: cluster.collect_frames_per_s has no entry for {task!r}; "
            f"it has: {', '.join(rates) or 'none'}"
        )
    train, held = profile.data.task_episodes.get(
        task, (profile.data.episodes, profile.data.heldout_episodes)
    )
    frames = (train + held) * profile.data.max_episode_steps
    return frames / rates[task] / 3600


def train_hours(profile: Profile) -> float:
    """Estimated hours to train one model: steps at the profile's ``train_steps_per_s``."""
    return profile.train.steps / profile.cluster.train_steps_per_s / 3600


def cell_hours(cell: PlanningCell) -> float:
    """Estimated hours of one planning cell: pairs x plans per pair x seconds per plan, the
    profile's ``plan_seconds`` (at tier T1) scaled by the tier's rollouts (samples x
    iterations) relative to T1; for the ceiling, its rollouts x the simulator's seconds per
    rollout (``ceiling_rollout_ms``), on its subset of pairs."""
    p = cell.profile
    samples, iterations = budget_tiers(p)["T1"]
    if cell.arm == CEILING:
        per_plan = cell.rollouts() * p.cluster.ceiling_rollout_ms[cell.task] / 1e3
    else:
        per_plan = p.cluster.plan_seconds * cell.rollouts() / (samples * iterations)
    pairs = cell.pairs or cell.episodes or p.eval.episodes
    return pairs * make_protocol(p, cell.protocol).plans * per_plan / 3600


def _cell_outputs(cells: list[PlanningCell]) -> tuple[Artifact, ...]:
    out: dict[str, Artifact] = {}
    for c in cells:
        for art in c.artifacts():
            out[f"{art.name}/{art.key}"] = art
    return tuple(out.values())


def train_unit(
    task: str,
    arm: str,
    seed: int,
    profile: Profile,
    weights: dict | None = None,
    note: str = "",
) -> Unit:
    """One job training the model (``task``, ``arm``, ``seed``, ``profile``, ``weights``);
    ``note`` ends its label."""
    needs = [dataset_artifact(task, profile)]
    if arm == DINOWM and profile.dinowm.encoder == "standin":
        needs.append(standin_artifact(profile, standin_settings(profile)))
    return Unit(
        "train",
        "train",
        task,
        f"train {model_label(task, arm, seed, weights)}{note}",
        TrainModel(),
        (task, arm, seed, profile, weights, *_pinned(arm)),
        (world_model_artifact(task, arm, seed, profile, weights),),
        tuple(needs),
        train_hours(profile),
    )


def model_label(task: str, arm: str, seed: int, weights: dict | None = None) -> str:
    """``<task> <arm> seed <seed>``, and a weight override where there is one (``kappa=4``)."""
    extra = "".join(f" {k}={v:g}" for k, v in sorted((weights or {}).items()))
    return f"{task} {arm} seed {seed}{extra}"


def measure_unit(task: str, arm: str, seed: int, profile: Profile, note: str = "") -> Unit:
    """One job measuring one model's geometry (chapter 7's probes, channels, landscape);
    ``note`` ends its label."""
    return Unit(
        "plan",
        "measure",
        task,
        f"measure {model_label(task, arm, seed)}{note}",
        run_measure,
        (task, arm, seed, profile, *_pinned(arm)),
        (geometry_artifact(task, arm, seed, profile, GeometrySettings.of(profile)),),
        (world_model_artifact(task, arm, seed, profile), dataset_artifact(task, profile)),
        profile.cluster.measure_hours,
    )


def waiting_unit(
    stage: str,
    task: str,
    label: str,
    hours: float,
    pending: str,
    inputs: tuple[Artifact, ...] = (),
) -> Unit:
    """A planning unit whose cells are known only once ``pending`` is cached (the MPPI sweep,
    a gate): it stands in the dry run with its estimated ``hours`` and is reported as blocked
    until then."""
    return Unit(stage, "plan", task, label, PlanCells(), ([],), (), inputs, hours, pending)


def _plan_unit(stage: str, label: str, cells: list[PlanningCell]) -> Unit:
    """One job planning ``cells`` of one model (or of the ceiling, which needs no model)."""
    c = cells[0]
    data = dataset_artifact(c.task, c.profile)
    if c.arm == CEILING:
        inputs: tuple[Artifact, ...] = (data,)
    else:
        model = world_model_artifact(c.task, c.arm, c.train_seed, c.profile, c.weights)
        inputs = (model, data)
    return Unit(
        stage,
        "plan",
        c.task,
        label,
        PlanCells(),
        (cells, *(() if c.arm == CEILING else _pinned(c.arm))),
        _cell_outputs(cells),
        inputs,
        sum(cell_hours(x) for x in cells),
    )


def plan_units(stage: str, task: str, cells: list[PlanningCell], suffix: str = "") -> list[Unit]:
    """The jobs planning ``cells``: one per model, and one per ceiling cell (the simulator's
    cells are the slowest, so each is a job of its own); ``suffix`` ends their labels."""
    units = []
    for group in _per_model(cells).values():
        c = group[0]
        if c.arm == CEILING:
            units += [
                _plan_unit(
                    stage, f"plan {task} {CEILING} {c.protocol} {c.solver} {c.budget}{suffix}", [c]
                )
                for c in group
            ]
        else:
            label = model_label(task, c.arm, c.train_seed, c.weights)
            units.append(_plan_unit(stage, f"plan {label}{suffix}", group))
    return units


def pretrain_hours(profile: Profile) -> float:
    """Estimated hours to pretrain the stand-in: its steps at ``pretrain_steps_per_s``."""
    return profile.dinowm.standin_steps / profile.cluster.pretrain_steps_per_s / 3600


def _standin(spec: StudySpec, profile: Profile) -> Artifact | None:
    """The stand-in encoder ``spec``'s DINO-WM needs at ``profile``, if any."""
    if DINOWM not in check_study_arms(spec.arms) or profile.dinowm.encoder != "standin":
        return None
    return standin_artifact(profile, standin_settings(profile))


def _models(spec: StudySpec, profile: Profile) -> list[tuple[str, int]]:
    return [(arm, s) for s in profile.seeds.train for arm in check_study_arms(spec.arms)]


def _per_model(cells: list[PlanningCell]) -> dict[tuple[str, int, str], list[PlanningCell]]:
    """``cells`` grouped by the model that plans them, in order of first appearance: (arm,
    training seed, the model's key); the ceiling's cells, which need no model, in one group."""
    groups: dict[tuple[str, int, str], list[PlanningCell]] = {}
    for c in cells:
        key = (
            ""
            if c.arm == CEILING
            else world_model_artifact(c.task, c.arm, c.train_seed, c.profile, c.weights).key
        )
        groups.setdefault((c.arm, c.train_seed if key else 0, key), []).append(c)
    return groups


def collect_unit(task: str, profile: Profile, note: str = "") -> Unit:
    """One job collecting ``task``'s dataset at ``profile`` (``note`` ends its label)."""
    return Unit(
        "collect",
        "collect",
        task,
        f"collect {task}{note}",
        run_collect,
        (task, profile),
        (dataset_artifact(task, profile),),
        (),
        collect_hours(task, profile),
    )


@dataclass(frozen=True)
class Extension:
    """A study the grid runs beside the task studies: ``units(stage, base)`` are its units of
    each stage, and ``state(base)`` states its cost (and keeps the statement, as its own build
    command does) before the first stage submits anything, returning the statement."""

    name: str
    units: Callable[[str, Profile], list[Unit]]
    state: Callable[[Profile], str]


def _names(arts: Sequence[Artifact]) -> set[str]:
    return {f"{a.kind}/{a.name}/{a.key}" for a in arts}


def distinct(units: Sequence[Unit]) -> list[Unit]:
    """``units`` without work an earlier unit already does: a unit whose outputs an earlier
    one all writes is dropped, and a planning unit loses the cells an earlier unit plans (the
    κ sweep and the scaling study share models and cells with the task studies). Units known
    only later (no outputs) are kept."""
    seen: set[str] = set()
    out = []
    for u in units:
        cells = u.args[0] if isinstance(u.call, PlanCells) else []
        if cells:
            left = [c for c in cells if not _names(c.artifacts()) <= seen]
            if not left:
                continue
            if len(left) < len(cells):
                u = replace(
                    u,
                    args=(left, *u.args[1:]),
                    outputs=_cell_outputs(left),
                    hours=sum(cell_hours(c) for c in left),
                )
        names = _names(u.outputs)
        if names and names <= seen:
            continue
        seen |= names
        out.append(u)
    return out


def stage_units(
    stage: str,
    specs: Sequence[StudySpec],
    base: Profile,
    extensions: Sequence[Extension] = (),
) -> list[Unit]:
    """The units of one stage for the studies ``specs`` at ``base`` (each study at its own
    rung, ``spec.profile(base)``) and the ``extensions``, the work they share done once
    (:func:`distinct`). The ``chosen`` stage reads each task's temperature from the cached
    sweep; a task whose sweep is not cached yields one blocked placeholder per model."""
    if stage not in STAGES:
        raise GridError(f"unknown stage {stage!r}; valid: {', '.join(STAGES)}")
    units = _study_units(stage, specs, base)
    for ext in extensions:
        units += ext.units(stage, base)
    units = distinct(units)
    labels = [u.label for u in units]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise GridError(f"two units of stage {stage} are both labelled {twice}")
    return units


def gate_units(stage: str, task: str, base: Profile) -> list[Unit]:
    """The units of the gate a task's pages run before its study
    (:func:`~jepa_geometry.study.rules.gate.study_choice`, at the profile before the study's
    settings): on a task with a ladder, every rung's dataset, LeWM's first seed and its gate
    cell on the validation pairs; on the others, the protocol gate's cells (SCALE's protocol on
    the evaluation pairs, each alternative on the validation pairs). The climb stops at the
    first rung or protocol that passes, known only once they are planned: the grid plans them
    all, so a page rendering from its cache finds every gate it may read."""
    if task not in LADDERS:
        if stage != "plan":
            return []
        cells = [gate_cell(task, base, SCALE_PROTOCOL, "evaluation")]
        cells += [gate_cell(task, base, alt, "validation") for alt in ALTERNATIVES]
        return plan_units(stage, task, cells, " (gate)")
    out = []
    for lever in LADDERS[task]:
        cfg, note = lever.apply(task, base), f" (rung {lever.name})"
        if stage == "collect":
            out.append(collect_unit(task, cfg, note))
        elif stage == "train":
            out.append(train_unit(task, BASELINE, cfg.seeds.train[0], cfg, note=note))
        elif stage == "plan":
            cell = gate_cell(task, cfg, lever.protocol, "validation")
            out += plan_units(stage, task, [cell], f" (gate, rung {lever.name})")
    return out


def _study_units(stage: str, specs: Sequence[StudySpec], base: Profile) -> list[Unit]:
    """The task studies' units of ``stage``; a dataset or stand-in two studies share comes
    once per study here, and once in all after :func:`distinct`."""
    units: list[Unit] = []
    for spec in specs:
        p = spec.profile(base)
        task = spec.task
        standin = _standin(spec, p)
        if stage == "collect":
            units.append(collect_unit(task, p))
            if standin is not None:
                src = source_profile(p)
                note = f" for the stand-in ({src.data.image_size} px)"
                units += [collect_unit(t, src, note) for t in TASKS]
        elif stage == "pretrain":
            if standin is not None:
                inputs = tuple(dataset_artifact(t, source_profile(p)) for t in TASKS)
                units.append(
                    Unit(
                        stage,
                        "train",
                        task,
                        f"pretrain the DINO-WM stand-in ({p.name}, key {standin.key})",
                        run_pretrain,
                        (p,),
                        (standin,),
                        inputs,
                        pretrain_hours(p),
                    )
                )
        elif stage == "train":
            units += [train_unit(task, arm, s, p) for arm, s in _models(spec, p)]
        if stage in ("collect", "train", "plan"):
            units += gate_units(stage, task, base)
        if stage == "plan":
            if spec.plans:
                sweep = mppi_sweep_jobs(task, p, protocol=spec.main_protocol)
                units.append(_plan_unit(stage, f"MPPI sweep {task}", sweep))
            units += plan_units(stage, task, cell_jobs(spec, p, None))
            units += [measure_unit(task, arm, s, p) for arm, s in _models(spec, p)]
        elif stage == "chosen" and spec.plans:
            units += _mppi_units(spec, p)
    return units


def _mppi_units(spec: StudySpec, p: Profile) -> list[Unit]:
    task = spec.task
    try:
        with cache_only():
            temperature, _ = select_mppi_temperature(
                task, p, protocol=spec.main_protocol, progress=False
            )
    except NotCached:
        sweep = _plan_unit(
            "chosen", f"MPPI sweep {task}", mppi_sweep_jobs(task, p, protocol=spec.main_protocol)
        )
        # the MPPI cells' models and costs do not depend on the temperature: T = 1 stands in
        return [
            waiting_unit(
                "chosen",
                task,
                f"plan {task} {arm} seed {s} MPPI",
                sum(cell_hours(c) for c in cells),
                "the MPPI sweep",
                sweep.outputs,
            )
            for (arm, s, _), cells in _per_model(cell_jobs(spec, p, 1.0)).items()
        ]
    return plan_units("chosen", task, cell_jobs(spec, p, temperature), " MPPI")


# --------------------------------------------------------------------------------------------
# Dry run
# --------------------------------------------------------------------------------------------


def missing_dinov2(specs: Sequence[StudySpec], base: Profile) -> list[str]:
    """The tasks whose study trains ``dinowm`` on DINOv2 while ``dinowm.dinov2_weights`` is
    not a file (no key can name a checkpoint of an encoder that is not there)."""
    out = []
    for spec in specs:
        p = spec.profile(base)
        if DINOWM in check_study_arms(spec.arms) and p.dinowm.encoder == "dinov2":
            try:
                encoder_identity(p)
            except DinoWeightsError:
                out.append(spec.task)
    return out


def check_dinov2(specs: Sequence[StudySpec], base: Profile) -> None:
    """Stop before any work, in one line, when a study needs the DINOv2 file and it is
    missing."""
    tasks = missing_dinov2(specs, base)
    if tasks:
        raise GridError(
            f"the studies of {', '.join(tasks)} train dinowm on DINOv2, but "
            f"dinowm.dinov2_weights ({base.dinowm.dinov2_weights!r}) is not a file; "
            f"download {DINOV2_VITS14_URL} and --set dinowm.dinov2_weights=PATH, "
            "or drop dinowm from those studies"
        )


def check_specs(specs: Sequence[StudySpec]) -> None:
    """Stop before any work, in one line, when there is no study or a task's study comes twice
    (its every unit would be submitted twice, the copies racing for the same artifacts)."""
    if not specs:
        raise GridError("no study to run: give at least one task")
    tasks = [s.task for s in specs]
    twice = sorted({t for t in tasks if tasks.count(t) > 1})
    if twice:
        raise GridError(
            f"the study of {', '.join(twice)} is given more than once ({', '.join(tasks)}); "
            "give each task once"
        )


def dry_run(
    specs: Sequence[StudySpec], base: Profile, extensions: Sequence[Extension] = ()
) -> pd.DataFrame:
    """Every unit of the grid (the ``extensions`` too), nothing submitted or stated: stage,
    kind, task, label, estimated device-hours, whether it is cached, and the resources its
    kind asks for. The ``chosen`` units that wait for a sweep or a gate not yet cached are
    estimates (their cells are fixed by it).

    A study that trains ``dinowm`` on DINOv2 without the weights file is listed without that
    arm (its checkpoints have no key yet); ``attrs["left_out"]`` names those tasks, so the
    caller can say so."""
    check_specs(specs)
    left_out = missing_dinov2(specs, base)
    specs = [
        replace(s, arms=tuple(a for a in s.arms if a != DINOWM)) if s.task in left_out else s
        for s in specs
    ]
    rows = []
    for stage in STAGES:
        for u in stage_units(stage, specs, base, extensions):
            r = getattr(base.cluster, u.kind)
            rows.append(
                {
                    "stage": stage,
                    "kind": u.kind,
                    "task": u.task,
                    "unit": u.label,
                    "hours": u.hours,
                    "cached": bool(u.outputs) and u.cached,
                    "gpus": r["gpus"],
                    "cpus": r["cpus"],
                    "mem_gb": r["mem_gb"],
                    "time_limit_h": r["hours"],
                }
            )
    out = pd.DataFrame(rows)
    out.attrs["left_out"] = left_out
    return out


def dry_run_summary(units: pd.DataFrame) -> pd.DataFrame:
    """:func:`dry_run` per stage and kind: units, cached, the device the kind asks for (GPU
    when its ``gpus`` > 0), the estimated hours of the units still to run and of all, and one
    total row per device."""
    t = units.assign(
        device=["GPU" if g > 0 else "CPU" for g in units["gpus"]],
        todo=units["hours"].where(~units["cached"], 0.0),
    )
    g = t.groupby(["stage", "kind", "device"], sort=False)
    out = pd.DataFrame(
        {
            "units": g.size(),
            "cached": g["cached"].sum().astype(int),
            "to run (h)": g["todo"].sum(),
            "all (h)": g["hours"].sum(),
        }
    )
    out = out.reset_index()
    totals = out.groupby("device", sort=False)[["units", "cached", "to run (h)", "all (h)"]].sum()
    totals = totals.reset_index().assign(stage="total", kind="")
    return pd.concat([out, totals[out.columns]], ignore_index=True)


# --------------------------------------------------------------------------------------------
# Running the grid
# --------------------------------------------------------------------------------------------

JOB_FOLDER = "%j"  # submitit's job folders: <folder>/<job id>/, named when a job is submitted
GRID_LOCK = ".grid.lock"
_TEMP_PICKLE = re.compile(r"[0-9a-f]{32}\.pkl")  # a submission's pickle before it has a job id


def _submitit_files(job_id: str) -> re.Pattern[str]:
    """The files submitit writes in job ``job_id``'s folder (its pickles, logs, script)."""
    j = re.escape(job_id)
    return re.compile(rf"{j}_(submitted\.pkl|submission\.sh|\d+_(log\.out|log\.err|result\.pkl))")


def _drop_unnamed_job_folder(folder: Path) -> bool:
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
    removed = [folder / JOB_FOLDER] if _drop_unnamed_job_folder(folder) else []
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
        raise GridError(f"unknown executor {executor!r}; valid: {', '.join(EXECUTORS)}")
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


@dataclass
class _Running:
    unit: Unit
    job: Any
    started: float


def _log_of(job: Any) -> str:
    return str(job.paths.stderr)


def _last_error(e: Exception) -> str:
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


def _outcome(r: _Running, executor: str) -> tuple[str, str]:
    """A finished job's status (done or failed) and error: the exception of a unit that raised,
    or, for a SLURM job that left the queue without a result (cancelled, out of time or
    memory, its node lost), its state there."""
    if executor == "slurm" and not r.job.paths.result_pickle.exists():
        return "failed", f"the job left the queue without a result: {slurm_state(r.job.job_id)}"
    try:
        r.job.result()
    except Exception as e:  # noqa: BLE001 -- reported, the other units go on
        return "failed", _last_error(e)
    return "done", ""


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
    :class:`SlurmQueue`). One row per unit: status (cached, done,
    failed, blocked), seconds, the job's log and the error (failed) or missing input
    (blocked). ``blocked_by`` maps an artifact key to the failed unit that should have built it,
    for the message. ``say`` (a log where no bar is drawn) gets one line per ended unit, e.g.
    ``grid train: 3 of 18 done, train tworoom lewm s1 (4 min 31 s)``, and one for the stage."""
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
    executors: dict[str, submitit.AutoExecutor] = {}
    running: list[_Running] = []
    bar = progress_bar(
        total=len(todo),
        desc=f"grid {todo[0].stage}" if todo else "grid",
        progress=progress and bool(todo),
    )
    queue = list(todo)
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
) -> pd.DataFrame:
    """Run the studies ``specs`` and the ``extensions`` at ``base`` through submitit, stage
    after stage; one row per unit (:func:`run_stage`). Each extension states its cost first
    (``say``); ``log`` gets a line per ended unit and stage (:func:`run_stage`'s ``say``).
    ``max_parallel`` jobs at once (default: one per core with the local executor,
    unlimited on SLURM, whose queue does the limiting)."""
    if executor not in EXECUTORS:
        raise GridError(f"unknown executor {executor!r}; valid: {', '.join(EXECUTORS)}")
    check_specs(specs)
    check_dinov2(specs, base)
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
        raise GridError(
            f"another grid is running with the folder {folder} (it holds "
            f"{folder / GRID_LOCK}); wait for it or give another --folder"
        ) from None
    try:
        tidy_job_folders(folder)  # a killed run's leftovers
        for ext in extensions:
            say(ext.state(base))
        for stage in STAGES:
            units = stage_units(stage, specs, base, extensions)
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
        _drop_unnamed_job_folder(folder)
        lock.release()
    return pd.DataFrame(
        rows, columns=["stage", "kind", "task", "unit", "status", "seconds", "log", "error"]
    )


def _by_label(units: Sequence[Unit], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by = {r["unit"]: r for r in rows}
    return [by[u.label] for u in units]


def grid_summary(result: pd.DataFrame) -> pd.DataFrame:
    """:func:`run_grid` per stage: how many units were cached, done, failed, blocked."""
    t = pd.crosstab(result["stage"], result["status"]).reindex(
        index=[s for s in STAGES if s in set(result["stage"])], columns=list(STATUSES), fill_value=0
    )
    return t.reset_index()
