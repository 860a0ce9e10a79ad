"""The 2-D separation experiment: system, planner and evaluation against closed forms."""

import dataclasses
import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch

from jepa_geometry.book import plots, tables
from jepa_geometry.theory import linear_gaussian, toy2d

SIGMA30 = linear_gaussian.covariance_2d([4.0, 1.0], 30.0)


def test_transitions_have_the_stated_statistics():
    cfg = toy2d.ToyConfig(noise=0.2)
    x, u, x1 = toy2d.sample_transitions(cfg, 200_000, torch.Generator().manual_seed(0))
    np.testing.assert_allclose(np.cov(x.numpy().T), cfg.sigma, atol=0.05)
    assert u.abs().max() <= cfg.half_width and u.std().item() == pytest.approx(
        cfg.half_width / np.sqrt(3), rel=0.01
    )
    resid = (x1 - x - u).numpy()
    np.testing.assert_allclose(resid.std(0), [0.2, 0.2], rtol=0.01)


def test_toy_config_rejects_bad_values_with_choices():
    with pytest.raises(ValueError, match="valid: sigreg, lambdareg"):
        toy2d.ToyConfig(regularizer="vicreg")
    with pytest.raises(ValueError, match="kappa"):
        toy2d.ToyConfig(kappa=0.5)
    with pytest.raises(ValueError, match="warp"):
        toy2d.ToyConfig(warp=1.0)
    with pytest.raises(ValueError, match="valid: sigreg, lambdareg"):
        toy2d.toy_sweep(toy2d.ToyConfig(), [0.1], [0], ["lewm"], {})


def test_reference_regret_on_a_face_task_set_is_the_face_formula():
    """Goals just beyond the face x_1 = w (within d_max): every task has regret d^2 rho."""
    w = 1.0
    d = 0.5 * linear_gaussian.face_offset_limit(SIGMA30, 0, w)
    x0 = np.array([[0.0, 0.0], [2.0, -1.0], [-1.0, 3.0]])
    goal = x0 + np.array([w + d, 0.0])
    ref = toy2d.reference_regret(SIGMA30, x0, goal, w)
    assert ref["normalized_regret"] == pytest.approx(
        linear_gaussian.normalized_regret(SIGMA30, np.array([1.0, 0.0])), rel=1e-9
    )
    assert ref["normalized_regret"] == pytest.approx(0.15976, abs=1e-5)


def test_grid_planner_finds_the_exact_box_minimiser():
    x0, goal = toy2d.make_tasks(SIGMA30, starts=3, angles=16, radius=1.5, seed=1)
    inv = torch.as_tensor(np.linalg.inv(SIGMA30), dtype=torch.float64)
    rel = torch.as_tensor(goal - x0)

    def cost(cand):  # exact Σ^{-1} cost of reaching x0 + u
        d = cand.double() - rel[:, None, :]
        return torch.einsum("tci,ij,tcj->tc", d, inv, d)

    u = toy2d.grid_search_plan(cost, len(x0), 1.0).numpy()
    exact = np.array(
        [linear_gaussian.box_argmin(inv.numpy(), g - s, 1.0) for s, g in zip(x0, goal, strict=True)]
    )
    assert np.abs(u - exact).max() < 2e-3


class _LinearOracle(torch.nn.Module):
    """A world model with the exact whitening encoder z = Σ^{-1/2} x and exact prediction."""

    def __init__(self, sigma: np.ndarray):
        super().__init__()
        self.a = torch.as_tensor(linear_gaussian.spd_power(sigma, -0.5), dtype=torch.float32)

    def encode(self, o):
        return o @ self.a.T

    def predict(self, z, u):
        return z + u @ self.a.T


