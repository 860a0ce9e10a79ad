"""A list of studies and its units: the checks that stop a grid before any work."""

from __future__ import annotations

import pytest

from jepa_geometry import cluster
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import load_profile, with_overrides
from jepa_geometry.study.decisions import lambdareg
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.training import world_model_artifact

SMOKE = load_profile("smoke")


def test_dinowm_on_dinov2_without_the_file_stops_the_grid_and_is_left_out_of_a_dry_run(
    data_root, tmp_path
):
    real = with_overrides(
        SMOKE, {"dinowm.encoder": "dinov2", "dinowm.dinov2_weights": str(tmp_path / "missing.pth")}
    )
    spec = load_study("tworoom")
    with pytest.raises(cluster.ClusterError, match=r"tworoom train dinowm on DINOv2.*missing\.pth"):
        cluster.run_grid([spec], real, "local", tmp_path / "jobs", progress=False)
    assert not (tmp_path / "jobs").exists() or not any((tmp_path / "jobs").iterdir())
    units = cluster.dry_run([spec], real)
    assert units.attrs["left_out"] == ["tworoom"]
    assert not units.unit.str.contains("dinowm").any() and units.unit.str.contains("lewm").any()
    assert list(data_root.rglob("manifest.json")) == []


def test_a_study_given_twice_stops_the_grid_before_any_work(tmp_path):
    spec = load_study("tworoom")
    with pytest.raises(cluster.ClusterError, match=r"study of tworoom is given more than once"):
        cluster.run_grid([spec, spec], SMOKE, "local", tmp_path / "jobs", progress=False)
    with pytest.raises(cluster.ClusterError, match=r"study of tworoom is given more than once"):
        cluster.dry_run([spec, load_study("pusht"), spec], SMOKE)
    assert not (tmp_path / "jobs").exists()


def test_a_decided_variant_is_trained_and_planned_where_chapter_7_reads_it(data_root, monkeypatch):
    """Once the decision names a variant, stage ``plan`` trains it for every ΛReg arm and
    training seed and stage ``chosen`` plans it in the study's main cell (CEM T1 under the main
    protocol), the models and cells chapter 7 compares; a study that does not plan gets
    none, and the published form adds nothing."""
    variant = "tanh, alpha lr x30"
    monkeypatch.setattr(lambdareg, "decided_variant", lambda task, profile: variant)
    spec = load_study("tworoom")
    w = dict(lambdareg.LAMBDAREG_VARIANTS[variant])
    expected_models = {
        world_model_artifact("tworoom", arm, s, SMOKE, w).key
        for arm in ("anisowm", "scale+anisowm")
        for s in SMOKE.seeds.train
    }
    train = [u for u in cluster.stage_units("plan", [spec], SMOKE) if u.kind == "train"]
    assert {a.key for u in train for a in u.outputs} == expected_models
    assert all(u.label.endswith("alpha_lr=30 bound=tanh (ΛReg variant)") for u in train)
    expected_cells = {
        a.key
        for arm in ("anisowm", "scale+anisowm")
        for s in SMOKE.seeds.train
        for a in PlanningCell(
            "tworoom",
            arm,
            s,
            SMOKE,
            solver="cem",
            tier="T1",
            protocol=spec.main_protocol,
            weights=w,
        ).artifacts()
    }
    chosen = [u for u in cluster.stage_units("chosen", [spec], SMOKE) if "ΛReg" in u.label]
    assert {a.key for u in chosen for a in u.outputs} == expected_cells
    cube = [
        u for s in ("plan", "chosen") for u in cluster.stage_units(s, [load_study("cube")], SMOKE)
    ]
    assert not [u for u in cube if "ΛReg" in u.label]
    monkeypatch.setattr(lambdareg, "decided_variant", lambda task, profile: "published")
    assert not [u for u in cluster.stage_units("chosen", [spec], SMOKE) if "ΛReg" in u.label]


from tests.study.test_spec import planned_headline  # noqa: E402


def _outputs(units) -> set[str]:
    return {f"{a.kind}/{a.name}/{a.key}" for u in units for a in u.outputs}


@pytest.mark.parametrize("task", ["tworoom", "reacher", "pointmaze", "pusht"])
def test_the_headline_seeds_add_their_models_cem_cells_and_geometry_and_nothing_else(task):
    """Issue #67: against the same study without them, the headline seeds keep every unit
    and every key, and add, per headline arm and added seed, one model, its CEM cells at the
    five tiers of the main protocol (their random floors are the other seeds') and its
    geometry; at smoke, whose profile they do not name, nothing."""
    import dataclasses

    laptop = load_profile("laptop")
    spec = dataclasses.replace(load_study(task), headline_seeds=planned_headline(task))
    plain = dataclasses.replace(spec, headline_seeds=None)
    p = spec.profile(laptop)
    added = spec.headline_models(p)
    assert added and {s for _, s in added} == {3, 4}
    for stage in cluster.STAGES:
        old = cluster.stage_units(stage, [plain], laptop)
        new = cluster.stage_units(stage, [spec], laptop)
        kept = {u.label: _outputs([u]) for u in old}
        assert {u.label: _outputs([u]) for u in new if u.label in kept} == kept  # as they were
        extra = [u for u in new if u.label not in kept]
        want = {
            "train": [f"train {task} {a} seed {s}" for a, s in added],
            "plan": [f"plan {task} {a} seed {s}" for a, s in added]
            + [f"measure {task} {a} seed {s}" for a, s in added],
        }.get(stage, [])
        assert sorted(u.label for u in extra) == sorted(want)
        for u in extra:
            if u.kind == "plan":
                cells = u.args[0]
                assert {(c.protocol, c.solver) for c in cells} == {(spec.main_protocol, "cem")}
                assert sorted(c.tier for c in cells) == ["T1", "T2", "T3", "T4", "T5"]
                assert all(c.temperature is None and c.subset is None for c in cells)
                floors = {f"{a.kind}/{a.name}/{a.key}" for c in cells for a in c.artifacts()[1:]}
                assert floors <= _outputs(old)
    smoke = load_profile("smoke")
    for stage in cluster.STAGES:
        assert _outputs(cluster.stage_units(stage, [spec], smoke)) == _outputs(
            cluster.stage_units(stage, [plain], smoke)
        )
