"""Claim by claim: does this book's run reproduce what the papers report?

A :class:`Claim` is a directional statement about the difference between two arms on one
measure ("SCALE's top-2 PCs carry more of q than LeWM's": ``effect = m(scale) - m(lewm) > 0``),
with the smallest effect that would matter (``min_effect``, per measure: :data:`MIN_EFFECTS`,
or a share of the baseline's level where the measure is relative by nature:
:data:`RELATIVE_MIN_EFFECTS`). Its :class:`Evidence` is our measured effect with a 95 %
interval. The verdict is a rule fixed before looking at the labels it gives, applied to a
family of claims together (:func:`verdict_table`), so that testing many claims does not
manufacture "reproduced" rows by chance:

* **reproduced**: the one-sided test of "the effect exceeds ``threshold + min_effect`` in the
  claimed direction" rejects at 2.5 % after Holm's correction within the claim's family. The
  test reads the same distribution as the 95 % interval the page shows
  (:meth:`Evidence.p_beyond`), and at 2.5 % one-sided it rejects exactly when that interval
  lies beyond ``threshold + min_effect``: a row never reads "reproduced" beside an interval
  that reaches the threshold (Holm only asks for more);
* **contradicted**: the family-wise (Bonferroni-widened) interval of the same distribution,
  which contains the displayed one, lies entirely on the other side of the threshold;
* **below this run's resolution**: neither of the above, and the paper's own effect (where it
  is comparable) is smaller than the smallest effect this run could detect, :func:`resolution`
  (80 % power at the claim's own spread, seeds and family): the run could not have reproduced
  the paper even if the paper is exactly right, so the row must not read as if it were wrong;
* **not detected at this scale**: the family-wise interval rules out an effect of
  ``min_effect`` in the claimed direction without showing the opposite;
* **inconclusive**: otherwise (the data cannot tell), and always when the interval has no
  width (every difference equal: both arms at 0 of n pairs, or at n of n) or when the
  evidence rests on one trained model per arm (:func:`judged`): the claims are about training
  methods, and an interval over one model's pairs measures that model, not the spread between
  models the method trains. Each label carries its reason (:func:`reason`) and what would
  change it (:func:`what_would_flip`); :data:`LABEL_MEANINGS` says each in a sentence.

Two more labels are not verdicts: **holds by construction** (:data:`BY_CONSTRUCTION`), a
statement our implementation makes true whatever the data (the planner runs the same networks,
so there is no planning-time overhead; κ's clamp keeps cond Λ <= κ): checking it checks our
code, not the paper; and **not tested** (:data:`NOT_TESTED`), where what the claim is about is
absent from this run (DINO-WM's claims are about DINOv2's published features; an offline
stand-in replaces them). Both stay out of every family and every count of tested claims. What
a paper's argument assumes of the trained models (LeWM near-isotropic, Λ selected) is a
reading shown beside the claims it informs (``Claim.informs``), never a gate: the papers state
their claims unconditionally.

**Families** (:func:`family_of`): each paper's headline claims (``Claim.primary``: the claims
its abstract makes, each with the paper's sentence) are its *primary* family, judged first; its
other claims are its *secondary* family; a paper's claim on a task the paper never evaluated is
our extension (``Claim.extension``), in a family of its own per paper. Holm runs within a
family, so the headline neither spends nor borrows the correction of the many secondary claims.

A claim "in every cell" holds only where its sign holds in each cell on that cell's own
evidence (the intersection-union test, :func:`every_evidence`): its p-value is the largest of
the cells', and the row shows that weakest cell.

**Intervals: the training seed is the unit.** A claim is about a training method, so its
uncertainty is first the spread between models the method trains. One number per model
(probes, spectra): the paired Student t over training seeds (:func:`seed_mean_evidence`,
df = seeds - 1). A measure per (model, pair or start): the crossed two-way interval of
:func:`crossed_t_interval`, whose variance adds the seed component and the component shared by
the evaluation units, read with seeds - 1 degrees of freedom (the seed mean's t tail). A
two-stage bootstrap (:mod:`jepa_geometry.stats`) resamples three seeds into ten distinct outcomes
and ignores that tail: where the seeds really differ it covers well below 95 % at three seeds, which
``benchmarks/bench_coverage.py`` measures beside this rule's coverage. Tasks pooled: the mean of
the tasks' effects with Welch-Satterthwaite's df (:func:`pooled_evidence`).

The papers' magnitudes are shown beside ours and decide only the resolution label: they were
measured in another setting (a ViT at 224 px, D = 192), so only the sign of a claim, beyond the
smallest effect that matters, is tested at the laptop scale.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

BELOW_RESOLUTION = "below this run's resolution"
VERDICTS: tuple[str, ...] = (
    "reproduced",
    "contradicted",
    BELOW_RESOLUTION,
    "not detected at this scale",
    "inconclusive",
)
"""The labels of a tested claim, in the rule's order."""
NOT_TESTED = "not tested (subject absent)"
"""The label of a claim whose subject is absent from this run (DINOv2's published features,
replaced by an offline stand-in): kept with its numbers, never judged."""
BY_CONSTRUCTION = "holds by construction (not tested)"
"""The label of a statement our implementation makes true whatever the data (the planner runs
the same networks for every arm; κ's clamp keeps cond Λ <= κ): checking it checks our code, not
the paper, so it is never "reproduced", and it stays out of every family and count of tested
claims."""
LABELS: tuple[str, ...] = (*VERDICTS, BY_CONSTRUCTION, NOT_TESTED)
"""Every label a claim's row can carry: the verdicts, then the two that are not verdicts."""
ALPHA = 0.05  # family-wise error rate of a family of claims (two-sided; one-sided ALPHA / 2)
POWER = 0.8  # the power at which a run's resolution is stated (:func:`resolution`)
MIN_MODELS = 2  # trained models per arm a verdict about a training method needs (judged)
PRIMARY, SECONDARY, EXTENSION = "primary", "secondary", "ours (extension)"
"""The kinds of family within a paper (:func:`family_of`)."""
# The smallest effect that would matter, per measure (claim units), fixed before the rerun:
# 3 points of success; 0.02 of variance share; 0.05 of R²; 0.1 of the P90/P10 ratio; 0.02 of
# Kendall τ; rollout error: RELATIVE_MIN_EFFECTS; 0.01 of ordering agreement; 0.05 of
# Spearman ρ; none beyond the stated tolerance for the log planning time (a claim of no
# overhead); for the 2-D toy of chapter 3 (added with its claims, after its runs existed, at
# the values of the measures they resemble), 0.01 of relative prediction error and 0.01 of
# normalized regret.
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
RELATIVE_MIN_EFFECTS: dict[str, float] = {"rollout_error": 0.05}
"""Measures whose smallest effect that matters is a share of the baseline's own level, not an
absolute amount: a rollout error is a distance in the model's own latent units, which differ by
task and model size (ours 0.014-0.023 at laptop, SCALE's 0.035-2.4), so an absolute 0.01 asks
for most of the error on one task and nothing on another. 5 % of the baseline's level is about
a third of the smallest relative reduction SCALE reports where it reports one (PointMaze -13 %);
the claim's ``min_effect`` is this share times the baseline arm's mean
(:func:`relative_min_effect`)."""
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
LABEL_MEANINGS: dict[str, str] = {
    "reproduced": "the claim holds: its 95 % interval lies beyond the smallest effect that "
    "matters, in the claimed direction, and stays so after Holm's correction within its family "
    f"(one-sided p < {ALPHA / 2:g})",
    "contradicted": "the opposite holds: the family-wise interval (the 95 % one widened over "
    "the claims of its family) lies entirely on the other side of the claim's threshold",
    BELOW_RESOLUTION: "neither, and the paper's own effect is smaller than the smallest effect "
    f"this run detects at {100 * POWER:.0f} % power: the run could not have reproduced it even "
    "were the paper right (only a claim with a paper's effect can read so)",
    "not detected at this scale": "the family-wise interval rules out the smallest effect that "
    "matters in the claimed direction, without showing the opposite",
    "inconclusive": "otherwise: the data cannot tell; always when the evidence rests on one "
    "trained model per arm or its interval has no width (a claim about a training method needs "
    "the spread between the models it trains)",
}
"""Each label of :data:`VERDICTS` in one sentence, the rule of this module's docstring as a
page's glossary says it."""