def test_evaluation_of_the_exact_whitening_model_gives_the_reference():
    cfg = toy2d.ToyConfig(warp=0.0, noise=0.1, sigma_angle=30.0)
    tasks = {"starts": 4, "angles": 24, "radius": 1.5, "seed": 0}
    x0, goal = toy2d.make_tasks(cfg.sigma, **tasks)
    ev = toy2d.evaluate_toy(_LinearOracle(cfg.sigma), cfg, x0, goal, seed=0)
    ref = toy2d.reference_regret(cfg.sigma, x0, goal, cfg.half_width)
    assert ev["normalized_regret"] == pytest.approx(ref["normalized_regret"], abs=2e-3)
    assert ev["metric_regret"] == pytest.approx(ref["normalized_regret"], abs=1e-6)
    assert ev["metric_gap"] < 1e-5 and abs(ev["cond_mean_error"]) < 1e-4
    # held-out error of exact prediction = noise: E||A ξ σ||^2 / tr Cov(Ax) = σ^2 tr Σ^{-1} / 2
    expected = 0.01 * np.trace(np.linalg.inv(cfg.sigma)) / 2
    assert ev["heldout_error"] == pytest.approx(expected, rel=0.05)
    assert ev["latent_var"] == pytest.approx(2.0, rel=0.05)


def test_training_is_deterministic_and_lambdareg_respects_kappa():
    cfg = toy2d.ToyConfig(steps=15, hidden=16, regularizer="lambdareg", kappa=4.0, lr=0.05)
    m1, l1, log1 = toy2d.train_toy(cfg, seed=3)
    m2, _, log2 = toy2d.train_toy(cfg, seed=3)
    assert log1 == log2
    for p1, p2 in zip(m1.parameters(), m2.parameters(), strict=True):
        assert torch.equal(p1, p2)
    v = l1.variances.detach()
    assert v.sum().item() == pytest.approx(2.0) and (v.max() / v.min()).item() <= 4.0 + 1e-5


def test_run_toy_is_cached_and_sweep_summarized(data_root):
    base = toy2d.ToyConfig(steps=10, hidden=8)
    tasks = {"starts": 2, "angles": 8, "radius": 1.5, "seed": 0}
    res = toy2d.toy_sweep(base, [0.1], [0, 1], ["sigreg"], tasks, progress=False)
    assert len(res) == 2 and set(res.seed) == {0, 1}
    cfg = dataclasses.replace(base, noise=0.1)
    row, path = toy2d.run_toy(cfg, 0, tasks)
    assert row["seed"] == 0 and row["normalized_regret"] == res.iloc[0].normalized_regret
    assert row["train_seconds"] == pytest.approx(res.iloc[0].train_seconds)  # not retrained
    model = toy2d.load_model(path, cfg)
    assert isinstance(model, toy2d.ToyWorldModel)
    summ = toy2d.toy_summary(res, ["normalized_regret"])
    assert summ.normalized_regret_lo[0] <= summ.normalized_regret[0] <= summ.normalized_regret_hi[0]
    assert isinstance(summ, pd.DataFrame) and summ.seeds[0] == 2


# ---------------------------------------------------------------- chapter 3's tables


def _fake_results(seed: int = 0) -> pd.DataFrame:
    """A results table shaped like toy_sweep's: 2 regularizers x 2 noises x 5 seeds."""
    rng = np.random.default_rng(seed)
    rows = [
        {
            "regularizer": reg,
            "noise": noise,
            "seed": s,
            "heldout_error": noise**2 + rng.uniform(0, 1e-3),
            "cond_mean_error": rng.uniform(1e-3, 2e-3),
            "normalized_regret": rng.uniform(0.1, 0.5),
            "metric_regret": rng.uniform(0.1, 0.5),
            "target_cond": np.nan if reg == "sigreg" else rng.uniform(1, 4),
        }
        for reg in ("sigreg", "lambdareg")
        for noise in (0.3, 0.01)
        for s in range(5)
    ]
    return pd.DataFrame(rows)


def _cell(results, reg, noise):
    return results[(results.regularizer == reg) & (results.noise == noise)]


