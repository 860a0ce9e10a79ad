"""Chapter 6's gate and ladder pages (jepa_geometry.book.tables.gate): the papers' weights
and the sentences that say which protocol or rung the study runs."""

import numpy as np
import pandas as pd

from jepa_geometry.book import tables


def test_weight_table_gives_each_task_its_papers_weights():
    from jepa_geometry.book.tables.gate import weight_table

    t = weight_table("reacher", ["lewm", "scale", "aux", "scale+anisowm"]).set_index("arm")
    assert t.loc["SCALE", "SCALE λ"] == 0.15 and t.loc["Aux", "Aux w"] == 0.4
    assert np.isnan(t.loc["LeWM", "SCALE λ"]) and t.loc["SCALE + AnisoWM", "ΛReg κ"] == 2.0
    assert weight_table("pointmaze", ["scale"]).iloc[0]["SCALE λ"] == 0.1


def test_gate_sentence_says_whether_the_study_follows_the_rule():
    from jepa_geometry.book.tables.gate import gate_sentence

    gate = pd.DataFrame(
        [
            {"protocol": "goal25_budget50", "pairs": "evaluation", "reason": "r1"},
            {"protocol": "goal100_budget150", "pairs": "validation", "reason": "r2"},
        ]
    )
    ok = gate_sentence(gate, "goal100_budget150", "goal100_budget150", "laptop")
    assert ok.startswith("goal25_budget50 on the evaluation pairs: r1; then goal100_budget150")
    assert "is the one the rule picks" in ok
    assert "is NOT the one" in gate_sentence(gate, "goal25_budget50", "goal100_budget150", "laptop")
    assert "decided by the gate at the laptop profile" in gate_sentence(
        gate, "goal25_budget50", "goal100_budget150", "smoke"
    )


def test_ladder_sentence_says_which_rung_the_study_runs():
    gate = pd.DataFrame(
        [{"lever": "as profiled", "reason": "r1"}, {"lever": "96 px", "reason": "r2"}]
    )
    ok = tables.gate.ladder_sentence(gate, "96 px", "96 px", "laptop")
    assert ok.startswith("as profiled: r1; then 96 px: r2.") and "the rule picks, 96 px" in ok
    assert "No rung passes" in tables.gate.ladder_sentence(gate, None, None, "laptop")
    assert "is NOT the one" in tables.gate.ladder_sentence(gate, None, "96 px", "laptop")
    measured = tables.gate.ladder_sentence(gate, None, "96 px", "laptop", plans=False)
    assert "does not plan: it trains and measures the arms at 96 px" in measured
    smoke = tables.gate.ladder_sentence(gate, None, None, "smoke")
    assert "the rule picks no rung; the study file runs as profiled here" in smoke
    # when no rate has the power, the sentence says so once, not once per rung
    weak = gate.assign(powered=False, **{"lewm (%)": ["50.0 [15.0, 85.0]", "0.0 [0.0, 49.0]"]})
    once = tables.gate.ladder_sentence(weak, None, None, "smoke")
    assert once.startswith("no rung can pass at this profile") and once.count("power") == 1
    assert "(LeWM at each rung: as profiled 50.0 %, 96 px 0.0 %)" in once


def test_the_page_lists_each_rung_tried_then_the_conclusion():
    from types import SimpleNamespace

    gate = pd.DataFrame(
        [{"lever": "as profiled", "reason": "r1"}, {"lever": "96 px", "reason": "r2"}]
    )
    spec = SimpleNamespace(settings={"laptop": "96 px"}, plans=True)
    said = tables.gate.choice_markdown(spec, "laptop", None, SimpleNamespace(name="96 px"), gate)
    assert said == (
        "**In this run** the ladder tried, in order:\n\n- *as profiled*: r1\n- *96 px*: r2\n\n"
        "The study runs at the rung the rule picks, 96 px."
    )
    weak = gate.assign(powered=False, **{"lewm (%)": ["50.0 [15.0, 85.0]", "0.0 [0.0, 49.0]"]})
    one = tables.gate.choice_markdown(spec, "laptop", None, None, weak)
    assert one.startswith("**In this run** no rung can pass") and "\n- " not in one
