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
