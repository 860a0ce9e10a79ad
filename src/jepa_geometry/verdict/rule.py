"""Claim by claim: does this book's run reproduce what the papers report?

A :class:`Claim` is a directional statement about the difference between two arms on one
measure ("SCALE's top-2 PCs carry more of q than LeWM's": ``effect = m(scale) - m(lewm) > 0``),
with the smallest effect that would matter (``min_effect``, fixed per measure before any
result: :data:`MIN_EFFECTS`). Its :class:`Evidence` is our measured effect with a 95 % interval.
The verdict is a rule fixed before looking at any result, applied to all the claims of a
chapter together (:func:`verdict_table`), so that testing about twenty claims does not
manufacture "reproduced" rows by chance:

* **reproduced**: the one-sided test of "the effect exceeds ``threshold + min_effect`` in the
  claimed direction" rejects at 2.5 % after Holm's correction across the claims. The test
  reads the same distribution as the 95 % interval the page shows (the bootstrap replicates,
  or the t interval: :meth:`Evidence.p_beyond`), and at 2.5 % one-sided it rejects exactly
  when that interval lies beyond ``threshold + min_effect``: a row never reads "reproduced"
  beside an interval that reaches the threshold (Holm only asks for more);
* **contradicted**: the family-wise (Bonferroni-widened) interval of the same distribution,
  which contains the displayed one, lies entirely on the other side of the threshold;
* **not detected at this scale**: that interval rules out an effect of ``min_effect`` in the
  claimed direction without showing the opposite (the effect, if any, is too small here);
* **inconclusive**: otherwise (the data cannot tell), and always when the interval has no
  width: a bootstrap that sees every (seed, unit) difference equal (both arms at 0 of n pairs,
  or both at n of n) has measured no spread, not an exact effect; and always when the
  evidence rests on one trained model per arm (:func:`judged`): the claims are about training
  methods, and an interval over one model's pairs or starts measures that model, not the
  spread between models the method trains (a per-model claim on one seed has no interval at
  all, the same rule);
* **not tested (precondition failed)**: the claim assumes something of the trained models
  (:func:`~jepa_geometry.verdict.preconditions.preconditions`) that does not hold here, so its
  measurement does not test what the paper means. Such a claim is kept in the table with its
  numbers but is not judged: it is out of Holm's family and out of the counts of tested
  claims.

A claim "in every cell" holds only where it holds in each cell on that cell's own evidence
(the intersection-union test, :func:`every_evidence`): its p-value is the largest of the
cells', and the row shows that weakest cell.

A paper's claim on a task the paper never evaluated is our extension (``Claim.extension``): it
is judged by the same rule in a family of its own, so it neither spends nor borrows the
correction of the paper's own claims.

The papers' magnitudes are shown beside ours but decide nothing: they were measured in another
setting (a ViT at 224 px, D = 192), so only the sign of a claim is tested at the laptop scale.
:func:`~jepa_geometry.verdict.preconditions.preconditions` lists, before the claims, what a
claim assumes about the trained models (LeWM's baseline near-isotropic; ΛReg's Λ actually
selected).

Intervals come from :mod:`jepa_geometry.stats`: success differences from the paired two-stage
bootstrap over training seeds and pairs; per-start or per-goal measures (rank correlations,
cost landscapes) from the same bootstrap over seeds and units; one-number-per-model measures
(probes, spectra) from a paired t-interval over training seeds, wide with three seeds, as it
should be. The McNemar test of the planning tables pools (seed, pair) units as if
independent, so no verdict reads it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from jepa_geometry import stats

VERDICTS: tuple[str, ...] = (
    "reproduced",
    "contradicted",
    "not detected at this scale",
    "inconclusive",
)
"""The labels of a tested claim, in the rule's order."""
NOT_TESTED = "not tested (precondition failed)"
LABELS: tuple[str, ...] = (*VERDICTS, NOT_TESTED)
"""Every label a claim's row can carry: the four verdicts, and :data:`NOT_TESTED`."""
BY_CONSTRUCTION = "holds by construction (not tested)"
"""The label of a statement our implementation makes true whatever the data (κ's clamp keeps
cond Λ <= κ): checking it checks our code, not the paper, so it is never "reproduced", and it
stays out of every family and count of tested claims."""
ALPHA = 0.05  # family-wise error rate of a chapter's claims (two-sided; one-sided ALPHA / 2)
MIN_MODELS = 2  # trained models per arm a verdict about a training method needs (judged)
# The smallest effect that would matter, per measure (claim units), fixed before the rerun:
# 3 points of success; 0.02 of variance share; 0.05 of R²; 0.1 of the P90/P10 ratio; 0.02 of
# Kendall τ; 0.01 of rollout error (relative); 0.01 of ordering agreement; 0.05 of Spearman ρ;
# none beyond the stated tolerance for the log planning time (a claim of no overhead); for the
# 2-D toy of chapter 3 (added with its claims, after its runs existed, at the values of the
# measures they resemble), 0.01 of relative prediction error and 0.01 of normalized regret.
MIN_EFFECTS: dict[str, float] = {
    "success": 0.03,
    "var_top2": 0.02,
    "r2_top2": 0.05,
    "r2_full_ridge": 0.0,
    "ratio_p90_over_p10": 0.1,
    "tau_geom": 0.02,
    "tau_pred": 0.02,
    "rollout_error": 0.01,
    "agree_enc": 0.01,
    "agree_pred": 0.01,
    "spearman": 0.05,
    "log_plan_seconds": 0.0,
    "prediction_error": 0.01,
    "normalized_regret": 0.01,
}
MEASURE_WORDS: dict[str, str] = {
    "success": "planning success (fraction of pairs reached)",
    "var_top2": "variance share of the top-2 PCs",
    "r2_top2": "ridge R² of q from the top-2 PCs",
    "r2_full_ridge": "ridge R² of q from the full embedding",
    "ratio_p90_over_p10": "distance-ratio dispersion P90/P10",
    "tau_geom": "Kendall τ, geometry channel",
    "tau_pred": "Kendall τ, predictor channel",
    "rollout_error": "rollout error (relative)",
    "agree_enc": "cost-ordering agreement of J_enc",
    "agree_pred": "cost-ordering agreement of J_pred",
    "spearman": "landscape Spearman ρ",
    "log_plan_seconds": "log wall time of planning a cell",
    "prediction_error": "held-out prediction error of the 2-D toy (relative)",
    "normalized_regret": "normalized planning regret of the 2-D toy",
}
"""Each measure of :data:`MIN_EFFECTS` in words, as the book's rule table names it."""
UNIT_LABELS = {"episode": "pairs", "start": "starts", "goal_index": "goals"}


