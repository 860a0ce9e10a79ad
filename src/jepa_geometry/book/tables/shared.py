"""What several page families use: the book's arm order and the verdicts' colours."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from jepa_geometry.study.cells import STUDY_ARMS
from jepa_geometry.verdict.reference import reference_numbers
from jepa_geometry.verdict.rule import BELOW_RESOLUTION, BY_CONSTRUCTION, NOT_TESTED


def arm_order(arms: Sequence[str]) -> list[str]:
    """Arms in the book's order (baseline first), then anything else alphabetically."""
    known = [m for m in STUDY_ARMS if m in arms]
    return known + sorted(set(arms) - set(known))


VERDICT_COLOURS: dict[str, str] = {
    "reproduced": "#c7e9c0",
    "contradicted": "#fcbba1",
    "not detected at this scale": "#d9d9d9",
    "not detected": "#d9d9d9",
    BELOW_RESOLUTION: "#c6dbef",
    "below resolution": "#c6dbef",
    "inconclusive": "#fdd0a2",
    NOT_TESTED: "#fff7bc",
    BY_CONSTRUCTION: "#e7d4e8",
    "not tested": "#fff7bc",
    "reinforce": "#c7e9c0",
    "add up": "#deebf7",
    "fight": "#fcbba1",
    "unclear": "#f6e8c3",
}
"""Cell colours of verdicts and cross-lens readings, one per label and none white (a white
cell reads as empty): green reproduced, red contradicted, blue below this run's resolution,
grey not detected, orange inconclusive, pale yellow not tested, lilac by construction; the
figures fill our markers with the same colours."""


def verdict_style(table: pd.DataFrame, text_columns: Sequence[str] = ("claim",)) -> Any:
    """``table`` as a Styler: verdict and reading cells coloured by :data:`VERDICT_COLOURS`,
    the ``text_columns`` left-aligned and wide enough to read, no index."""

    def colour(v: Any) -> str:
        c = VERDICT_COLOURS.get(v) if isinstance(v, str) else None
        return f"background-color: {c}" if c else ""

    cols = [c for c in text_columns if c in table.columns]
    return (
        table.style.map(colour)
        .hide(axis="index")
        .set_properties(subset=cols, **{"text-align": "left", "min-width": "14em"})
    )


PAPERS: tuple[str, ...] = ("SCALE", "AnisoWM")
PAPER_STYLE: dict[str, str] = {"background-color": "#eef1f6", "font-style": "italic"}
"""How the papers' columns look beside ours: shaded and in italics, never like our results."""


def paper_columns(columns: Sequence[Any]) -> list[Any]:
    """The columns that hold the papers' numbers, by the book's naming: ``<what>, <paper>
    ...`` (``lewm, SCALE (%)``, ``share above mean, AnisoWM``) or ``paper's ...``."""

    def is_paper(c: Any) -> bool:
        name = str(c)
        tail = name.split(", ", 1)[1] if ", " in name else ""
        return name.startswith("paper") or any(tail.startswith(p) for p in PAPERS)

    return [c for c in columns if is_paper(c)]


def mark_papers(styler: Any) -> Any:
    """``styler`` with the papers' columns (:func:`paper_columns`) shaded and in italics
    (:data:`PAPER_STYLE`), so that they never read as this book's results."""
    cols = paper_columns(styler.data.columns)
    return styler.set_properties(subset=cols, **PAPER_STYLE) if cols else styler


def paper_value(table: str, task: str, arm: str, **filters: str) -> float:
    """The papers' value of ``table`` for ``task`` and ``arm`` (and ``filters``), from the
    reference file alone: the mean of its matching rows, NaN where the paper gives none."""
    ref = reference_numbers(allow_empty=True, table=table, task=task, arm=arm, **filters)
    return float(ref["value"].mean()) if len(ref) else float("nan")
