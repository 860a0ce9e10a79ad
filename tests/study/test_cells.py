"""The study grid's bookkeeping: cells, arms, pooled tables, against direct computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import jepa_geometry as jg
from jepa_geometry.book import tables
from jepa_geometry.planning.solver import MPPI_SWEEP_192, MPPI_SWM, TIERS
from jepa_geometry.stats import format_rate
from jepa_geometry.study import cells as study
from jepa_geometry.verdict.reference import reference_numbers


def test_plan_cells_is_scales_solver_grid():
    cells = study.plan_cells(["goal100_budget150", "goal25_budget50"])
    assert len(cells) == 2 * 3 * 5 + 5  # MPPI at swm's T too, under SCALE's protocol only
    tiers = ("T1", "T2", "T3", "T4", "T5")  # every solver at SCALE's five tiers
    for protocol, solvers in (
        ("goal100_budget150", ("cem", "icem", "mppi")),
        ("goal25_budget50", ("cem", "icem", "mppi", MPPI_SWM)),
    ):
        assert {(c.solver, c.tier) for c in cells if c.protocol == protocol} == {
            (s, t) for s in solvers for t in tiers
        }
    with pytest.raises(
        study.StudyError, match=r"unknown protocol.*valid: goal25_budget50, goal100_budget150"
    ):
        study.plan_cells(["nosuch"])


def test_a_study_s_arms_are_canonical_and_hold_the_baseline_once_each():
    assert study.check_study_arms(["lewm", "anisowm+scale"]) == ["lewm", "scale+anisowm"]
    with pytest.raises(study.StudyError, match="baseline 'lewm'"):
        study.check_study_arms(["scale"])
    with pytest.raises(study.StudyError, match="duplicate"):
        study.check_study_arms(["lewm", "lewm"])
    with pytest.raises(ValueError, match="unknown arm"):
        study.check_study_arms(["lewm", "nosuch"])


def test_mppi_sweep_scales_with_embedding_dim():
    prof = jg.load_profile("laptop")
    temps = study.mppi_sweep_temperatures(prof)
    assert temps == pytest.approx([t * prof.model.embed_dim / 192 for t in MPPI_SWEEP_192])


def _episodes(rng, seeds=(0, 1, 2), n=40):
    rows = []
    for m, p in (("lewm", 0.5), ("scale", 0.7)):
        for s in seeds:
            ok = rng.random(n) < p
            for e in range(n):
                rows.append(
                    {
                        "protocol": "goal25_budget50",
                        "solver": "cem",
                        "budget": "T1",
                        "arm": m,
                        "train_seed": s,
                        "episode": e,
                        "success": bool(ok[e]),
                        "hard": e % 2 == 0,
                    }
                )
    return pd.DataFrame(rows)


def test_paired_table_matches_a_direct_count():
    eps = _episodes(np.random.default_rng(0))
    row = study.paired_table(eps).iloc[0]
    a = eps[eps.arm == "scale"].sort_values(["train_seed", "episode"]).success.to_numpy()
    b = eps[eps.arm == "lewm"].sort_values(["train_seed", "episode"]).success.to_numpy()
    assert row["arm"] == "scale" and row["seeds"] == 3
    assert row["diff"] == pytest.approx(a.mean() - b.mean())
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    assert (row["a_only"], row["b_only"]) == (a_only, b_only)
    p = min(1.0, 2 * sps.binom.cdf(min(a_only, b_only), a_only + b_only, 0.5))
    assert row["p_mcnemar"] == pytest.approx(p)
    assert row["low"] < row["diff"] < row["high"]
    hard = study.paired_table(eps, hard=True).iloc[0]
    h = (eps[eps.arm == "scale"].sort_values(["train_seed", "episode"]).hard).to_numpy()
    assert hard["diff"] == pytest.approx(a[h].mean() - b[h].mean())


def test_success_table_and_grid():
    eps = _episodes(np.random.default_rng(1), seeds=(0,))
    tab = study.success_table(eps)
    lewm = tab[tab.arm == "lewm"].iloc[0]
    k = int(eps[eps.arm == "lewm"].success.sum())
    lo, hi = jg.stats.wilson_interval(k, 40)
    assert (lewm.rate, lewm.low, lewm.high) == pytest.approx((k / 40, lo, hi))
    grid = tables.planning.success_by_cell(tab, "goal25_budget50")
    assert list(grid.columns) == ["LeWM", "SCALE"]  # the arms by their display names
    assert grid.loc[("CEM", "T1", 1), "LeWM"] == format_rate(k / 40, lo, hi)
    with pytest.raises(ValueError, match="no rows for protocol 'goal100_budget150'"):
        tables.planning.success_by_cell(tab, "goal100_budget150")


def test_beside_papers_pairs_each_paper_value_with_our_cell():
    tab = pd.DataFrame(
        [
            {
                "protocol": "goal25_budget50",
                "solver": "cem",
                "budget": "T1",
                "arm": "scale",
                "rate": 0.9,
                "low": 0.8,
                "high": 0.95,
            },
            {
                "protocol": "goal100_budget150",
                "solver": "cem",
                "budget": "T1",
                "arm": "anisowm",
                "rate": 0.7,
                "low": 0.6,
                "high": 0.8,
            },
        ]
    )
    out = tables.planning.beside_papers(tab, "tworoom", ["lewm", "scale", "anisowm"]).set_index(
        "paper"
    )
    assert len(out) == 2  # only the cells we planned
    scale = out.loc["SCALE"]
    per_tier = reference_numbers(
        table="scale_success_per_tier", task="tworoom", solver="cem", tier="T1", arm="scale"
    )
    assert scale["paper value (%)"] == per_tier.value.iloc[0]
    assert scale["ours (%)"] == "90.0 [80.0, 95.0]"
    assert out.loc["AnisoWM", "arm"] == "AnisoWM"  # the arm by its display name


def test_lambda_table_and_figure_read_every_lambdareg_model():
    from jepa_geometry.book.plots import plot_lambda_spectra
    from jepa_geometry.book.tables.geometry import lambda_table

    v = np.array([[1.0, 1.0, 1.0], [1.6, 1.0, 0.4]])  # two logged steps, D = 3
    sp = {
        "final_sorted": np.sort(v[-1])[::-1],
        "above_mean": 1,
        "cond": 4.0,
        "v": v,
        "steps": np.array([0, 10]),
    }
    spectra = {("scale+anisowm", 1): sp, ("anisowm", 0): sp}
    t = lambda_table(spectra)
    assert t[["arm", "train_seed"]].values.tolist() == [["anisowm", 0], ["scale+anisowm", 1]]
    assert t["D"].tolist() == [3, 3] and t["cond"].tolist() == [4.0, 4.0]
    fig = plot_lambda_spectra(spectra)
    assert len(fig.axes[0].lines) == 3  # two models and the mean line
    with pytest.raises(ValueError, match="no ΛReg spectra"):
        plot_lambda_spectra({})


def test_cell_jobs_list_every_cell_of_the_grid_longest_first():
    import dataclasses

    from jepa_geometry.planning.solver import budget_tiers
    from jepa_geometry.study.build import cell_jobs
    from jepa_geometry.study.spec import load_study
    from tests.study.test_spec import planned_headline

    spec, prof = load_study("tworoom"), jg.load_profile("laptop")
    spec = dataclasses.replace(spec, headline_seeds=planned_headline("tworoom"))
    plain, mppi = cell_jobs(spec, prof, None), cell_jobs(spec, prof, 5.0)
    # independent count: 6 arms (DINO-WM included) x (CEM 5 tiers x 3 seeds + iCEM/MPPI 5 tiers
    # x 1 seed under the main protocol, all 15 cells and MPPI at swm's T x 1 seed under the
    # secondary one), the headline seeds' CEM at 5 tiers under the main protocol (3 arms x 2
    # seeds), and the ceiling's CEM at 5 tiers under the main protocol
    assert len(plain) + len(mppi) == 6 * (5 * 3 + 10 + 15 + 5) + 3 * 2 * 5 + 5 == 305
    assert {j.solver for j in mppi} == {"mppi"}
    # every arm at the study's T*, except DINO-WM at its own 0.5 on the mean cost (0.5 D)
    d = prof.dinowm.token_grid**2 * 96  # the stand-in's 96 features per token
    assert all(j.temperature == (0.5 * d if j.arm == "dinowm" else 5.0) for j in mppi)
    swm = [j for j in plain if j.solver == "mppi"]  # swm's 0.5 for D = 192, scaled to our D
    assert len(swm) == 6 * 5 and {j.protocol for j in swm} == {"goal25_budget50"}
    shipped = 0.5 * prof.model.embed_dim / 192
    assert all(j.temperature == (0.5 * d if j.arm == "dinowm" else shipped) for j in swm)
    assert all(j.temperature is None for j in plain if j.solver != "mppi")
    top = [j for j in plain if j.arm == "ceiling"]
    assert [(j.solver, j.protocol, j.train_seed, j.subset) for j in top] == [
        ("cem", "goal100_budget150", -1, spec.ceiling)
    ] * 5
    tiers = budget_tiers(prof)
    cost = [tiers[j.tier][0] * tiers[j.tier][1] for j in plain]
    assert cost == sorted(cost, reverse=True)
    keys = {(j.arm, j.train_seed, j.protocol, j.solver, j.tier, j.temperature) for j in plain}
    assert len(keys) == len(plain)  # no cell twice
    # a study whose gate failed plans only the ceiling
    cube = load_study("cube")
    assert not cube.plans
    cube_jobs = cell_jobs(cube, cube.profile(prof), None)
    assert {j.arm for j in cube_jobs} == {"ceiling"} and len(cube_jobs) == 5
    assert cell_jobs(cube, cube.profile(prof), 5.0) == []


def test_planning_cells_take_the_temperature_their_label_names():
    from jepa_geometry.study.spec import load_study

    prof = jg.load_profile("laptop")
    spec = load_study("tworoom")
    cell = study.Cell("goal25_budget50", "mppi", "T1")
    with pytest.raises(study.StudyError, match=r"needs the study's MPPI temperature T\*, got None"):
        study.planning_cell("tworoom", "lewm", 0, prof, cell, None)
    with pytest.raises(study.StudyError, match=r"unknown solver 'gd'; valid: cem, icem, mppi, "):
        study.planning_cell("tworoom", "lewm", 0, prof, study.Cell("p", "gd", "T1"), 5.0)
    q_dim = 2  # Two-Room's q: the agent's position
    top = study.planning_cell("tworoom", "ceiling", -1, prof, cell, 5.0, 39)
    assert top.temperature == pytest.approx(5.0 * q_dim / prof.model.embed_dim)
    swm = study.Cell("goal25_budget50", MPPI_SWM, "T1")
    assert study.planning_cell("tworoom", "scale", 0, prof, swm, None).temperature == (
        pytest.approx(0.5 * prof.model.embed_dim / 192)
    )
    assert study.ceiling_pairs(spec, prof) == spec.ceiling
    assert study.ceiling_pairs(spec, jg.load_profile("smoke")) == min(
        spec.ceiling, jg.load_profile("smoke").eval.episodes
    )


@pytest.mark.slow
def test_build_study_fills_the_cache_the_serial_grid_reads(data_root):
    """Two workers build a small study with a headline seed; the chapters' serial calls then
    build nothing, and build_times reads every stage back from the manifests."""
    import dataclasses

    from jepa_geometry.study.build import build_study, build_times
    from jepa_geometry.study.spec import HeadlineSeeds, load_study

    spec = dataclasses.replace(
        load_study("tworoom").with_arms(["lewm", "scale"]),
        headline_seeds=HeadlineSeeds(("lewm", "scale"), {"smoke": (1,)}),
    )
    prof = jg.load_profile("smoke", {"train.steps": 4})
    stages = build_study(spec, prof, workers=2, progress=False)
    assert list(stages.stage) == ["collect", "train", "plan", "chosen"]
    manifests = sorted(data_root.rglob("manifest.json"))
    grid = study.plan_study(spec, prof, progress=False)
    assert sorted(data_root.rglob("manifest.json")) == manifests  # nothing rebuilt
    # one seed in smoke: every cell once per arm; the headline seed: CEM under the main protocol
    assert len(grid.timing) == 2 * (5 + 10 + 15 + 5) + 2 * 5
    added = grid.timing[grid.timing.train_seed == 1]
    assert set(zip(added.protocol, added.solver, strict=True)) == {(spec.main_protocol, "cem")}
    eps = grid.episodes
    floor = eps[eps.arm == "random"]  # the random floor once per cell, though two parts plan it
    assert not floor.duplicated(["protocol", "solver", "budget", "episode"]).any()
    assert len(floor) == 35 * prof.eval.episodes
    assert len(grid.ceiling) and set(grid.ceiling["arm"]) == {"ceiling", "random"}
    times = build_times(spec, prof).set_index("stage")
    sweep = len(study.mppi_sweep_jobs("tworoom", prof))
    # per model of seed 0, 25 cells need no T* (CEM, iCEM, MPPI at swm's T) and 10 do, and
    # the ceiling's 5; the headline seed's 2 models and their 5 CEM cells each are a stage of
    # their own (another build, in the book), whose wall time the total adds to the study's
    plain = sweep + 2 * 25 + 5
    assert list(times.index) == ["collect", "train", "plan", "chosen", "headline seeds", "total"]
    assert list(times.jobs) == [1, 2, plain, 2 * 10, 2 + 2 * 5, 1 + 2 + plain + 2 * 10 + 12]
    assert (times.job_seconds > 0).all() and (times.wall_seconds >= 0).all()
    assert times.loc["total", "wall_seconds"] >= times.loc["train", "wall_seconds"]


def test_variant_planning_sentence_states_each_interval():
    from jepa_geometry.book.tables.geometry import variant_planning_sentence
    from jepa_geometry.study.decisions.lambdareg import choose_variant

    t = pd.DataFrame(
        [{"comparison": "v - lewm", "diff": 0.043, "low": -0.04, "high": 0.115, "p_mcnemar": 0.005}]
    )
    assert variant_planning_sentence(t) == "v - lewm: +4.3 pp [-4.0, +11.5] (McNemar p = 0.005)"
    variants = pd.DataFrame(
        {
            "variant": ["published", "fast", "tanh"],
            "cond_lambda": [1.4, 2.0, 2.0],
            "corr_v_rel_err": [-0.1, 0.2, -0.01],
        }
    )
    assert choose_variant(variants)[0] == "tanh"  # the largest cond among negative correlations
    none = variants.assign(corr_v_rel_err=[0.1, 0.2, 0.3])
    name, why = choose_variant(none)
    assert name == "published" and "not selected at this scale" in why


@pytest.mark.parametrize(
    "lewm_k,random_k,keep,word",
    [
        (120, 20, True, "keep"),
        (190, 20, False, "saturates"),
        (40, 2, False, "fails"),
        (80, 50, False, "more than half"),
    ],
)
def test_protocol_gate_applies_the_written_rule(monkeypatch, lewm_k, random_k, keep, word):
    import types

    from jepa_geometry.study.decisions import gate

    n = 200

    def table(k: int) -> pd.DataFrame:
        ok = np.zeros(n, bool)
        ok[:k] = True
        return pd.DataFrame(
            {"success": ok, "hard": np.arange(n) % 2 == 0, "solved_at_start": np.arange(n) < 4}
        )

    fake = types.SimpleNamespace(episodes=table(lewm_k), random=table(random_k))
    monkeypatch.setattr(gate, "evaluate_cell", lambda *a, **k: fake)
    out = gate.protocol_gate("reacher", jg.load_profile("laptop"))
    assert out["discriminates"] is keep and word in out["reason"]
    assert out["solved at start"] == pytest.approx(4 / n) and out["hard pairs"] == n // 2
    assert out["lewm hard"] == pytest.approx(np.mean(np.arange(n)[::2] < lewm_k))


@pytest.mark.parametrize(
    "scale_k,alt_k,chosen,runs",
    [
        (120, None, "goal25_budget50", 1),  # SCALE's protocol passes: no alternative is gated
        (190, 120, "goal100_budget150", 2),  # it saturates, the alternative passes
        (190, 190, "goal25_budget50", 3),
    ],  # all fail: SCALE's protocol, and the gate says so
)
def test_protocol_choice_gates_alternatives_on_validation_pairs(
    monkeypatch, scale_k, alt_k, chosen, runs
):
    import types

    from jepa_geometry.study.decisions import gate

    n, calls = 200, []

    def table(k: int) -> pd.DataFrame:
        ok = np.arange(n) < k
        return pd.DataFrame({"success": ok, "hard": ok, "solved_at_start": ok & False})

    def fake(cell, progress):
        assert (cell.arm, cell.solver, cell.tier) == ("lewm", "cem", "T1")
        calls.append((cell.protocol, cell.profile.seeds.eval))
        k = scale_k if cell.protocol == gate.SCALE_PROTOCOL else alt_k
        return types.SimpleNamespace(episodes=table(k), random=table(10))

    monkeypatch.setattr(gate, "evaluate_cell", fake)
    cfg = jg.load_profile("laptop")
    got, tab = gate.protocol_choice("pointmaze", cfg)
    assert got == chosen and len(tab) == runs == len(calls)
    assert calls[0] == (gate.SCALE_PROTOCOL, cfg.seeds.eval)  # the evaluation pairs
    validation = cfg.seeds.eval + gate.VALIDATION_SEED_OFFSET
    tried = gate.ALTERNATIVES[: runs - 1]  # in order, never on the evaluation pairs
    assert calls[1:] == [(alternative, validation) for alternative in tried]
    assert list(tab.pairs) == ["evaluation"] + ["validation"] * (runs - 1)
    with pytest.raises(ValueError, match="pairs must be 'evaluation' or 'validation'"):
        gate.protocol_gate("pointmaze", cfg, pairs="test")


def test_floor_check_pairs_every_seed_with_the_shared_floor():
    from jepa_geometry.study.cells import StudyError, floor_check

    n = 10
    rows = [
        {
            "protocol": "p",
            "solver": "cem",
            "budget": "T1",
            "arm": "lewm",
            "train_seed": s,
            "episode": e,
            "success": float(e < 6 + s),
        }
        for s in (0, 1)
        for e in range(n)
    ]
    rows += [
        {
            "protocol": "p",
            "solver": "cem",
            "budget": "T1",
            "arm": "random",
            "train_seed": -1,
            "episode": e,
            "success": float(e < 2),
        }
        for e in range(n)
    ]
    d = floor_check(pd.DataFrame(rows), "p")
    assert d.diff == pytest.approx(((6 + 7) / 2 - 2) / n)  # (0.65 - 0.2)
    assert (d.a_only, d.b_only, d.n) == (4 + 5, 0, 2 * n)
    with pytest.raises(StudyError, match="no lewm or random-policy episodes in p/cem/T3"):
        floor_check(pd.DataFrame(rows), "p", tier="T3")


def test_a_study_plans_the_solvers_its_file_names_and_every_registered_one_by_default() -> None:
    import dataclasses

    from jepa_geometry.study.spec import SpecError, load_study

    spec = load_study("tworoom")
    assert spec.solvers is None  # every registered solver
    every = {c.solver for group, _, _ in study.cell_groups(spec, jg.load_profile("smoke"))
             for c in group}  # fmt: skip
    assert every == {"cem", "icem", "mppi", MPPI_SWM}
    only = dataclasses.replace(spec, solvers=("cem",))
    cells = [c for group, _, _ in study.cell_groups(only, jg.load_profile("smoke")) for c in group]
    assert {c.solver for c in cells} == {"cem"} and {c.tier for c in cells} == set(TIERS)
    with pytest.raises(SpecError, match=r"solvers \['nosuch'\]; valid: null or a non-empty list"):
        dataclasses.replace(spec, solvers=("nosuch",))
    with pytest.raises(study.StudyError, match=r"unknown solver\(s\) \['nosuch'\]; valid: cem"):
        study.plan_cells(["goal25_budget50"], ["nosuch"])
