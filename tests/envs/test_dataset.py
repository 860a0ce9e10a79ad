"""Datasets: collection of two short episodes per task, the HDF5 schema, clips, bad files."""

from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from jepa_geometry.book import tables
from jepa_geometry.envs import TASKS, clips, collect, make_task, task_class
from jepa_geometry.envs import dataset as D
from jepa_geometry.profiles import ProfileError, load_profile

Q_DIMS = {"tworoom": 2, "pusht": 6, "reacher": 4, "cube": 9, "pointmaze": 2}
STEPS = 24
TINY = {
    "data.max_episode_steps": STEPS,
    "data.task_episodes": {task: [1, 1] for task in TASKS},
}


@pytest.fixture(scope="module")
def tiny():
    return load_profile("smoke", TINY)


@pytest.fixture(scope="module")
def datasets(tiny):
    """Two short episodes (one training, one held out) of every task, collected once."""
    return {t: D.load_dataset(t, tiny, workers=1, progress=False) for t in TASKS}


@pytest.mark.parametrize("task", TASKS)
def test_collected_dataset_shapes_and_split(datasets, tiny, task):
    d = datasets[task]
    n = 2 * (STEPS + 1)
    size = tiny.data.image_size
    assert d.pixels.shape == (n, size, size, 3) and d.pixels.dtype == np.uint8
    assert d.q.shape == (n, Q_DIMS[task]) and d.q.dtype == np.float32
    assert d.action.shape[0] == n and d.state.shape[0] == n
    assert list(d.lengths) == [STEPS + 1, STEPS + 1]
    assert list(d.train_episodes) == [0] and list(d.heldout_episodes) == [1]
    # the last frame of each episode has no action; all others do
    last = d.starts + d.lengths - 1
    assert np.isnan(d.action[last]).all()
    assert not np.isnan(np.delete(d.action, last, axis=0)).any()
    assert d.behaviour_success.dtype == bool
    summary = d.summary()
    assert 0.0 <= summary["behaviour success rate"] <= 1.0 and summary["frames"] == n
    assert d.meta["task"] == task and d.meta["packages"]["stable-worldmodel"] == "0.1.1"
    assert d.meta["seed"] == tiny.seeds.data and d.meta["behaviour_policy"]


@pytest.mark.parametrize("task", TASKS)
def test_statistics_are_the_training_splits(datasets, task):
    d = datasets[task]
    rows = d.episode == 0
    np.testing.assert_allclose(d.q_mean, d.q[rows].mean(axis=0), rtol=1e-5, atol=1e-6)
    std = d.q[rows].std(axis=0)
    np.testing.assert_allclose(d.q_std, np.where(std < 1e-8, 1, std), rtol=1e-4, atol=1e-6)
    acts = d.action[rows][:-1]
    np.testing.assert_allclose(d.action_mean, acts.mean(axis=0), rtol=1e-5, atol=1e-6)
    z = d.standardize_q(d.q[rows])
    np.testing.assert_allclose(z.mean(axis=0), 0, atol=1e-4)


@pytest.mark.parametrize("task", TASKS)
def test_restoring_recorded_states_reproduces_recorded_q(datasets, tiny, task):
    d = datasets[task]
    t = make_task(task, tiny.data.image_size, seed=0)
    try:
        for r in (0, 7, STEPS, STEPS + 5):
            t.set_state(d.state[r])
            np.testing.assert_allclose(t.q(t.get_state()), d.q[r], rtol=0, atol=1e-5)
        # and the recorded frame (rendering is a pure function of the state)
        t.set_state(d.state[7])
        np.testing.assert_array_equal(t.render(), d.pixels[7])
    finally:
        t.close()


def test_collection_is_deterministic(datasets, tiny, data_root):
    """A fresh cache collects byte-identical arrays, for every task."""
    for task in TASKS:
        again = D.load_dataset(task, tiny, workers=1, progress=False)
        first = datasets[task]
        assert again.path != first.path
        for col in ("pixels", "action", "state", "q", "behaviour_success"):
            np.testing.assert_array_equal(getattr(again, col), getattr(first, col), err_msg=col)