def min_effects_table() -> pd.DataFrame:
    """The smallest effect that matters per measure (:data:`MIN_EFFECTS`, or a share of the
    baseline's level: :data:`RELATIVE_MIN_EFFECTS`), as the book shows the rule: one row per
    measure, its words and key."""
    return pd.DataFrame(
        [
            {
                "measure": MEASURE_WORDS[k],
                "key": k,
                "smallest effect that matters": f"{100 * RELATIVE_MIN_EFFECTS[k]:g} % of the "
                "baseline's level"
                if k in RELATIVE_MIN_EFFECTS
                else f"{v:g}",
            }
            for k, v in MIN_EFFECTS.items()
        ]
    )


def relative_min_effect(measure: str, baseline_level: float) -> float:
    """The smallest effect that matters for ``measure`` at the baseline's ``baseline_level``:
    :data:`RELATIVE_MIN_EFFECTS` times ``|baseline_level|`` for a relative measure, else
    :data:`MIN_EFFECTS`."""
    if measure in RELATIVE_MIN_EFFECTS:
        return RELATIVE_MIN_EFFECTS[measure] * abs(float(baseline_level))
    return MIN_EFFECTS[measure]


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
    paper_value: float | None = None  # the paper's m(a) - m(b) even where not comparable
    unit: str = ""  # display unit of effects, e.g. "pp"
    display_scale: float = 1.0  # effects are shown times this (100 for success in pp)
    reference: str = ""  # id of the reference-file table holding the paper's numbers, if any
    computed_in: str = ""  # the MyST label of the section whose measurements are the evidence
    min_effect: float = 0.0  # the smallest effect that matters, beyond the threshold
    requires: tuple[str, ...] = ()  # what must be present for the claim to be tested at all
    extension: bool = False  # a paper's claim on a task the paper did not evaluate (ours)
    primary: bool = False  # one of the paper's headline claims (its primary family)
    headline: str = ""  # the paper's sentence a primary claim comes from
    informs: tuple[str, ...] = ()  # premises read beside the claim (never gates)
    by_construction: bool = False  # our code makes it true: BY_CONSTRUCTION, never judged

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
    variance_parts: tuple[float, float] | None = field(default=None, repr=False, compare=False)
    """``(v_seed, v_fixed)`` with ``se² = v_seed / models + v_fixed``: how the standard error
    would shrink with more training seeds at the same spread (:func:`seeds_to_decide`)."""

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
    if claim.by_construction:
        return BY_CONSTRUCTION
    if not judged(ev):
        return "inconclusive"
    p = one_sided_p(claim, ev) if p_holm is None else p_holm
    lo, hi = family_interval(ev, m)
    upper = max(claim.direction * lo, claim.direction * hi)  # in the claimed direction
    if p < ALPHA / 2:
        return "reproduced"
    if upper < claim.threshold:
        return "contradicted"
    if paper_below_resolution(claim, ev, m):
        return BELOW_RESOLUTION
    if upper < claim.threshold + claim.min_effect:
        return "not detected at this scale"
    return "inconclusive"


