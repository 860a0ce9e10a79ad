"""The κ sweep's rules on numbers (extensions.kappa_rules), on spectra with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from jepa_geometry.extensions import kappa_rules, kappa_sweep


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
    assert kappa_rules.saturation_step([10, 20, 30, 40, 50], v, 2.0) == 30
    assert kappa_rules.within_bound(conds[-1], 2.0) and not kappa_rules.within_bound(2.01, 2.0)
    assert kappa_rules.saturated(2.0 * (1 - 1e-4), 2.0) and not kappa_rules.saturated(1.9, 2.0)
    assert not kappa_rules.saturated(1.0, 1.0)  # κ = 1 has nothing to reach
    unsat = _v_log(2.0)[:2]  # stops before reaching the bound
    assert kappa_rules.saturation_step([10, 20], unsat, 2.0) is None
    assert np.isnan(kappa_rules.allocation_change([10, 20], unsat, 2.0))


def test_the_allocation_change_is_its_move_after_saturation_over_its_departure():
    v = _v_log(2.0, drift=1.0)
    v_sat, v_end = v[2], v[-1]
    want = np.linalg.norm(v_end - v_sat) / np.linalg.norm(v_sat - 1)
    got = kappa_rules.allocation_change(range(5), v, 2.0)
    assert got == pytest.approx(want) and got > kappa_rules.EVOLVE_MIN
    assert kappa_rules.allocation_change(range(5), _v_log(2.0, drift=0.0), 2.0) == pytest.approx(
        0.0
    )


def test_spectra_are_compared_sorted_at_the_same_quantiles():
    a = np.array([1.5, 1.0, 0.5])
    assert kappa_rules.spectrum_distance(a, a[::-1]) == 0.0  # sorted first
    b = np.array([1.2, 1.0, 0.8])
    assert kappa_rules.spectrum_distance(a, b) == pytest.approx(np.sqrt((0.09 + 0 + 0.09) / 3))
    # different D: [1.5, 0.5] read at the quantiles 1/8, 3/8, 5/8, 7/8 (linear between its own
    # 1/4 and 3/4, constant beyond) is [1.5, 1.25, 0.75, 0.5]
    got = kappa_rules.spectrum_distance([1.5, 0.5], [1.5, 1.5, 0.5, 0.5])
    assert got == pytest.approx(np.sqrt(2 * 0.25**2 / 4))
    with pytest.raises(kappa_sweep.KappaError):
        kappa_rules.spectrum_distance([], a)


def test_the_separation_sets_the_closest_pair_across_tasks_against_the_widest_within():
    spectra = {
        ("tworoom", 0): np.array([1.4, 1.0, 0.6]),
        ("tworoom", 1): np.array([1.41, 1.0, 0.59]),
        ("pusht", 0): np.array([1.1, 1.0, 0.9]),
    }
    between, within = kappa_rules.spectra_separation(spectra, "tworoom", "pusht")
    assert within == pytest.approx(np.sqrt(2 * 0.01**2 / 3))
    assert between == pytest.approx(np.sqrt(2 * 0.3**2 / 3))
    _, none = kappa_rules.spectra_separation(
        {k: v for k, v in spectra.items() if k[1] == 0}, "tworoom", "pusht"
    )
    assert np.isnan(none)


def test_best_kappa_ignores_isotropic_and_breaks_ties_low():
    assert kappa_rules.best_kappa({1.0: 0.9, 1.5: 0.4, 2.0: 0.6, 4.0: 0.6, 8.0: 0.5}) == 2.0
    with pytest.raises(kappa_sweep.KappaError, match="no κ > 1"):
        kappa_rules.best_kappa({1.0: 0.5})
