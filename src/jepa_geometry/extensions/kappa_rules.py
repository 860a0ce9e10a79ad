"""The rules of AnisoWM's κ sweep, on numbers (fixed before any model of the sweep was
trained; book: rec-kappa-sweep).

* *κ constrains*: every model's learned ``cond Λ <= κ (1 +`` :data:`COND_TOLERANCE` ``)``
  (:func:`within_bound`). Our clamp makes this true whatever the data, so it is checked (a
  broken bound would be a bug of ours: "contradicted") but never "reproduced": it reads
  :data:`~jepa_geometry.study.verdict.BY_CONSTRUCTION`, out of every family.
* *κ does not determine (Two-Room)*: at κ = 2 the allocation keeps evolving after cond Λ first
  reaches the bound (``cond Λ >= κ (1 -`` :data:`SATURATION_TOLERANCE` ``)``, :func:`saturated`):
  the relative change :func:`allocation_change` ``= ||v_end - v_sat|| / ||v_sat - 1||`` exceeds
  :data:`EVOLVE_MIN`, judged by the book's rule on the t-interval of its mean over the
  study's training seeds at κ = 2 (one seed: no interval, inconclusive). A model that never
  reaches its bound fails the precondition.
* *Spectra differ by environment*: at κ = 2, where the study has every training seed, the
  smallest distance between a Two-Room and a Push-T spectrum (:func:`spectrum_distance`) exceeds
  the largest distance between two seeds of one task (:func:`spectra_separation`); with one
  seed per task there is no within-task spread and the claim is inconclusive.
* *Not monotone*: κ_best is the κ > 1 with the highest success on the validation pairs (ties:
  the smaller κ, :func:`best_kappa`), never chosen on evaluation pairs; on the evaluation pairs
  the claim is an interior maximum of the whole curve, ``success(κ_best) - success(κ) > 0``
  beyond the verdict's minimum effect for success at *both* ends, κ = 1 and κ_max (the
  intersection-union test: the weaker comparison decides, :func:`non_monotone_evidence`), each
  on the paired bootstrap interval over pairs. A curve falling from κ = 1 beats κ_max but not
  κ = 1, so a monotone curve never reads "reproduced". If κ_best is κ_max there is nothing to
  measure there and the row is inconclusive. Each κ is one trained model, so by the book's rule
  on one-model evidence the row is inconclusive whatever its interval: the interval over pairs
  measures those models, not the effect of κ.
* *Best κ differs by environment*: κ_best (validation) of each task, shown (marked where a
  task's maximum is shared by several κ); one training run per κ gives no spread between
  models to tell two argmaxes apart, so the row is inconclusive (by the book's rule on
  one-model evidence).

The rows judged by the book's rule (after saturation, not monotone) are one Holm family
(:func:`~.kappa.kappa_verdicts`). The claims about what κ does (spectra differ, not monotone,
best κ differs) assume the book's precondition "Λ selected" on the sweep's models
(:func:`lambda_selected`); where it fails they read "not tested (precondition failed)". The
spectra rule is descriptive (one training run per κ; its within-task spread is the study's
seeds at κ = 2), as in the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from jepa_geometry import stats
from jepa_geometry.extensions.kappa_sweep import KappaError
from jepa_geometry.study.verdict import (
    DEPARTURE_MIN,
    Claim,
    Evidence,
    every_evidence,
)

COND_TOLERANCE = 1e-4  # relative: float32 softmax of the clamped α reaches κ within ~1e-6
SATURATION_TOLERANCE = 1e-3  # cond Λ >= κ (1 - this) counts as having reached the bound
EVOLVE_MIN = 0.1  # the allocation moves by >= 10 % of its departure from isotropy after saturation


def within_bound(cond: float, kappa: float) -> bool:
    """``cond Λ <= κ (1 + COND_TOLERANCE)``: the bound holds."""
    return cond <= kappa * (1 + COND_TOLERANCE)


def saturated(cond: float, kappa: float) -> bool:
    """``cond Λ >= κ (1 - SATURATION_TOLERANCE)``, for κ > 1: Λ has reached its bound
    (at κ = 1 the bound pins Λ = I, so there is nothing to reach)."""
    return kappa > 1 and cond >= kappa * (1 - SATURATION_TOLERANCE)


def _conds(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.ndim != 2 or (v <= 0).any():
        raise KappaError(f"v must be a (steps, D) array of positive variances, got {v.shape}")
    return v.max(axis=1) / v.min(axis=1)


def saturation_step(steps: Sequence[int], v: np.ndarray, kappa: float) -> int | None:
    """The first logged step at which cond Λ reaches κ (:func:`saturated`), or None."""
    hit = [saturated(c, kappa) for c in _conds(v)]
    return int(steps[hit.index(True)]) if any(hit) else None


def allocation_change(steps: Sequence[int], v: np.ndarray, kappa: float) -> float:
    """How far the target allocation moves after cond Λ first reaches κ, relative to how far
    it had left isotropy then:

        ||v_end - v_sat||_2 / ||v_sat - 1||_2

    (v unsorted: *which* coordinates get the variance is the allocation). NaN if the bound is
    never reached."""
    v = np.asarray(v, dtype=float)
    first = saturation_step(steps, v, kappa)
    if first is None:
        return float("nan")
    v_sat = v[list(steps).index(first)]
    return float(np.linalg.norm(v[-1] - v_sat) / np.linalg.norm(v_sat - 1.0))


def spectrum_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Root-mean-square difference of two sorted spectra, each read at the same quantiles of
    its coordinates (``(i + 0.5) / D``; spectra of different D are interpolated)."""
    a, b = np.sort(np.asarray(a, float))[::-1], np.sort(np.asarray(b, float))[::-1]
    if a.size == 0 or b.size == 0:
        raise KappaError("spectrum_distance needs two non-empty spectra")
    n = max(a.size, b.size)
    grid = (np.arange(n) + 0.5) / n

    def at(x: np.ndarray) -> np.ndarray:
        return np.interp(grid, (np.arange(x.size) + 0.5) / x.size, x)

    return float(np.sqrt(np.mean((at(a) - at(b)) ** 2)))


