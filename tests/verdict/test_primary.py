"""The papers' headline claims judged first, and premises read beside the claims (issue 66,
items 2-3 and 6): each test fails on the rule that gated AnisoWM's claims behind "LeWM
near-isotropic" and judged the headline in one family with every other claim.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from jepa_geometry.book.tables.geometry import dashboard
from jepa_geometry.verdict import preconditions as P
from jepa_geometry.verdict import rule as V
from jepa_geometry.verdict.across import (
    PAGE_LABEL,
    SCALE_SUFFIX,
    _primary_numbers,
    claim_finding,
    premises_finding,
    primary_sentence,
    reach_finding,
    with_page_labels,
)
from jepa_geometry.verdict.records import PAPER_CLAIMS, paper_claims
from jepa_geometry.verdict.reference import paper_tasks
from tests.verdict.test_claims import synthetic_study


def test_the_primary_family_is_each_papers_abstract_claims():
    """SCALE: success over LeWM with CEM (one record per protocol choice) and its top-2 PCs
    carrying q; AnisoWM: success over LeWM and J_pred ordering. Each names its paper."""
    heads = {(c.paper, c.statement) for c in PAPER_CLAIMS if c.headline}
    assert heads == {
        ("SCALE", "SCALE plans better than LeWM (CEM)"),
        ("SCALE", "SCALE's top-2 PCs carry q (LeWM's do not)"),
        ("AnisoWM", "AnisoWM plans better than LeWM (CEM)"),
        ("AnisoWM", "AnisoWM orders outcomes better by J_pred"),
    }
    for c in PAPER_CLAIMS:
        if c.headline:
            assert c.headline.startswith(f"{c.paper}, abstract")


def test_a_failed_premise_leaves_anisowm_claims_judged():
    """LeWM far from isotropic and Λ not selected on the task: AnisoWM's claims still read a
    verdict (they name the premises in ``informs``); only DINO-WM's claims without DINOv2's
    features read "not tested"."""
    episodes, geo = synthetic_study("anisowm")
    items = [("tworoom", c, e) for c, e in paper_claims("tworoom", episodes, geo)]
    failed = {"tworoom": {P.LEWM_ISOTROPIC, P.lambda_selected_name("anisowm"), P.DINOV2_FEATURES}}
    board = dashboard(items, failed)
    aniso = board[board["paper"] == "AnisoWM"]
    assert len(aniso) and not (aniso["verdict"] == V.NOT_TESTED).any()
    assert aniso["informed by"].str.contains(P.LEWM_ISOTROPIC).all()
    assert P.claim_requires(("dinowm", "lewm")) == (P.DINOV2_FEATURES,)
    assert P.claim_requires(("anisowm", "lewm")) == ()
    success = aniso[aniso["claim"] == "AnisoWM plans better than LeWM (CEM)"]
    assert success["family"].item() == V.PRIMARY
    assert success["verdict"].item() == "reproduced"


def test_the_headline_is_corrected_within_its_own_family():
    """The same headline evidence among many secondary claims keeps its primary Holm p: the
    secondary claims are another family."""
    episodes, geo = synthetic_study("scale")
    items = paper_claims("tworoom", episodes, geo)
    head = [(c, e) for c, e in items if c.primary]
    alone = V.verdict_table(head)
    together = V.verdict_table(items)
    for _, r in alone.iterrows():
        match = together[(together["claim"] == r["claim"]) & (together["family"] == V.PRIMARY)]
        assert match["p (Holm)"].item() == r["p (Holm)"]
    assert set(together["family"]) >= {V.PRIMARY, V.SECONDARY}
    assert "tworoom" in paper_tasks("SCALE")


def test_a_page_label_that_differs_is_shown_with_its_reason():
    board = pd.DataFrame(
        {
            "task": ["Two-Room", "Two-Room", "Reacher"],
            "paper": ["SCALE", "SCALE", "AnisoWM"],
            "claim": ["a", f"b{SCALE_SUFFIX}", "c"],
            "verdict": ["inconclusive", "reproduced", "inconclusive"],
        }
    )
    pages = pd.DataFrame(
        {
            "task": ["Two-Room", "Two-Room", "Reacher"],
            "paper": ["SCALE", "SCALE", "AnisoWM"],
            "claim": ["a", "b", "c"],
            "verdict": ["reproduced", "reproduced", "inconclusive"],
        }
    )
    shown = with_page_labels(board, pages)[PAGE_LABEL].tolist()
    assert shown[0].startswith("reproduced (its family there")
    assert shown[1:] == ["", ""]


def test_the_primary_sentence_counts_labels_and_what_would_decide():
    primary = pd.DataFrame(
        {
            "paper": ["SCALE", "SCALE", "SCALE", "AnisoWM"],
            "verdict": ["reproduced", "inconclusive", "inconclusive", V.BELOW_RESOLUTION],
            "seeds to decide": ["decided", 5, "> 50", 7],
        }
    )
    text = primary_sentence(primary)
    assert "SCALE: 3 headline claim-task pairs tested, 1 reproduced, 2 inconclusive" in text
    assert "of the 2 undecided, 1 would be decided by at most 5 training seeds" in text
    assert "AnisoWM: 1 headline claim-task pairs tested" in text


def _rows(**cols):
    base = {
        "paper": "SCALE",
        "claim": "SCALE plans better than LeWM (CEM)",
        "unit": "pp",
        "comparable": True,
        "seeds to decide": "decided",
        "hours to decide": float("nan"),
    }
    n = len(next(iter(cols.values())))
    return pd.DataFrame({**{k: [v] * n for k, v in base.items()}, **cols})


def test_a_finding_groups_tasks_by_label_and_sets_the_papers_number_beside_ours():
    """Labels in the rule's order with their tasks joined; each task's interval beside the
    paper's difference, marked where it comes from another setting or is not published."""
    rows = _rows(
        task=["Two-Room", "Push-T", "Reacher"],
        verdict=["inconclusive", V.BELOW_RESOLUTION, V.BELOW_RESOLUTION],
        effect=[7.07, 1.7, -0.52],
        low=[1.6, 0.514, -1.53],
        high=[12.5, 2.89, 0.494],
        **{"paper value": [11.3, 3.37, float("nan")], "comparable": [False, True, True]},
    )
    text = claim_finding(rows)
    assert text.startswith(
        "below this run's resolution on Push-T and Reacher; inconclusive on Two-Room. "
    )
    assert "Two-Room +7.1 [+1.6, +12] pp (+11, another setting)" in text
    assert "Push-T +1.7 [+0.51, +2.9] pp (+3.4)" in text
    assert "Reacher -0.52 [-1.5, +0.49] pp (none published)" in text


