"""Units and stages: the grid's work, one job per unit, in five stages.

A **unit** (:class:`Unit`) is one job: collect a task's dataset, train one (arm, seed) model,
plan the cells of one model (or the MPPI temperature sweep), or measure one model's geometry.
It names the artifacts it writes (``outputs``) and the ones it needs (``inputs``), its call
(:mod:`jepa_geometry.study.job_calls`) and its estimated hours (:mod:`.estimate`). The grid
runs five **stages** in order (:data:`STAGES`), each waiting for the previous one:

1. ``collect``: one dataset per task (and, where a study trains DINO-WM on the offline
   stand-in, the five datasets the stand-in learns from);
2. ``pretrain``: DINO-WM's stand-in encoder, once for every study that needs it (nothing when
   no study trains ``dinowm``, or when its encoder is DINOv2's file);
3. ``train``: every (task, arm, seed) model (a study's headline seeds included:
   :meth:`~jepa_geometry.study.spec.StudySpec.models`);
4. ``plan``: every model's cells that need no MPPI sweep (CEM, iCEM, MPPI at swm's shipped
   temperature), the ceiling's cells (one job each), each task's MPPI sweep (baseline, validation
   pairs), each task's gate (:func:`gate_units`) and every model's geometry;
5. ``chosen``: the units that stage 4's results choose: every model's MPPI cells at the
   temperature the sweep chose, and the scaling study's cells at a gated point whose gate
   passed.

The book's one-off decisions, taken on one task and read by every task's geometry page, are
units too (:func:`decision_units`): their models train in stage 3, and the ΛReg variant they
choose trains in stage 4 and plans in stage 5, so a page renders them from the grid's cache.

Beside the task studies the grid runs **extensions** (:class:`Extension`, ``jepa-geometry grid
--with``): AnisoWM's κ sweep and the scaling study, whose units go into the same stages. Work
that a task study and an extension share (the κ sweep's κ = 2 models, the scaling study's 1x
point) is one unit (:func:`distinct`). The checks that stop a grid in one line before any work
(:func:`check_specs`, :func:`check_dinov2`) are here too: they are about which units a list
of studies can have.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jepa_geometry.analysis.measurements import GeometrySettings, geometry_artifact
from jepa_geometry.artifacts import Artifact, NotCached, cache_only
from jepa_geometry.cluster.estimate import (
    ClusterError,
    cell_hours,
    collect_hours,
    pretrain_hours,
    train_hours,
)
from jepa_geometry.envs import TASKS
from jepa_geometry.envs.dataset import dataset_artifact
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.profiles import Profile
from jepa_geometry.study.build import STAGES, cell_jobs
from jepa_geometry.study.cells import check_study_arms, mppi_sweep_jobs, select_mppi_temperature
from jepa_geometry.study.decisions import lambdareg, sigreg
from jepa_geometry.study.decisions.gate import ALTERNATIVES, gate_cell
from jepa_geometry.study.job_calls import (
    PlanCells,
    TrainModel,
    objective_digest,
    run_collect,
    run_measure,
    run_pretrain,
)
from jepa_geometry.study.spec import (
    BASELINE,
    DECISION_TASK,
    StudySpec,
    available_studies,
    load_study,
    task_ladder,
)
from jepa_geometry.wm.arms import DINOWM
from jepa_geometry.wm.dino import DINOV2_VITS14_URL, DinoWeightsError
from jepa_geometry.wm.dinowm import encoder_identity, standin_settings
from jepa_geometry.wm.selfdistill import source_profile, standin_artifact
from jepa_geometry.wm.training import world_model_artifact


def _pinned(arm: str) -> tuple[str, ...]:
    """The trailing argument of a job of ``arm``: its file's sha256, or nothing."""
    digest = objective_digest(arm)
    return () if digest is None else (digest,)


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
    optional: bool = False
    """Read only through another unit to run (the stand-in's pretraining and its datasets, a
    gate's cells past where its climb stopped): the grid builds it always, so a page finds every
    gate it may read, but a page or a study builds it only when a unit it runs needs it
    (:func:`~jepa_geometry.cluster.dry_run.dry_run`'s ``reads_only``)."""

    @property
    def cached(self) -> bool:
        """Every output in the cache with every file its manifest lists but the heavy ones (a
        result whose payload was deleted is not cached: a reader of it would build it)."""
        return all(a.exists() and not a.light_missing() for a in self.outputs)

    def missing_inputs(self) -> list[Artifact]:
        return [a for a in self.inputs if not a.exists()]


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
    """``<task> <arm> seed <seed>``, and a weight override where there is one (``kappa=4``,
    ``bound=tanh``)."""
    extra = "".join(
        f" {k}={v:g}" if isinstance(v, float | int) else f" {k}={v}"
        for k, v in sorted((weights or {}).items())
    )
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
    kind: str = "plan",
) -> Unit:
    """A unit whose work is known only once ``pending`` is cached (the MPPI sweep, a gate, the
    ΛReg variant's decision): it stands in the dry run with its estimated ``hours`` and is
    reported as blocked until then. ``kind``: ``plan`` (cells to come) or ``train`` (a model)."""
    call = TrainModel() if kind == "train" else PlanCells()
    return Unit(stage, kind, task, label, call, ([],), (), inputs, hours, pending)


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
                    stage, f"plan {task} {CEILING} {c.protocol} {c.solver} {c.tier}{suffix}", [c]
                )
                for c in group
            ]
        else:
            label = model_label(task, c.arm, c.train_seed, c.weights)
            units.append(_plan_unit(stage, f"plan {label}{suffix}", group))
    return units