def resolution(claim: Claim, ev: Evidence, m: int = 1) -> float:
    """The smallest true effect (in the claimed direction) this run reproduces with
    :data:`POWER`: ``threshold + min_effect + (t_{1 - α/(2m), df} + t_{POWER, df}) se``, the
    one-sided test at the first step of Holm's correction over the ``m`` claims of its family
    (Bonferroni's level, which Holm's first step is), at the evidence's own standard error and
    degrees of freedom. ``inf`` where the evidence cannot judge a training method
    (:func:`judged`)."""
    if not judged(ev):
        return float("inf")
    df = ev.df if ev.replicates is None else np.inf
    q = float(sps.t.ppf(1 - ALPHA / (2 * max(m, 1)), df) + sps.t.ppf(POWER, df))
    return claim.threshold + claim.min_effect + q * ev.standard_error()


def paper_below_resolution(claim: Claim, ev: Evidence, m: int = 1) -> bool:
    """Whether the paper's own effect (where comparable) lies below :func:`resolution`: the run
    could not have reproduced it even if it is exactly right."""
    if claim.paper_effect is None:
        return False
    return claim.direction * claim.paper_effect < resolution(claim, ev, m)


def reason(claim: Claim, ev: Evidence, p_holm: float, m: int, label: str) -> str:
    """Why ``claim`` reads ``label`` (:func:`verdict`), in a few words a reader can check
    against the row's interval."""
    bound = claim.threshold + claim.min_effect
    if label == BY_CONSTRUCTION:
        return "our code makes it true (the planner runs the same networks)"
    if label == NOT_TESTED:
        return "what it is about is absent from this run"
    if label == "reproduced":
        return f"interval beyond the minimum effect; Holm p < {ALPHA / 2:g} in a family of {m}"
    if label == "contradicted":
        return f"family-wise interval ({m} claims) on the other side of the claim"
    if label == BELOW_RESOLUTION:
        res = resolution(claim, ev, m)
        k = claim.display_scale
        return (
            f"the paper's effect {k * claim.direction * (claim.paper_effect or 0.0):.3g} is "
            f"below the {k * res:.3g} this run detects at {POWER:.0%} power"
        )
    if label == "not detected at this scale":
        return f"family-wise interval ({m} claims) rules out the minimum effect"
    if degenerate(ev):
        return "no spread measured" if np.isfinite(ev.low) else "one trained model per arm"
    if ev.models < MIN_MODELS:
        return "one trained model per arm"
    lo, hi = ev.low, ev.high
    if min(claim.direction * lo, claim.direction * hi) > bound:
        return f"95 % interval beyond the minimum, not after Holm over {m} (p = {p_holm:.2g})"
    return "interval crosses the minimum effect"


