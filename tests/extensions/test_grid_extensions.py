"""The κ sweep and the scaling study as extensions of the study grid (``jepa-geometry grid
--with kappa scaling``): their units beside the task studies', the work they share done once,
a gated point's cells waiting for its gate, and every artifact chapters 8 and 9 read built by
the units alone."""

from __future__ import annotations

import pytest

from jepa_geometry import cluster
from jepa_geometry.artifacts import Artifact, cache_only
from jepa_geometry.cli import main
from jepa_geometry.extensions import kappa, scaling
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.decisions.gate import gate_cell
from jepa_geometry.study.job_calls import PlanCells
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.training import world_model_artifact

SMOKE = load_profile("smoke")
EXTENSIONS = (kappa.GRID, scaling.GRID)


def _name(a: Artifact) -> str:
    return f"{a.kind}/{a.name}/{a.key}"


def _outputs(units: list[cluster.Unit]) -> list[str]:
    return [_name(a) for u in units for a in u.outputs]


def _planned(units: list[cluster.Unit]) -> list[str]:
    """The plan artifact of every cell the units plan, once per unit that plans it."""
    return [
        _name(c.artifacts()[0]) for u in units if isinstance(u.call, PlanCells) for c in u.args[0]
    ]


def test_the_extensions_add_their_units_and_share_work_once(data_root):
    specs = [load_study("tworoom")]
    for stage in cluster.STAGES:
        alone = cluster.stage_units(stage, specs, SMOKE)
        both = cluster.stage_units(stage, specs, SMOKE, EXTENSIONS)
        out = _outputs(both)
        # no model, dataset or measurement is built by two units, and no cell is planned by
        # two (cells of one task share their random floor, which the first to plan writes)
        jobs = _outputs([u for u in both if not isinstance(u.call, PlanCells)])
        assert len(jobs) == len(set(jobs)), stage
        assert len(_planned(both)) == len(set(_planned(both))), stage
        assert {u.label for u in alone} <= {u.label for u in both}  # the studies' units stay
        assert set(_outputs(alone)) <= set(out)
    train = set(_outputs(cluster.stage_units("train", specs, SMOKE, EXTENSIONS)))
    plan = cluster.stage_units("plan", specs, SMOKE, EXTENSIONS)
    sweep = kappa.KAPPA_SWEEP
    assert {_name(world_model_artifact(*m)) for m in sweep.models(SMOKE)} <= train
    assert {_name(c.artifacts()[0]) for c in sweep.cells(SMOKE)} <= set(_planned(plan))
    spec = scaling.load_scaling()
    for (pt, task), arms in scaling.by_point(
        scaling.chosen(scaling.stated_units(spec, SMOKE))
    ).items():
        p = scaling.point_profile(spec, task, pt, SMOKE)
        assert {
            _name(world_model_artifact(task, a, s, p)) for a in arms for s in p.seeds.train
        } <= train
        cells = scaling.point_cells(spec, task, pt, arms, SMOKE)
        assert {_name(c.artifacts()[0]) for c in cells} <= set(_planned(plan))
        assert _name(scaling.step_flops_artifact(task, p)) in set(_outputs(plan))
    # a planning unit cut down to the cells no study plans is costed on those cells alone
    for u in plan:
        if isinstance(u.call, PlanCells):
            assert u.hours == pytest.approx(sum(cluster.cell_hours(c) for c in u.args[0]))
    # the κ = 2 model's unit keeps only its validation cell: the evaluation one is the study's
    own = [u for u in plan if u.label == "plan tworoom anisowm seed 0 (κ sweep)"]
    assert len(own) == 1 and [c.n_pairs is not None for c in own[0].args[0]] == [True]
    assert list(data_root.rglob("manifest.json")) == []  # listing units builds nothing


def test_a_gated_point_plans_once_its_gate_passes(data_root, monkeypatch):
    raw = {
        "tasks": {p: ["cube"] for p in ("smoke", "laptop", "paper")},
        "arms": ["lewm", "scale"],
        "seeds": {"smoke": [0], "laptop": [0, 1], "paper": [0, 1]},
        "steps": {p: [1, 2, 3] for p in ("smoke", "laptop", "paper")},
        "resolution": {"tasks": ["cube"], "image": 1.5},
        "budget_hours": {"smoke": 10.0, "laptop": 10.0, "paper": 10.0},
        "workers": 2,
        "model_seconds": {},
    }
    spec = scaling.scaling_from_dict(raw)
    points = spec.points(SMOKE)
    plan = scaling.grid_units("plan", SMOKE, spec)
    for pt in points:
        p = scaling.point_profile(spec, "cube", pt, SMOKE)
        gate = gate_cell("cube", p, scaling.main_protocol("cube"), "validation")
        [unit] = [u for u in plan if u.label.endswith(f"gate ({pt.name})")]
        assert [_name(c.artifacts()[0]) for c in unit.args[0]] == [_name(gate.artifacts()[0])]
    waiting = scaling.grid_units("chosen", SMOKE, spec)  # no gate is cached yet
    assert len(waiting) == len(points) * 2 and not any(u.outputs for u in waiting)
    assert {u.pending for u in waiting} == {f"the gate at {pt.name}" for pt in points}
    rows = cluster.run_stage(waiting, "local", data_root / "jobs", SMOKE, 1, progress=False)
    assert {r["status"] for r in rows} == {"blocked"}
    for passes in (True, False):
        monkeypatch.setattr(scaling.build, "gate", lambda *a, passes=passes: {"plans": passes})
        units = scaling.grid_units("chosen", SMOKE, spec)
        want = [
            _name(c.artifacts()[0])
            for pt in points
            for c in scaling.point_cells(spec, "cube", pt, spec.arms, SMOKE)
        ]
        assert sorted(_planned(units)) == (sorted(want) if passes else [])


@pytest.mark.slow
def test_the_extensions_units_build_what_chapters_8_and_9_read(smoke_datasets, capsys):
    """Each extension built by its own command (``jepa-geometry kappa``, ``jepa-geometry
    scaling``: the grid's units, each run as its job runs it, ``cluster.build_here``) into the
    run's shared smoke cache (the pages read the same artifacts, so whichever comes first
    builds them); then the κ sweep's and the scaling study's readers find everything in the
    cache alone, and the grid lists every unit of both as cached."""
    for command in ("kappa", "scaling"):
        assert main([command, "--profile", "smoke", "--workers", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "κ sweep cost estimate" in out and "Scaling study at smoke" in out  # stated first
    for stage in cluster.STAGES:
        for u in cluster.stage_units(stage, [], SMOKE, EXTENSIONS):
            assert u.outputs and u.cached, u.label  # at smoke no unit waits for a gate
    with cache_only():
        assert kappa.missing(kappa.KAPPA_SWEEP, SMOKE) == []
        kappa.load_results(SMOKE)
        built = scaling.scaling_results(scaling.load_scaling(), SMOKE)
    assert built.missing == {}
    assert {r.task for r in built.results} == set(scaling.load_scaling().tasks_at(SMOKE))
