"""Chapter 9's tables and sentences: the scaling study's units, its training compute beside
the papers', its gates, its effects per compute point and the trend readings, shaped for the
page (the computations are in :mod:`jepa_geometry.extensions.scaling.choice`,
:mod:`jepa_geometry.extensions.scaling.results` and
:mod:`jepa_geometry.extensions.scaling.trend`; these functions take their tables and
results)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from jepa_geometry.book.style import display_name, shown
from jepa_geometry.envs import task_title
from jepa_geometry.extensions.scaling.results import PointResult, ScalingResults
from jepa_geometry.extensions.scaling.spec import Point
from jepa_geometry.extensions.scaling.trend import READINGS
from jepa_geometry.stats import format_rate

UNIT_COLUMNS: tuple[str, ...] = ("point", "task", "arm", "minutes", "status", "why")


def units_display(units: pd.DataFrame) -> pd.DataFrame:
    """The rule's units (:func:`~jepa_geometry.extensions.scaling.choice.choose_units`) as the
    page shows them: one row per (point, task, arm) with its estimated machine minutes and
    status, arms by their display names."""
    out = units.assign(task=units["task"].map(task_title), minutes=units["seconds"] / 60)
    return shown(out[list(UNIT_COLUMNS)], cells=["arm"])


def headline_claims(effects: pd.DataFrame, n: int = 6) -> list[str]:
    """The ``n`` claims measured at the most (task, point) cells, in the records' order on a
    tie: the claims the page draws (every claim is in the tables)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    counts = effects.groupby("claim", sort=False).size()
    order = {c: i for i, c in enumerate(dict.fromkeys(effects["claim"]))}
    ranked = sorted(counts.index, key=lambda c: (-counts[c], order[c]))
    return ranked[:n]


def effects_display(effects: pd.DataFrame) -> pd.DataFrame:
    """Every claim's effect with its 95 % interval at each point (columns, in compute order),
    one row per (task, claim), and the paper's effect where comparable."""
    points = list(dict.fromkeys(effects.sort_values(["image", "flops"])["point"]))
    cell = effects.assign(
        text=[
            f"{e:+.3f} [{lo:+.3f}, {hi:+.3f}]"
            for e, lo, hi in zip(effects["effect"], effects["low"], effects["high"], strict=True)
        ]
    )
    wide = cell.pivot_table(
        index=["task", "paper", "claim"], columns="point", values="text", aggfunc="first"
    )
    wide = wide[[p for p in points if p in wide.columns]]
    paper = effects.groupby(["task", "paper", "claim"])["paper_effect"].first()
    wide["paper's effect"] = paper.reindex(wide.index).round(3)
    out = wide.reset_index()
    out["task"] = out["task"].map(task_title)
    return out


PREMISE_COLUMNS: tuple[str, ...] = (
    "task",
    "measure",
    "arm",
    "point",
    "value",
    "low",
    "high",
    "reference",
)


def premises_display(premises: pd.DataFrame) -> pd.DataFrame:
    """The premise table (:func:`~jepa_geometry.extensions.scaling.results.premise_table`) as
    the page shows it: per task, measure and arm, the points in order of compute, arms by
    their display names."""
    out = premises.sort_values(["task", "measure", "arm", "image", "flops"], kind="stable")
    out = out.assign(task=out["task"].map(task_title))[list(PREMISE_COLUMNS)]
    return shown(out, cells=["arm"])


def trends_display(trends: pd.DataFrame) -> pd.DataFrame:
    """The trend table (:func:`~jepa_geometry.extensions.scaling.trend.trend_table`) as the
    page shows it: the crossing in words, not its three numbers."""
    out = trends.drop(columns=["crossing (FLOPs)", "crossing low", "crossing high"])
    return out.assign(task=out["task"].map(task_title))


def trend_sentence(trends: pd.DataFrame) -> str:
    """How many (task, claim) effects grow, shrink, stay or are unclear with compute, and how
    many crossings are estimable, in one sentence."""
    if trends.empty:
        return "No claim was measured at two or more training budgets."
    counts, est = _readings(trends)
    parts = ", ".join(f"{n} {r}" for r, n in counts.items())
    return (
        f"Of {len(trends)} task-claim effects measured at two or more training budgets: {parts}; "
        f"the crossing of the verdict's minimum effect is estimable for {est} of them."
    )


def _readings(trends: pd.DataFrame) -> tuple[dict[str, int], int]:
    """How many of ``trends``' effects read each way (:data:`~jepa_geometry.extensions.
    scaling.trend.READINGS`, in its order) and for how many the crossing is estimable."""
    counts = trends["reading"].value_counts()
    estimable = int((trends["crossing"] != "not estimable").sum())
    return {r: int(counts.get(r, 0)) for r in READINGS}, estimable


