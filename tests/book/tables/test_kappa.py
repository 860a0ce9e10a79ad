"""Chapter 8's κ sweep sentences (jepa_geometry.book.tables.kappa): which κ never bound Λ,
read from synthetic sweep results with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jepa_geometry.book.tables import kappa
from jepa_geometry.extensions.kappa.build import KappaResults
from jepa_geometry.extensions.kappa.sweep import KappaSweep

KAPPAS = (1.0, 1.5, 2.0, 4.0, 8.0)


def _results(first: dict[float, float], cond: dict[float, float], jitter: float = 0.0):
    """One Two-Room sweep: per κ the first step at its bound (NaN: never) and the final cond
    Λ; models with the same cond end with the same spectrum and outcomes, plus ``jitter`` on
    κ = 8's spectrum."""
    models = pd.DataFrame(
        [
            {"task": "tworoom", "kappa": k, "cond": cond[k], "first_saturated": first[k]}
            for k in KAPPAS
        ]
    )
    spectra = pd.DataFrame(
        [
            {
                "task": "tworoom",
                "kappa": k,
                "rank": r,
                "variance": cond[k] ** (0.5 - r) + (jitter if k == 8.0 else 0.0),
            }
            for k in KAPPAS
            for r in (0.25, 0.75)
        ]
    )
    success = {
        ("tworoom", k, split): (np.arange(20) < 10 * cond[k]).astype(float)
        for k in KAPPAS
        for split in ("evaluation", "validation")
    }
    return KappaResults(models, spectra, success)


SWEEP = KappaSweep(tasks=("tworoom",))


def test_kappas_that_never_bind_behave_as_one_model():
    nan = float("nan")
    res = _results(
        {1.0: nan, 1.5: 100.0, 2.0: nan, 4.0: nan, 8.0: nan},
        {1.0: 1.0, 1.5: 1.5, 2.0: 1.43, 4.0: 1.43, 8.0: 1.43},
    )
    text = kappa.unbound_sentence(res, SWEEP)
    assert "for every κ ≥ 2 (its largest final value: 1.43)" in text
    assert "the 3 models at κ = 2, 4 and 8" in text and "behave as one model" in text
    assert "Two-Room's sweep compares 3 distinct models" in text


def test_a_model_that_differs_is_not_called_the_same():
    nan = float("nan")
    res = _results(
        {1.0: nan, 1.5: 100.0, 2.0: 200.0, 4.0: nan, 8.0: nan},
        {1.0: 1.0, 1.5: 1.5, 2.0: 2.0, 4.0: 2.07, 8.0: 2.07},
        jitter=0.01,
    )
    text = kappa.unbound_sentence(res, SWEEP)
    assert "the 2 models at κ = 4 and 8" in text and "0.01 apart" in text
    assert "behave as one model" not in text and "did not repeat exactly" in text


def test_every_kappa_binding_gives_distinct_models():
    first = {1.0: float("nan"), 1.5: 10.0, 2.0: 20.0, 4.0: 40.0, 8.0: float("nan")}
    res = _results(first, {1.0: 1.0, 1.5: 1.5, 2.0: 2.0, 4.0: 4.0, 8.0: 5.0})
    text = kappa.unbound_sentence(res, SWEEP)
    assert "Λ reached its bound at every κ > 1 but κ = 8, so its 5 models are distinct" in text
