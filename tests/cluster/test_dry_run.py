"""The dry run: every unit of a grid, its hours, its resources and whether it is cached,
nothing built."""

from __future__ import annotations

import pytest

from jepa_geometry import cluster
from jepa_geometry.planning.protocol import make_protocol
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.levers import LADDERS
from jepa_geometry.study.rules.lambdareg import LAMBDAREG_VARIANTS
from jepa_geometry.study.spec import load_study

SMOKE = load_profile("smoke")


def test_a_dry_run_lists_and_prices_every_unit_and_builds_nothing(data_root):
    spec = load_study("tworoom")
    units = cluster.dry_run([spec], SMOKE)
    models = len(spec.arms) * len(SMOKE.seeds.train)
    # the book's decisions on Two-Room: LeWM at the restored SIGReg strength and every
    # non-published ΛReg variant (LeWM's and the published form's first seed are the study's)
    decision = 1 + len(LAMBDAREG_VARIANTS) - 1
    # the chosen variant of each ΛReg arm and seed: not yet decided, so placeholders
    variant = sum("anisowm" in a for a in spec.arms) * len(SMOKE.seeds.train)
    counts = units.groupby(["stage", "kind"]).size().to_dict()
    # DINO-WM's stand-in learns from all five tasks' datasets: Two-Room's and four more
    assert "dinowm" in spec.arms
    assert counts == {
        ("collect", "collect"): 5,
        ("pretrain", "train"): 1,
        ("train", "train"): models + decision,
        # and the MPPI sweep, one per ceiling cell, and the protocol gate's alternatives (its
        # first cell, LeWM under SCALE's protocol, is the study's own)
        ("plan", "plan"): models + 1 + 5 + 1,
        ("plan", "measure"): models,
        ("plan", "train"): variant,
        ("chosen", "plan"): models + variant,
    }
    waiting = units[units.unit.str.endswith("ΛReg variant")]
    assert len(waiting) == 2 * variant and (waiting.hours > 0).all()
    ceiling = units[units.unit.str.contains("ceiling")]
    # the ceiling's cost: pairs x plans x rollouts per replan x the simulator's time per rollout
    pairs = min(spec.ceiling, SMOKE.eval.episodes)
    plans = make_protocol(SMOKE, spec.main_protocol).plans
    rollouts = [s * i for s, i in budget_tiers(SMOKE).values()]
    per_rollout = SMOKE.cluster.ceiling_rollout_ms["tworoom"] / 1e3
    expected = [pairs * plans * r * per_rollout / 3600 for r in rollouts]
    assert sorted(ceiling.hours) == pytest.approx(sorted(expected))
    train = units[units.stage == "train"]
    assert train.hours.tolist() == pytest.approx(
        [SMOKE.train.steps / SMOKE.cluster.train_steps_per_s / 3600] * (models + decision)
    )
    pretrain = units[units.stage == "pretrain"]
    assert pretrain.hours.tolist() == pytest.approx(
        [SMOKE.dinowm.standin_steps / SMOKE.cluster.pretrain_steps_per_s / 3600]
    )
    # two studies share one stand-in and each dataset once
    both = cluster.dry_run([spec, load_study("pusht")], SMOKE)
    assert (both.stage == "pretrain").sum() == 1
    assert both[both.stage == "collect"].unit.is_unique
    assert not units.cached.any()
    assert list(data_root.rglob("manifest.json")) == []  # a dry run builds nothing
    summary = cluster.dry_run_summary(units)
    total = summary[summary.stage == "total"]
    assert total["units"].sum() == len(units) and set(total.device) == {"CPU"}  # smoke: no GPU
    assert total["all (h)"].sum() == pytest.approx(units.hours.sum())
    # a task with a ladder: every rung's gate cell is planned, on that rung's LeWM
    ladder = cluster.dry_run([load_study("pusht")], SMOKE)
    for lever in LADDERS["pusht"]:
        assert f"plan pusht lewm seed 0 (gate, rung {lever.name})" in set(ladder.unit)
