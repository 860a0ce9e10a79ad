"""The papers' reported numbers, loaded from ``reference_numbers.yaml`` as one tidy table.

These values are never results of this book. Chapters show them *beside* the measured numbers,
always with the ``paper`` and ``source`` columns, e.g.::

    ref = reference_numbers(paper="SCALE", metric="success_rate", task="tworoom")
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd
import yaml

COLUMNS = (
    "table",
    "paper",
    "source",
    "setting",
    "metric",
    "unit",
    "arm",
    "value",
    "verified",
    "derived",
    "note",
)


@lru_cache(maxsize=1)
def _tidy() -> pd.DataFrame:
    text = resources.files("jepa_geometry.verdict").joinpath("reference_numbers.yaml").read_text()
    records = []
    for table in yaml.safe_load(text)["tables"]:
        keys, arms = table["keys"], table["arms"]
        for row in table["rows"]:
            if len(row) != len(keys) + len(arms):
                raise ValueError(
                    f"reference table {table['id']!r}: row {row} has {len(row)} values, "
                    f"expected {len(keys)} keys + {len(arms)} arms"
                )
            key_vals = dict(zip(keys, row[: len(keys)], strict=True))
            where = table.get("derived_where", {})
            derived = (
                table.get("derived", "")
                if all(str(key_vals.get(k)) == str(v) for k, v in where.items())
                else ""
            )
            for arm, value in zip(arms, row[len(keys) :], strict=True):
                if value is None:
                    continue
                records.append(
                    {
                        "table": table["id"],
                        "paper": table["paper"],
                        "source": table["source"],
                        "setting": table["setting"],
                        "metric": table["metric"],
                        "unit": table["unit"],
                        "arm": arm,
                        "value": float(value),
                        "verified": bool(table.get("verified", True)),
                        "derived": derived,
                        "note": table.get("note", ""),
                        **{k: str(v) for k, v in key_vals.items()},
                    }
                )
    return pd.DataFrame.from_records(records)


def reference_numbers(allow_empty: bool = False, **filters: str) -> pd.DataFrame:
    """Rows of the reference table matching every ``column=value`` filter.

    An unknown column is always an error, and so is a filter that matches nothing unless
    ``allow_empty`` (a task a paper does not report): a typo never shows an empty "paper"
    column beside our numbers. A ``table`` filter must name a table of the file either way.
    Each distinct query is answered once per process (the file does not change while it
    runs; the cross-task page asked 1,684 times, 12 s), a copy each time, so a caller may
    change what it gets.
    """
    query = tuple(sorted((col, str(val)) for col, val in filters.items()))
    return _matching(allow_empty, query).copy()


@lru_cache(maxsize=4096)
def _matching(allow_empty: bool, query: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    tidy = _tidy()
    tables = set(tidy["table"].unique())
    keep = np.ones(len(tidy), dtype=bool)
    for col, val in query:
        if col not in tidy.columns:
            raise ValueError(f"unknown reference column {col!r}; valid: {', '.join(tidy.columns)}")
        if col == "table" and val not in tables:
            raise ValueError(f"unknown reference table {val!r}; valid: {', '.join(sorted(tables))}")
        keep &= (tidy[col] == val).to_numpy(dtype=bool, na_value=False)
    df = tidy[keep]  # one selection for every filter (a filter's own took every column)
    if df.empty:
        if allow_empty:
            return df.reset_index(drop=True)
        raise ValueError(f"no reference numbers match {dict(query)}")
    return df.dropna(axis=1, how="all").reset_index(drop=True)


def paper_tasks(paper: str) -> tuple[str, ...]:
    """The tasks ``paper`` reports any number on, in the file's order: the tasks it evaluated.
    A claim of ``paper`` on another task is our extension, not the paper's claim."""
    df = _tidy()
    if paper not in set(df["paper"]):
        raise ValueError(f"unknown paper {paper!r}; valid: {', '.join(sorted(set(df.paper)))}")
    return tuple(dict.fromkeys(df.loc[df["paper"] == paper, "task"].dropna()))


def source_with_caveats(ref: pd.DataFrame) -> str:
    """The ``source`` of reference rows ``ref`` (one table's), with what a reader must know
    beside it: values derived rather than printed (and by whom), values not verified against
    the source, and the table's note."""
    caveats = [f"derived {d}" for d in dict.fromkeys(ref["derived"]) if d]
    caveats += ["unverified against the source"] if not ref["verified"].all() else []
    caveats += [n for n in dict.fromkeys(ref["note"]) if n]
    source = str(ref["source"].iloc[0])
    return f"{source} ({'; '.join(caveats)})" if caveats else source


def sources_sentence(tables: Sequence[str]) -> str:
    """Where the numbers of ``tables`` come from, in one line: each table's ``source``, with its
    caveats (:func:`source_with_caveats`)."""
    return "; ".join(
        f"{t}: {source_with_caveats(reference_numbers(table=t))}" for t in dict.fromkeys(tables)
    )
