"""Chapter 10's tables: one task's table as it is, several stacked under their titles; the
verdict shown with its labels coloured; the labels' glossary is the rule's own."""

from __future__ import annotations

import pandas as pd

from jepa_geometry.book.tables import own_objective as tables
from jepa_geometry.verdict.rule import LABEL_MEANINGS, VERDICTS


def test_one_task_reads_as_before_and_several_are_stacked_under_their_titles():
    a = pd.DataFrame({"x": [1.0, 2.0]}, index=pd.Index(["lewm", "scale"], name="arm"))
    assert tables.by_task({"tworoom": a}) is a
    both = tables.by_task({"tworoom": a, "reacher": 2 * a})
    assert list(both.index.names) == ["task", "arm"]
    assert both.loc[("Reacher", "scale"), "x"] == 4.0
    rows = tables.by_task({"tworoom": a.reset_index(), "reacher": a.reset_index()}, column=True)
    assert list(rows.columns) == ["task", "arm", "x"] and list(rows["task"]) == [
        "Two-Room",
        "Two-Room",
        "Reacher",
        "Reacher",
    ]


def test_the_glossary_is_every_label_of_the_rule_with_its_meaning():
    glossary = tables.label_glossary()
    assert list(glossary["label"]) == list(VERDICTS) == list(LABEL_MEANINGS)
    assert glossary["meaning"].str.len().gt(40).all()


def test_the_plans_row_is_the_first_success_claim_against_lewm():
    table = pd.DataFrame(
        {
            "against": ["SCALE", "LeWM", "LeWM"],
            "claim": [
                "mine plans better than SCALE (CEM)",
                "mine puts more",
                "mine plans better than LeWM (iCEM)",
            ],
            "p (Holm)": [0.5, 0.5, 0.01],
            "verdict": ["inconclusive", "inconclusive", "reproduced"],
        }
    )
    assert tables.first_plans_row(table)["verdict"] == "reproduced"
    assert "reproduced" in tables.verdict_display(table).to_html()
