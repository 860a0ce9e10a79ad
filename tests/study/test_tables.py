"""The chapters' tables (jepa_geometry.study.tables), checked against independent computations."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import load_profile
from jepa_geometry.study import rules, tables
from jepa_geometry.verdict.reference import reference_numbers


def success(rows):
    return pd.DataFrame(
        [
            {
                "protocol": "p",
                "solver": "cem",
                "budget": b,
                "arm": a,
                "rate": r,
                "low": r - 0.05,
                "high": r + 0.05,
                "seeds": 3,
            }
            for b, a, r in rows
        ]
    )


def test_headroom_is_the_preregistered_window_on_the_baseline():
    t = success([("T1", "lewm", 0.70), ("T1", "scale", 0.95), ("T5", "lewm", 0.1)])
    h = tables.planning.headroom(t, "p")
    assert h["inside"] and h["rate"] == pytest.approx(0.70)
    assert h["text"] == "lewm, CEM T1: 70.0 [65.0, 75.0] % -> inside the 30-85 % window"
    assert not tables.planning.headroom(success([("T1", "lewm", 0.86)]), "p")["inside"]
    assert not tables.planning.headroom(success([("T1", "lewm", 0.29)]), "p")["inside"]
    with pytest.raises(ValueError, match="no cell p/cem/T1"):
        tables.planning.headroom(success([("T5", "lewm", 0.5)]), "p")


def test_tier_spread_subtracts_the_poorest_tier():
    t = success(
        [
            ("T1", "lewm", 0.7),
            ("T5", "lewm", 0.2),
            ("T1", "scale", 0.8),
            ("T5", "scale", 0.1),
            ("T1", "aux", 0.6),
        ]
    )
    s = tables.planning.tier_spread(t, "p", ["lewm", "scale", "aux"])
    assert list(s.index) == ["lewm", "scale"]  # aux has no T5 cell
    np.testing.assert_allclose(s["T1 - T5 (pp)"], [50.0, 70.0])


def test_paired_display_formats_the_difference_in_points():
    paired = pd.DataFrame(
        [
            {
                "protocol": "p",
                "solver": "cem",
                "budget": "T1",
                "arm": "scale",
                "seeds": 3,
                "diff": 0.138,
                "low": 0.073,
                "high": 0.205,
                "a_only": 40,
                "b_only": 12,
                "p_mcnemar": 1e-4,
            }
        ]
    )
    out = tables.planning.paired_display(paired, "p")
    assert out.loc[0, "diff (pp)"] == "13.8 [7.3, 20.5]"
    with pytest.raises(ValueError, match="no paired rows"):
        tables.planning.paired_display(paired, "q")


def test_hard_subset_counts_each_pair_once():
    rows = [
        {"protocol": "p", "arm": "random", "episode": e, "hard": e % 3 == 0, "budget": b}
        for b in ("T1", "T3")
        for e in range(10)
    ]
    rows += [{"protocol": "p", "arm": "lewm", "episode": 0, "hard": True, "budget": "T1"}]
    assert tables.planning.hard_subset_size(pd.DataFrame(rows), "p") == (4, 10)


def test_rollout_ratios_against_the_profiles_tiers():
    laptop, paper = load_profile("laptop"), load_profile("paper")
    ratios = tables.planning.rollout_ratios(laptop, paper)
    for tier, (s, i) in budget_tiers(laptop).items():
        ps, pi = budget_tiers(paper)[tier]
        assert ratios[tier] == pytest.approx(ps * pi / (s * i))


def _cell_table(rates: dict[str, float], seeds: int = 3, pairs: int = 200, seed: int = 0):
    """A tidy per-episode table of the recorded Two-Room cell with given success rates."""
    rng = np.random.default_rng(seed)
    rows = []
    for arm, p in rates.items():
        for s in range(seeds):
            ok = rng.random(pairs) < p
            rows += [
                {
                    "protocol": "goal100_budget150",
                    "solver": "cem",
                    "budget": "T1",
                    "arm": arm,
                    "train_seed": s,
                    "episode": e,
                    "success": bool(ok[e]),
                }
                for e in range(pairs)
            ]
    return pd.DataFrame(rows)


def test_previous_build_check_recomputes_the_chapters_intervals():
    from jepa_geometry.study import grid
    from jepa_geometry.study.regression import previous_build_check

    eps = _cell_table({"lewm": 0.71, "scale": 0.85})
    check = previous_build_check(eps, "tworoom", "laptop").set_index("quantity")
    # independent route: the chapter's own success and paired tables
    rate = grid.success_table(eps).set_index("arm")
    paired = grid.paired_table(eps).set_index("arm")
    for arm in ("lewm", "scale"):
        row = check.loc[f"{arm} success"]
        assert (row["this build"], row["low"], row["high"]) == pytest.approx(
            (rate.loc[arm, "rate"], rate.loc[arm, "low"], rate.loc[arm, "high"])
        )
    d = check.loc["scale - lewm"]
    assert (d["this build"], d["low"], d["high"]) == pytest.approx(
        (paired.loc["scale", "diff"], paired.loc["scale", "low"], paired.loc["scale", "high"])
    )
    assert check["inside"].all()  # 0.71 / 0.85 / +0.14 sit inside the recorded intervals
    assert "3 of 3 quantities lie inside" in tables.planning.previous_build_sentence(
        check.reset_index()
    )
    moved = previous_build_check(_cell_table({"lewm": 0.5, "scale": 0.85}), "tworoom", "laptop")
    assert list(moved["inside"]) == [False, True, False]
    text = tables.planning.previous_build_sentence(moved)
    assert "1 of 3" in text and "lewm success" in text and "results changed" in text
    assert previous_build_check(eps, "tworoom", "smoke").empty  # no record for that profile
    assert "nothing to compare" in tables.planning.previous_build_sentence(
        previous_build_check(eps, "tworoom", "smoke")
    )


def test_previous_build_check_refuses_a_build_of_another_size():
    from jepa_geometry.study.regression import (
        RegressionError,
        previous_build_check,
        previous_builds,
    )

    with pytest.raises(RegressionError, match="3 seeds x 200 pairs"):
        previous_build_check(_cell_table({"lewm": 0.7, "scale": 0.8}, seeds=1), "tworoom", "laptop")
    with pytest.raises(RegressionError, match=r"arms \['scale'\]"):
        previous_build_check(_cell_table({"lewm": 0.7}), "tworoom", "laptop")
    with pytest.raises(RegressionError, match="no previous build recorded for task 'reacher'"):
        previous_builds("reacher")  # the records refuse an unrecorded task; the check is empty


def test_probe_summary_is_mean_and_sd_over_seeds():
    probes = pd.DataFrame({"arm": ["scale", "lewm", "lewm", "lewm"], "x": [0.5, 0.1, 0.2, 0.6]})
    out = tables.geometry.probe_summary(probes, ["x"])
    assert list(out.index) == ["lewm", "scale"]  # the book's order, baseline first
    sd = np.std([0.1, 0.2, 0.6], ddof=1)
    assert out.loc["lewm", "x"] == f"{0.3:.3f} ± {sd:.3f}"
    assert out.loc["scale", "x"] == "0.500"  # one seed: no spread to report


def test_paper_ranking_table_carries_the_reference_values():
    t = tables.geometry.paper_ranking_table("tworoom")
    ref = reference_numbers(table="aniso_cost_ordering", task="tworoom")
    for _, r in ref.iterrows():
        metric = {"J_enc": "agree_enc", "J_pred": "agree_pred"}[r["cost"]]
        assert t.loc[(r["paper"], r["arm"]), metric] == pytest.approx(r["value"])


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
        "SCALE", "s", "m", "scale", "lewm", reference="scale_pca_variance_share", computed_in=PROBES
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
    assert board.loc[0, "computed in"] == PROBES and board.loc[0, "verdict"] == "reproduced"
    assert list(board.task) == ["Two-Room", "Two-Room", "PointMaze"]
    # one family across the tasks: Holm over all three rows
    p = holm([one_sided_p(c, ev) for c in (c1, c2, c3)])
    assert board["p (Holm)"].tolist() == pytest.approx(p.tolist())


def test_verdict_style_colours_verdicts_only():
    t = pd.DataFrame({"claim": ["a", "b"], "Two-Room": ["reproduced", "fight"], "n": [1, 2]})
    html = tables.shared.verdict_style(t).to_html()
    assert tables.shared.VERDICT_COLOURS["reproduced"] in html
    assert tables.shared.VERDICT_COLOURS["fight"] in html
    assert html.count("background-color") == 2


def test_small_read_outs_of_the_chapters():
    sweep = pd.DataFrame(
        {
            "temperature": [1.0, 1.0, 2.0, 2.0, 4.0, 4.0],
            "budget": ["T1", "T3"] * 3,
            "success": [0.5, 0.2, 0.6, 0.1, 0.3, 0.1],
        }
    )
    wide = tables.planning.sweep_table(sweep)
    assert wide.loc[2.0, "T1"] == 0.6 and list(wide.columns) == ["T1", "T3"]
    choice = tables.planning.temperature_choice(sweep, chosen=1.0, scaled_paper=1.0)
    assert choice == {"ties": 2, "same_as_paper": True}  # 1.0 and 2.0 both sum to 0.7
    paired = pd.DataFrame(
        [{"protocol": "p", "solver": "cem", "budget": "T1", "arm": "scale", "diff": 0.1}]
    )
    assert tables.planning.paired_cell(paired, "p", "cem", "T1", "scale")["diff"] == 0.1
    with pytest.raises(ValueError, match="no paired row for aux in p/cem/T1"):
        tables.planning.paired_cell(paired, "p", "cem", "T1", "aux")
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
    assert out.loc["anisowm", "cond_lambda"] == f"{2.1:.3f} ± {np.std([2.0, 2.2], ddof=1):.3f}"
    assert out.loc["lewm", "top8_share"] == "0.200" and out.loc["lewm", "cond_lambda"] == ""
    assert list(out.index) == ["lewm", "anisowm"] and list(out.columns) == [
        "top8_share",
        "cond_lambda",
    ]


def test_sigreg_strength_ratios(monkeypatch):
    from jepa_geometry.wm.losses import sigreg_gaussian_floor

    logs = {
        0: [{"sigreg": 9.0, "top2_share": 0.1, "top8_share": 0.2}] * 2
        + [{"sigreg": 3.0, "top2_share": 0.25, "top8_share": 0.5}] * 3
    }
    monkeypatch.setattr(rules.sigreg, "training_log", lambda task, arm, s, prof, w=None: logs[s])
    monkeypatch.setattr(
        rules.sigreg, "batch_isotropic_share", lambda prof, k: {2: 0.05, 8: 0.25}[k]
    )
    prof = load_profile("laptop", {"seeds.train": [0]})
    row = rules.sigreg.sigreg_strength("tworoom", prof).iloc[0]
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

    monkeypatch.setattr(rules.sigreg, "batch_isotropic_share", lambda prof, k: 0.24)
    prof = load_profile("laptop")
    monkeypatch.setattr(rules.sigreg, "training_log", logs(0.50, 0.011))  # 35 % of the way, +10 %
    table, text = rules.sigreg.sigreg_strength_decision("tworoom", prof)
    assert list(table.index) == ["λ_sig = 0.09", "λ_sig = 0.18"]
    assert "moves 35%" in text and "+10%" in text and "restores" in text
    monkeypatch.setattr(rules.sigreg, "training_log", logs(0.58, 0.011))  # 15 %: not enough
    assert "keeps λ_sig = 0.09" in rules.sigreg.sigreg_strength_decision("tworoom", prof)[1]
    monkeypatch.setattr(rules.sigreg, "training_log", logs(0.40, 0.013))  # moves, but pred +30 %
    assert "keeps λ_sig = 0.09" in rules.sigreg.sigreg_strength_decision("tworoom", prof)[1]


def test_weight_table_gives_each_task_its_papers_weights():
    from jepa_geometry.study.tables.gate import weight_table

    t = weight_table("reacher", ["lewm", "scale", "aux", "scale+anisowm"]).set_index("arm")
    assert t.loc["scale", "SCALE λ"] == 0.15 and t.loc["aux", "Aux w"] == 0.4
    assert np.isnan(t.loc["lewm", "SCALE λ"]) and t.loc["scale+anisowm", "ΛReg κ"] == 2.0
    assert weight_table("pointmaze", ["scale"]).iloc[0]["SCALE λ"] == 0.1


def test_gate_sentence_says_whether_the_study_follows_the_rule():
    from jepa_geometry.study.tables.gate import gate_sentence

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


def test_papers_without_numbers_for_a_task_give_empty_tables():
    from jepa_geometry.study.tables.geometry import paper_ranking_table
    from jepa_geometry.study.tables.planning import beside_papers, lewm_paper_protocol
    from jepa_geometry.verdict.reference import reference_numbers

    assert reference_numbers(table="aniso_success", task="pointmaze", allow_empty=True).empty
    with pytest.raises(ValueError, match="no reference numbers match"):
        reference_numbers(table="aniso_success", task="pointmaze")
    with pytest.raises(ValueError, match="unknown reference table 'nosuch'"):
        reference_numbers(table="nosuch", allow_empty=True)
    table = pd.DataFrame(
        {
            "protocol": ["goal25_budget50"],
            "solver": ["cem"],
            "budget": ["T1"],
            "arm": ["anisowm"],
            "rate": [0.5],
            "low": [0.4],
            "high": [0.6],
        }
    )
    beside = beside_papers(table, "reacher", ["lewm", "anisowm"])
    assert lewm_paper_protocol("reacher") == "goal25_budget50"
    assert lewm_paper_protocol("tworoom") == "goal100_budget150"
    assert set(beside.paper) == {"AnisoWM"} and beside.iloc[0]["paper value (%)"] == 89
    assert beside_papers(table, "pointmaze", ["anisowm"]).empty
    ranking = paper_ranking_table("pointmaze")  # AnisoWM reports no PointMaze: SCALE's rows only
    assert set(ranking.index.get_level_values("paper")) == {"SCALE"}
    assert "agree_pred" not in ranking.columns and "tau_pred" in ranking.columns


def test_no_recorded_build_of_a_task_is_an_empty_check():
    from jepa_geometry.study.regression import COLUMNS, previous_build_check

    out = previous_build_check(pd.DataFrame(), "reacher", "laptop")
    assert out.empty and list(out.columns) == list(COLUMNS)


def test_half_q_table_pairs_each_contrast_and_sets_scale_beside():
    """Arms built so that half q loses 10 pp of full q's gain: the paired differences are
    recomputed independently, and SCALE's column is its 20-cell means' difference."""
    rng = np.random.default_rng(3)
    base = rng.random((3, 200)) < 0.2
    full = base | (rng.random((3, 200)) < 0.25)  # a superset of lewm's successes
    half = full & (rng.random((3, 200)) < 0.8)
    rows = []
    for arm, ok in (("lewm", base), ("scale", full), ("scale-halfq", half), ("aux", base)):
        rows += [
            {
                "protocol": "p",
                "solver": "cem",
                "budget": "T1",
                "arm": arm,
                "train_seed": s,
                "episode": e,
                "success": bool(ok[s, e]),
                "hard": False,
            }
            for s in range(3)
            for e in range(200)
        ]
    t = tables.planning.half_q_table(pd.DataFrame(rows), "reacher", "p")
    assert list(t["contrast"]) == ["scale − lewm", "scale-halfq − lewm", "scale-halfq − scale"]
    for (a, b), text in zip(
        [(full, base), (half, base), (half, full)], t["ours (pp)"], strict=True
    ):
        assert text.startswith(f"{100 * (a.mean() - b.mean()):.1f} [")
    ref = reference_numbers(table="scale_success_20cell_difference", task="reacher")
    v = {(r.arm, r.versus): r.value for r in ref.itertuples()}
    assert t["SCALE (pp)"].iloc[1] == f"{v[('scale_half_q', 'lewm')]:+.2f}"  # +1.91
    assert t["SCALE (pp)"].iloc[2] == f"{v[('scale_half_q', 'scale')]:+.2f}"  # +0.42
    assert t["SCALE (pp)"].iloc[0] == ""  # SCALE's Reacher headline has no full-q contrast
    assert (t["seeds"] == 3).all()
    md = tables.planning.half_q_markdown(t, "reacher")
    assert "| scale-halfq − scale" in md and "not a result of this book" in md
    empty = tables.planning.half_q_table(
        pd.DataFrame(rows).query("arm != 'scale-halfq'"), "reacher", "p"
    )
    assert len(empty) == 1  # only scale − lewm
    none = tables.planning.half_q_table(pd.DataFrame(rows).query("arm == 'lewm'"), "tworoom", "p")
    assert none.empty and "no half of $q$ in SCALE" in tables.planning.half_q_markdown(
        none, "tworoom"
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


def test_plan_cost_and_the_dinowm_table_against_direct_sums():
    """Seconds per plan are pooled sums (not means of per-episode ratios), the ratio is taken
    cell by cell, and the DINO-WM table reports them beside SCALE's reference numbers."""
    rng = np.random.default_rng(5)
    rows = []
    for arm, cost in (("lewm", 0.05), ("scale", 0.05), ("dinowm", 0.6)):
        for budget, scale in (("T1", 1.0), ("T3", 0.1)):
            for s in range(2):
                for e in range(40):
                    plans = int(rng.integers(1, 6))
                    rows.append(
                        {
                            "protocol": "p",
                            "solver": "cem",
                            "budget": budget,
                            "arm": arm,
                            "train_seed": s,
                            "episode": e,
                            "hard": False,
                            "success": bool(rng.random() < (0.8 if arm == "dinowm" else 0.4)),
                            "plans": plans,
                            "plan_seconds": cost * scale * plans * rng.uniform(0.9, 1.1),
                        }
                    )
    eps = pd.DataFrame(rows)
    cost = tables.planning.plan_cost_table(eps)
    for (arm, budget), g in eps.groupby(["arm", "budget"]):
        row = cost[(cost.arm == arm) & (cost.budget == budget)].iloc[0]
        assert row.s_per_plan == pytest.approx(g.plan_seconds.sum() / g.plans.sum())
        base = eps[(eps.arm == "lewm") & (eps.budget == budget)]
        assert row.ratio == pytest.approx(
            row.s_per_plan / (base.plan_seconds.sum() / base.plans.sum())
        )
    trained = pd.DataFrame(
        {
            "arm": ["lewm", "lewm", "dinowm", "dinowm"],
            "train_seconds": [100.0, 110.0, 150.0, 170.0],
            "token_seconds": [0.0, 0.0, 30.0, 30.0],
        }
    )
    t = tables.planning.dinowm_table(eps, trained, "tworoom", "p").set_index("quantity")
    cell = eps[eps.budget == "T1"]
    for versus in ("lewm", "scale"):
        a = cell[cell.arm == "dinowm"].sort_values(["train_seed", "episode"]).success.to_numpy()
        b = cell[cell.arm == versus].sort_values(["train_seed", "episode"]).success.to_numpy()
        ours = t.loc[f"dinowm − {versus}, success at CEM T1", "ours"]
        assert ours.startswith(f"{100 * (a.mean() - b.mean()):.1f} [")
    tier = (
        reference_numbers(table="scale_success_per_tier", task="tworoom", solver="cem", tier="T1")
        .set_index("arm")
        .value
    )
    assert t.loc["dinowm − lewm, success at CEM T1", "SCALE"] == (
        f"{tier['dinowm'] - tier['lewm']:+.1f} pp"
    )
    assert t.loc["training cost, seconds per model / LeWM's", "ours"].startswith(
        f"{(160 + 30) / 105:.2f}x"
    )
    assert t.loc["planning cost, seconds per plan / LeWM's", "SCALE"] == "about 80x"
    t1 = cost[(cost.arm == "dinowm") & (cost.budget == "T1")].ratio.iloc[0]
    assert t.loc["planning cost, seconds per plan / LeWM's", "ours"].startswith(f"{t1:.1f}x")
    assert "not DINOv2" in tables.planning.dinowm_markdown(t.reset_index(), "tworoom")
    none = tables.planning.dinowm_table(eps[eps.arm != "dinowm"], trained, "tworoom", "p")
    assert none.empty and "no DINO-WM arm" in tables.planning.dinowm_markdown(none, "reacher")


