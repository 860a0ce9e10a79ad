"""The papers' headline claims judged first, and premises read beside the claims (issue 66,
items 2-3 and 6): each test fails on the rule that gated AnisoWM's claims behind "LeWM
near-isotropic" and judged the headline in one family with every other claim.
"""

from __future__ import annotations

import pandas as pd

from jepa_geometry.book.tables.geometry import dashboard
from jepa_geometry.verdict import preconditions as P
from jepa_geometry.verdict import rule as V
from jepa_geometry.verdict.across import (
    PAGE_LABEL,
    SCALE_SUFFIX,
    primary_sentence,
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
