"""Chapter 8's tables (jepa_geometry.book.tables.across and .across_geometry): SCALE's grid
and count, its overall contrasts, PCs and training seeds, the ceiling on every task, checked
against direct computations on synthetic studies."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from jepa_geometry.analysis.measurements import Geometry
from jepa_geometry.book.tables import across, across_geometry
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.cells import StudyPlans
from jepa_geometry.study.load import Studies, TaskStudy
from jepa_geometry.study.spec import load_study
from jepa_geometry.verdict.reference import reference_numbers
from tests.verdict.test_rule import crossed_by_hand

ARMS = ("lewm", "scale", "aux", "anisowm", "scale+anisowm")


def _study(rng: np.random.Generator, seeds=(0, 1), pairs=40) -> TaskStudy:
    """A synthetic Two-Room study: random successes for every arm under SCALE's protocol (CEM
    with ``seeds``, iCEM and MPPI with seed 0; tiers T1-T3) and a random floor."""
    rows = []
    p = {"lewm": 0.5, "scale": 0.6, "aux": 0.55, "anisowm": 0.5, "scale+anisowm": 0.62}
    for solver, ss in (("cem", seeds), ("icem", (0,)), ("mppi", (0,))):
        for budget in ("T1", "T2", "T3"):
            for arm in ARMS:
                for s in ss:
                    for e in range(pairs):
                        rows.append((arm, s, solver, budget, e, rng.random() < p[arm]))
            for e in range(pairs):
                rows.append(("random", -1, solver, budget, e, rng.random() < 0.1))
    eps = pd.DataFrame(
        rows, columns=["arm", "train_seed", "solver", "budget", "episode", "success"]
    ).assign(protocol="goal25_budget50", hard=False, solved_at_start=False)
    plans = StudyPlans(temperature=1.0, sweep=pd.DataFrame(), episodes=eps, timing=pd.DataFrame())
    geo = Geometry(
        probes=pd.DataFrame(),
        spectra=pd.DataFrame(),
        ranking=pd.DataFrame(),
        landscape=pd.DataFrame(),
    )
    spec = load_study("reacher")  # SCALE's protocol is its main one
    return TaskStudy("reacher", spec, load_profile("smoke"), plans, geo, pd.DataFrame())


def test_scale_grid_and_contrasts_are_tier_means_of_the_same_units():
    st = _study(np.random.default_rng(0))
    studies = Studies("smoke", {"reacher": st}, {})
    grid = across.scale_success(studies)
    eps = st.episodes
    for (solver, arm), g in grid.set_index(["solver", "arm"]).iterrows():
        sel = eps[(eps.solver == solver) & (eps.arm == arm)]
        assert g["rate"] == pytest.approx(sel.success.mean())  # equal pairs per tier and seed
        assert g["low"] <= g["rate"] <= g["high"]
        assert g["seeds"] == sel.train_seed.nunique() and g["pairs"] == 40
    con = across.scale_contrasts(studies)
    for (solver, arm), c in con.set_index(["solver", "arm"]).iterrows():
        a = eps[(eps.solver == solver) & (eps.arm == arm)].success.mean()
        b = eps[(eps.solver == solver) & (eps.arm == "lewm")].success.mean()
        assert c["diff"] == pytest.approx(a - b) and c["low"] <= c["diff"] <= c["high"]
    assert set(con.arm) == set(ARMS) - {"lewm"}
    # CEM planned with two seeds: the crossed t interval over (seed, pair) of the tier means
    tier_mean = eps[eps.solver == "cem"].groupby(["arm", "train_seed", "episode"]).success.mean()
    for arm, c in con[con.solver == "cem"].set_index("arm").iterrows():
        d = (tier_mean[arm] - tier_mean["lewm"]).unstack("episode").to_numpy()
        mean, se, df = crossed_by_hand(d)
        assert (c["low"], c["high"]) == pytest.approx(scipy.stats.t.interval(0.95, df, mean, se))
        assert df == 1.0 and c["units"] == "2 seeds x 40 pairs (t, df 1)"


def test_favour_count_counts_points_and_intervals():
    con = pd.DataFrame(
        {
            "arm": ["scale"] * 5,
            "solver": ["cem", "icem", "mppi_swm", "cem", "mppi"],
            "diff": [0.05, 0.02, -0.01, -0.04, 0.3],
            "low": [0.01, -0.01, -0.03, -0.06, 0.2],
            "high": [0.09, 0.05, 0.01, -0.02, 0.4],
        }
    )
    c = across.favour_count(con, "scale")  # MPPI at T* is not a cell of SCALE's main grid
    assert (c["cells"], c["point"], c["interval_above"], c["interval_below"]) == (4, 2, 1, 1)
    # SCALE's own text: "SCALE improves the success rate over LeWM on all 15 task-solver
    # averages" -- the reference file must say the same
    assert c["paper_favour"] == c["paper_cells"] == 15
    assert "in 2 of 4 by the point estimate" in across.favour_sentence(c)


def _flip_p(d: np.ndarray) -> float:
    """The sign-flip p by listing every sign pattern."""
    sums = [abs(np.dot(s, d)) for s in itertools.product((-1, 1), repeat=len(d))]
    return float(np.mean([x >= abs(d.sum()) - 1e-12 for x in sums]))


def test_sign_flip_p_is_exact_and_its_floor_is_two_over_two_to_the_n():
    assert across.sign_flip_p([0.01, 0.02, 0.03]) == 0.25  # all of one sign: the floor
    assert across.sign_flip_p([1.0, -2.0, 3.0]) == 0.75  # 6 of the 8 sign patterns as extreme
    assert across.sign_flip_p([0.4]) == 1.0
    assert [across.smallest_sign_flip_p(n) for n in (1, 2, 3, 6)] == [1.0, 0.5, 0.25, 2 / 64]
    d = np.random.default_rng(5).normal(size=7)
    assert across.sign_flip_p(d) == pytest.approx(_flip_p(d))


def test_scale_overall_contrasts_are_tested_over_training_seeds():
    st = _study(np.random.default_rng(2), seeds=(0, 1, 2))
    table = across.scale_overall_table(Studies("smoke", {"reacher": st}, {}))
    # SCALE's cells: CEM, iCEM and MPPI at swm's T; the synthetic MPPI rows are at T*
    eps = st.episodes[(st.episodes.arm != "random") & st.episodes.solver.isin(["cem", "icem"])]
    assert list(table.contrast) == ["scale − lewm", "aux − lewm", "scale − aux"]  # no dinowm arm
    cell = eps.groupby(["solver", "budget", "arm"])["success"].mean().unstack()
    # per seed: its own cells (seed 0 planned CEM and iCEM, seeds 1 and 2 CEM only)
    seed_cell = eps.groupby(["train_seed", "solver", "budget", "arm"])["success"].mean().unstack()
    for _, r in table.iterrows():
        a, b = r["contrast"].split(" − ")
        d = (cell[a] - cell[b]).to_numpy()
        assert r["cells"] == 6 and r["diff (pp)"] == pytest.approx(100 * d.mean())
        per_seed = (seed_cell[a] - seed_cell[b]).groupby(level="train_seed").mean().to_numpy()
        assert r["seeds"] == 3
        assert r["diff per seed (pp)"] == " / ".join(f"{100 * x:.1f}" for x in per_seed)
        assert r["sign-flip p (seeds)"] == pytest.approx(_flip_p(per_seed))
        assert r["smallest p"] == 0.25 <= r["sign-flip p (seeds)"]
        assert r["means (%)"] == f"{100 * cell[a].mean():.1f} / {100 * cell[b].mean():.1f}"
        overall = reference_numbers(table="scale_success_overall", task="reacher")
        overall = overall.set_index("arm").value
        assert r["means, SCALE (%)"] == f"{overall[a]:.2f} / {overall[b]:.2f}"
        for col, ref_table in (
            ("diff, SCALE (pp)", "scale_success_overall_difference"),
            ("Wilcoxon p, SCALE", "scale_success_overall_wilcoxon_p"),
        ):
            ref = reference_numbers(table=ref_table, task="reacher", arm=a, versus=b)
            assert r[col] == pytest.approx(ref.value.iloc[0])


def test_scale_overall_p_does_not_shrink_when_the_cells_are_counted_twice():
    """The cells share one set of models: copying every cell under new tier names adds no
    evidence, so the p must not move (a test across cells would halve its n's p)."""
    st = _study(np.random.default_rng(6), seeds=(0, 1, 2))
    eps = st.episodes
    copy = eps[eps.budget.isin(["T1", "T2", "T3"])].assign(
        budget=lambda e: e.budget.map({"T1": "T4", "T2": "T5", "T3": "T6"})
    )
    twice = dataclasses.replace(
        st, plans=dataclasses.replace(st.plans, episodes=pd.concat([eps, copy], ignore_index=True))
    )
    once = across.scale_overall_table(Studies("smoke", {"reacher": st}, {}))
    doubled = across.scale_overall_table(Studies("smoke", {"reacher": twice}, {}))
    assert (doubled["cells"] == 2 * once["cells"]).all()
    p = "sign-flip p (seeds)"
    assert doubled[p].to_list() == pytest.approx(once[p].to_list())
    assert doubled["diff (pp)"].to_list() == pytest.approx(once["diff (pp)"].to_list())


def test_scale_overall_has_no_p_with_one_training_seed():
    st = _study(np.random.default_rng(7), seeds=(0,))
    table = across.scale_overall_table(Studies("smoke", {"reacher": st}, {}))
    assert (table["seeds"] == 1).all() and table["sign-flip p (seeds)"].isna().all()
    assert (table["smallest p"] == 1.0).all()


def test_pcs_for_variance_is_the_first_k_reaching_each_share():
    shares = np.array([0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    spectra = pd.DataFrame(
        {"arm": "lewm", "train_seed": 0, "pc": np.arange(6, 0, -1), "share": shares[::-1]}
    )
    k = across_geometry.pcs_for_variance(spectra).set_index("variance_pct")["k"]
    for v in (10, 50, 90):
        want = next(i + 1 for i in range(6) if shares[: i + 1].sum() >= v / 100 - 1e-12)
        assert k[v] == want
    assert k.to_dict() == {10: 1, 50: 2, 90: 5}


def test_training_seed_table_spreads_our_seeds_beside_scale_s():
    st = _study(np.random.default_rng(3), seeds=(0, 1, 2))
    t = across.training_seed_table(Studies("smoke", {"reacher": st}, {}))
    row = t[(t.solver == "CEM") & (t.arm == "scale")].iloc[0]
    eps = st.episodes
    per_seed = eps[(eps.solver == "cem") & (eps.arm == "scale")].groupby("train_seed").success
    assert row["seeds"] == 3
    assert row["spread (pp)"] == f"{100 * np.ptp(per_seed.mean().to_numpy()):.1f}"
    ref = reference_numbers(
        table="scale_success_training_seeds", task="reacher", solver="cem", arm="scale"
    )
    assert row["spread, SCALE (pp)"] == pytest.approx(np.ptp(ref.value.to_numpy()))
    one = t[t.solver == "iCEM"]  # iCEM planned with one seed: no spread, not a spread of 0
    assert set(one["seeds"]) == {1} and set(one["spread (pp)"]) == {"—"}


def test_out_of_reach_tables_exist_and_say_why():
    t = across.out_of_reach_table()
    assert set(t["SCALE's table"]) == set(across.SCALE_TABLES_OUT_OF_REACH)
    assert t["source"].str.contains("authors' repository").all()


def test_pcs_for_variance_table_keeps_the_book_s_task_and_arm_order():
    spectra = pd.concat(
        [
            pd.DataFrame({"arm": arm, "train_seed": 0, "pc": np.arange(1, 9), "share": 1 / 8})
            for arm in ("aux", "scale", "lewm")
        ]
    )
    geo = Geometry(
        probes=pd.DataFrame(), spectra=spectra, ranking=pd.DataFrame(), landscape=pd.DataFrame()
    )
    st = _study(np.random.default_rng(4))
    studies = {
        t: TaskStudy(t, st.spec, st.profile, st.plans, geo, pd.DataFrame())
        for t in ("reacher", "tworoom")
    }
    t = across_geometry.pcs_for_variance_table(Studies("smoke", studies, {}))
    assert list(dict.fromkeys(t.task)) == ["Two-Room", "Reacher"]
    assert list(t.arm[:3]) == ["lewm", "scale", "aux"] and set(t["k"]) == {1.0, 4.0, 8.0}
    sc = t[(t.task == "Reacher") & (t.arm == "scale") & (t["variance (%)"] == 50)].iloc[0]
    ref = reference_numbers(
        table="scale_pcs_for_variance", task="reacher", arm="scale", variance_pct="50"
    )
    assert sc["k, SCALE"] == ref.value.iloc[0] and sc["k / D"] == pytest.approx(0.5)


def test_ceiling_grid_sets_every_arm_on_the_ceiling_s_pairs():
    rng = np.random.default_rng(3)
    st = _study(rng)
    cells = [("cem", b) for b in ("T1", "T2", "T3")]
    pairs = [2, 5, 11, 17, 30]
    top = pd.DataFrame(
        [
            (arm, -1, solver, budget, e, bool(rng.random() < (0.9 if arm == "ceiling" else 0.1)))
            for arm in ("ceiling", "random")
            for solver, budget in cells
            for e in pairs
        ],
        columns=["arm", "train_seed", "solver", "budget", "episode", "success"],
    ).assign(protocol="goal25_budget50")
    plans = dataclasses.replace(st.plans, ceiling=top)
    st = dataclasses.replace(st, plans=plans)
    out = across.ceiling_across(Studies("smoke", {"reacher": st}, {}))
    by = out.set_index("arm")
    assert list(out.arm) == ["ceiling", "lewm", "scale", "random"]
    eps = st.episodes
    for arm in ("lewm", "scale"):
        sel = eps[(eps.arm == arm) & (eps.solver == "cem") & eps.episode.isin(pairs)]
        assert by.loc[arm, "rate"] == pytest.approx(sel.success.mean())
        assert (by.loc[arm, "pairs"], by.loc[arm, "seeds"]) == (5, 2)
        # gap: the ceiling's tier mean per pair minus each seed's, averaged
        c = top[top.arm == "ceiling"].groupby("episode").success.mean()
        a = sel.groupby(["train_seed", "episode"]).success.mean()
        expected = np.mean([c[e] - a[(s, e)] for s in (0, 1) for e in pairs])
        assert by.loc[arm, "gap"] == pytest.approx(expected)
        assert by.loc[arm, "gap_low"] <= expected <= by.loc[arm, "gap_high"]
    assert by.loc["ceiling", "rate"] == pytest.approx(top[top.arm == "ceiling"].success.mean())
    shown = across.ceiling_across_display(out)
    assert shown.loc[0, "task"] == "Reacher" and shown.loc[0, "pairs"] == 5
    assert "ceiling - random (pp)" in shown.columns


@pytest.mark.parametrize(
    ("rates", "said"),
    [
        ((1.0, 0.95, 0.85), "so SCALE's protocol saturates Reacher"),
        ((1.0, 0.95, 0.6), "so no protocol here saturates Reacher"),
    ],
)
def test_saturation_sentence_applies_the_tier_mean_rule(rates, said):
    """lewm's CEM success set per tier (pairs 0..k-1 succeed): the sentence gives the tier
    mean, the hardest tier's rate, and says "saturates" only at a tier mean of 90 % or more."""
    st = _study(np.random.default_rng(8), seeds=(0, 1))
    eps = st.episodes.copy()
    tier_rate = dict(zip(("T1", "T2", "T3"), rates, strict=True))
    sel = (eps.arm == "lewm") & (eps.solver == "cem")
    eps.loc[sel, "success"] = eps[sel].episode < eps[sel].budget.map(tier_rate) * 40
    st = dataclasses.replace(st, plans=dataclasses.replace(st.plans, episodes=eps))
    text = across.saturation_sentence(Studies("smoke", {"reacher": st}, {}), "reacher")
    assert f"{100 * np.mean(rates):.1f} % under SCALE's protocol" in text
    assert f"({100 * rates[-1]:.1f} % at T3, the smallest budget)" in text
    assert text.endswith(said) and "at least 90 %" in text


def test_the_verdict_board_puts_the_primary_claims_first_and_keeps_the_claim_in_view():
    board = pd.DataFrame(
        {
            "claim": ["c secondary", "c extension", "c primary"],
            "task": ["Two-Room"] * 3,
            "paper": ["SCALE"] * 3,
            "verdict": ["inconclusive", "reproduced", "below this run's resolution"],
            "reason": ["r1", "r2", "r3"],
            "our effect [95% CI]": ["+1 [0, +2]"] * 3,
            "paper's effect": ["+2"] * 3,
            "min effect": ["+0.05"] * 3,
            "family": ["secondary", "ours (extension)", "primary"],
        }
    )
    styled = across.verdict_board_display(board)
    assert list(styled.data["claim"]) == ["c primary", "c secondary", "c extension"]
    assert list(styled.data["verdict"])[0] == "below resolution"
    html = styled.to_html()
    assert across.STICKY_FIRST in html


def test_coverage_names_arms_and_keeps_protocols_apart():
    coverage = pd.DataFrame(
        {"arms": ["lewm, scale+anisowm"], "protocols": ["goal100_budget150, goal25_budget50"]}
    )
    shown = across.coverage_display(coverage)
    assert shown["arms"].item() == "LeWM, SCALE + AnisoWM"
    assert shown["protocols"].item() == "goal 100, budget 150; goal 25, budget 50"
