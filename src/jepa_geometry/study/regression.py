"""Did a change of protocol change the results? The new build against the previous one.

A change of numeric precision, threading or batching is a change of protocol even when it
only aims at speed. Before such a change lands, the last build's results are recorded in
``previous_builds.yaml`` (rate and 95 % interval per arm, and each arm's paired difference
against ``lewm``, in one cell); :func:`previous_build_check` recomputes the same quantities from
the new build and states, for each, whether the new point estimate lies inside the previous
95 % interval. Both builds are random draws (different floating-point rounding gives different
trajectories), so "inside" is the criterion, fixed before the change, not a test of
equality.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import pandas as pd
import yaml

from jepa_geometry import stats
from jepa_geometry.study.spec import BASELINE


class RegressionError(ValueError):
    """No record for a task, or a build that lacks the recorded cell or arms."""


def _records() -> dict[str, list[dict[str, Any]]]:
    path = resources.files("jepa_geometry.study").joinpath("previous_builds.yaml")
    return yaml.safe_load(path.read_text()) or {}


def previous_builds(task: str) -> list[dict[str, Any]]:
    """The recorded previous builds of ``task`` (oldest first)."""
    records = _records()
    if task not in records:
        raise RegressionError(
            f"no previous build recorded for task {task!r}; recorded: {', '.join(records)}"
        )
    return records[task]


COLUMNS = (
    "quantity",
    "previous",
    "previous low",
    "previous high",
    "this build",
    "low",
    "high",
    "inside",
)


def previous_build_check(episodes: pd.DataFrame, task: str, profile: str) -> pd.DataFrame:
    """The most recent recorded build of ``task`` under ``profile`` against this one.

    One row per recorded quantity: the previous build's estimate and 95 % interval, this
    build's estimate and interval (computed as the chapter computes them: the two-stage
    bootstrap over seeds and pairs, and the paired bootstrap for differences) and ``inside``
    = previous low <= new estimate <= previous high. ``episodes`` is the study's tidy
    per-episode table (``plan_study(...).episodes``), read on the record's number of
    training seeds, the first ones. No record for this task or profile: an empty table with
    the same columns.
    """
    records = [r for r in _records().get(task, []) if r["profile"] == profile]
    if not records:
        return pd.DataFrame(columns=list(COLUMNS))
    record = records[-1]
    cell = record["cell"]
    sel = episodes
    for k, v in cell.items():
        sel = sel[sel[k] == v]
    rows = []
    arms = sorted(set(record["success"]) | set(record.get("difference", {})) | {BASELINE})
    missing = [a for a in arms if a not in set(sel["arm"])]
    if missing:
        raise RegressionError(f"this build has no {cell} results for arms {missing}")
    # the recorded build's seeds are the first ones: a study's headline seeds, added after it,
    # are not in the record (StudySpec.headline_seeds)
    seeds = sorted(set(sel[sel["arm"] == BASELINE]["train_seed"]))[: record["seeds"]]
    sel = sel[sel["train_seed"].isin(seeds)]
    if len(seeds) != record["seeds"] or sel[sel["arm"] == BASELINE].shape[0] != (
        record["seeds"] * record["pairs"]
    ):
        raise RegressionError(
            f"the recorded build used {record['seeds']} seeds x {record['pairs']} pairs; "
            f"this one has seeds {seeds}"
        )

    def row(name: str, old: list[float], new: float, low: float, high: float) -> dict:
        return {
            "quantity": name,
            "previous": old[0],
            "previous low": old[1],
            "previous high": old[2],
            "this build": new,
            "low": low,
            "high": high,
            "inside": bool(old[1] <= new <= old[2]),
        }

    for arm, old in record["success"].items():
        r = stats.success_rate(stats.success_matrix(sel[sel["arm"] == arm]))
        rows.append(row(f"{arm} success", old, r.rate, r.low, r.high))
    base = stats.success_matrix(sel[sel["arm"] == BASELINE])
    for arm, old in record.get("difference", {}).items():
        d = stats.paired_difference(stats.success_matrix(sel[sel["arm"] == arm]), base)
        rows.append(row(f"{arm} - {BASELINE}", old, d.diff, d.low, d.high))
    return pd.DataFrame(rows)


__all__ = ["COLUMNS", "RegressionError", "previous_build_check", "previous_builds"]
