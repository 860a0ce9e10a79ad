"""Chapter 10's tables: the reader's arm on one task or several, its verdict against LeWM and
SCALE per task and solver with each label's reason and what would flip it, and the labels in
words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from jepa_geometry.book.tables.shared import verdict_style
from jepa_geometry.envs import task_title
from jepa_geometry.verdict.rule import LABEL_MEANINGS


def by_task(frames: Mapping[str, pd.DataFrame], column: bool = False) -> pd.DataFrame:
    """One table of a page run on one task or several: a single task's table as it is (the
    book's own page reads as before); several stacked, each under its task's title, as the
    first level of the index or, with ``column`` (a table shown without its index), as a first
    column ``task``."""
    if len(frames) == 1:
        return next(iter(frames.values()))
    titles = [task_title(t) for t in frames]
    if column:
        return pd.concat(
            [
                f.assign(task=title)[["task", *f.columns]]
                for title, f in zip(titles, frames.values(), strict=True)
            ],
            ignore_index=True,
        )
    return pd.concat(list(frames.values()), keys=titles, names=["task"])


def verdict_display(table: pd.DataFrame) -> Any:
    """:func:`~jepa_geometry.extensions.own_objective.own_verdict` as the page shows it: one
    line per (task, solver, baseline, claim), the label coloured beside its reason, the texts
    left-aligned and wide enough to read, p-values to three digits."""
    text = ("claim", "why this label", "what would flip it")
    styled = verdict_style(table, text).format({"p (Holm)": "{:.3g}"})
    # the longest text, two criteria of a sentence each: two lines at this width, not eight
    flip = [c for c in ("what would flip it",) if c in table.columns]
    return styled.set_properties(subset=flip, **{"min-width": "30em"})


def first_plans_row(table: pd.DataFrame) -> pd.Series:
    """The row the page's sentence reads: the reader's arm against LeWM on planning success,
    on the first task with the first solver planned."""
    plans = table[(table["against"] == "LeWM") & table["claim"].str.contains(" plans better ")]
    return plans.iloc[0]


def label_glossary() -> pd.DataFrame:
    """The verdict rule's labels, each with its meaning
    (:data:`~jepa_geometry.verdict.rule.LABEL_MEANINGS`): the page's glossary."""
    return pd.DataFrame({"label": list(LABEL_MEANINGS), "meaning": list(LABEL_MEANINGS.values())})
