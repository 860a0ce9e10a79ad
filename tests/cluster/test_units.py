"""A list of studies and its units: the checks that stop a grid before any work."""

from __future__ import annotations

import pytest

from jepa_geometry import cluster
from jepa_geometry.profiles import load_profile, with_overrides
from jepa_geometry.study.spec import load_study

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
