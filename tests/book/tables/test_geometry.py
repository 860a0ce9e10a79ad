"""Chapter 7's tables and words (jepa_geometry.book.tables.geometry), checked against
independent computations: a comparison of two arms says no more than the seeds' interval."""

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.book import tables
from jepa_geometry.book.style import display_name
from jepa_geometry.verdict.reference import reference_numbers

WORDS = ("more", "less", "neither")


def _word(differences: list[float], column: str = "r2_top2") -> str:
    """The word for ``scale`` against ``lewm`` when their per-seed differences are these."""
    rows = []
    for seed, d in enumerate(differences):
        rows.append({"arm": "lewm", "train_seed": seed, column: 0.3})
        rows.append({"arm": "scale", "train_seed": seed, column: 0.3 + d})
    return tables.geometry.probe_difference_word(pd.DataFrame(rows), "scale", "lewm", column, WORDS)


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
    ratio = tables.geometry.probe_difference_word(
        rows, "scale", "lewm", "ratio_p90_over_p10", words
    )
    assert ratio == "closer to"
    assert (
        tables.geometry.probe_difference_word(rows, "scale", "lewm", "r2_top2", WORDS) == "neither"
    )


def test_probe_summary_is_mean_and_sd_over_seeds():
    probes = pd.DataFrame({"arm": ["scale", "lewm", "lewm", "lewm"], "x": [0.5, 0.1, 0.2, 0.6]})
    out = tables.geometry.probe_summary(probes, ["x"])
    assert list(out.index) == ["LeWM", "SCALE"]  # the book's order, baseline first, shown
    sd = np.std([0.1, 0.2, 0.6], ddof=1)
    assert out.loc["LeWM", "x"] == f"{0.3:.3f} ± {sd:.3f}"
    assert out.loc["SCALE", "x"] == "0.500"  # one seed: no spread to report
    ratio = probes.rename(columns={"x": "ratio_p90_over_p10"})
    named = tables.geometry.probe_summary(ratio, ["ratio_p90_over_p10"])
    assert list(named.columns) == ["p90/p10 ratio"]


def test_paper_ranking_table_carries_the_reference_values():
    t = tables.geometry.paper_ranking_table("tworoom")
    ref = reference_numbers(table="aniso_cost_ordering", task="tworoom")
    for _, r in ref.iterrows():
        metric = {"J_enc": "agree_enc", "J_pred": "agree_pred"}[r["cost"]]
        row = (r["paper"], display_name(r["arm"]))
        assert t.loc[row, display_name(metric)] == pytest.approx(r["value"])


def test_landscape_summary_averages_goals_then_seeds():
    rows = pd.DataFrame(
        {
            "arm": ["a"] * 4 + ["b"] * 2,
            "train_seed": [0, 0, 1, 1, 0, 0],
            "iou": [0.2, 0.4, 0.6, 0.8, 0.5, 0.5],
            "spearman": [0.1] * 6,
        }
    )
    s = tables.geometry.landscape_summary(rows, ["b", "a"])
    assert list(s.index) == ["b", "a"]
    assert s.loc["a", ("iou", "mean")] == pytest.approx(0.5)  # (0.3 + 0.7) / 2
    assert s.loc["a", ("iou", "min")] == pytest.approx(0.3)


def test_dashboard_cites_the_reference_file_and_the_measuring_section():
    from jepa_geometry.verdict.claims import PROBES
    from jepa_geometry.verdict.rule import Claim, Evidence, holm, one_sided_p

    c1 = Claim(
        "SCALE",
        "s",
        "m",
        "scale",
        "lewm",
        reference="scale_pca_variance_share",
        computed_in=PROBES,
        primary=True,
    )
    c2 = Claim("AnisoWM", "t", "m", "anisowm", "lewm", paper_note="figure only")
    c3 = Claim("AnisoWM", "u", "m", "anisowm", "lewm", reference="aniso_success")
    ev = Evidence(0.1, 0.05, 0.15, "3 seeds", 3)
    board = tables.geometry.dashboard(
        [("tworoom", c1, ev), ("tworoom", c2, ev), ("pointmaze", c3, ev)]
    )
    ref = reference_numbers(table="scale_pca_variance_share", task="tworoom")
    source = board.loc[0, "paper's source"]  # with its caveat: the shares are derived
    assert source == f"SCALE: {ref['source'].iloc[0]} (derived {ref['derived'].iloc[0]})"
    assert board.loc[1, "paper's source"] == "no number published (figure only)"
    # AnisoWM reports no PointMaze number: the row says so instead of failing
    assert board.loc[2, "paper's source"] == "AnisoWM: no number for this task"
    link = '<a href="ch07_tworoom_geometry.html#sec-ch07-probes">chapter 7 (Two-Room): Where'
    assert board.loc[0, "computed in"].startswith(link) and board.loc[1, "computed in"] == ""
    assert board.loc[0, "verdict"] == "reproduced"
    assert list(board.task) == ["Two-Room", "Two-Room", "PointMaze"]
    # Holm within each family, across the tasks: SCALE's primary claim alone, AnisoWM's two
    # secondary claims (Two-Room and PointMaze) together
    p = one_sided_p(c1, ev)
    assert board["p (Holm)"].tolist() == pytest.approx([p, *holm([p, p]).tolist()])
    assert board["p (Holm)"].iloc[1] == pytest.approx(2 * p)  # two equal p: each doubled
    assert board["family"].tolist() == ["primary", "secondary", "secondary"]
    for col in ("resolution", "informed by", "reason", "seeds to decide"):
        assert col in board.columns