def scaling_answer(
    results: Sequence[PointResult], trends: pd.DataFrame, budgets: pd.DataFrame
) -> str:
    """The chapter's answer to its question, in three sentences computed from this run: the
    training budgets it built and how far LeWM's lies beyond them (:func:`decades_to_paper`);
    how the claims' effects move with compute (the readings of
    :func:`~jepa_geometry.extensions.scaling.trend.trend_table`, the ones that grow or shrink
    named, at most :data:`NAMED` of them); and what an extrapolation to the papers' budget is
    worth, given how far apart the fitted points lie. One budget built: it says it cannot
    answer."""
    steps = sorted({r.point.steps for r in results if r.point.image == 1.0})
    times = ", ".join(f"{s:g}×" for s in steps)
    decades = decades_to_paper(results, budgets)
    if len(steps) < 2:
        return (
            f"This run built one training budget ({times} the task studies' optimizer steps), "
            "so it cannot say whether the claims' effects move with compute; the study's other "
            "points are built by `jepa-geometry scaling`."
        )
    built = (
        f"This run trained at {len(steps)} budgets, {times} the task studies' optimizer steps; "
        f"LeWM's own training lies {decades} decades of training FLOPs beyond the 1× point."
    )
    counts, estimable = _readings(trends)
    moving = trends[trends["reading"].isin(["grows", "shrinks"])]
    named = "; ".join(
        f"“{r.claim}” on {task_title(r.task)} {r.reading}" for r in moving.head(NAMED).itertuples()
    )
    more = ", and others" if len(moving) > NAMED else ""
    moved = (
        "No claim was measured at two of them."
        if trends.empty
        else f"Of the {len(trends)} claim effects measured at two or more of them, "
        f"{counts['grows']} grow with compute, {counts['shrinks']} shrink, {counts['stays']} "
        f"stay within the smallest effect that matters and {counts['unclear']} are unclear"
        + (f" ({named}{more})." if named else ".")
    )
    span = max(
        (math.log10(max(f) / min(f)) for f in _step_flops(results).values() if len(f) > 1),
        default=0.0,
    )
    reach = (
        f"the crossing of the smallest effect that matters is estimable for {estimable} of "
        "them, and none is a forecast of the papers' results."
        if estimable
        else "no crossing of the smallest effect that matters is estimable, so nothing here "
        "predicts the papers' results."
    )
    extrapolation = (
        f"Fitted on points at most {span:.1f} decades of FLOPs apart, a trend says where an "
        f"effect heads under an assumed straight line in log compute, not where it lands "
        f"{decades} decades further: {reach}"
    )
    return " ".join((built, moved, extrapolation))


NAMED = 3
"""How many growing or shrinking effects :func:`scaling_answer` names."""


def _step_flops(results: Sequence[PointResult]) -> dict[str, list[float]]:
    """Each task's training FLOPs per model at its step points (the resolution point left
    out, as the trends leave it out)."""
    out: dict[str, list[float]] = {}
    for r in results:
        if r.point.image == 1.0:
            out.setdefault(r.task, []).append(r.train_flops)
    return out


def success_display(success: pd.DataFrame) -> pd.DataFrame:
    """:func:`~jepa_geometry.extensions.scaling.results.success_by_point` as the page shows
    it: one row per (task, point) in compute order, per arm (by its display name) its tier-mean
    success (%) with its interval, and the task's ceiling (the same on every row of the task:
    it does not train)."""
    order = {t: i for i, t in enumerate(dict.fromkeys(success["task"]))}  # the study's order
    points = success[success["arm"] != "ceiling"].sort_values(
        ["task", "image", "flops"], key=lambda c: c.map(order) if c.name == "task" else c
    )
    top = success[success["arm"] == "ceiling"].set_index("task")
    out = []
    for (task, point), g in points.groupby(["task", "point"], sort=False):
        row = {"task": task_title(task), "point": point, "steps": int(g["steps"].iloc[0])}
        row.update(
            {
                f"{display_name(r.arm)} (%)": format_rate(r.rate, r.low, r.high)
                for r in g.itertuples()
            }
        )
        if task in top.index:
            c = top.loc[task]
            row[f"ceiling, {int(c.pairs)} pairs (%)"] = format_rate(c.rate, c.low, c.high)
        out.append(row)
    return pd.DataFrame(out)


def compute_table(results: Sequence[PointResult], budgets: pd.DataFrame) -> pd.DataFrame:
    """Each built (task, point): image size, optimizer steps, training FLOPs per model and
    their fraction of LeWM's budget on the task; then one ``paper`` row per task."""
    paper = budgets.set_index("task")
    rows = [
        {
            "task": task_title(r.task),
            "point": r.point.name,
            "image (px)": r.profile.data.image_size,
            "steps": r.profile.train.steps,
            "training FLOPs": r.train_flops,
            "of the paper's FLOPs": r.train_flops / float(paper.loc[r.task, "flops"]),
        }
        for r in results
    ]
    rows += [
        {
            "task": task_title(b.task),
            "point": f"paper ({b.source})",
            "image (px)": 224,
            "steps": b.steps,
            "training FLOPs": b.flops,
            "of the paper's FLOPs": 1.0,
        }
        for b in budgets.itertuples()
    ]
    return pd.DataFrame(rows)


def decades_to_paper(results: Sequence[PointResult], budgets: pd.DataFrame) -> str:
    """How many decades of training FLOPs lie between each task's 1x point and LeWM's budget
    on the task, as ``"4.5 to 4.6"`` (lowest to highest over the tasks)."""
    paper = budgets.set_index("task")["flops"]
    gaps = [
        math.log10(float(paper[r.task]) / r.train_flops) for r in results if r.point == Point(1.0)
    ]
    if not gaps:
        return "unknown (no 1x point is built)"
    return f"{min(gaps):.1f} to {max(gaps):.1f}"


def scaling_gate_table(results: Sequence[PointResult]) -> pd.DataFrame:
    """Whether each built (task, point) was planned, and why."""
    return pd.DataFrame(
        [
            {
                "task": task_title(r.task),
                "point": r.point.name,
                "planned": r.plans,
                "why": r.gate_reason,
            }
            for r in results
        ]
    )


def scaling_missing_sentence(built: ScalingResults) -> str:
    """The chosen (point, task) results not in the cache, in one line ("none" if none)."""
    if not built.missing:
        return "none"
    return "; ".join(f"{k}: {why}" for k, why in built.missing.items())


__all__ = [
    "compute_table",
    "decades_to_paper",
    "effects_display",
    "headline_claims",
    "premises_display",
    "scaling_answer",
    "scaling_gate_table",
    "scaling_missing_sentence",
    "success_display",
    "trend_sentence",
    "trends_display",
    "units_display",
]
