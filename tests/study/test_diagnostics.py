"""Training diagnostics across arms (jepa_geometry.study.diagnostics)."""

import numpy as np
import pandas as pd

from jepa_geometry.study.diagnostics import diagnostics_long


def test_diagnostics_long_keeps_each_logged_diagnostic_once():
    logs = pd.DataFrame(
        {
            "step": [50, 100, 50, 100],
            "arm": ["lewm", "lewm", "anisowm", "anisowm"],
            "top8_share": [0.2, 0.3, 0.25, 0.35],
            "cond_lambda": [np.nan, np.nan, 1.1, 1.3],
            "pred": [1.0, 0.5, 1.0, 0.5],
        }
    )
    out = diagnostics_long(logs, seed=4)
    assert len(out) == 4 + 2 and (out.train_seed == 4).all()
    assert set(out.diagnostic) == {"top8_share", "cond_lambda"}  # no loss terms
    assert out[(out.arm == "anisowm") & (out.diagnostic == "cond_lambda")].value.tolist() == [
        1.1,
        1.3,
    ]


def test_the_diagnostics_of_named_models_come_seed_by_seed_after_the_profile_s(monkeypatch):
    """With a study's models (its headline seeds after the profile's seeds), the long table
    has the rows of every arm x training seed first, as without them, then the added ones."""
    from jepa_geometry.profiles import load_profile
    from jepa_geometry.study import diagnostics

    def log(task, arm, seed, profile):
        return [{"step": k, "top8_share": 10 * seed + k + (arm == "scale")} for k in (0, 5)]

    monkeypatch.setattr(diagnostics, "training_log", log)
    smoke = load_profile("smoke")
    plain = diagnostics.training_diagnostics("tworoom", ["lewm", "scale"], smoke)
    models = [("lewm", 0), ("scale", 0), ("lewm", 3), ("scale", 3)]
    more = diagnostics.training_diagnostics("tworoom", ["lewm", "scale"], smoke, models=models)
    pd.testing.assert_frame_equal(more.iloc[: len(plain)], plain)
    added = more.iloc[len(plain) :]
    assert list(zip(added.arm, added.train_seed, added.value, strict=True)) == [
        ("lewm", 3, 30.0),
        ("lewm", 3, 35.0),
        ("scale", 3, 31.0),
        ("scale", 3, 36.0),
    ]