def test_headline_table_means_intervals_and_medians():
    res = _fake_results()
    summ = toy2d.toy_summary(res, ["heldout_error", "normalized_regret", "metric_regret"])
    show = tables.theory.headline_table(res, summ, 0.123456)
    assert list(show.columns) == [
        "regularizer",
        "noise",
        "seeds",
        "held-out error",
        "normalized regret",
        "metric regret",
        "median regret",
        "reference",
    ]
    assert list(dict.fromkeys(show.regularizer)) == ["SIGReg", "ΛReg"]  # as the book names them
    code = {"SIGReg": "sigreg", "ΛReg": "lambdareg"}
    for _, row in show.iterrows():
        cell = _cell(res, code[row.regularizer], row.noise)
        mean, lo, hi = (float(v) for v in re.findall(r"[\d.]+", row["normalized regret"]))
        assert mean == pytest.approx(cell.normalized_regret.mean(), abs=5e-5)
        assert lo <= mean <= hi
        assert row["median regret"] == pytest.approx(np.median(cell.normalized_regret), abs=5e-5)
        assert row.reference == 0.1235 and row.seeds == 5


def test_folded_runs_flags_only_the_outlier():
    res = _fake_results(1)
    res.loc[7, "cond_mean_error"] = 50 * res.cond_mean_error.max()  # one folded encoder
    flagged = toy2d.folded_runs(res)
    assert list(flagged.index) == [7]
    # a threshold above the outlier's ratio to its cell median flags nothing
    cell = _cell(res, res.regularizer[7], res.noise[7])
    ratio = res.cond_mean_error[7] / np.median(cell.cond_mean_error)
    assert toy2d.folded_runs(res, factor=1.01 * ratio).empty


def test_cell_means_and_noise_endpoints_against_direct_means():
    res = _fake_results(2)
    means = toy2d.cell_means(res, "normalized_regret")
    assert list(means.index) == [
        ("sigreg", 0.3),
        ("sigreg", 0.01),
        ("lambdareg", 0.3),
        ("lambdareg", 0.01),
    ]
    for (reg, noise), m in means.items():
        assert m == pytest.approx(_cell(res, reg, noise).normalized_regret.mean())
    summ = toy2d.toy_summary(res, ["heldout_error", "normalized_regret"])
    end = toy2d.noise_endpoints(summ, res, "lambdareg", 0.01, 0.3)
    hi, lo = _cell(res, "lambdareg", 0.3), _cell(res, "lambdareg", 0.01)
    assert end["error_ratio"] == pytest.approx(hi.heldout_error.mean() / lo.heldout_error.mean())
    assert end["regret_hi"] == pytest.approx(hi.normalized_regret.mean())
    assert end["regret_lo"] == pytest.approx(lo.normalized_regret.mean())
    assert end["target_cond"][0.01] == pytest.approx(lo.target_cond.mean())
    assert toy2d.noise_endpoints(summ, res, "vicreg", 0.01, 0.3) is None


def test_long_table_pivots_back_to_the_results():
    res = _fake_results(3)
    long = tables.theory.long_table(res, ["heldout_error", "normalized_regret"])
    assert len(long) == 2 * len(res) and set(long.measure) == {"heldout_error", "normalized_regret"}
    back = long.pivot_table(
        index=["regularizer", "noise", "seed"], columns="measure", values="value"
    )
    orig = res.set_index(["regularizer", "noise", "seed"])
    for col in ("heldout_error", "normalized_regret"):
        np.testing.assert_allclose(back[col].loc[orig.index], orig[col])


# ---------------------------------------------------------------- panel (a)


