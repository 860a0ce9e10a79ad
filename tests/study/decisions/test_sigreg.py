"""SIGReg's strength at a CPU profile's batch (jepa_geometry.study.decisions.sigreg): the ratios
it reports and the decision its written rule takes."""

import pytest

from jepa_geometry.profiles import load_profile
from jepa_geometry.study import decisions


def test_the_strength_reads_the_last_steps_against_the_gaussian_floor_and_isotropy(monkeypatch):
    from jepa_geometry.wm.losses import sigreg_gaussian_floor

    logs = {
        0: [{"sigreg": 9.0, "top2_share": 0.1, "top8_share": 0.2}] * 2
        + [{"sigreg": 3.0, "top2_share": 0.25, "top8_share": 0.5}] * 3
    }
    monkeypatch.setattr(
        decisions.sigreg, "training_log", lambda task, arm, s, prof, w=None: logs[s]
    )
    monkeypatch.setattr(
        decisions.sigreg, "batch_isotropic_share", lambda prof, k: {2: 0.05, 8: 0.25}[k]
    )
    prof = load_profile("laptop", {"seeds.train": [0]})
    row = decisions.sigreg.sigreg_strength("tworoom", prof).iloc[0]
    floor = sigreg_gaussian_floor()
    assert row["SIGReg"] == 3.0 and row["SIGReg / floor"] == pytest.approx(3.0 / floor)
    assert row["top-2 share / isotropic"] == pytest.approx(0.25 / 0.05)  # last 3 rows only
    assert row["top-8 share / isotropic"] == pytest.approx(0.5 / 0.25)
    assert row["λ_sig·B / LeWM's"] == pytest.approx(0.09 * 64 / (0.09 * 128))


def test_sigreg_strength_decision_follows_the_written_rule(monkeypatch):
    def logs(top8_restored: float, pred_restored: float):
        def fake(task, arm, seed, prof, weights=None):
            if weights is None:
                return [{"top8_share": 0.64, "sigreg": 1.8, "pred": 0.010}] * 3
            return [{"top8_share": top8_restored, "sigreg": 1.4, "pred": pred_restored}] * 3

        return fake

    monkeypatch.setattr(decisions.sigreg, "batch_isotropic_share", lambda prof, k: 0.24)
    prof = load_profile("laptop")
    monkeypatch.setattr(
        decisions.sigreg, "training_log", logs(0.50, 0.011)
    )  # 35 % of the way, +10 %
    table, text = decisions.sigreg.sigreg_strength_decision("tworoom", prof)
    assert list(table.index) == ["λ_sig = 0.09", "λ_sig = 0.18"]
    assert "moves 35%" in text and "+10%" in text and "restores" in text
    monkeypatch.setattr(decisions.sigreg, "training_log", logs(0.58, 0.011))  # 15 %: not enough
    assert "keeps λ_sig = 0.09" in decisions.sigreg.sigreg_strength_decision("tworoom", prof)[1]
    monkeypatch.setattr(
        decisions.sigreg, "training_log", logs(0.40, 0.013)
    )  # moves, but pred +30 %
    assert "keeps λ_sig = 0.09" in decisions.sigreg.sigreg_strength_decision("tworoom", prof)[1]
