"""The dry run: every unit of the grid, its estimated device-hours and whether it is cached,
nothing submitted, built or stated (``jepa-geometry grid --dry-run``).

Units come from :func:`~.units.stage_units`, hours from the cost model (:mod:`.estimate`), the
resources each kind of unit asks for from the profile's ``cluster`` section; the chapters'
cost statements read the same table (:func:`~jepa_geometry.book.run.cost_statement`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from jepa_geometry.cluster.units import (
    STAGES,
    Extension,
    check_specs,
    missing_dinov2,
    stage_units,
)
from jepa_geometry.profiles import Profile
from jepa_geometry.study.spec import StudySpec
from jepa_geometry.wm.arms import DINOWM


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
        s.with_arms([a for a in s.arms if a != DINOWM]) if s.task in left_out else s for s in specs
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
