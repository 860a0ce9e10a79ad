"""What the κ sweep reads off a training log (fixed before any model of the sweep was trained;
book: rec-kappa-sweep): when Λ reaches its bound, ``cond Λ >= κ (1 -`` :data:`SATURATION_TOLERANCE`
``)`` (:func:`saturated`, :func:`saturation_step`), and how far the allocation moves after that
(:func:`allocation_change`). The sweep reports these per model; its claims (κ constrains, does
not determine, spectra differ, not monotone, best κ differs) are judged on them by
:mod:`jepa_geometry.verdict.kappa_claims`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jepa_geometry.extensions.kappa.sweep import KappaError

SATURATION_TOLERANCE = 1e-3  # cond Λ >= κ (1 - this) counts as having reached the bound


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


__all__ = ["SATURATION_TOLERANCE", "allocation_change", "saturated", "saturation_step"]