def test_parallel_collection_equals_serial(tiny, tmp_path):
    """Episodes are seeded individually, so two worker processes give the same file."""
    prof = load_profile("smoke", {**TINY, "data.episodes": 2})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    D.build_dataset("pusht", prof, tmp_path / "a", workers=1, progress=False)
    D.build_dataset("pusht", prof, tmp_path / "b", workers=2, progress=False)
    a = D.read_episodes(tmp_path / "a" / D.FILENAME)
    b = D.read_episodes(tmp_path / "b" / D.FILENAME)
    np.testing.assert_array_equal(a.pixels, b.pixels)
    np.testing.assert_array_equal(a.state, b.state)


def test_clips_are_frames_frameskip_apart_with_their_action_blocks_and_q(datasets):
    """Frames frameskip apart, action block k = the k-th frameskip actions after the clip
    start (z-scored), standardized q, episode ids; built here by explicit indexing."""
    d = datasets["cube"]
    s = clips.ClipSampler(d, "train", history=3, frameskip=5, batch_size=8, seed=0)
    assert len(s) == STEPS - 20 + 1  # starts 0..STEPS-20 of the one training episode
    batch = s.sample(np.array([0, 3]))
    assert tuple(batch["pixels"].shape) == (2, 4, 3, d.pixels.shape[1], d.pixels.shape[2])
    assert tuple(batch["actions"].shape) == (2, 4, 25) and tuple(batch["q"].shape) == (2, 4, 9)
    start = 3
    for k in range(4):
        frame = start + 5 * k
        np.testing.assert_array_equal(
            batch["pixels"][1, k].numpy(), d.pixels[frame].transpose(2, 0, 1)
        )
        raw = d.action[start + 5 * k : start + 5 * k + 5]
        expect = ((raw - d.action_mean) / d.action_std).reshape(-1)
        np.testing.assert_allclose(batch["actions"][1, k].numpy(), expect, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(
            batch["q"][1, k].numpy(), (d.q[frame] - d.q_mean) / d.q_std, rtol=1e-5, atol=1e-5
        )
    assert batch["episode"].tolist() == [0, 0]
    b = next(iter(s))
    assert b["pixels"].dtype.is_floating_point is False and not b["actions"].isnan().any()
    half = clips.ClipSampler(d, "heldout", batch_size=4, q_variant="half")
    assert tuple(next(half)["q"].shape) == (4, 4, 5)


def test_clip_starts_never_cross_episodes(datasets):
    d = datasets["tworoom"]
    for split in ("train", "heldout"):
        s = clips.ClipSampler(d, split, history=3, frameskip=5, batch_size=2)
        last = s.starts + 4 * 5 - 1  # last action row a clip uses
        assert (d.episode[s.starts] == d.episode[last]).all()
        assert not np.isnan(d.action[last]).any()
        assert set(d.episode[s.starts]) == set(d.episodes(split))


def test_action_zscore_round_trip_on_blocks(datasets):
    d = datasets["pusht"]
    blocks = np.random.default_rng(0).uniform(-1, 1, size=(7, 5, 10)).astype(np.float32)
    np.testing.assert_allclose(d.unzscore_action(d.zscore_action(blocks)), blocks, atol=1e-5)
    z = d.zscore_action(blocks)
    np.testing.assert_allclose(z[..., 2:4], (blocks[..., 2:4] - d.action_mean) / d.action_std)
    with pytest.raises(ValueError, match="not a multiple of the action dim 2"):
        d.zscore_action(np.zeros(3))


def test_clip_sampler_refuses_short_episodes_unknown_splits_and_q_variants(datasets):
    d = datasets["reacher"]
    with pytest.raises(ValueError, match="no episode has the 40 steps"):
        clips.ClipSampler(d, history=3, frameskip=10)
    with pytest.raises(ValueError, match="unknown split 'val'; valid: train, heldout"):
        clips.ClipSampler(d, split="val")
    with pytest.raises(ValueError, match="valid: full, half"):
        clips.ClipSampler(d, q_variant="third")


def _copy(src: Path, dst: Path) -> Path:
    shutil.copy(src, dst)
    return dst


def test_corrupt_truncated_and_wrong_schema_files_are_refused_naming_the_fault(datasets, tmp_path):
    good = datasets["pointmaze"].path
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"not an hdf5 file at all" * 100)
    with pytest.raises(D.DatasetError, match=r"junk\.h5 is not a readable HDF5 file"):
        D.read_episodes(junk)
    cut = tmp_path / "cut.h5"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(D.DatasetError, match=r"cut\.h5"):
        D.read_episodes(cut)
    old = _copy(good, tmp_path / "old.h5")
    with h5py.File(old, "a") as f:
        f.attrs["schema_version"] = 99
    with pytest.raises(D.DatasetError, match=r"old\.h5: schema version 99, expected 1"):
        D.read_episodes(old)
    noq = _copy(good, tmp_path / "noq.h5")
    with h5py.File(noq, "a") as f:
        del f["q"]
    with pytest.raises(D.DatasetError, match=r"noq\.h5: missing dataset\(s\) q"):
        D.read_episodes(noq)
    wide = _copy(good, tmp_path / "wide.h5")
    with h5py.File(wide, "a") as f:
        n = len(f["q"])
        del f["q"]
        f["q"] = np.zeros((n, 3), np.float32)
    with pytest.raises(D.DatasetError, match=r"q must be \(N, 2\) for pointmaze"):
        D.read_episodes(wide)
    with pytest.raises(D.DatasetError, match="holds task 'pointmaze', expected 'cube'"):
        D.read_episodes(good, task="cube")
    with pytest.raises(D.DatasetError, match="does not exist"):
        D.read_episodes(tmp_path / "nothing.h5")