def test_dinowm_sentences_read_the_interval_and_scale_s_sign():
    rows = []
    rng = np.random.default_rng(8)
    for arm, rate in (("lewm", 0.7), ("dinowm", 0.2)):
        rows += [
            {
                "protocol": "p",
                "solver": "cem",
                "budget": "T1",
                "arm": arm,
                "train_seed": s,
                "episode": e,
                "success": bool(rng.random() < rate),
                "hard": False,
            }
            for s in range(3)
            for e in range(100)
        ]
    eps = pd.DataFrame(rows)
    text = tables.planning.dinowm_sentence(eps, "tworoom", "p")
    assert text.startswith("the stand-in DINO-WM plans worse than lewm at CEM T1")
    assert "the opposite direction to SCALE's, which has DINO-WM above LeWM" in text  # +12.0
    assert "the same direction as SCALE's" in tables.planning.dinowm_sentence(eps, "pusht", "p")
    assert tables.planning.dinowm_sentence(eps[eps.arm == "lewm"], "pusht", "p").startswith(
        "this study"
    )
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


def test_headroom_and_floor_in_words_name_the_side_and_the_window():
    inside = {"rate": 0.5, "inside": True}
    assert tables.planning.headroom_side(inside, 0.3, 0.85).startswith("inside the window")
    low = tables.planning.headroom_side({"rate": 0.1, "inside": False}, 0.112, 0.85)
    assert low.startswith("below the 11-85 % window")
    high = tables.planning.headroom_side({"rate": 0.9, "inside": False}, 0.3, 0.85)
    assert high.startswith("above the 30-85 % window")
    assert "excludes 0" in tables.planning.floor_side(SimpleNamespace(low=0.01))
    assert "includes 0" in tables.planning.floor_side(SimpleNamespace(low=0.0))