def _standin(spec: StudySpec, profile: Profile) -> Artifact | None:
    """The stand-in encoder ``spec``'s DINO-WM needs at ``profile``, if any."""
    if DINOWM not in check_study_arms(spec.arms) or profile.dinowm.encoder != "standin":
        return None
    return standin_artifact(profile, standin_settings(profile))


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
    decisions: bool = True,
) -> list[Unit]:
    """The units of one stage for the studies ``specs`` at ``base`` (each study at its own
    rung, ``spec.profile(base)``) and the ``extensions``, the work they share done once
    (:func:`distinct`). The ``chosen`` stage reads each task's temperature from the cached
    sweep; a task whose sweep is not cached yields one blocked placeholder per model. With
    ``decisions`` False the book's decisions (:func:`decision_units`) are left out, for
    studies that do not need them (:func:`check_without_decisions`)."""
    if stage not in STAGES:
        raise ClusterError(f"unknown stage {stage!r}; valid: {', '.join(STAGES)}")
    if not decisions:
        check_without_decisions(specs)
    units = _study_units(stage, specs, base)
    units += decision_units(stage, specs, base) if decisions else []
    for ext in extensions:
        units += ext.units(stage, base)
    units = distinct(units)
    labels = [u.label for u in units]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise ClusterError(f"two units of stage {stage} are both labelled {twice}")
    return units


def gate_units(stage: str, task: str, base: Profile) -> list[Unit]:
    """The units of the gate a task's pages run before its study
    (:func:`~jepa_geometry.study.decisions.gate.study_choice`, at the profile before the study's
    settings): on a task with a ladder, every rung's dataset, LeWM's first seed and its gate
    cell on the validation pairs; on the others, the protocol gate's cells (SCALE's protocol on
    the evaluation pairs, each alternative on the validation pairs). The climb stops at the
    first rung or protocol that passes, known only once they are planned: the grid plans them
    all, so a page rendering from its cache finds every gate it may read. Those past where the
    climb stopped, as the study file records it (:func:`climb_reads`), are ``optional``."""
    ladder = task_ladder(task)
    reads = climb_reads(task, base)
    if not ladder:
        if stage != "plan":
            return []
        cells = [gate_cell(task, base, SCALE_PROTOCOL, "evaluation")]
        cells += [gate_cell(task, base, alt, "validation") for alt in ALTERNATIVES]
        return plan_units(stage, task, cells[:reads], " (gate)") + [
            replace(u, optional=True)
            for u in plan_units(stage, task, cells[reads:], " (gate, not reached)")
        ]
    out = []
    for i, lever in enumerate(ladder):
        cfg, note = lever.apply(task, base), f" (rung {lever.name})"
        if stage == "collect":
            units = [collect_unit(task, cfg, note)]
        elif stage == "train":
            units = [train_unit(task, BASELINE, cfg.seeds.train[0], cfg, note=note)]
        elif stage == "plan":
            cell = gate_cell(task, cfg, lever.protocol, "validation")
            units = plan_units(stage, task, [cell], f" (gate, rung {lever.name})")
        else:
            units = []
        out += [replace(u, optional=i >= reads) for u in units]
    return out


def climb_reads(task: str, base: Profile) -> int:
    """How many gates of ``task``'s climb its pages read, as its study file records where the
    climb stopped: on a ladder, the rungs up to the one its ``settings`` name for ``base`` (every
    rung when it names none or the study does not plan: the climb failed); otherwise SCALE's
    protocol and the alternatives up to the study's main protocol (every one when the study does
    not plan)."""
    spec = load_study(task) if task in available_studies() else None
    ladder = task_ladder(task)
    if spec is None or not spec.plans:
        return len(ladder) if ladder else 1 + len(ALTERNATIVES)
    if ladder:
        rung = spec.settings.get(base.name)
        names = [lv.name for lv in ladder]
        return names.index(rung) + 1 if rung in names else len(ladder)
    if spec.main_protocol in ALTERNATIVES:
        return 2 + ALTERNATIVES.index(spec.main_protocol)
    return 1


