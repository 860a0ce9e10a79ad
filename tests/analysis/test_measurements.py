"""Per-model geometry measurements: complete, cached per checkpoint, consistent with their parts."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

import jepa_geometry as jg
from jepa_geometry.analysis import landscape, measurements, probes
from jepa_geometry.artifacts import cache_only
from jepa_geometry.book import tables
from jepa_geometry.envs import task_class
from jepa_geometry.verdict.reference import reference_numbers

SMALL = measurements.GeometrySettings(
    probe_frames=300,
    dispersion_pairs=2000,
    ranking_starts=4,
    ranking_candidates=8,
    grid=8,
    landscape_goals=10,
)


@pytest.fixture(scope="module")
def measured():
    prof = jg.load_profile("smoke")
    return prof, measurements.measure_arms(
        "tworoom", ["lewm", "anisowm"], prof, SMALL, progress=False
    )


def test_tables_cover_every_model(measured):
    prof, geo = measured
    assert sorted(geo.probes.arm) == ["anisowm", "lewm"]
    for _, sp in geo.spectra.groupby("arm"):
        assert sp.share.sum() == pytest.approx(1.0)
        assert (np.diff(sp.share.to_numpy()) <= 1e-12).all()
    assert set(geo.ranking.source) == {"gaussian", "dataset"}
    assert geo.ranking.groupby(["arm", "source"]).size().max() <= SMALL.ranking_starts
    assert geo.landscape.groupby("arm").size().tolist() == [10, 10]
    assert list(geo.lambda_spectra) == [("anisowm", prof.seeds.train[0])]  # ΛReg arms only


def test_probe_frames_are_held_out(measured):
    prof, _ = measured
    ctx = measurements._Context("tworoom", prof, SMALL)
    rows = ctx.probe_rows()
    assert len(rows) == len(set(rows)) <= SMALL.probe_frames
    assert np.isin(ctx.data.episode[rows], ctx.data.heldout_episodes).all()


def test_cached_landscape_matches_a_recomputation(measured):
    prof, geo = measured
    grid = measurements.cached_landscape_positions("tworoom", prof, SMALL)
    z = measurements.load_landscape_embeddings("tworoom", "lewm", prof.seeds.train[0], prof, SMALL)
    assert z.shape == (len(grid.positions), prof.model.embed_dim)
    row = geo.landscape[geo.landscape.arm == "lewm"].iloc[0]
    again = landscape.cost_landscape(z, grid.positions, int(row.goal_index))
    assert again["iou"] == pytest.approx(row.iou)
    assert again["spearman"] == pytest.approx(row.spearman)


def test_second_call_reads_the_cache(measured):
    prof, geo = measured
    again = measurements.measure_arms("tworoom", ["lewm", "anisowm"], prof, SMALL, progress=False)
    assert again.probes.equals(geo.probes)
    assert again.ranking.equals(geo.ranking)
    art = measurements.geometry_artifact("tworoom", "lewm", prof.seeds.train[0], prof, SMALL)
    assert art.manifest()["spec"]["settings"]["grid"] == SMALL.grid


def test_ranking_table_reports_the_mean_over_seeds_and_starts(measured):
    _, geo = measured
    tab = tables.geometry.ranking_table(geo.ranking, ["lewm", "anisowm"])
    assert list(tab.index) == ["lewm", "anisowm"]
    r = geo.ranking[(geo.ranking.source == "dataset") & (geo.ranking.arm == "lewm")]
    mean, interval = tab.loc["lewm", "agree_enc"].split(" ", 1)
    assert float(mean) == pytest.approx(r.agree_enc.dropna().mean(), abs=5e-4)
    lo, hi = (float(v) for v in interval.strip("[]").split(", "))
    assert lo <= float(mean) <= hi


def test_paper_probe_table_maps_the_reference_file():
    ref = tables.geometry.paper_probe_table("tworoom")  # arms and columns as the page shows them
    var2 = reference_numbers(table="scale_pca_variance_share", task="tworoom", k="2", arm="scale")
    assert ref.loc["SCALE", "variance share, top-2 PCs"] == pytest.approx(var2.value.iloc[0] / 100)
    shown = {"R², top-8 PCs", "R², full (ridge)", "R², full (MLP)", "p90/p10 ratio"}
    assert shown <= set(ref.columns)


def test_coordinate_r2_splits_the_full_probe_by_coordinate():
    """Its mean is geometry_probe's r2_full_ridge (same split); a coordinate the embedding
    does not carry has R² near 0, one it carries linearly near 1."""
    rng = np.random.default_rng(0)
    q = rng.normal(size=(600, 3))
    z = np.concatenate([q[:, :2] @ rng.normal(size=(2, 6)), rng.normal(size=(600, 4))], 1)
    r2 = probes.coordinate_r2(z, q, seed=3)
    full = probes.geometry_probe(z, q, seed=3, mlp=False)["r2_full_ridge"]
    assert r2.mean() == pytest.approx(full, abs=1e-12)
    assert r2[0] > 0.99 and r2[1] > 0.99 and abs(r2[2]) < 0.05
    with pytest.raises(ValueError, match="same >= 8 frames"):
        probes.coordinate_r2(z[:5], q[:5], seed=0)


def test_a_measurement_is_the_same_whatever_the_caller_s_threads(
    measured, _isolated_data_root, tmp_path, monkeypatch
):
    """Built on one thread (jobs.job_threads): callers on one and on two threads get the same
    bytes, and keep their own thread count."""
    prof, _ = measured
    seed = prof.seeds.train[0]
    payloads = []
    for threads in (1, 2):
        root = tmp_path / f"threads{threads}"
        for folder in ("datasets/tworoom", "checkpoints/tworoom-lewm"):  # inputs, not the result
            shutil.copytree(_isolated_data_root / folder, root / folder)
        monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(root))
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            ctx = measurements._Context("tworoom", prof, SMALL)
            try:
                measurements.measure_model("tworoom", "lewm", seed, prof, ctx)
            finally:
                ctx.close()
            assert torch.get_num_threads() == threads  # the caller's count, restored
        finally:
            torch.set_num_threads(before)
        art = measurements.geometry_artifact("tworoom", "lewm", seed, prof, SMALL)
        assert art.path.is_relative_to(root)  # built here, not read from another cache
        names = ("probe.json", "spectrum.npy", "ranking.parquet", "z_grid.npy")
        payloads.append({name: (art.path / name).read_bytes() for name in names})
    assert payloads[0] == payloads[1]


def test_landscape_panels_are_the_costs_of_the_grid_s_embeddings_and_need_them_only_once(measured):
    """Figure 4's panels recomputed here from the cached z_grid; then, with every z_grid gone
    (the evidence tree leaves them to the DVC remote), the panels still come, from their memo,
    bit for bit, and the geometry artifact still reads."""
    prof, _ = measured
    arms = ["lewm", "anisowm"]
    ex = measurements.landscape_examples("tworoom", arms, prof, SMALL, 2)
    assert list(ex.panels) == arms and len(ex.goals) == 2
    for arm in arms:
        z = measurements.load_landscape_embeddings("tworoom", arm, ex.seed, prof, SMALL)
        for g, panel in zip(ex.goals, ex.panels[arm], strict=True):
            want = landscape.cost_landscape(
                z, ex.positions.positions, g, period=task_class("tworoom").landscape_period
            )
            assert set(panel) == set(measurements.PANEL_FIELDS)
            for f in measurements.PANEL_FIELDS:
                assert np.array_equal(panel[f], want[f]), f
    removed = []
    for arm in arms:
        art = measurements.geometry_artifact("tworoom", arm, ex.seed, prof, SMALL)
        (art.path / "z_grid.npy").rename(art.path / "z_grid.kept")
        removed.append(art)
    try:
        with cache_only():
            again = measurements.landscape_examples("tworoom", arms, prof, SMALL, 2)
            measurements.measure_arms("tworoom", arms, prof, SMALL, progress=False)
    finally:
        for art in removed:
            (art.path / "z_grid.kept").rename(art.path / "z_grid.npy")
    for arm in arms:
        for a, b in zip(again.panels[arm], ex.panels[arm], strict=True):
            assert all(np.array_equal(a[f], b[f]) for f in measurements.PANEL_FIELDS)


def test_the_models_measured_are_every_arm_x_seed_or_those_named():
    from jepa_geometry.analysis.measurements import model_list

    smoke = jg.load_profile("smoke", {"seeds.train": [0, 1]})
    assert model_list(["lewm", "scale"], smoke, None) == [
        ("lewm", 0),
        ("scale", 0),
        ("lewm", 1),
        ("scale", 1),
    ]
    named = [("lewm", 0), ("lewm", 3)]  # a study's models: its headline seeds included
    assert model_list(["lewm", "scale"], smoke, named) == named