def test_the_papers_columns_are_marked_and_ours_are_not():
    cols = [
        "lewm (%)",
        "lewm, SCALE (%)",
        "LeWM, AnisoWM (%)",
        "share above mean, AnisoWM",
        "paper's effect",
        "our effect [95% CI]",
        "AnisoWM (%)",
        "AnisoWM - LeWM (pp)",
    ]
    marked = tables.shared.paper_columns(cols)
    assert marked == cols[1:5]
    html = tables.shared.mark_papers(
        pd.DataFrame([[1.0] * len(cols)], columns=cols).style
    ).to_html()
    assert html.count("font-style: italic") == 1 and "#eef1f6" in html  # one CSS rule, 4 cells
    plain = pd.DataFrame({"lewm (%)": [1.0]}).style
    assert tables.shared.mark_papers(plain) is plain


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


def _ceiling_frames():
    """Two learned seeds on 6 pairs, the ceiling and the random policy on pairs 1, 3, 4."""
    cell = {"protocol": "p", "solver": "cem", "budget": "T1"}
    lewm = [[1, 0, 0, 1, 0, 1], [0, 0, 1, 1, 0, 0]]  # seed x episode
    rows = [
        {**cell, "arm": "lewm", "train_seed": s, "episode": e, "success": bool(v)}
        for s, outcomes in enumerate(lewm)
        for e, v in enumerate(outcomes)
    ]
    episodes = pd.DataFrame(rows)
    top = {1: 1, 3: 1, 4: 0}
    rnd = {1: 0, 3: 0, 4: 0}
    ceiling = pd.DataFrame(
        [
            {**cell, "arm": arm, "train_seed": -1, "episode": e, "success": bool(v)}
            for arm, outcomes in (("ceiling", top), ("random", rnd))
            for e, v in outcomes.items()
        ]
    )
    return episodes, ceiling