def min_effects_table() -> pd.DataFrame:
    """The smallest effect that matters per measure (:data:`MIN_EFFECTS`), as the book shows
    the rule: one row per measure, its key and its words."""
    return pd.DataFrame(
        [
            {"measure": MEASURE_WORDS[k], "key": k, "smallest effect that matters": v}
            for k, v in MIN_EFFECTS.items()
        ]
    )


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
    unit: str = ""  # display unit of effects, e.g. "pp"
    display_scale: float = 1.0  # effects are shown times this (100 for success in pp)
    reference: str = ""  # id of the reference-file table holding the paper's numbers, if any
    computed_in: str = ""  # the chapter and section whose measurements are the evidence
    min_effect: float = 0.0  # the smallest effect that matters, beyond the threshold
    requires: tuple[str, ...] = ()  # the preconditions (see preconditions) the claim assumes
    extension: bool = False  # a paper's claim on a task the paper did not evaluate (ours)

    def __post_init__(self) -> None:
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {self.direction!r}")
        if not self.min_effect >= 0:
            raise ValueError(f"min_effect must be >= 0, got {self.min_effect!r}")


@dataclass(frozen=True)
class Evidence:
    """Our effect ``m(a) - m(b)`` with its 95 % interval, how it was obtained, and the sampling
    distribution the interval is read from, which is also the one every test of the claim
    reads (:meth:`bounds`, :meth:`p_beyond`): the label can never disagree with the interval.

    ``replicates``: bootstrap replicates of the effect (the interval is their percentile
    interval, :meth:`bounds`); without them the interval is ``effect ± q · se`` of a Student t
    with ``df`` degrees of freedom (``inf``: normal), so it must be centred on the effect.
    ``models``: the trained models per arm behind the effect (training seeds paired; for a
    combination of parts, the fewest of any part). Fewer than :data:`MIN_MODELS` leaves a
    claim about a training method untested by the data (:func:`judged`).
    """

    effect: float
    low: float
    high: float
    units: str  # e.g. "3 seeds x 200 pairs", "3 seeds (t-interval)"
    models: int
    replicates: np.ndarray | None = field(default=None, repr=False, compare=False)
    df: float = np.inf

    def __post_init__(self) -> None:
        if not self.low <= self.effect <= self.high:
            raise ValueError(f"effect {self.effect} outside its interval [{self.low}, {self.high}]")
        if self.models < 1:
            raise ValueError(f"models must be >= 1, got {self.models!r}")
        finite = np.isfinite(self.low) and np.isfinite(self.high)
        if self.replicates is None and finite:
            mid, half = (self.low + self.high) / 2, (self.high - self.low) / 2
            if abs(self.effect - mid) > 1e-9 * max(1.0, abs(half)):
                raise ValueError(
                    f"a t or normal interval is centred on its effect: {self.effect} is not "
                    f"the centre of [{self.low}, {self.high}] (pass the bootstrap replicates)"
                )
        elif self.replicates is not None and (self.low, self.high) != self.bounds(ALPHA / 2):
            raise ValueError("the interval is not the replicates' percentile interval")

    @classmethod
    def from_replicates(
        cls, effect: float, replicates: np.ndarray, units: str, models: int
    ) -> Evidence:
        """The evidence of bootstrap ``replicates`` of ``effect``: its interval is
        :meth:`bounds` at the 95 % level."""
        reps = np.asarray(replicates, dtype=float)
        lo, hi = _percentile_bounds(effect, reps, ALPHA / 2)
        return cls(effect, lo, hi, units, models, reps)

    def standard_error(self) -> float:
        """The standard error of the effect: the replicates' standard deviation, or the se of
        the t (normal) interval, ``(high - low) / (2 t_{0.975, df})``."""
        if self.replicates is not None:
            return float(np.std(self.replicates, ddof=1))
        return (self.high - self.low) / (2 * float(sps.t.ppf(1 - ALPHA / 2, self.df)))

    def bounds(self, tail: float) -> tuple[float, float]:
        """The interval leaving ``tail`` on each side: the percentile interval of the
        replicates (the lower bound the ``tail`` quantile, the upper the ``1 - tail`` quantile
        read from the top, both by the inverted empirical CDF; the effect always inside), or
        ``effect ± t_{1 - tail, df} se``. ``bounds(0.025)`` is the displayed 95 % interval;
        a smaller tail gives a wider interval containing it."""
        if not (np.isfinite(self.low) and np.isfinite(self.high)):
            return -np.inf, np.inf
        if self.replicates is not None:
            return _percentile_bounds(self.effect, self.replicates, tail)
        half = float(sps.t.ppf(1 - tail, self.df)) * self.standard_error()
        return self.effect - half, self.effect + half

    def p_beyond(self, h: float, direction: int) -> float:
        """One-sided p-value of H0 ``direction * effect <= h``, the inverse of :meth:`bounds`:
        ``p < tail`` exactly when the bound of ``bounds(tail)`` in ``direction`` lies beyond
        ``h``. Replicates: the share of them at or below ``h`` in ``direction`` (1 when the
        effect itself is); otherwise the t (normal) tail beyond ``h``. No finite interval, or
        one without width: 1."""
        if degenerate(self):
            return 1.0
        if self.replicates is not None:
            if direction * self.effect <= h:
                return 1.0
            return float(np.mean(direction * self.replicates <= h))
        return float(sps.t.sf((direction * self.effect - h) / self.standard_error(), self.df))


