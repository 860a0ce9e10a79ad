"""What the κ sweep reads off a training log (extensions.kappa.saturation), on logs with known
answers."""

from __future__ import annotations

import numpy as np
import pytest

from jepa_geometry.extensions.kappa import saturation
from jepa_geometry.verdict import kappa_claims


def _v_log(kappa: float, d: int = 6, steps: int = 5, drift: float = 0.0) -> np.ndarray:
    """A (steps, d) log of target variances with tr = d: cond grows to κ by step 3, then the
    top coordinate moves by ``drift`` (swapping mass between coordinates 0 and 1)."""
    rows = []
    for t in range(steps):
        c = min(kappa, 1 + (kappa - 1) * t / 2)  # cond reached at t = 2
        b = np.zeros(d)
        b[0], b[-1] = 0.5 * np.log(c), -0.5 * np.log(c)
        if t > 2:
            b[1] = drift * (t - 2) * 0.5 * np.log(c)
            b[1] = min(b[1], 0.5 * np.log(c))
        v = d * np.exp(b) / np.exp(b).sum()
        rows.append(v)
    return np.array(rows)


def test_the_bound_holds_and_saturation_is_the_first_step_at_kappa():
    v = _v_log(2.0)
    conds = v.max(axis=1) / v.min(axis=1)
    assert np.allclose(conds[2:], 2.0)
    assert saturation.saturation_step([10, 20, 30, 40, 50], v, 2.0) == 30
    assert kappa_claims.within_bound(conds[-1], 2.0) and not kappa_claims.within_bound(2.01, 2.0)
    assert saturation.saturated(2.0 * (1 - 1e-4), 2.0) and not saturation.saturated(1.9, 2.0)
    assert not saturation.saturated(1.0, 1.0)  # κ = 1 has nothing to reach
    unsat = _v_log(2.0)[:2]  # stops before reaching the bound
    assert saturation.saturation_step([10, 20], unsat, 2.0) is None
    assert np.isnan(saturation.allocation_change([10, 20], unsat, 2.0))


def test_the_allocation_change_is_its_move_after_saturation_over_its_departure():
    v = _v_log(2.0, drift=1.0)
    v_sat, v_end = v[2], v[-1]
    want = np.linalg.norm(v_end - v_sat) / np.linalg.norm(v_sat - 1)
    got = saturation.allocation_change(range(5), v, 2.0)
    assert got == pytest.approx(want) and got > kappa_claims.EVOLVE_MIN
    assert saturation.allocation_change(range(5), _v_log(2.0, drift=0.0), 2.0) == pytest.approx(0.0)