def test_damaged_cache_is_reported_not_overwritten(tiny, data_root):
    prof = load_profile("smoke", {**TINY, "data.max_episode_steps": 21})
    d = D.load_dataset("pusht", prof, workers=1, progress=False)
    raw = bytearray(d.path.read_bytes())
    raw[4000:4064] = bytes(b ^ 0xFF for b in raw[4000:4064])  # flip bits in place
    d.path.write_bytes(bytes(raw))
    damaged = d.path.read_bytes()
    with pytest.raises(D.DatasetError, match=r"damaged.*collect --task pusht --profile smoke"):
        D.load_dataset("pusht", prof, workers=1, progress=False)
    assert d.path.read_bytes() == damaged


def test_per_task_episode_counts_override_the_profile_and_name_known_tasks():
    laptop = load_profile("laptop")
    assert collect.episode_counts("cube", laptop) == task_class("cube").episodes["laptop"]
    smoke = load_profile("smoke")  # Cube states smoke counts of its own, Two-Room does not
    assert collect.episode_counts("cube", smoke) == task_class("cube").episodes["smoke"]
    assert collect.episode_counts("tworoom", smoke) == (
        smoke.data.episodes,
        smoke.data.heldout_episodes,
    )
    # the profile's per-task override (a ladder's rung) comes first
    rung = load_profile("smoke", {"data.task_episodes": {"cube": [4, 2]}})
    assert collect.episode_counts("cube", rung) == (4, 2)
    bad = load_profile("smoke", {"data.task_episodes": {"cubes": [1, 1]}})
    with pytest.raises(ValueError, match=r"unknown task\(s\) 'cubes'; valid: tworoom"):
        collect.episode_counts("pusht", bad)
    with pytest.raises(
        ProfileError, match=r"task_episodes\.cube .*at most 2 items.*got \[1, 2, 3\]"
    ):
        load_profile("smoke", {"data.task_episodes": {"cube": [1, 2, 3]}})
    # the key depends on this task's sizes only
    a = load_profile("laptop", {"data.task_episodes": {"cube": [9, 9]}})
    assert D.dataset_artifact("pusht", a).key == D.dataset_artifact("pusht", laptop).key
    assert D.dataset_artifact("cube", a).key != D.dataset_artifact("cube", laptop).key


