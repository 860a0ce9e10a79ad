"""The dry run: every unit of a grid, its hours, its resources and whether it is cached,
nothing built."""

from __future__ import annotations

import pytest

from jepa_geometry import cluster
from jepa_geometry.envs import task_class
from jepa_geometry.planning.protocol import make_protocol
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.decisions.lambdareg import LAMBDAREG_VARIANTS
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
        # and the MPPI sweep, one per ceiling cell, and the protocol gate's cells, in two
        # units: those its climb read (SCALE's protocol, then LeWM's, Two-Room's main one) and
        # the one past its stop (goal +50, optional: a page does not read it)
        ("plan", "plan"): models + 1 + 5 + 2,
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
    per_rollout = task_class("tworoom").ceiling_rollout_ms / 1e3
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
    for lever in load_study("pusht").ladder:
        assert f"plan pusht lewm seed 0 (gate, rung {lever.name})" in set(ladder.unit)


class _Stored:
    """An artifact stand-in: in the cache or not, with or without its heavy files."""

    def __init__(self, name: str, exists: bool, heavy: bool = True) -> None:
        self.kind, self.name, self.key = "results", name, "k"
        self._exists, self._heavy = exists, heavy

    def exists(self) -> bool:
        return self._exists

    def heavy_missing(self) -> list[str]:
        return [] if self._heavy else ["weights"]


def _unit(stage: str, label: str, outputs=(), inputs=()) -> cluster.Unit:
    return cluster.Unit(stage, "plan", "tworoom", label, print, (), outputs, inputs, 1.0)


def test_a_unit_to_run_rebuilds_what_the_cache_holds_without_its_heavy_files():
    """A manifest without its frames or weights (the evidence tree) is cached for a reader of
    its small files, but a job that opens it builds it first: the dry run counts that job's
    maker as work to run, and the maker's own such inputs in turn; an input with its heavy
    files, or one not in the cache at all (its maker runs anyway), adds nothing."""
    data = _Stored("data", exists=True, heavy=False)
    model = _Stored("model", exists=True, heavy=False)
    whole = _Stored("whole", exists=True)
    collect = _unit("collect", "collect", (data,))
    train = _unit("train", "train", (model,), (data,))
    other = _unit("train", "train other", (whole,), (data,))
    cell = _unit("plan", "plan", (_Stored("cell", exists=False),), (model, whole))
    units = [collect, train, other, cell]
    assert cluster.needed_whole(units, [cell]) == [collect, train, cell]
    assert cluster.needed_whole(units, [other]) == [collect, other]
    assert cluster.needed_whole(units, []) == []


def test_the_headline_seeds_work_is_stated_against_its_budget(tmp_path, monkeypatch):
    """At laptop, from the committed datasets' manifests alone (as a fresh clone holds them:
    no frames): Reacher's headline seeds add 6 models, their CEM cells and their geometry, and
    the dataset's frames they need collected again; smoke adds nothing. Only the evidence's
    datasets stand behind the cache, so the count does not depend on which tasks' headline
    seeds the evidence already holds."""
    import dataclasses
    import shutil

    from tests.conftest import REPO
    from tests.study.test_spec import planned_headline

    shutil.copytree(REPO / "evidence" / "laptop" / "datasets", tmp_path / "ro" / "datasets")
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("JEPA_GEOMETRY_READ_ONLY", str(tmp_path / "ro"))
    laptop = load_profile("laptop")
    spec = dataclasses.replace(load_study("reacher"), headline_seeds=planned_headline("reacher"))
    units = cluster.dry_run([spec], laptop)
    work = units.attrs["headline"]
    seeds = [f"reacher {a} seed {s}" for s in (3, 4) for a in ("lewm", "scale", "anisowm")]
    assert list(work.unit) == [
        "collect reacher",
        *(f"train {m}" for m in seeds),
        *(f"{k} {m}" for k in ("plan", "measure") for m in seeds),
    ]
    assert list(work.rebuilt) == [True] + [False] * 18 and not work.cached.any()
    assert units.set_index("unit").loc["collect reacher", "rebuilt"]  # in the whole grid too
    said = cluster.headline_statement(units, laptop)
    core_h = (work.hours * work.cpus).sum()
    assert said.startswith("headline seeds: 19 units to run (6 train, 6 plan, 6 measure; 1 collect")
    assert f"{core_h:.2f} core-hours" in said and "the budget is 8 h on 2 cores: within it" in said
    # stages in turn, the units of a stage side by side on the 2 cores
    stages = work.assign(ch=work.hours * work.cpus).groupby("stage", sort=False)
    assert cluster.wall_hours(work, 2) == pytest.approx(
        sum(max(g.hours.max(), g.ch.sum() / 2) for _, g in stages)
    )
    over = work.assign(hours=work.hours * 100)
    over.attrs = {}
    units.attrs["headline"] = over
    assert cluster.headline_statement(units, laptop).endswith(
        "8 h on 2 cores: over it (README, Five seeds for the headline claims)"
    )
    assert cluster.dry_run([load_study("tworoom")], SMOKE).attrs["headline"].empty
    assert (
        cluster.headline_statement(cluster.dry_run([load_study("tworoom")], SMOKE), SMOKE) is None
    )