def decision_units(stage: str, specs: Sequence[StudySpec], base: Profile) -> list[Unit]:
    """The units of the book's one-off modelling decisions and what they choose, which every
    task's geometry page reads (:data:`~jepa_geometry.study.spec.DECISION_TASK`, chapter 7).

    - ``collect``, ``train``: the decision task's dataset and the models its two rules read
      (:func:`~jepa_geometry.study.decisions.sigreg.decision_models`,
      :func:`~jepa_geometry.study.decisions.lambdareg.variant_models`), at its own profile;
    - ``plan``: in each planning study with a ΛReg arm, the chosen variant's models
      (:func:`~jepa_geometry.study.decisions.lambdareg.study_variant_jobs`): the rule reads the
      decision models' training logs, so they are known once stage ``train`` is done;
    - ``chosen``: those models' cells.

    Before the decision is cached each is a placeholder, priced as a non-published variant
    would be (its cost does not depend on which); a decision that keeps the published form
    adds nothing. No study, no decision."""
    if not specs or stage == "pretrain":
        return []
    decided_at = load_study(DECISION_TASK).profile(base)
    if stage == "collect":
        return [collect_unit(DECISION_TASK, decided_at, " (decisions)")]
    if stage == "train":
        note = " (decision)"
        models = sigreg.decision_models(DECISION_TASK, decided_at)
        models += lambdareg.variant_models(DECISION_TASK, decided_at)
        return [train_unit(*m, note=note) for m in models]
    variant = lambdareg.decided_variant(DECISION_TASK, decided_at)
    named = variant or [v for v in lambdareg.LAMBDAREG_VARIANTS if v != "published"][0]
    units: list[Unit] = []
    for spec in specs:
        p = spec.profile(base)
        models, cells = lambdareg.study_variant_jobs(spec, p, named)
        if variant is None:
            pending = "the ΛReg variant's decision"
            if stage == "plan":
                units += [
                    waiting_unit(
                        stage,
                        spec.task,
                        f"train {model_label(*m[:3])} ΛReg variant",
                        train_hours(p),
                        pending,
                        kind="train",
                    )
                    for m in models
                ]
            else:
                units += [
                    waiting_unit(
                        stage,
                        spec.task,
                        f"plan {model_label(*m[:3])} ΛReg variant",
                        cell_hours(c),
                        pending,
                    )
                    for m, c in zip(models, cells, strict=True)
                ]
        elif stage == "plan":
            units += [train_unit(*m, note=" (ΛReg variant)") for m in models]
        else:
            units += plan_units(stage, spec.task, cells, " (ΛReg variant)")
    return units


def check_without_decisions(specs: Sequence[StudySpec]) -> None:
    """Stop in one line when a study left without the book's decisions needs them: a study
    with a ΛReg arm plans the ΛReg variant the decision chooses
    (:func:`~jepa_geometry.study.decisions.lambdareg.study_variant_jobs`).

    The decisions' models (SIGReg's strength and the ΛReg variants on Two-Room) are read by
    the book's geometry pages, not by a study's own cells: a reader's arm trained beside
    LeWM and SCALE needs none of them, and at laptop they are 6 of the grid's models."""
    needs = [s.task for s in specs if lambdareg.lambdareg_arms(s.arms)]
    if needs:
        raise ClusterError(
            f"the studies of {', '.join(needs)} have a ΛReg arm, which plans the ΛReg variant "
            "the book's decision chooses: they need the decisions; drop --without-decisions "
            "or the ΛReg arms (--arms)"
        )


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
                units += [replace(collect_unit(t, src, note), optional=True) for t in TASKS]
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
                        optional=True,
                    )
                )
        elif stage == "train":
            units += [train_unit(task, arm, s, p) for arm, s in spec.models(p)]
        if stage in ("collect", "train", "plan"):
            units += gate_units(stage, task, base)
        if stage == "plan":
            if spec.plans:
                sweep = mppi_sweep_jobs(task, p, protocol=spec.main_protocol)
                units.append(_plan_unit(stage, f"MPPI sweep {task}", sweep))
            units += plan_units(stage, task, cell_jobs(spec, p, None))
            units += [measure_unit(task, arm, s, p) for arm, s in spec.models(p)]
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
        raise ClusterError(
            f"the studies of {', '.join(tasks)} train dinowm on DINOv2, but "
            f"dinowm.dinov2_weights ({base.dinowm.dinov2_weights!r}) is not a file; "
            f"download {DINOV2_VITS14_URL} and --set dinowm.dinov2_weights=PATH, "
            "or drop dinowm from those studies"
        )


def check_specs(specs: Sequence[StudySpec]) -> None:
    """Stop before any work, in one line, when there is no study or a task's study comes twice
    (its every unit would be submitted twice, the copies racing for the same artifacts)."""
    if not specs:
        raise ClusterError("no study to run: give at least one task")
    tasks = [s.task for s in specs]
    twice = sorted({t for t in tasks if tasks.count(t) > 1})
    if twice:
        raise ClusterError(
            f"the study of {', '.join(twice)} is given more than once ({', '.join(tasks)}); "
            "give each task once"
        )
