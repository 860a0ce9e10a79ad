"""Chapter 7's words: a comparison of two arms says no more than the seeds' interval."""

import pandas as pd

from jepa_geometry.study.tables.geometry import probe_difference_word

WORDS = ("more", "less", "neither")


def _word(differences: list[float], column: str = "r2_top2") -> str:
    """The word for ``scale`` against ``lewm`` when their per-seed differences are these."""
    rows = []
    for seed, d in enumerate(differences):
        rows.append({"arm": "lewm", "train_seed": seed, column: 0.3})
        rows.append({"arm": "scale", "train_seed": seed, column: 0.3 + d})
    return probe_difference_word(pd.DataFrame(rows), "scale", "lewm", column, WORDS)


def test_a_probe_word_says_more_or_less_only_when_the_seeds_interval_excludes_zero():
    # every case but the last has scale's mean 0.1 above lewm's: the seeds decide the word
    assert _word([0.09, 0.10, 0.11]) == "more"  # t interval [0.075, 0.125]
    assert _word([-0.09, -0.10, -0.11]) == "less"
    assert _word([-0.2, 0.1, 0.4]) == "neither"  # mean +0.1, interval [-0.65, 0.85]
    assert _word([0.1]) == "neither"  # one seed: no interval, the verdict cannot judge
    assert _word([0.1, 0.1, 0.1]) == "neither"  # an interval without width measures nothing


def test_a_probe_word_reads_the_named_measure_and_pairs_the_seeds():
    rows = pd.DataFrame(
        [
            {"arm": arm, "train_seed": seed, "ratio_p90_over_p10": value, "r2_top2": 0.5}
            for arm, values in (("lewm", (3.0, 2.0, 4.0)), ("scale", (2.5, 1.6, 3.4)))
            for seed, value in enumerate(values)
        ]
    )
    # unpaired, the spreads overlap; paired by seed every difference is about -0.5
    words = ("further from", "closer to", "neither")
    ratio = probe_difference_word(rows, "scale", "lewm", "ratio_p90_over_p10", words)
    assert ratio == "closer to"
    assert probe_difference_word(rows, "scale", "lewm", "r2_top2", WORDS) == "neither"
