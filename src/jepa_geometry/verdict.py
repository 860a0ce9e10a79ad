"""Claim by claim: does this book's run reproduce what the papers report?

A :class:`Claim` is a directional statement about the difference between two arms on one
measure ("SCALE's top-2 PCs carry more of q than LeWM's": ``effect = m(scale) - m(lewm) > 0``).
Its :class:`Evidence` is our measured effect with a 95 % interval. The verdict is a rule fixed
before looking at any result:

* **reproduced**: the whole interval lies on the claimed side of the ``threshold`` (0 unless
  the claim is a non-inferiority claim with a margin);
* **not reproduced**: the whole interval lies on the other side, *or* it straddles the
  threshold but excludes the papers' own effect (when the paper reports one in comparable
  units and setting): no effect is detected, and one as large as the paper's is ruled out;
* **inconclusive**: otherwise (the data cannot tell).

Intervals come from :mod:`jepa_geometry.stats`: success differences from the paired two-stage
bootstrap over training seeds and pairs; per-start or per-goal measures (rank correlations,
cost landscapes) from the same bootstrap over seeds and units; one-number-per-model measures
(probes, spectra) from a paired t-interval over training seeds, wide with three seeds, as it
should be.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from . import stats
from .reference import reference_numbers

VERDICTS: tuple[str, ...] = ("reproduced", "not reproduced", "inconclusive")


@dataclass(frozen=True)
class Claim:
    """``direction * (m(a) - m(b)) > threshold``, as one of the papers states it."""

    paper: str
    statement: str
    measure: str  # what m is, in words, with the setting it is measured in
    a: str
    b: str
    direction: int = 1  # +1: a larger is the claim; -1: a smaller
    threshold: float = 0.0
    paper_effect: float | None = None  # m(a) - m(b) as reported, in our units, if comparable
    paper_note: str = ""  # where the paper's number comes from / why it is not comparable

    def __post_init__(self) -> None:
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {self.direction!r}")


@dataclass(frozen=True)
class Evidence:
    """Our effect ``m(a) - m(b)`` with its 95 % interval and how it was obtained."""

    effect: float
    low: float
    high: float
    p_value: float | None
    units: str  # e.g. "3 seeds x 200 pairs", "3 seeds (t-interval)"

    def __post_init__(self) -> None:
        if not self.low <= self.effect <= self.high:
            raise ValueError(f"effect {self.effect} outside its interval [{self.low}, {self.high}]")


def verdict(claim: Claim, ev: Evidence) -> str:
    """The fixed rule of this module's docstring."""
    lo, hi = sorted((claim.direction * ev.low, claim.direction * ev.high))
    t = claim.threshold
    if lo > t:
        return "reproduced"
    if hi < t:
        return "not reproduced"
    if claim.paper_effect is not None and claim.direction * claim.paper_effect > hi:
        return "not reproduced"
    return "inconclusive"