def _percentile_bounds(effect: float, reps: np.ndarray, tail: float) -> tuple[float, float]:
    """``(min(Q(tail), effect), max(-Q'(tail), effect))`` where ``Q`` is the inverted-CDF
    quantile of ``reps`` and ``Q'`` that of ``-reps``: with ``F(h) = mean(reps <= h)``,
    ``Q(tail) > h`` exactly when ``F(h) < tail``, and likewise from the top, which is what
    makes :meth:`Evidence.p_beyond` the inverse of the interval, ties included."""
    lo = float(np.quantile(reps, tail, method="inverted_cdf"))
    hi = -float(np.quantile(-reps, tail, method="inverted_cdf"))
    return min(lo, effect), max(hi, effect)


Z95 = float(sps.norm.ppf(0.975))


def one_sided_p(claim: Claim, ev: Evidence) -> float:
    """p-value of H0 "direction * effect <= threshold + min_effect" (no meaningful effect in
    the claimed direction), read from the same distribution as the displayed interval
    (:meth:`Evidence.p_beyond`): ``p < 0.025`` exactly when the displayed 95 % interval lies
    beyond ``threshold + min_effect``. Evidence that cannot judge a training method
    (:func:`judged`) gives p = 1."""
    if not judged(ev):
        return 1.0
    return ev.p_beyond(claim.threshold + claim.min_effect, claim.direction)