def test_more_seeds_names_the_costliest_undecided_claim_and_those_beyond_reach():
    rows = _rows(
        task=["Two-Room", "Push-T", "Reacher", "Cube"],
        verdict=["inconclusive", V.BELOW_RESOLUTION, "reproduced", "inconclusive"],
        **{
            "seeds to decide": [13, 6, "decided", "> 50"],
            "hours to decide": [1.3, 0.3, float("nan"), float("nan")],
        },
    )
    text = reach_finding(rows)
    assert text.startswith("3 of 4 headline claim-task pairs are undecided; 2 would be decided")
    assert "at most 13 training seeds" in text and "on Two-Room, 1.3 h" in text
    assert text.endswith("; 1 would need more than 50 seeds.")
    assert reach_finding(rows.assign(**{"seeds to decide": "decided"})).startswith("Every")


def test_the_premises_finding_counts_where_each_premise_holds():
    pre = pd.DataFrame(
        {
            "task": ["Two-Room", "Push-T", "Two-Room", "Two-Room"],
            "precondition": [
                P.LEWM_ISOTROPIC,
                P.LEWM_ISOTROPIC,
                P.lambda_selected_name("anisowm"),
                P.DINOV2_FEATURES,
            ],
            "measured": ["", "", "", ""],
            "criterion": ["<= 2 x isotropic", "<= 2 x isotropic", "bound >= 0.25 (one seed)", ""],
            "holds": [False, True, True, False],
        }
    )
    text = premises_finding(pre)
    assert f"{P.LEWM_ISOTROPIC} on 1 of 2 tasks (<= 2 x isotropic)" in text
    assert f"{P.LAMBDA_SELECTED} on 1 of 1 task-arm pairs (bound >= 0.25)" in text
    assert P.DINOV2_FEATURES not in text


def test_a_primary_rows_numbers_are_in_the_claims_display_unit():
    """The bound is threshold + direction x minimum effect, scaled like the effect (closed
    form); a paper that publishes no difference reads NaN, one from another setting keeps its
    number and is marked not comparable."""
    claim = V.Claim(
        "SCALE",
        "s",
        "m",
        "scale",
        "lewm",
        direction=-1,
        threshold=0.01,
        paper_note="other",
        paper_value=0.05,
        display_scale=100.0,
        unit="pp",
        min_effect=0.03,
    )
    ev = V.Evidence(-0.04, -0.06, -0.02, "3 seeds", 3)
    got = _primary_numbers(claim, ev)
    assert got["bound"] == pytest.approx(100 * (0.01 - 0.03))
    assert (got["effect"], got["low"], got["high"]) == pytest.approx((-4.0, -6.0, -2.0))
    assert got["paper value"] == pytest.approx(5.0) and not got["comparable"]
    none = _primary_numbers(V.Claim("SCALE", "s", "m", "scale", "lewm"), ev)
    assert math.isnan(none["paper value"])
