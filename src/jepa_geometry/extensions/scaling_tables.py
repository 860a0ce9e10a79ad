"""Chapter 9's tables and sentences: the scaling study's units, its effects per compute point
and the trend readings, shaped for the page (the computations are in
:mod:`jepa_geometry.study.scaling`; these functions take its tables)."""

from __future__ import annotations

import pandas as pd

from jepa_geometry.envs import task_title
from jepa_geometry.stats import format_rate

UNIT_COLUMNS: tuple[str, ...] = ("point", "task", "arm", "minutes", "status", "why")


def units_display(units: pd.DataFrame) -> pd.DataFrame:
    """The rule's units (:func:`~jepa_geometry.study.scaling.choose_units`) as the page shows
    them: one row per (point, task, arm) with its estimated machine minutes and status."""
    out = units.assign(task=units["task"].map(task_title), minutes=units["seconds"] / 60)
    return out[list(UNIT_COLUMNS)]


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


PREMISE_COLUMNS: tuple[str, ...] = ("task", "measure", "arm", "point", "value", "low", "high",
                                    "reference")  # fmt: skip


def premises_display(premises: pd.DataFrame) -> pd.DataFrame:
    """The premise table (:func:`~jepa_geometry.study.scaling.premise_table`) as the page
    shows it: per task, measure and arm, the points in order of compute."""
    out = premises.sort_values(["task", "measure", "arm", "image", "flops"], kind="stable")
    return out.assign(task=out["task"].map(task_title))[list(PREMISE_COLUMNS)]


def trends_display(trends: pd.DataFrame) -> pd.DataFrame:
    """The trend table (:func:`~jepa_geometry.study.scaling.trend_table`) as the page shows
    it: the crossing in words, not its three numbers."""
    out = trends.drop(columns=["crossing (FLOPs)", "crossing low", "crossing high"])
    return out.assign(task=out["task"].map(task_title))


def trend_sentence(trends: pd.DataFrame) -> str:
    """How many (task, claim) effects grow, shrink, stay or are unclear with compute, and how
    many crossings are estimable, in one sentence."""
    if trends.empty:
        return "No claim was measured at two or more training budgets."
    counts = trends["reading"].value_counts()
    parts = ", ".join(
        f"{int(counts.get(r, 0))} {r}" for r in ("grows", "shrinks", "stays", "unclear")
    )
    est = int((trends["crossing"] != "not estimable").sum())
    return (
        f"Of {len(trends)} task-claim effects measured at two or more training budgets: {parts}; "
        f"the crossing of the verdict's minimum effect is estimable for {est} of them."
    )


__all__ = [
    "effects_display",
    "headline_claims",
    "premises_display",
    "trend_sentence",
    "trends_display",
    "units_display",
]


def success_display(success: pd.DataFrame) -> pd.DataFrame:
    """:func:`~jepa_geometry.study.scaling.success_by_point` as the page shows it: one row per
    (task, point) in compute order, per arm its tier-mean success (%) with its interval, and
    the task's ceiling (the same on every row of the task: it does not train)."""
    order = {t: i for i, t in enumerate(dict.fromkeys(success["task"]))}  # the study's order
    points = success[success["arm"] != "ceiling"].sort_values(
        ["task", "image", "flops"], key=lambda c: c.map(order) if c.name == "task" else c
    )
    top = success[success["arm"] == "ceiling"].set_index("task")
    out = []
    for (task, point), g in points.groupby(["task", "point"], sort=False):
        row = {"task": task_title(task), "point": point, "steps": int(g["steps"].iloc[0])}
        row.update({f"{r.arm} (%)": format_rate(r.rate, r.low, r.high) for r in g.itertuples()})
        if task in top.index:
            c = top.loc[task]
            row[f"ceiling, {int(c.pairs)} pairs (%)"] = format_rate(c.rate, c.low, c.high)
        out.append(row)
    return pd.DataFrame(out)