def degenerate(ev: Evidence) -> bool:
    """Whether ``ev``'s interval says nothing about uncertainty: a bound is infinite (one
    model, no interval) or the interval has no width (every resampled difference equal, as
    when both arms succeed on all pairs or on none)."""
    return not (np.isfinite(ev.low) and np.isfinite(ev.high)) or ev.high <= ev.low


def judged(ev: Evidence) -> bool:
    """Whether ``ev`` can decide a claim about a training method: its interval measures some
    uncertainty (not :func:`degenerate`) and it rests on at least :data:`MIN_MODELS` trained
    models per arm. An interval over the pairs or starts of one trained model measures that
    model's planning noise, not the spread between models trained by the same method, so
    its verdict would be about one model: the claim reads "inconclusive" (as a per-model
    claim on one seed, which has no interval at all)."""
    return not degenerate(ev) and ev.models >= MIN_MODELS


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values: ``max_{j <= i} min(1, (m - j + 1) p_(j))`` in
    increasing order of p, mapped back (controls the family-wise error rate)."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def family_interval(ev: Evidence, m: int) -> tuple[float, float]:
    """The 95 % interval widened to family-wise coverage over ``m`` claims (Bonferroni): the
    same distribution's interval at level ``1 - 0.05 / m`` (:meth:`Evidence.bounds`), which
    contains the displayed one."""
    return ev.bounds(ALPHA / (2 * max(m, 1)))


def verdict(claim: Claim, ev: Evidence, p_holm: float | None = None, m: int = 1) -> str:
    """The rule of this module's docstring, for one claim among ``m`` (``p_holm``: its Holm-
    adjusted p-value; alone, the unadjusted one)."""
    if not judged(ev):
        return "inconclusive"
    p = one_sided_p(claim, ev) if p_holm is None else p_holm
    lo, hi = family_interval(ev, m)
    upper = max(claim.direction * lo, claim.direction * hi)  # in the claimed direction
    if p < ALPHA / 2:
        return "reproduced"
    if upper < claim.threshold:
        return "contradicted"
    if upper < claim.threshold + claim.min_effect:
        return "not detected at this scale"
    return "inconclusive"


def tested(claims: Sequence[Claim], failed: Collection[str]) -> list[bool]:
    """Per claim, whether it is tested: its ``requires`` names no precondition in ``failed``
    (the preconditions that do not hold on its task)."""
    return [not any(r in failed for r in c.requires) for c in claims]


def tested_by_task(
    items: Sequence[tuple[str, Claim, Any]], failed: Mapping[str, Collection[str]] | None
) -> list[bool]:
    """:func:`tested` for ``(task, claim, ...)`` items, each against the preconditions that
    fail on its own task (``failed``: task -> names; None or a missing task: none failed)."""
    failed = failed or {}
    return [tested([item[1]], failed.get(item[0], ()))[0] for item in items]