def _in_direction(claim: Claim, x: float) -> str:
    """``x`` (a value in the claimed direction) as the tables print it, with the claim's unit."""
    return f"{format_effect(claim.display_scale * x)}{f' {claim.unit}' if claim.unit else ''}"


def directed_effect(claim: Claim, ev: Evidence) -> str:
    """Our effect and its 95 % interval in the claimed direction, ``direction * (m(a) - m(b))``,
    so that a positive value supports the claim whichever way the measure improves: a claim of
    a lower dispersion reads ``+0.126 [+0.0368, +0.216]`` where its effect is ``-0.126``."""
    d = claim.direction
    lo, hi = sorted((d * ev.low, d * ev.high))
    k = claim.display_scale
    u = f" {claim.unit}" if claim.unit else ""
    return (
        f"{format_effect(k * d * ev.effect)} [{format_effect(k * lo)}, {format_effect(k * hi)}]{u}"
    )


def directed_minimum(claim: Claim) -> str:
    """The claim's bound, ``threshold + min_effect``, in the claimed direction (as
    :func:`directed_effect` reads the effect): the value its interval must pass."""
    return _in_direction(claim, claim.threshold + claim.min_effect)


def what_would_flip(claim: Claim, ev: Evidence, p_holm: float, m: int, label: str) -> str:
    """What would change ``claim``'s ``label`` (:func:`verdict`, among the ``m`` claims of its
    family, Holm-adjusted ``p_holm``), in the claimed direction (:func:`directed_effect`): the
    bound of which interval must cross which value, with where it stands now. Evidence that
    cannot judge a training method (:func:`judged`) names what is missing instead."""
    bound = _in_direction(claim, claim.threshold + claim.min_effect)
    d = claim.direction
    low = min(d * ev.low, d * ev.high)
    fam_high = max(d * b for b in family_interval(ev, m)) if judged(ev) else np.inf
    now = f"Holm's p below {ALPHA / 2:g} (now {p_holm:.2g})"
    fam = f"the family-wise high end ({m} claims) {_in_direction(claim, fam_high)}"
    if label in (BY_CONSTRUCTION, NOT_TESTED):
        return "nothing in the data: it is not judged"
    if not judged(ev):
        if ev.models < MIN_MODELS:
            return f"at least {MIN_MODELS} trained models per arm (seeds), then the rule reads it"
        return "a spread between the differences (every one is equal here)"
    if label == "reproduced":
        return (
            f"no longer holds if the 95 % low end {_in_direction(claim, low)} falls to {bound} "
            f"or Holm's p (now {p_holm:.2g}) reaches {ALPHA / 2:g}"
        )
    if label == "contradicted":
        return f"no longer contradicted if {fam} reaches {_in_direction(claim, claim.threshold)}"
    if label == BELOW_RESOLUTION:
        return "decided once the run resolves the paper's effect: more training seeds"
    hold = f"holds if the 95 % low end {_in_direction(claim, low)} passes {bound} with {now}"
    if label == "not detected at this scale":
        return f"inconclusive if {fam} reaches {bound}; {hold}"
    return f"{hold}; not detected if {fam} falls below {bound}"