def test_cost_landscape_of_the_whitening_model_is_the_inverse_covariance():
    cfg = toy2d.ToyConfig(warp=0.0, sigma_angle=30.0)
    goal = np.array([0.7, -0.4])
    land = toy2d.cost_landscape(_LinearOracle(cfg.sigma), cfg, goal, lim=1.5, n_grid=31)
    assert land["X"].shape == (31, 31) and land["X"][0, 0] == pytest.approx(goal[0] - 1.5)
    dx = np.stack([land["X"] - goal[0], land["Y"] - goal[1]], -1)
    closed = np.einsum("...i,ij,...j->...", dx, np.linalg.inv(cfg.sigma), dx)  # Lemma 1
    np.testing.assert_allclose(land["latent"], closed, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(land["inverse_covariance"], closed, rtol=1e-12)
    np.testing.assert_allclose(land["task"], (dx**2).sum(-1))


def test_planner_choices_of_the_whitening_model():
    cfg = toy2d.ToyConfig(warp=0.0, sigma_angle=30.0)
    start, goal = np.array([0.2, 0.1]), np.array([1.9, 0.3])
    ch = toy2d.planner_choices(_LinearOracle(cfg.sigma), cfg, start, goal)
    exact = start + linear_gaussian.box_argmin(np.linalg.inv(cfg.sigma), goal - start, 1.0)
    np.testing.assert_allclose(ch["inverse_covariance"], exact)
    np.testing.assert_allclose(ch["learned"], exact, atol=2e-3)  # grid resolution
    np.testing.assert_allclose(ch["task"], [1.2, 0.3])  # x₀ + clip(x_g - x₀, -1, 1)


# ---------------------------------------------------------------- chapter 3's figures


def test_plot_prediction_vs_regret_panels():
    res = _fake_results(4)
    long = tables.theory.long_table(res, ["heldout_error", "normalized_regret"])
    fig = plots.plot_prediction_vs_regret(long, 0.3523, n_seeds=5)
    assert len(fig.axes) == 2
    assert fig.axes[0].get_yscale() == "log" and fig.axes[1].get_xscale() == "log"
    ref_lines = [ln for ln in fig.axes[1].lines if ln.get_label() == "Σ⁻¹ reference"]
    assert ref_lines and ref_lines[0].get_ydata()[0] == 0.3523
    assert "0.352" in fig._suptitle.get_text()
    plt.close(fig)


def test_plot_cost_landscape_marks_the_planners():
    cfg = toy2d.ToyConfig(warp=0.0, sigma_angle=30.0)
    start, goal = np.array([0.2, 0.1]), np.array([1.9, 0.3])
    oracle = _LinearOracle(cfg.sigma)
    land = toy2d.cost_landscape(oracle, cfg, goal, n_grid=41)
    ch = toy2d.planner_choices(oracle, cfg, start, goal)
    fig = plots.plot_cost_landscape(land, ch, start, goal, 1.0, title="t")
    ax = fig.axes[0]
    pts = {ln.get_label(): np.c_[ln.get_xdata(), ln.get_ydata()] for ln in ax.lines}
    np.testing.assert_allclose(pts["learned planner"], [ch["learned"]])
    np.testing.assert_allclose(pts["task-optimal $x^*$"], [ch["task"]])
    np.testing.assert_allclose(ax.patches[0].get_xy(), start - 1.0)
    assert ax.get_title() == "t"
    plt.close(fig)


def test_lambda_budget_arms_change_one_thing_each(tmp_path, monkeypatch):
    """The α-lr and longer-training arms differ from the sweep's ΛReg run in exactly the
    stated setting, the first arm is the sweep's run itself, and the table averages seeds."""
    import dataclasses

    from jepa_geometry.theory import toy2d

    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path))
    base = dataclasses.replace(toy2d.ToyConfig(), steps=20, hidden=8, batch_size=32)
    tasks = {"starts": 2, "angles": 4, "radius": 1.5, "seed": 0}
    runs = toy2d.lambda_budget_runs(base, 0.3, [0, 1], tasks, progress=False)
    assert list(runs.arm) == [a for a in toy2d.LAMBDA_BUDGETS for _ in (0, 1)]
    sweep = toy2d.toy_sweep(base, [0.3], [0, 1], ["lambdareg"], tasks, progress=False)
    first = runs[runs.arm == "ΛReg, as trained above"].drop(columns="arm").reset_index(drop=True)
    assert first.drop(columns="train_seconds").equals(sweep.drop(columns="train_seconds"))
    assert (runs.target_cond <= base.kappa + 1e-6).all()
    table = toy2d.lambda_budget_table(runs, reference=0.35)
    row = table.set_index("arm").loc["ΛReg, 4x steps"]
    assert row["target_cond"] == pytest.approx(
        runs[runs.arm == "ΛReg, 4x steps"].target_cond.mean()
    )
    assert row["regret / Σ⁻¹ reference"] == pytest.approx(row["normalized_regret"] / 0.35)
    with pytest.raises(ValueError, match="alpha_lr must be > 0"):
        toy2d.ToyConfig(alpha_lr=0)