def test_cli_collect_help_lists_tasks(capsys):
    from jepa_geometry.cli import main

    with pytest.raises(SystemExit) as e:
        main(["collect", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert all(t in out for t in TASKS)
    with pytest.raises(SystemExit):
        main(["collect", "--task", "nosuch"])
    assert "invalid choice: 'nosuch'" in capsys.readouterr().err


def test_frame_strip_puts_every_stride_th_frame_side_by_side(datasets):
    d = datasets["pusht"]
    h, w = d.pixels.shape[1:3]
    start = int(d.starts[1])
    strip = d.frame_strip(1, 5, 3)
    assert strip.shape == (h, 3 * w, 3) and strip.dtype == np.uint8
    for i in range(3):
        np.testing.assert_array_equal(strip[:, i * w : (i + 1) * w], d.pixels[start + 5 * i])
    # fewer frames than asked for: ceil(25 frames / stride 10) = 3
    assert d.frame_strip(1, 10, 99).shape[1] == 3 * w
    with pytest.raises(ValueError, match="must be >= 1"):
        d.frame_strip(1, 0, 3)


def test_dataset_table_rows_and_throughput(datasets):
    table = tables.models.dataset_table({t: d.summary() for t, d in datasets.items()})
    assert list(table.index) == list(TASKS)
    for task, d in datasets.items():
        assert table.loc[task, "frames"] == d.num_frames == 2 * (STEPS + 1)
        secs = round(d.collect_seconds, 1)
        assert table.loc[task, "frames/s"] == pytest.approx(round(d.num_frames / secs))


def test_a_dataset_s_cached_views_equal_what_its_frames_give(datasets, tiny):
    """The summary and the episode strip a page draws are small cached results (so a page
    renders them from the evidence tree): equal to the dataset's own, computed once."""
    d = datasets["pusht"]
    assert D.dataset_summaries(["pusht"], tiny) == {"pusht": d.summary()}
    strip = D.episode_strip("pusht", tiny, 5, 3)
    ep = int(d.heldout_episodes[0])
    np.testing.assert_array_equal(strip["frames"], d.frame_strip(ep, 5, 3))
    np.testing.assert_array_equal(strip["q"], d.standardize_q(d.q[d.rows(ep)]))
    assert list(strip["q_names"]) == list(d.q_names) and int(strip["episode"]) == ep
    again = D.episode_strip("pusht", tiny, 5, 3)  # read back from the cache, same values
    assert all(np.array_equal(again[k], strip[k]) for k in strip)


def test_tabulate_tasks_measures_each_task_and_always_closes_it(datasets, tiny, monkeypatch):
    closed = []

    def make(name, image_size, seed=0):
        task = make_task(name, image_size, seed)
        close = task.close
        task.close = lambda: (closed.append(name), close())[1]
        return task

    monkeypatch.setattr(D, "make_task", make)
    some = {t: datasets[t] for t in ("tworoom", "reacher")}

    def measure(task, d):  # q of a restored recorded state, against the recorded q
        task.set_state(d.state[3])
        return {"frames": d.num_frames, "q0": float(task.q(task.get_state())[0])}

    table = D.tabulate_tasks(some, tiny.data.image_size, measure)
    assert list(table.index) == ["tworoom", "reacher"] and closed == ["tworoom", "reacher"]
    assert table["frames"].dtype == np.int64 and (table["frames"] == 2 * (STEPS + 1)).all()
    for t in some:
        assert table.loc[t, "q0"] == pytest.approx(float(datasets[t].q[3, 0]), abs=1e-5)

    def broken(task, d):
        raise RuntimeError("measure failed")

    with pytest.raises(RuntimeError, match="measure failed"):
        D.tabulate_tasks({"tworoom": datasets["tworoom"]}, tiny.data.image_size, broken)
    assert closed[-1] == "tworoom" and len(closed) == 3
