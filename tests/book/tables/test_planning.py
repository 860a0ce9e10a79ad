"""Chapter 6's planning tables and sentences (jepa_geometry.book.tables.planning), checked
against independent computations."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.book import tables
from jepa_geometry.book.style import display_name
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import load_profile
from jepa_geometry.stats import format_rate
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


def _t1_rows(arm: str, success, pairs: int, seeds: int = 3) -> list[dict]:
    """Per-episode rows of ``arm`` in the cell p / CEM / T1: ``success(seed, pair)``, drawn in
    seed-major order."""
    return [
        {
            "protocol": "p",
            "solver": "cem",
            "budget": "T1",
            "arm": arm,
            "train_seed": s,
            "episode": e,
            "success": success(s, e),
            "hard": False,
        }
        for s in range(seeds)
        for e in range(pairs)
    ]


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
    assert list(s.index) == ["LeWM", "SCALE"]  # aux has no T5 cell; arms by display name
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


def test_rollout_ratios_are_the_paper_s_tier_products_over_the_profile_s():
    laptop, paper = load_profile("laptop"), load_profile("paper")
    ratios = tables.planning.rollout_ratios(laptop, paper)
    for tier, (s, i) in budget_tiers(laptop).items():
        ps, pi = budget_tiers(paper)[tier]
        assert ratios[tier] == pytest.approx(ps * pi / (s * i))


def test_previous_build_sentence_counts_the_quantities_inside_and_names_the_others():
    check = pd.DataFrame(
        {
            "quantity": ["lewm success", "scale success", "scale - lewm"],
            "previous": [0.71, 0.85, 0.14],
            "previous low": [0.66, 0.81, 0.09],
            "previous high": [0.76, 0.89, 0.19],
            "inside": [True, True, True],
        }
    ).assign(**{"this build": [0.7, 0.85, 0.15]})
    same = tables.planning.previous_build_sentence(check)
    assert "3 of 3 quantities lie inside" in same and "did not change" in same
    moved = check.assign(inside=[False, True, False], **{"this build": [0.5, 0.85, 0.35]})
    text = tables.planning.previous_build_sentence(moved)
    assert "1 of 3" in text and "lewm success: 0.500 now against 0.710" in text
    assert "results changed" in text
    assert "nothing to compare" in tables.planning.previous_build_sentence(check.iloc[0:0])


def test_the_sweep_counts_its_ties_and_a_missing_paired_cell_is_an_error():
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


def test_a_task_the_papers_do_not_report_gets_no_row_beside_them():
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
    beside = tables.planning.beside_papers(table, "reacher", ["lewm", "anisowm"])
    assert tables.planning.lewm_paper_protocol("reacher") == "goal25_budget50"
    assert tables.planning.lewm_paper_protocol("tworoom") == "goal100_budget150"
    assert set(beside.paper) == {"AnisoWM"} and beside.iloc[0]["paper value (%)"] == 89
    assert tables.planning.beside_papers(table, "pointmaze", ["anisowm"]).empty


def test_scale_s_mppi_at_t_half_sits_beside_our_mppi_at_the_same_temperature():
    """SCALE's per-tier MPPI ran at swm's T = 0.5: on every task its value must sit beside our
    ``mppi_swm`` cell (MPPI at swm's T), never beside our ``mppi`` at the tuned T*. Our two MPPI
    cells get different rates so a wrong pairing shows."""
    ref = reference_numbers(table="scale_success_per_tier")
    arms = sorted(set(ref["arm"]))
    rates = {"cem": 0.1, "icem": 0.2, "mppi": 0.3, "mppi_swm": 0.4}
    table = pd.DataFrame(
        [
            {
                "protocol": "goal25_budget50",
                "solver": solver,
                "budget": tier,
                "arm": arm,
                "rate": rate,
                "low": rate - 0.05,
                "high": rate + 0.05,
            }
            for solver, rate in rates.items()
            for tier in sorted(set(ref["tier"]))
            for arm in arms
        ]
    )
    for task in sorted(set(ref["task"])):
        beside = tables.planning.beside_papers(table, task, arms)
        scale = beside[beside["paper"] == "SCALE"].set_index(["solver", "budget", "arm"])
        theirs = ref[ref["task"] == task]
        assert set(scale.index.get_level_values("solver")) == {"CEM", "iCEM", "MPPI at T = 0.5"}
        assert len(scale) == len(theirs)
        for r in theirs.itertuples():
            ours = {"mppi": "mppi_swm"}.get(r.solver, r.solver)
            row = scale.loc[(display_name(ours), r.tier, display_name(r.arm))]
            assert row["paper value (%)"] == r.value
            assert row["ours (%)"] == format_rate(
                rates[ours], rates[ours] - 0.05, rates[ours] + 0.05
            )


def test_half_q_table_pairs_each_contrast_and_sets_scale_beside():
    """Arms built so that half q loses 10 pp of full q's gain: the paired differences are
    recomputed independently, and SCALE's column is its 20-cell means' difference."""
    rng = np.random.default_rng(3)
    base = rng.random((3, 200)) < 0.2
    full = base | (rng.random((3, 200)) < 0.25)  # a superset of lewm's successes
    half = full & (rng.random((3, 200)) < 0.8)
    rows = []
    for arm, ok in (("lewm", base), ("scale", full), ("scale-halfq", half), ("aux", base)):
        rows += _t1_rows(arm, lambda s, e, ok=ok: bool(ok[s, e]), pairs=200)
    t = tables.planning.half_q_table(pd.DataFrame(rows), "reacher", "p")
    assert list(t["contrast"]) == ["SCALE − LeWM", "SCALE half-q − LeWM", "SCALE half-q − SCALE"]
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
    assert "| SCALE half-q − SCALE" in md and "not a result of this book" in md
    empty = tables.planning.half_q_table(
        pd.DataFrame(rows).query("arm != 'scale-halfq'"), "reacher", "p"
    )
    assert len(empty) == 1  # only scale − lewm
    none = tables.planning.half_q_table(pd.DataFrame(rows).query("arm == 'lewm'"), "tworoom", "p")
    assert none.empty and "no half of $q$ in SCALE" in tables.planning.half_q_markdown(
        none, "tworoom"
    )


def test_plan_cost_and_the_dinowm_table_match_direct_sums():
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
        ours = t.loc[f"DINO-WM − {display_name(versus)}, success at CEM T1", "ours"]
        assert ours.startswith(f"{100 * (a.mean() - b.mean()):.1f} [")
    tier = (
        reference_numbers(table="scale_success_per_tier", task="tworoom", solver="cem", tier="T1")
        .set_index("arm")
        .value
    )
    assert t.loc["DINO-WM − LeWM, success at CEM T1", "SCALE"] == (
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


def test_the_dinowm_planning_sentence_reads_the_interval_and_scale_s_sign():
    rows = []
    rng = np.random.default_rng(8)
    for arm, rate in (("lewm", 0.7), ("dinowm", 0.2)):
        rows += _t1_rows(arm, lambda s, e, rate=rate: bool(rng.random() < rate), pairs=100)
    eps = pd.DataFrame(rows)
    text = tables.planning.dinowm_sentence(eps, "tworoom", "p")
    assert text.startswith("the stand-in DINO-WM plans worse than lewm at CEM T1")
    assert "the opposite direction to SCALE's, which has DINO-WM above LeWM" in text  # +12.0
    assert "the same direction as SCALE's" in tables.planning.dinowm_sentence(eps, "pusht", "p")
    assert tables.planning.dinowm_sentence(eps[eps.arm == "lewm"], "pusht", "p").startswith(
        "this study"
    )


def test_headroom_and_floor_in_words_name_the_side_and_the_window():
    inside = {"rate": 0.5, "inside": True}
    assert tables.planning.headroom_side(inside, 0.3, 0.85).startswith("inside the window")
    low = tables.planning.headroom_side({"rate": 0.1, "inside": False}, 0.112, 0.85)
    assert low.startswith("below the 11-85 % window")
    high = tables.planning.headroom_side({"rate": 0.9, "inside": False}, 0.3, 0.85)
    assert high.startswith("above the 30-85 % window")
    assert "excludes 0" in tables.planning.floor_side(SimpleNamespace(low=0.01))
    assert "includes 0" in tables.planning.floor_side(SimpleNamespace(low=0.0))


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
    assert shown.loc[0, "ceiling - LeWM (pp)"].startswith("33.3 [")
    assert "LeWM (%)" in shown.columns and "random (%)" in shown.columns
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
