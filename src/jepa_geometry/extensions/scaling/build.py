"""Building the scaling study: every unit the rule chose (:func:`grid_units`, :data:`GRID`), as
the study grid submits them (``jepa-geometry grid --with scaling``) and as
:func:`~jepa_geometry.cluster.build_here` builds them on one machine (``jepa-geometry
scaling``), the cost stated first (:func:`state_choice`).

Every job is a cached build (datasets, models, the gated tasks' gates, the CEM cells, the
geometry, a training step's FLOP count), so an interrupted build resumes and the two routes
produce the same artifacts. A gated task (:data:`~.spec.GATED_TASKS`) is planned at a point
only when LeWM passes its gate there (:func:`gate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jepa_geometry import artifacts, cluster
from jepa_geometry.extensions.scaling.choice import by_point, chosen, cost_statement, stated_units
from jepa_geometry.extensions.scaling.spec import (
    GATED_TASKS,
    Point,
    ScalingSpec,
    cem_cells,
    load_scaling,
    main_protocol,
    point_profile,
    step_flops,
    step_flops_artifact,
)
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.profiles import Profile
from jepa_geometry.study.build import cell_jobs
from jepa_geometry.study.cells import planning_cell
from jepa_geometry.study.decisions.gate import gate_cell, protocol_gate
from jepa_geometry.study.spec import load_study


def gate(spec: ScalingSpec, task: str, point: Point, base: Profile) -> dict[str, Any]:
    """Whether ``task``'s arms are planned at ``point``: a task whose study plans always is;
    a gated task (:data:`~.spec.GATED_TASKS`) is when LeWM passes the gate again there."""
    if task not in GATED_TASKS:
        return {"task": task, "point": point.name, "plans": True, "reason": "its study plans"}
    p = point_profile(spec, task, point, base)
    g = protocol_gate(task, p, main_protocol(task), "validation")
    return {
        "task": task,
        "point": point.name,
        "plans": bool(g["discriminates"]),
        "reason": g["reason"],
    }


def point_cells(spec: ScalingSpec, task: str, point: Point, arms: Sequence[str], base: Profile):
    """The planning cells of ``arms`` at ``point``: CEM at the five tiers under the task's
    main protocol, every training seed (:func:`~.results.point_result` plans the same
    cells)."""
    p = point_profile(spec, task, point, base)
    return [
        planning_cell(task, a, s, p, c, float("nan"))
        for a in arms
        for s in p.seeds.train
        for c in cem_cells(task)
    ]


def _count_flops(task: str, profile: Profile) -> None:
    step_flops(task, profile)


def grid_units(stage: str, base: Profile, spec: ScalingSpec | None = None) -> list[cluster.Unit]:
    """The study's units of one stage of the study grid (:mod:`~jepa_geometry.cluster`),
    for the units of the rule as stated (:func:`~.choice.stated_units`): each point's
    dataset, models, FLOP count, geometry and CEM cells, and each task's ceiling (its task
    study's cells, the page's reference). A gated point plans its gate's cell first; its CEM
    cells are units of the ``chosen`` stage, submitted once the gate is cached and passes
    (before that, one placeholder per model, reported as blocked)."""
    spec = spec or load_scaling()
    out: list[cluster.Unit] = []
    points = by_point(chosen(stated_units(spec, base)))
    for (pt, t), arms in points.items():
        p = point_profile(spec, t, pt, base)
        note = f" ({pt.name})"
        models = [(a, s) for a in arms for s in p.seeds.train]
        gate_job = gate_cell(t, p, main_protocol(t), "validation") if t in GATED_TASKS else None
        if stage == "collect":
            out.append(cluster.collect_unit(t, p, note))
        elif stage == "train":
            out += [cluster.train_unit(t, a, s, p, note=note) for a, s in models]
        elif stage == "plan":
            flops = step_flops_artifact(t, p)
            out.append(
                cluster.Unit(
                    stage,
                    kind="measure",
                    task=t,
                    label=f"count FLOPs {t}{note}",
                    call=_count_flops,
                    args=(t, p),
                    outputs=(flops,),
                    inputs=(),
                    hours=p.cluster.measure_hours,
                )
            )
            out += [cluster.measure_unit(t, a, s, p, note) for a, s in models]
            if gate_job is not None:
                out += cluster.plan_units(stage, t, [gate_job], f" gate{note}")
            else:
                out += cluster.plan_units(stage, t, point_cells(spec, t, pt, arms, base), note)
        elif stage == "chosen" and gate_job is not None:
            cells = point_cells(spec, t, pt, arms, base)
            try:
                with artifacts.cache_only():
                    plans = gate(spec, t, pt, base)["plans"]
            except artifacts.NotCached:
                out += [
                    cluster.waiting_unit(
                        stage,
                        t,
                        f"plan {cluster.model_label(t, a, s)}{note}",
                        sum(
                            cluster.cell_hours(c) for c in cells if (c.arm, c.train_seed) == (a, s)
                        ),
                        f"the gate at {pt.name}",
                        gate_job.artifacts(),
                    )
                    for a, s in models
                ]
                continue
            if plans:
                out += cluster.plan_units(stage, t, cells, note)
    if stage == "plan":  # each task's ceiling, the pages' reference at every point
        for t in dict.fromkeys(t for _, t in points):
            study = load_study(t)
            ceiling = [c for c in cell_jobs(study, study.profile(base), None) if c.arm == CEILING]
            out += cluster.plan_units(stage, t, ceiling)
    return out


def state_choice(base: Profile, spec: ScalingSpec | None = None) -> str:
    """The rule's cost statement (:func:`~.choice.cost_statement`) for the units as
    stated, stating and keeping them now if no build has (:func:`~.choice.stated_units`)."""
    spec = spec or load_scaling()
    return cost_statement(stated_units(spec, base, state=True), spec, base.name)


GRID = cluster.Extension("scaling", grid_units, state_choice)
"""The study as an extension of the study grid (``jepa-geometry grid --with scaling``)."""


__all__ = [
    "GRID",
    "gate",
    "grid_units",
    "point_cells",
    "state_choice",
]