def family_holm(
    items: Sequence[tuple[Claim, Evidence]], tested_mask: Sequence[bool]
) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted one-sided p-values and family sizes of ``items``: one family for the
    papers' claims, one for our extensions (``Claim.extension``), untested claims in neither
    (their p and family size are NaN and 0)."""
    p = np.full(len(items), np.nan)
    size = np.zeros(len(items), dtype=int)
    for ext in (False, True):
        idx = [
            i
            for i, ((c, _), t) in enumerate(zip(items, tested_mask, strict=True))
            if t and c.extension == ext
        ]
        if idx:
            p[idx] = holm([one_sided_p(*items[i]) for i in idx])
            size[idx] = len(idx)
    return p, size


def verdict_table(
    items: Sequence[tuple[Claim, Evidence]], tested_mask: Sequence[bool] | None = None
) -> pd.DataFrame:
    """One row per claim: statement, measure, the paper's effect, ours with its 95 % interval,
    the smallest effect that matters, the Holm-adjusted p-value within its family
    (:func:`family_holm`), verdict. A claim marked untested in ``tested_mask`` (default: all
    tested; see :func:`tested`) keeps its numbers and reads :data:`NOT_TESTED`."""

    def num(x: float) -> str:
        return f"{0.0 if abs(x) < 1e-9 else x:+.3g}"

    mask = [True] * len(items) if tested_mask is None else list(tested_mask)
    if len(mask) != len(items):
        raise ValueError(f"tested_mask has {len(mask)} entries for {len(items)} claims")
    p_holm, size = family_holm(items, mask)
    rows = []
    for (claim, ev), p, m in zip(items, p_holm, size, strict=True):
        k, u = claim.display_scale, f" {claim.unit}" if claim.unit else ""
        paper = "" if claim.paper_effect is None else f"{num(k * claim.paper_effect)}{u}"
        rows.append(
            {
                "paper": claim.paper,
                "claim": claim.statement,
                "measure": claim.measure,
                "paper's effect": paper + (f" ({claim.paper_note})" if claim.paper_note else ""),
                "our effect [95% CI]": f"{num(k * ev.effect)} [{num(k * ev.low)}, "
                f"{num(k * ev.high)}]{u}",
                "min effect": f"{num(k * (claim.threshold + claim.min_effect))}{u}",
                "p (Holm)": float(p),
                "units": ev.units,
                "requires": ", ".join(claim.requires),
                "family": "ours (extension)" if claim.extension else "paper",
                "verdict": verdict(claim, ev, float(p), int(m)) if m else NOT_TESTED,
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

    ``table`` has columns arm, train_seed, ``unit`` and ``value`` (e.g. per-start Kendall τ,
    per-pair success averaged over tiers). Interval and test: the replicates of the two-stage
    bootstrap over seeds and units (:meth:`Evidence.from_replicates`), one distribution for
    both, so the verdict reads the interval the page shows. ``models``: the training seeds
    paired (one seed: an interval over that model's units only, :func:`judged`).
    """
    wa = _matrix(table[table["arm"] == a], value, unit)
    wb = _matrix(table[table["arm"] == b], value, unit)
    seeds = wa.index.intersection(wb.index)
    cols = wa.columns.intersection(wb.columns)
    if len(seeds) == 0 or len(cols) == 0:
        raise ValueError(f"no common (seed, {unit}) units between {a!r} and {b!r}")
    d = wa.loc[seeds, cols].to_numpy(float) - wb.loc[seeds, cols].to_numpy(float)
    reps = stats.bootstrap_replicates(d if len(seeds) > 1 else d[0], seed=seed)
    label = UNIT_LABELS.get(unit, f"{unit}s")
    seeds_label = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}"
    units = f"{seeds_label} x {len(cols)} {label}"
    return Evidence.from_replicates(float(d.mean()), reps, units, len(seeds))


def seed_level_evidence(table: pd.DataFrame, a: str, b: str, value: str) -> Evidence:
    """``value(a) - value(b)`` per training seed (one number per model), paired by seed.

    Interval and test: Student t over the paired seed differences (df = seeds - 1; the test
    is :meth:`Evidence.p_beyond` of that interval). One seed gives no interval: (-inf, inf),
    so such a claim is always "inconclusive".
    """
    va = table[table["arm"] == a].set_index("train_seed")[value]
    vb = table[table["arm"] == b].set_index("train_seed")[value]
    seeds = va.index.intersection(vb.index)
    if len(seeds) == 0:
        raise ValueError(f"no training seed measured for both {a!r} and {b!r}")
    return seed_mean_evidence((va.loc[seeds] - vb.loc[seeds]).to_numpy(float))


