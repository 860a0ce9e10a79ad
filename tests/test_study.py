"""The study grid's bookkeeping: cells, arms, pooled tables, against direct computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import jepa_geometry as jg
from jepa_geometry import study


def test_plan_cells_is_scales_solver_grid():
    cells = study.plan_cells(["lewm_tworoom", "code"])
    assert len(cells) == 2 * (5 + 2 + 2)
    assert {(c.solver, c.budget) for c in cells if c.solver != "cem"} == {
        ("icem", "T1"), ("icem", "T3"), ("mppi", "T1"), ("mppi", "T3"),
    }  # fmt: skip
    with pytest.raises(study.StudyError, match=r"unknown protocol.*valid: code, lewm_tworoom"):
        study.plan_cells(["nosuch"])


def test_check_methods():
    assert study.check_methods(["lewm", "anisowm+scale"]) == ["lewm", "scale+anisowm"]
    with pytest.raises(study.StudyError, match="baseline 'lewm'"):
        study.check_methods(["scale"])
    with pytest.raises(study.StudyError, match="duplicate"):
        study.check_methods(["lewm", "lewm"])
    with pytest.raises(ValueError, match="unknown method"):
        study.check_methods(["lewm", "nosuch"])


def test_mppi_sweep_scales_with_embedding_dim():
    prof = jg.load_profile("laptop")
    temps = study.mppi_sweep_temperatures(prof)
    assert temps == pytest.approx([t * prof.model.embed_dim / 192 for t in study.MPPI_SWEEP_192])


def _episodes(rng, seeds=(0, 1, 2), n=40):
    rows = []
    for m, p in (("lewm", 0.5), ("scale", 0.7)):
        for s in seeds:
            ok = rng.random(n) < p
            for e in range(n):
                rows.append(
                    {"protocol": "code", "solver": "cem", "budget": "T1", "method": m,
                     "train_seed": s, "episode": e, "success": bool(ok[e]), "hard": e % 2 == 0}
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_paired_table_matches_a_direct_count():
    eps = _episodes(np.random.default_rng(0))
    row = study.paired_table(eps).iloc[0]
    a = eps[eps.method == "scale"].sort_values(["train_seed", "episode"]).success.to_numpy()
    b = eps[eps.method == "lewm"].sort_values(["train_seed", "episode"]).success.to_numpy()
    assert row["method"] == "scale" and row["seeds"] == 3
    assert row["diff"] == pytest.approx(a.mean() - b.mean())
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    assert (row["a_only"], row["b_only"]) == (a_only, b_only)
    p = min(1.0, 2 * sps.binom.cdf(min(a_only, b_only), a_only + b_only, 0.5))
    assert row["p_mcnemar"] == pytest.approx(p)
    assert row["low"] < row["diff"] < row["high"]
    hard = study.paired_table(eps, hard=True).iloc[0]
    h = (eps[eps.method == "scale"].sort_values(["train_seed", "episode"]).hard).to_numpy()
    assert hard["diff"] == pytest.approx(a[h].mean() - b[h].mean())


def test_success_table_and_grid():
    eps = _episodes(np.random.default_rng(1), seeds=(0,))
    tab = study.success_table(eps)
    lewm = tab[tab.method == "lewm"].iloc[0]
    k = int(eps[eps.method == "lewm"].success.sum())
    lo, hi = jg.stats.wilson_interval(k, 40)
    assert (lewm.rate, lewm.low, lewm.high) == pytest.approx((k / 40, lo, hi))
    grid = study.success_grid(tab, "code")
    assert list(grid.columns) == ["lewm", "scale"]
    assert grid.loc[("cem", "T1", 1), "lewm"] == study.format_rate(k / 40, lo, hi)
    with pytest.raises(study.StudyError, match="no rows for protocol 'lewm_tworoom'"):
        study.success_grid(tab, "lewm_tworoom")


def test_planning_grid_refuses_bad_requests_before_planning():
    prof = jg.load_profile("smoke")
    with pytest.raises(study.StudyError, match=r"solver seeds \[5\] must be .* \[0\]"):
        study.planning_grid("tworoom", ["lewm"], prof, solver_seeds=[5])
    with pytest.raises(study.StudyError, match="secondary seeds"):
        study.planning_grid("tworoom", ["lewm"], prof, secondary_seeds=[])
    with pytest.raises(study.StudyError, match="unknown protocol"):
        study.planning_grid("tworoom", ["lewm"], prof, protocols=["lewm_tworoom", "nosuch"])
    with pytest.raises(study.StudyError, match="baseline"):
        study.planning_grid("tworoom", ["scale"], prof)


def test_beside_papers_pairs_each_paper_value_with_our_cell():
    tab = pd.DataFrame(
        [{"protocol": "code", "solver": "cem", "budget": "T1", "method": "scale",
          "rate": 0.9, "low": 0.8, "high": 0.95},
         {"protocol": "lewm_tworoom", "solver": "cem", "budget": "T1", "method": "anisowm",
          "rate": 0.7, "low": 0.6, "high": 0.8}]
    )  # fmt: skip
    out = study.beside_papers(tab, "tworoom", ["lewm", "scale", "anisowm"]).set_index("paper")
    assert len(out) == 2  # only the cells we planned
    scale = out.loc["SCALE"]
    per_tier = jg.reference.reference_numbers(
        table="scale_success_per_tier", task="tworoom", solver="cem", tier="T1", method="scale"
    )
    assert scale["paper value (%)"] == per_tier.value.iloc[0]
    assert scale["ours (%)"] == "90.0 [80.0, 95.0]"
    assert out.loc["AnisoWM", "method"] == "anisowm"
