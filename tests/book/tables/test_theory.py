"""The theory chapters' claims as verdict rows (jepa_geometry.book.tables.theory): SCALE's
metric leverage 2λ_j and AnisoWM's Figure 1(b) on the 2-D toy, judged by the book's rule; each
test sets the claim against an identity that fails or an outcome that does not hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from jepa_geometry.book.tables import theory as T
from jepa_geometry.verdict import rule as V


def test_the_leverage_identity_is_reproduced_on_synthetic_embeddings():
    claim, ev = T.leverage_claim(20000, 8)
    assert V.verdict(claim, ev) == "reproduced"
    assert ev.models == T.LEVERAGE_DRAWS and "of 16 sides" in ev.units


def test_a_wrong_identity_is_contradicted(monkeypatch):
    """Were each direction's cost 2.4 λ_j (20 % above the identity), the row would say so."""

    right = T.metric_leverage

    def wrong(z, n_pairs, rng):
        lev = right(z, n_pairs, rng)
        return lev.assign(measured_contribution=1.2 * lev.measured_contribution)

    monkeypatch.setattr(T, "metric_leverage", wrong)
    claim, ev = T.leverage_claim(20000, 8)
    assert V.verdict(claim, ev) == "contradicted" and "below +5 %" in ev.units
    assert ev.effect == pytest.approx(-0.2, abs=0.02)


def test_one_draw_is_no_interval():
    claim, ev = T.leverage_claim(2000, 4, draws=1)
    assert V.verdict(claim, ev) == "inconclusive"


def _toy(error_ratio: float, regret: float, seeds: int = 10) -> pd.DataFrame:
    """Toy runs: SIGReg's held-out error at the small noise is ``error_ratio`` times the large
    noise's, its regret there ``regret``; ΛReg rows (not SIGReg) differ, and must not count."""
    rng = np.random.default_rng(4)
    rows = []
    for reg in ("sigreg", "lambdareg"):
        for noise in (0.01, 0.3):
            for s in range(seeds):
                small = noise == 0.01 and reg == "sigreg"
                err = 0.2 * (error_ratio if small else 1.0) * np.exp(0.02 * rng.standard_normal())
                reg_value = (regret if small else 0.5) + 0.005 * rng.standard_normal()
                rows.append(
                    {
                        "regularizer": reg,
                        "noise": noise,
                        "seed": s,
                        "heldout_error": err,
                        "normalized_regret": reg_value,
                    }
                )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("ratio", "regret", "expected"),
    [
        (0.1, 0.15, ("reproduced", "reproduced")),
        (1.0, 0.15, ("not detected at this scale", "reproduced")),
        (0.1, 0.0, ("reproduced", "not detected at this scale")),
    ],
)
def test_figure_1b_is_two_claims_each_judged_on_the_sigreg_runs(ratio, regret, expected):
    """Prediction improving and regret staying positive are two claims, each judged on the
    SIGReg runs; the intervals are recomputed here as t-intervals over the seeds."""
    runs = _toy(ratio, regret)
    items = T.toy_claims(runs, reference=0.16, paper_regret=0.16)
    table = T.theory_verdicts(items)
    assert tuple(table["verdict"]) == expected
    sig = runs[runs.regularizer == "sigreg"].set_index(["noise", "seed"])
    d = (sig.loc[0.01, "heldout_error"] - sig.loc[0.3, "heldout_error"]).to_numpy()
    half = sps.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    ev = items[0][1]
    assert (ev.low, ev.high) == pytest.approx((d.mean() - half, d.mean() + half))
    assert items[1][1].effect == pytest.approx(sig.loc[0.01, "normalized_regret"].mean())


def test_figure_1b_needs_two_noise_levels():
    runs = _toy(0.1, 0.15)
    with pytest.raises(ValueError, match="two noise levels"):
        T.toy_claims(runs[runs.noise == 0.3], 0.16, 0.16)
