"""Chapter 5's read-outs of the training logs: one line each, from every arm's own rows."""

import numpy as np
import pandas as pd

from jepa_geometry.book.tables.models import (
    lambda_spectrum_end,
    lambda_target_summary,
    prediction_loss_trend,
)


def test_the_prediction_loss_trend_gives_each_arm_s_first_and_last_logged_loss():
    logs = pd.DataFrame(
        {
            "arm": ["scale", "scale", "lewm", "lewm", "lewm"],
            "step": [0, 10, 0, 5, 10],
            "pred": [2.0, 0.5, np.nan, 1.234567, 0.01],  # lewm's first step logged no pred
        }
    )
    assert prediction_loss_trend(logs) == "scale 2 → 0.5; lewm 1.23 → 0.01"


def test_the_spectrum_end_reads_each_arm_s_last_row_and_says_when_none_trains_lambdareg():
    spectrum = pd.DataFrame(
        {
            "arm": ["b", "b", "a"],
            "step": [0, 10, 10],
            "largest v": [1.0, 3.0, 2.0],
            "smallest v": [1.0, 1.5, 0.5],
            "share of v > 1": [0.0, 0.25, 0.5],
        }
    )
    assert lambda_spectrum_end(spectrum) == (
        "a: largest/smallest v = 4.000, share of v > 1 = 50%; "
        "b: largest/smallest v = 2.000, share of v > 1 = 25%"
    )
    no_lambda = lambda_target_summary(pd.DataFrame({"arm": ["lewm"], "step": [0]}))
    assert lambda_spectrum_end(no_lambda) == "no arm of this run trains ΛReg"