def seed_mean_evidence(values: Sequence[float]) -> Evidence:
    """The mean of one number per trained model (a paired difference, or a measure of one arm)
    with its Student t 95 % interval over the models (df = models - 1), which the test reads
    too. One model gives no interval: (-inf, inf), so its claim is always "inconclusive"."""
    d = np.asarray(values, dtype=float)
    if d.size == 0:
        raise ValueError("seed_mean_evidence needs at least one model's value")
    if d.size == 1:  # no interval from one model: the verdict can only be inconclusive
        return Evidence(float(d[0]), -np.inf, np.inf, "1 seed (no interval)", 1)
    eff, se = float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))
    half = float(sps.t.ppf(1 - ALPHA / 2, d.size - 1) * se)
    return Evidence(
        eff, eff - half, eff + half, f"{d.size} seeds (t-interval)", d.size, df=d.size - 1
    )


def pooled_evidence(parts: Sequence[Evidence], label: str = "tasks") -> Evidence:
    """The mean of independent effects (one per task: separately trained models, separate
    pairs): effect ``mean(e_t)``, standard error ``sqrt(sum se_t^2) / k`` (each part's
    :meth:`Evidence.standard_error`), and the normal 95 % interval, which the test reads
    too. A part without a finite interval leaves the mean without one; ``models`` is the
    fewest of any part (a task planned with one trained model gives the mean no spread
    between models there)."""
    if not parts:
        raise ValueError("pooled_evidence needs at least one part")
    eff = float(np.mean([e.effect for e in parts]))
    units = f"{len(parts)} {label}: " + "; ".join(dict.fromkeys(e.units for e in parts))
    models = min(e.models for e in parts)
    if any(not (np.isfinite(e.low) and np.isfinite(e.high)) for e in parts):
        return Evidence(eff, -np.inf, np.inf, units, models)
    se = float(np.sqrt(sum(e.standard_error() ** 2 for e in parts)) / len(parts))
    return Evidence(eff, eff - Z95 * se, eff + Z95 * se, units, models)


def every_evidence(
    claim: Claim, parts: Sequence[Evidence], names: Sequence[str], label: str = "cells"
) -> Evidence:
    """Evidence for ``claim`` holding in *every* part (the intersection-union test): it holds
    only if it holds in each part on that part's own evidence, so its p-value is the largest
    of the parts' (:func:`one_sided_p`) and no correction across the parts is needed. The
    result is the weakest part itself (largest p; ties: the smallest bound in the claimed
    direction), named in ``units``: its effect and interval are the ones shown, and nothing
    is combined across parts. ``models`` is the fewest of any part, so one part resting on
    one trained model leaves the claim unjudged (:func:`judged`)."""
    if not parts or len(parts) != len(names):
        raise ValueError(f"every_evidence needs parts, one name each: {len(parts)}, {len(names)}")

    def weakness(i: int) -> tuple[float, float]:
        e = parts[i]
        return one_sided_p(claim, e), -min(claim.direction * e.low, claim.direction * e.high)

    i = max(range(len(parts)), key=weakness)
    units = f"weakest of {len(parts)} {label}: {names[i]}, {parts[i].units}"
    return replace(parts[i], units=units, models=min(e.models for e in parts))


def tier_mean_success(
    episodes: pd.DataFrame, protocol: str, solver: str, budgets: Sequence[str]
) -> pd.DataFrame:
    """Per (arm, seed, pair): success averaged over ``budgets`` (SCALE's per-solver mean)."""
    t = episodes[
        (episodes["protocol"] == protocol)
        & (episodes["solver"] == solver)
        & episodes["budget"].isin(list(budgets))
        & (episodes["arm"] != "random")
    ]
    if t.empty:
        raise ValueError(f"no episodes for {protocol}/{solver} at {list(budgets)}")
    n_b = t.groupby(["arm", "train_seed", "episode"])["budget"].nunique()
    if (n_b != len(budgets)).any():
        raise ValueError(f"not every arm was evaluated at all of {list(budgets)}")
    return t.groupby(["arm", "train_seed", "episode"])["success"].mean().reset_index()