def spectra_separation(
    spectra: Mapping[tuple[str, int], np.ndarray], a: str, b: str
) -> tuple[float, float]:
    """(smallest distance between a spectrum of task ``a`` and one of ``b``, largest distance
    between two spectra of one task; NaN when no task has two seeds)."""
    sa = [v for (t, _), v in spectra.items() if t == a]
    sb = [v for (t, _), v in spectra.items() if t == b]
    if not sa or not sb:
        raise KappaError(f"no spectra of {a!r} and {b!r} to compare")
    between = min(spectrum_distance(x, y) for x in sa for y in sb)
    within = [
        spectrum_distance(x[i], x[j]) for x in (sa, sb) for i in range(len(x)) for j in range(i)
    ]
    return between, (max(within) if within else float("nan"))


def best_kappa(validation: Mapping[float, float]) -> float:
    """κ_best: the κ > 1 with the highest validation success; ties go to the smaller κ."""
    cands = sorted((k, s) for k, s in validation.items() if k > 1)
    if not cands:
        raise KappaError(f"no κ > 1 among {sorted(validation)}")
    top = max(s for _, s in cands)
    return next(k for k, s in cands if s == top)


def lambda_selected(models: pd.DataFrame, task: str) -> bool:
    """The book's precondition "Λ selected" for the sweep of ``task``: every model with κ > 1
    leaves the identity by at least :data:`~jepa_geometry.study.verdict.DEPARTURE_MIN` of its
    box (``departure``, :func:`~jepa_geometry.study.verdict.lambda_departure`), each on its
    own (one training run per κ: no spread between seeds to read). Where Λ stays near the
    identity κ changes nothing, and the claims about κ are not tested; cond Λ alone does not
    decide, since two coordinates at the clamp reach κ."""
    m = models[(models["task"] == task) & (models["kappa"] > 1)]
    return bool(len(m)) and bool((m["departure"] >= DEPARTURE_MIN).all())


def non_monotone_evidence(
    claim: Claim, evaluation: Mapping[float, np.ndarray], kappa_best: float
) -> Evidence:
    """Evidence that κ_best beats *both* ends of the curve on the evaluation pairs:
    ``success(κ_best) - success(κ_min)`` and ``success(κ_best) - success(κ_max)``, each with its
    paired bootstrap 95 % interval over pairs
    (:meth:`~jepa_geometry.study.verdict.Evidence.from_replicates`), combined by the
    intersection-union test (:func:`~jepa_geometry.study.verdict.every_evidence`: the weaker
    comparison decides and is shown). An interior maximum is what "not monotone" means; a
    curve falling from κ = 1, which beats the largest κ, is monotone, and so is one rising to
    κ_max. With κ_best at an end, that comparison is 0 with no width (inconclusive). One
    training run per κ: the evidence rests on one model per arm, so the verdict is
    "inconclusive" whatever the interval (:func:`~jepa_geometry.study.verdict.judged`)."""
    if kappa_best not in evaluation:
        raise KappaError(f"κ_best {kappa_best:g} was not evaluated; κ: {sorted(evaluation)}")
    ends = (min(evaluation), max(evaluation))
    parts = []
    for k in ends:
        d = np.asarray(evaluation[kappa_best], float) - np.asarray(evaluation[k], float)
        reps = stats.bootstrap_replicates(d)
        parts.append(Evidence.from_replicates(float(d.mean()), reps, f"1 seed x {len(d)} pairs", 1))
    names = [f"κ = {kappa_best:g} vs κ = {k:g}" for k in ends]
    return every_evidence(claim, parts, names, "comparisons")


__all__ = [
    "COND_TOLERANCE",
    "EVOLVE_MIN",
    "SATURATION_TOLERANCE",
    "allocation_change",
    "best_kappa",
    "lambda_selected",
    "non_monotone_evidence",
    "saturated",
    "saturation_step",
    "spectra_separation",
    "spectrum_distance",
    "within_bound",
]