def test_probe_means_average_each_arm_over_its_seeds():
    probes = pd.DataFrame({"arm": ["a", "a", "b"], "train_seed": [0, 1, 0], "x": [1.0, 3.0, 5.0]})
    assert tables.geometry.probe_means(probes).loc["a", "x"] == 2.0


def test_final_diagnostics_averages_the_last_rows_of_each_model_then_seeds():
    rows = []
    for seed, offset in ((0, 0.0), (1, 0.2)):
        for step, value in ((50, 9.0), (100, 1.0), (150, 2.0), (200, 3.0)):
            rows.append(
                {
                    "arm": "anisowm",
                    "train_seed": seed,
                    "step": step,
                    "diagnostic": "cond_lambda",
                    "value": value + offset,
                }
            )
    rows.append(
        {"arm": "lewm", "train_seed": 0, "step": 200, "diagnostic": "top8_share", "value": 0.2}
    )
    out = tables.geometry.final_diagnostics(pd.DataFrame(rows), last=3)
    # seed 0: mean(1, 2, 3) = 2; seed 1: 2.2 -> 2.1 ± sd(2, 2.2); step 50 (9.0) is dropped
    assert out.loc["AnisoWM", "cond Λ"] == f"{2.1:.3f} ± {np.std([2.0, 2.2], ddof=1):.3f}"
    assert out.loc["LeWM", "top-8 share"] == "0.200" and out.loc["LeWM", "cond Λ"] == ""
    assert list(out.index) == ["LeWM", "AnisoWM"] and list(out.columns) == [
        "top-8 share",
        "cond Λ",
    ]


def test_a_task_anisowm_does_not_report_has_scale_s_ranking_rows_only():
    ranking = tables.geometry.paper_ranking_table("pointmaze")
    assert set(ranking.index.get_level_values("paper")) == {"SCALE"}
    assert display_name("agree_pred") not in ranking.columns
    assert display_name("tau_pred") in ranking.columns


def test_coordinate_table_averages_seeds_in_q_order():
    rows = [
        {"arm": a, "train_seed": s, "coordinate": c, "r2": r + 0.1 * s}
        for a, base in (("scale", 0.5), ("lewm", 0.2))
        for s in (0, 1)
        for c, r in (("block_x", base + 0.4), ("cos_theta", base))
    ]
    t = tables.geometry.coordinate_table(pd.DataFrame(rows))
    assert list(t.index) == ["lewm", "scale"] and list(t.columns) == ["block_x", "cos_theta"]
    assert t.loc["lewm", "cos_theta"] == pytest.approx(0.25)
    text = tables.geometry.coordinate_sentence(pd.DataFrame(rows))
    assert text.startswith("lewm decodes block_x best (R² 0.65) and cos_theta worst (0.25)")
    assert text.endswith("scale decodes cos_theta best (0.55).")


def test_the_dinowm_geometry_sentence_says_where_its_planning_fails():
    probes = pd.DataFrame(
        {"arm": ["lewm", "lewm", "dinowm"], "train_seed": [0, 1, 0], "r2_top2": [0.1, 0.3, 0.6]}
    )
    ranking = pd.DataFrame(
        {
            "arm": ["lewm", "dinowm", "dinowm", "lewm"],
            "source": ["gaussian", "gaussian", "gaussian", "dataset"],
            "tau_pred": [0.9, 0.1, 0.0, np.nan],
            "rollout_error": [0.01, 0.4, 0.6, np.nan],
        }
    )
    geo = tables.geometry.dinowm_geometry_sentence(probes, ranking)
    assert "R² 0.60 (lewm: 0.20)" in geo and "Kendall τ 0.05 (lewm: 0.90)" in geo
    assert "rollout error of 0.50 (lewm: 0.01)" in geo
    assert "point at the predictor" in geo
    good = ranking.assign(tau_pred=[0.5, 0.95, 0.95, np.nan])  # a predictor that ranks well
    assert "point at the predictor" not in tables.geometry.dinowm_geometry_sentence(probes, good)
    assert tables.geometry.dinowm_geometry_sentence(probes[probes.arm == "lewm"], ranking) == ""


def test_a_verdict_table_shows_claim_and_verdict_first():
    table = pd.DataFrame(
        {
            "paper": ["SCALE"],
            "claim": ["c"],
            "paper's effect": ["+1"],
            "p (Holm)": [0.01234],
            "verdict": ["reproduced"],
        }
    )
    styler = tables.geometry.verdict_display(table)
    assert list(styler.data.columns[:2]) == ["claim", "verdict"]
    html = styler.to_html()
    assert "0.0123" in html and "#c7e9c0" in html and "font-style: italic" in html
