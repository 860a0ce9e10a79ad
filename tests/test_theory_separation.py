"""The 2-D separation experiment: system, planner and evaluation against closed forms."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

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
        toy2d.separation_sweep(toy2d.ToyConfig(), [0.1], [0], ["lewm"], {})


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

    u = toy2d.plan_grid(cost, len(x0), 1.0).numpy()
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
    res = toy2d.separation_sweep(base, [0.1], [0, 1], ["sigreg"], tasks, progress=False)
    assert len(res) == 2 and set(res.seed) == {0, 1}
    cfg = dataclasses.replace(base, noise=0.1)
    row, path = toy2d.run_toy(cfg, 0, tasks)
    assert row["seed"] == 0 and row["normalized_regret"] == res.iloc[0].normalized_regret
    assert row["train_seconds"] == pytest.approx(res.iloc[0].train_seconds)  # not retrained
    model = toy2d.load_model(path, cfg)
    assert isinstance(model, toy2d.ToyWorldModel)
    summ = toy2d.summarize(res, ["normalized_regret"])
    assert summ.normalized_regret_lo[0] <= summ.normalized_regret[0] <= summ.normalized_regret_hi[0]
    assert isinstance(summ, pd.DataFrame) and summ.seeds[0] == 2