def seeds_to_decide(claim: Claim, ev: Evidence, m: int = 1, most: int = 50) -> int | None:
    """How many training seeds would decide ``claim`` at its measured effect and spread: the
    fewest ``S`` at which ``|direction * effect - (threshold + min_effect)| >= (t_{1 - α/(2m),
    S - 1} + t_{POWER, S - 1}) se(S)``, with ``se(S)² = v_seed / S + v_fixed``
    (``Evidence.variance_parts``: the component shared by the evaluation units does not shrink
    with seeds): at ``S`` seeds the interval lies on one side of the minimum effect with
    :data:`POWER` if the effect and the spreads are what was measured. None where the evidence
    has no spread between models to scale (one model per arm, whose interval over its units
    measures that model only: :func:`judged`; no width) or ``most`` seeds would not do."""
    if ev.variance_parts is None or not judged(ev):
        return None
    v_seed, v_fixed = ev.variance_parts
    gap = abs(claim.direction * ev.effect - (claim.threshold + claim.min_effect))
    for n in range(max(ev.models, MIN_MODELS), most + 1):
        q = float(sps.t.ppf(1 - ALPHA / (2 * max(m, 1)), n - 1) + sps.t.ppf(POWER, n - 1))
        if gap >= q * np.sqrt(v_seed / n + v_fixed):
            return n
    return None


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


def family_of(claim: Claim) -> tuple[str, str]:
    """The family ``claim`` is corrected in: ``(paper, kind)`` with kind :data:`PRIMARY` (a
    headline claim of the paper), :data:`SECONDARY` (its other claims) or :data:`EXTENSION`
    (its claim on a task it never evaluated, ours)."""
    if claim.extension:
        return claim.paper, EXTENSION
    return claim.paper, PRIMARY if claim.primary else SECONDARY


def judged_in_family(claim: Claim, tested_claim: bool) -> bool:
    """Whether ``claim`` belongs to a family at all: tested, and not true by construction."""
    return tested_claim and not claim.by_construction


def family_holm(
    items: Sequence[tuple[Claim, Evidence]], tested_mask: Sequence[bool]
) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted one-sided p-values and family sizes of ``items``, Holm run within each
    family (:func:`family_of`); claims not tested or true by construction are in none (their
    p and family size are NaN and 0)."""
    p = np.full(len(items), np.nan)
    size = np.zeros(len(items), dtype=int)
    families: dict[tuple[str, str], list[int]] = {}
    for i, ((c, _), t) in enumerate(zip(items, tested_mask, strict=True)):
        if judged_in_family(c, t):
            families.setdefault(family_of(c), []).append(i)
    for idx in families.values():
        p[idx] = holm([one_sided_p(*items[i]) for i in idx])
        size[idx] = len(idx)
    return p, size


def format_effect(x: float) -> str:
    """An effect as the tables print it: three significant digits, signed, no ``-0``."""
    return f"{0.0 if abs(x) < 1e-9 else x:+.3g}"


def directed_bound(claim: Claim, value: float) -> str:
    """``value`` (a bound in the claimed direction) as a bound on the effect itself, with the
    claim's direction: ``"> +3 pp"`` for a gain, ``"< -0.001"`` for a reduction."""
    k, u = claim.display_scale, f" {claim.unit}" if claim.unit else ""
    side = ">" if claim.direction > 0 else "<"
    return f"{side} {format_effect(k * claim.direction * value)}{u}"