def verdict_table(items: Sequence[tuple[Claim, Evidence]]) -> pd.DataFrame:
    """One row per claim: statement, measure, the paper's effect, ours with CI, verdict."""
    rows = []
    for claim, ev in items:
        rows.append(
            {
                "paper": claim.paper,
                "claim": claim.statement,
                "measure": claim.measure,
                "paper effect": claim.paper_effect,
                "our effect": ev.effect,
                "95% CI": (ev.low, ev.high),
                "p": ev.p_value,
                "units": ev.units,
                "verdict": verdict(claim, ev),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Evidence builders
# --------------------------------------------------------------------------------------


def _matrix(table: pd.DataFrame, value: str, unit: str) -> pd.DataFrame:
    """(training seed x unit) matrix of ``value``; units must be the same for every seed."""
    if table.duplicated(["train_seed", unit]).any():
        raise ValueError(f"several rows per (train_seed, {unit}); filter the table first")
    wide = table.pivot(index="train_seed", columns=unit, values=value).sort_index()
    if wide.isna().any().any():
        raise ValueError(f"training seeds were measured on different {unit}s; cannot pair them")
    return wide


def paired_unit_evidence(
    table: pd.DataFrame, a: str, b: str, value: str, unit: str, seed: int = 0
) -> Evidence:
    """Mean of ``value(a) - value(b)`` over (seed, unit), both arms measured on the same units.

    ``table`` has columns method, train_seed, ``unit`` and ``value`` (e.g. per-start Kendall τ,
    per-pair success averaged over tiers). Interval: two-stage bootstrap over seeds and units.
    p: the exact McNemar test when the values are binary (success), otherwise None.
    """
    wa = _matrix(table[table["method"] == a], value, unit)
    wb = _matrix(table[table["method"] == b], value, unit)
    seeds = wa.index.intersection(wb.index)
    cols = wa.columns.intersection(wb.columns)
    if len(seeds) == 0 or len(cols) == 0:
        raise ValueError(f"no common (seed, {unit}) units between {a!r} and {b!r}")
    xa, xb = wa.loc[seeds, cols].to_numpy(float), wb.loc[seeds, cols].to_numpy(float)
    d = xa - xb
    lo, hi = stats.bootstrap_interval(d if len(seeds) > 1 else d[0], seed=seed)
    binary = np.isin(xa, (0.0, 1.0)).all() and np.isin(xb, (0.0, 1.0)).all()
    p = stats.mcnemar_exact(xa, xb) if binary else None
    eff = float(d.mean())
    return Evidence(eff, min(lo, eff), max(hi, eff), p, f"{len(seeds)} seeds x {len(cols)} {unit}s")


def seed_level_evidence(table: pd.DataFrame, a: str, b: str, value: str) -> Evidence:
    """``value(a) - value(b)`` per training seed (one number per model), paired by seed.

    Interval: Student t over the paired seed differences (df = seeds - 1); p: paired t-test.
    One seed gives no interval at all, so it is refused.
    """
    va = table[table["method"] == a].set_index("train_seed")[value]
    vb = table[table["method"] == b].set_index("train_seed")[value]
    seeds = va.index.intersection(vb.index)
    if len(seeds) < 2:
        raise ValueError(f"need >= 2 training seeds measured for {a!r} and {b!r}, got {len(seeds)}")
    d = (va.loc[seeds] - vb.loc[seeds]).to_numpy(float)
    eff, se = float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))
    half = float(sps.t.ppf(0.975, len(d) - 1) * se)
    p = float(sps.ttest_1samp(d, 0.0).pvalue) if se > 0 else (0.0 if eff != 0 else 1.0)
    return Evidence(eff, eff - half, eff + half, p, f"{len(seeds)} seeds (t-interval)")


def tier_mean_success(
    episodes: pd.DataFrame, protocol: str, solver: str, budgets: Sequence[str]
) -> pd.DataFrame:
    """Per (method, seed, pair): success averaged over ``budgets`` (SCALE's per-solver mean)."""
    t = episodes[
        (episodes["protocol"] == protocol)
        & (episodes["solver"] == solver)
        & episodes["budget"].isin(list(budgets))
        & (episodes["method"] != "random")
    ]
    if t.empty:
        raise ValueError(f"no episodes for {protocol}/{solver} at {list(budgets)}")
    n_b = t.groupby(["method", "train_seed", "episode"])["budget"].nunique()
    if (n_b != len(budgets)).any():
        raise ValueError(f"not every arm was evaluated at all of {list(budgets)}")
    return t.groupby(["method", "train_seed", "episode"])["success"].mean().reset_index()


def paper_difference(table: str, a: str, b: str, scale: float = 1.0, **filters: str) -> float:
    """``value(a) - value(b)`` of a reference table (mean over matching rows), times ``scale``.

    ``scale=0.01`` turns the papers' percent into our fractions.
    """
    ref = reference_numbers(table=table, **filters)
    va = ref[ref["method"] == a]["value"]
    vb = ref[ref["method"] == b]["value"]
    if va.empty or vb.empty:
        raise ValueError(f"reference table {table!r} has no {a!r} or {b!r} rows for {filters}")
    return float(scale * (va.mean() - vb.mean()))