def test_ceiling_table_sets_the_arms_on_the_ceiling_s_pairs_and_pairs_the_gap():
    episodes, ceiling = _ceiling_frames()
    t = tables.planning.ceiling_table(episodes, ceiling, arms=("lewm", "scale", "random"))
    by = t.set_index("arm")
    assert list(t["arm"]) == ["ceiling", "lewm", "random"]  # scale planned nothing here
    assert by.loc["ceiling", "rate"] == pytest.approx(2 / 3)
    # lewm on pairs 1, 3, 4 only: seed 0 -> 0, 1, 0; seed 1 -> 0, 1, 0
    assert by.loc["lewm", "rate"] == pytest.approx(2 / 6)
    assert (by.loc["lewm", "pairs"], by.loc["lewm", "seeds"]) == (3, 2)
    # per (seed, pair) ceiling - lewm: (1-0, 1-1, 0-0) for both seeds -> mean 1/3
    assert by.loc["lewm", "gap"] == pytest.approx(1 / 3)
    assert by.loc["lewm", "gap_low"] <= 1 / 3 <= by.loc["lewm", "gap_high"]
    assert by.loc["random", "gap"] == pytest.approx(2 / 3)
    assert np.isnan(by.loc["ceiling", "gap"])
    shown = tables.planning.ceiling_display(t)
    assert list(shown.columns[:3]) == ["solver", "budget", "pairs"]
    assert shown.loc[0, "ceiling - lewm (pp)"].startswith("33.3 [")
    words = tables.planning.ceiling_sentence(t)
    assert "CEM at T1 reaches 66.7 [" in words and "of 3 pairs" in words
    assert "on the same pairs lewm reaches 33.3 [" in words


def test_a_study_without_a_ceiling_gives_an_empty_ceiling_table():
    episodes, _ = _ceiling_frames()
    t = tables.planning.ceiling_table(episodes, pd.DataFrame())
    assert t.empty and "gap" in t.columns
    assert tables.planning.ceiling_sentence(t) == "the study has no ceiling"


def test_without_learned_rows_the_ceiling_is_read_against_the_random_policy():
    episodes, ceiling = _ceiling_frames()
    t = tables.planning.ceiling_table(episodes.iloc[0:0], ceiling)
    assert list(t["arm"]) == ["ceiling", "random"]
    words = tables.planning.ceiling_sentence(t)
    assert "no learned model planned them, and the random policy reaches 0.0 [" in words
    assert words.endswith("points below the ceiling") and "66.7 [" in words