def verdict_table(
    items: Sequence[tuple[Claim, Evidence]], tested_mask: Sequence[bool] | None = None
) -> pd.DataFrame:
    """One row per claim: statement, measure, the paper's effect, ours with its 95 % interval,
    the claim's bound (the smallest effect that matters, in the claim's direction), the
    smallest effect this run could detect (:func:`resolution`), the Holm-adjusted p-value
    within its family (:func:`family_holm`), the label and its reason (:func:`reason`), and
    the training seeds that would decide it (:func:`seeds_to_decide`). A claim marked untested
    in ``tested_mask`` (default: all tested; see :func:`tested`) keeps its numbers and reads
    :data:`NOT_TESTED`; one true by construction reads :data:`BY_CONSTRUCTION`."""
    mask = [True] * len(items) if tested_mask is None else list(tested_mask)
    if len(mask) != len(items):
        raise ValueError(f"tested_mask has {len(mask)} entries for {len(items)} claims")
    p_holm, size = family_holm(items, mask)
    rows = []
    for (claim, ev), p, m, ok in zip(items, p_holm, size, mask, strict=True):
        k, u = claim.display_scale, f" {claim.unit}" if claim.unit else ""
        paper = "" if claim.paper_effect is None else f"{format_effect(k * claim.paper_effect)}{u}"
        if claim.by_construction:
            label = BY_CONSTRUCTION
        elif not ok:
            label = NOT_TESTED
        else:
            label = verdict(claim, ev, float(p), int(m))
        res = resolution(claim, ev, int(m)) if m else float("inf")  # no family: not judged
        decide = seeds_to_decide(claim, ev, int(m)) if m else None
        rows.append(
            {
                "paper": claim.paper,
                "claim": claim.statement,
                "measure": claim.measure,
                "paper's effect": paper + (f" ({claim.paper_note})" if claim.paper_note else ""),
                "our effect [95% CI]": f"{format_effect(k * ev.effect)} "
                f"[{format_effect(k * ev.low)}, {format_effect(k * ev.high)}]{u}",
                "min effect": directed_bound(claim, claim.threshold + claim.min_effect),
                "resolution": directed_bound(claim, res) if np.isfinite(res) else "none",
                "p (Holm)": float(p),
                "units": ev.units,
                "requires": ", ".join(claim.requires),
                "informed by": ", ".join(claim.informs),
                "family": family_of(claim)[1],
                "verdict": label,
                "reason": reason(claim, ev, float(p), int(m), label),
                "seeds to decide": "" if decide is None else decide,
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


def crossed_t_interval(d: np.ndarray) -> tuple[float, float, float, tuple[float, float]]:
    """The mean of a (training seeds x units) matrix ``d`` of paired differences with the
    standard error of a crossed two-way random-effects layout, seeds and units both sampled,
    and the training seed as the unit of the degrees of freedom.

    With ``d_su = μ + a_s + b_u + e_su`` (seed, unit and residual components), the grand mean's
    variance is ``σ_a²/S + σ_b²/U + σ_e²/(S U)``. From the mean squares of the layout
    (``MS_s = U var_s(row means)``, ``MS_u = S var_u(column means)``, ``MS_e`` the residual's),
    ``E[MS_s] = U σ_a² + σ_e²`` and ``E[MS_u] = S σ_b² + σ_e²``, so
    ``se² = (MS_s + max(MS_u - MS_e, 0)) / (S U)``, read with ``S - 1`` degrees of freedom:
    the seed mean square, estimated from ``S`` models, dominates what is uncertain about it.
    Satterthwaite's df, which rises above ``S - 1`` exactly when ``MS_s`` comes out small,
    covered 0.93 at three seeds in ``benchmarks/bench_coverage.py`` (and fell below 1 on rare
    draws); ``S - 1`` covers at least the nominal 0.95 there. One seed: the t interval over its
    units (df = U - 1), which measures that model only (:func:`judged`).

    Returns ``(mean, se, df, (v_seed, v_fixed))`` with ``se² = v_seed / S + v_fixed``.
    """
    x = np.asarray(d, dtype=float)
    if x.ndim != 2 or x.size == 0:
        raise ValueError(f"d must be a (seeds, units) matrix, got shape {x.shape}")
    s, u = x.shape
    mean = float(x.mean())
    if u < 2:
        raise ValueError(f"the crossed interval needs at least 2 units per seed, got {u}")
    if s == 1:
        var_u = float(x[0].var(ddof=1))
        return mean, float(np.sqrt(var_u / u)), float(u - 1), (var_u / u, 0.0)
    rows, cols = x.mean(axis=1), x.mean(axis=0)
    ms_s = u * float(rows.var(ddof=1))
    ms_u = s * float(cols.var(ddof=1))
    resid = x - rows[:, None] - cols[None, :] + mean
    ms_e = float((resid**2).sum() / ((s - 1) * (u - 1)))
    extra = max(ms_u - ms_e, 0.0)
    se2 = (ms_s + extra) / (s * u)
    return mean, float(np.sqrt(se2)), float(s - 1), (ms_s / u, extra / (s * u))


def paired_unit_evidence(table: pd.DataFrame, a: str, b: str, value: str, unit: str) -> Evidence:
    """Mean of ``value(a) - value(b)`` over (seed, unit), both arms measured on the same units.

    ``table`` has columns arm, train_seed, ``unit`` and ``value`` (e.g. per-start Kendall τ,
    per-pair success averaged over tiers). Interval and test: the Student t of
    :func:`crossed_t_interval` (seeds and units crossed, seeds - 1 df), one distribution
    for both, so the verdict reads the interval the page shows. ``models``: the training seeds
    paired (one seed: an interval over that model's units only, :func:`judged`).
    """
    wa = _matrix(table[table["arm"] == a], value, unit)
    wb = _matrix(table[table["arm"] == b], value, unit)
    seeds = wa.index.intersection(wb.index)
    cols = wa.columns.intersection(wb.columns)
    if len(seeds) == 0 or len(cols) == 0:
        raise ValueError(f"no common (seed, {unit}) units between {a!r} and {b!r}")
    d = wa.loc[seeds, cols].to_numpy(float) - wb.loc[seeds, cols].to_numpy(float)
    label = UNIT_LABELS.get(unit, f"{unit}s")
    seeds_label = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}"
    units = f"{seeds_label} x {len(cols)} {label} (t, df {{df:g}})"
    return t_evidence(*crossed_t_interval(d), units=units, models=len(seeds))


def t_evidence(
    effect: float, se: float, df: float, parts: tuple[float, float], units: str, models: int
) -> Evidence:
    """The Student t 95 % interval ``effect ± t_{0.975, df} se`` as :class:`Evidence` (``units``
    may name ``{df}``); no width when ``se`` is 0 (:func:`degenerate`)."""
    half = float(sps.t.ppf(1 - ALPHA / 2, df)) * se
    return Evidence(
        effect,
        effect - half,
        effect + half,
        units.format(df=df),
        models,
        df=df,
        variance_parts=parts,
    )


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
    var = float(d.var(ddof=1))
    return t_evidence(
        float(d.mean()),
        float(np.sqrt(var / d.size)),
        float(d.size - 1),
        (var, 0.0),
        f"{d.size} seeds (t-interval)",
        d.size,
    )


def pooled_evidence(parts: Sequence[Evidence], label: str = "tasks") -> Evidence:
    """The mean of independent effects (one per task: separately trained models, separate
    pairs): effect ``mean(e_t)``, standard error ``sqrt(sum se_t²) / k`` (each part's
    :meth:`Evidence.standard_error`), and the Student t 95 % interval with Welch-Satterthwaite's
    degrees of freedom ``(sum se_t²)² / sum(se_t⁴ / df_t)``, which the test reads too: each
    task's mean rests on a few seeds, so a normal interval would be too narrow. A part
    without a finite interval leaves the mean without one; ``models`` is the fewest of any part
    (a task planned with one trained model gives the mean no spread between models there)."""
    if not parts:
        raise ValueError("pooled_evidence needs at least one part")
    eff = float(np.mean([e.effect for e in parts]))
    units = f"{len(parts)} {label}: " + "; ".join(dict.fromkeys(e.units for e in parts))
    models = min(e.models for e in parts)
    if any(not (np.isfinite(e.low) and np.isfinite(e.high)) for e in parts):
        return Evidence(eff, -np.inf, np.inf, units, models)
    k = len(parts)
    var = [e.standard_error() ** 2 / k**2 for e in parts]
    dfs = [e.df if e.replicates is None else np.inf for e in parts]
    den = sum(v**2 / d for v, d in zip(var, dfs, strict=True) if np.isfinite(d))
    df = sum(var) ** 2 / den if den > 0 else np.inf
    seed_parts = [e.variance_parts for e in parts]
    combined = None
    if all(p is not None for p in seed_parts):  # each se_t² = v_seed / S + v_fixed at S seeds
        combined = (
            sum(p[0] for p in seed_parts) / k**2,
            sum(p[1] for p in seed_parts) / k**2,
        )
    return t_evidence(eff, float(np.sqrt(sum(var))), float(df), combined, units, models)


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
