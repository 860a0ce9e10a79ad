"""The papers' reported numbers, loaded from ``reference_numbers.yaml`` as one tidy table.

These values are never results of this book. Chapters show them *beside* the measured numbers,
always with the ``paper`` and ``source`` columns, e.g.::

    ref = reference_numbers(paper="SCALE", metric="success_rate", task="tworoom")
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

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
    """
    df = _tidy()
    for col, val in filters.items():
        if col not in df.columns:
            raise ValueError(f"unknown reference column {col!r}; valid: {', '.join(df.columns)}")
        if col == "table" and str(val) not in set(df["table"]):
            raise ValueError(
                f"unknown reference table {val!r}; valid: {', '.join(sorted(set(df.table)))}"
            )
        df = df[df[col] == str(val)]
    if df.empty:
        if allow_empty:
            return df.reset_index(drop=True)
        raise ValueError(f"no reference numbers match {filters}")
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
