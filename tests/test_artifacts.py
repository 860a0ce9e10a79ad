import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jepa_geometry.artifacts import (
    Artifact,
    ArtifactError,
    NotCached,
    atomic_path,
    cache_only,
    get_or_build,
    is_heavy,
    key_of,
    load,
    memo,
)


def _write(tmp: Path, text: str = "payload") -> dict:
    (tmp / "a.txt").write_text(text)
    (tmp / "sub").mkdir()
    (tmp / "sub" / "b.bin").write_bytes(os.urandom(1000))
    return {"note": "built"}


def test_key_is_canonical_and_sensitive():
    assert key_of({"a": 1, "b": [1, 2]}) == key_of({"b": (1, 2), "a": 1})
    assert key_of({"a": 1}) != key_of({"a": 2})
    with pytest.raises(TypeError, match="cannot put"):
        key_of({"a": object()})


def test_build_once_then_reuse(data_root):
    art = Artifact("results", "demo", {"seed": 0})
    calls = []

    def build(tmp):
        calls.append(1)
        return _write(tmp)

    p1 = get_or_build(art, build)
    p2 = get_or_build(art, build)
    assert p1 == p2 == data_root / "results" / "demo" / art.key
    assert len(calls) == 1
    man = json.loads((p1 / "manifest.json").read_text())
    assert set(man["files"]) == {"a.txt", "sub/b.bin"} and man["note"] == "built"
    assert man["spec"] == {"seed": 0}


def test_a_manifest_records_the_build_s_cpu_time_beside_its_wall_time(data_root):
    """A build that waits (a stopped build's pause looks the same) keeps its wall time, not
    its CPU time; one that computes records the CPU time it took."""

    def idle(tmp):
        time.sleep(0.6)
        return _write(tmp)

    def busy(tmp):
        c0 = time.process_time()
        while time.process_time() - c0 < 0.3:
            pass
        return _write(tmp)

    waited, computed = (Artifact("results", "demo", {"build": b}) for b in ("idle", "busy"))
    get_or_build(waited, idle)
    get_or_build(computed, busy)
    idle_m, busy_m = waited.manifest(), computed.manifest()
    assert idle_m["wall_time_s"] >= 0.6 and idle_m["cpu_time_s"] < idle_m["wall_time_s"] - 0.4
    assert busy_m["cpu_time_s"] >= 0.3


def test_truncated_file_is_detected_and_rebuilt(data_root):
    art = Artifact("datasets", "demo", {"n": 1})
    path = get_or_build(art, _write)
    (path / "sub" / "b.bin").write_bytes(b"short")
    with pytest.raises(ArtifactError, match="truncated"):
        load(art)
    calls = []
    with pytest.warns(UserWarning, match="rebuilding"):
        get_or_build(art, lambda tmp: calls.append(1) or _write(tmp))
    assert calls == [1]
    load(art)  # verifies again


def test_changed_content_same_size_is_detected(data_root):
    art = Artifact("datasets", "demo", {"n": 2})
    path = get_or_build(art, _write)
    (path / "a.txt").write_text("PAYLOAD")
    with pytest.raises(ArtifactError, match="sha256"):
        load(art)


def test_a_missing_artifact_an_unknown_kind_and_a_path_name_are_refused(data_root):
    with pytest.raises(ArtifactError, match="does not exist"):
        load(Artifact("results", "nothing", {}))
    with pytest.raises(ValueError, match="unknown artifact kind 'weights'"):
        Artifact("weights", "x", {})
    with pytest.raises(ValueError, match="bad artifact name"):
        Artifact("results", "../x", {})


def test_failed_build_leaves_no_artifact(data_root):
    art = Artifact("checkpoints", "demo", {"seed": 1})

    def boom(tmp):
        (tmp / "half.bin").write_bytes(b"x")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        get_or_build(art, boom)
    assert not art.exists()
    assert not art.path.parent.exists()  # no half-built temporary directory, no empty folder


def test_empty_build_is_rejected(data_root):
    with pytest.raises(ArtifactError, match="wrote no file"):
        get_or_build(Artifact("results", "empty", {}), lambda tmp: None)


def _concurrent_worker(root: str, counter: str) -> None:
    os.environ["JEPA_GEOMETRY_DATA"] = root

    def build(tmp):
        with open(counter, "a") as f:
            f.write("x")
        time.sleep(0.5)  # hold the lock while the other process waits
        return _write(tmp, "same")

    get_or_build(Artifact("results", "race", {"k": 1}), build)


def test_two_processes_build_once(data_root, tmp_path):
    counter = tmp_path / "count.txt"
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=_concurrent_worker, args=(str(data_root), str(counter)))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert counter.read_text() == "x"  # built once, reused once
    load(Artifact("results", "race", {"k": 1}))


@pytest.mark.parametrize("umask", [0o002, 0o022, 0o077])
def test_the_cache_writes_with_the_users_umask(data_root, umask):
    """A cache shared by a group (umask 002) gives the group what the umask lets it have: every
    folder, payload file, manifest and atomically written file, none left at 0700 or 0600."""
    old = os.umask(umask)
    try:
        art = Artifact("results", "shared", {"umask": umask})
        get_or_build(art, _write)
        with atomic_path(data_root / "results" / "shared" / "resume.pt") as tmp:
            tmp.write_bytes(b"weights")
    finally:
        os.umask(old)
    made = [p for p in data_root.rglob("*") if ".locks" not in p.parts]
    dirs = {p.name: p.stat().st_mode & 0o777 for p in made if p.is_dir()}
    files = {p.name: p.stat().st_mode & 0o777 for p in made if p.is_file()}
    assert {"results", "shared", art.key, "sub"} <= set(dirs)
    assert set(files) == {"a.txt", "b.bin", "manifest.json", "resume.pt"}
    assert set(dirs.values()) == {0o777 & ~umask}, dirs
    assert set(files.values()) == {0o666 & ~umask}, files


def test_atomic_path_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "ckpt.pt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half-written")
        raise RuntimeError("killed")
    assert target.read_text() == "old"
    with atomic_path(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new"
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]


def test_rebuild_refuses_to_delete_a_foreign_file(data_root):
    """A user's file beside a corrupted artifact stops the rebuild and survives it."""
    art = Artifact("datasets", "demo", {"n": 30})
    path = get_or_build(art, _write)
    (path / "my_analysis.csv").write_text("mine")
    assert get_or_build(art, _write) == path  # intact artifact: the foreign file is fine
    (path / "a.txt").write_text("corrupted!")
    with (
        pytest.warns(UserWarning, match="rebuilding"),
        pytest.raises(
            ArtifactError, match=r"holds files its manifest does not list: my_analysis.csv; move"
        ),
    ):
        get_or_build(art, _write)
    assert (path / "my_analysis.csv").read_text() == "mine"


def test_deleted_manifest_is_reported_not_rebuilt_over(data_root):
    art = Artifact("checkpoints", "demo", {"n": 31})
    path = get_or_build(art, _write)
    (path / "manifest.json").unlink()
    calls = []
    with pytest.raises(
        ArtifactError, match=r"holds files but no valid manifest.json \(a.txt, sub/b.bin\)"
    ):
        get_or_build(art, lambda tmp: calls.append(1) or _write(tmp))
    assert calls == [] and (path / "a.txt").is_file()


def test_deleted_payload_file_is_rebuilt_like_a_corrupted_one(data_root):
    art = Artifact("results", "demo", {"n": 32})
    path = get_or_build(art, _write)
    (path / "sub" / "b.bin").unlink()
    with pytest.raises(ArtifactError, match="is missing"):
        load(art)
    with pytest.warns(UserWarning, match="rebuilding .* is missing"):
        get_or_build(art, _write)
    load(art)


def test_a_killed_build_s_leftovers_are_removed_by_the_next_build(data_root):
    art = Artifact("results", "demo", {"n": 33})
    other = Artifact("results", "demo", {"n": 34})
    parent = art.path.parent
    parent.mkdir(parents=True)
    (parent / f".tmp-{art.key}-killed").mkdir()
    (parent / f".tmp-{art.key}-killed" / "half.h5").write_bytes(b"x")
    (parent / f".{art.key}.resume.pt.tmpabc").write_bytes(b"x")
    (parent / f".tmp-{other.key}-building").mkdir()  # another artifact's build: not ours
    get_or_build(art, _write)
    left = sorted(p.name for p in parent.iterdir())
    assert left == sorted([art.key, f".tmp-{other.key}-building"])


def test_a_read_only_cache_is_reused_and_never_written(tmp_path, monkeypatch):
    """A chapter run with its own parameters reads the book's cache and writes elsewhere."""
    book, run = tmp_path / "book-data", tmp_path / "run-data"
    art = Artifact("checkpoints", "demo", {"n": 40})
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(book))
    built = get_or_build(art, _write)
    before = sorted(str(p.relative_to(book)) for p in book.rglob("*"))
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(run))
    monkeypatch.setenv("JEPA_GEOMETRY_READ_ONLY", str(book))
    calls = []
    assert get_or_build(art, lambda t: calls.append(1) or _write(t)) == built and calls == []
    (built / "a.txt").write_text("damaged")  # a damaged read-only copy: rebuilt in the run
    with pytest.warns(UserWarning, match="rebuilding"):
        rebuilt = get_or_build(art, _write)
    assert rebuilt == run / "checkpoints" / "demo" / art.key and load(art) == rebuilt
    after = sorted(str(p.relative_to(book)) for p in book.rglob("*"))
    assert after == before and (built / "a.txt").read_text() == "damaged"
    other = Artifact("results", "demo", {"n": 41})  # new work lands in the run's cache
    assert get_or_build(other, _write).is_relative_to(run)


def _never(tmp: Path) -> dict:
    raise AssertionError("a present artifact was built again")


READ_ON_A_READ_ONLY_MOUNT = """
import os, sys
from pathlib import Path
from jepa_geometry.artifacts import Artifact, NotCached, cache_only, get_or_build, load
root = Path(sys.argv[1])
art = Artifact("results", "demo", {"n": 50})
def never(tmp):
    raise AssertionError("built")
assert get_or_build(art, never) == root / "results" / "demo" / art.key
assert load(art) == art.path
with cache_only():
    try:
        get_or_build(Artifact("results", "demo", {"n": 51}), never)
    except NotCached as e:
        print("not cached:", e)
"""


def test_reading_a_read_only_mount_takes_no_lock_and_writes_nothing(tmp_path):
    """A DVC checkout or a shared folder mounted read-only serves what it holds: no lock file,
    no OSError; an absent artifact is reported in one line under cache_only."""
    cache, mount = tmp_path / "cache", tmp_path / "ro"
    os.environ["JEPA_GEOMETRY_DATA"], saved = str(cache), os.environ["JEPA_GEOMETRY_DATA"]
    try:
        get_or_build(Artifact("results", "demo", {"n": 50}), _write)
    finally:
        os.environ["JEPA_GEOMETRY_DATA"] = saved
    shutil.rmtree(cache / ".locks")  # the build's lock: the read must not create one
    before = sorted(str(p.relative_to(cache)) for p in cache.rglob("*"))
    mount.mkdir()
    script = tmp_path / "read.py"
    script.write_text(READ_ON_A_READ_ONLY_MOUNT)
    shell = (
        f'mount --bind "{cache}" "{mount}" && mount -o remount,ro,bind "{mount}" && '
        f'touch "{mount}/probe" 2>/dev/null && echo writable; '
        f'JEPA_GEOMETRY_DATA="{mount}" "{sys.executable}" "{script}" "{mount}"'
    )
    out = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", shell],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "writable" not in out.stdout  # the mount really is read-only
    lines = out.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("not cached: results/demo/"), out.stdout
    assert sorted(str(p.relative_to(cache)) for p in cache.rglob("*")) == before


def _dataset_like(tmp: Path) -> dict:
    (tmp / "episodes.h5").write_bytes(bytes(range(256)) * 40)
    (tmp / "summary.json").write_text('{"frames": 10}')
    return {}


def test_an_artifact_without_its_heavy_payload_serves_its_small_files(data_root):
    """The evidence tree keeps a dataset's manifest and small files; the frames are opened only
    where needed, and built (bit-identical) or named with their command there."""
    art = Artifact("datasets", "demo", {"n": 60})
    path = get_or_build(art, _dataset_like)
    frames = (path / "episodes.h5").read_bytes()
    (path / "episodes.h5").unlink()
    assert is_heavy("datasets", "episodes.h5") and not is_heavy("datasets", "summary.json")
    assert not is_heavy("results", "grid.npz") and is_heavy("results", "z_grid.npy")
    assert get_or_build(art, _never) == path and load(art) == path
    assert art.heavy_missing() == ["episodes.h5"]
    with pytest.raises(ArtifactError, match="episodes.h5 is missing"):
        load(art, heavy=True)
    with cache_only(), pytest.raises(NotCached) as e:
        get_or_build(art, _never, heavy=True, how="jepa-geometry collect --task demo")
    msg = str(e.value)
    assert "\n" not in msg and f"datasets/demo/{art.key}" in msg
    assert msg.endswith("build it with `jepa-geometry collect --task demo`")
    with pytest.warns(UserWarning, match="episodes.h5 is missing"):
        assert get_or_build(art, _dataset_like, heavy=True) == path
    assert (path / "episodes.h5").read_bytes() == frames and art.heavy_missing() == []
    (path / "episodes.h5").write_bytes(b"short")  # a present heavy file is always checked
    with pytest.raises(ArtifactError, match="truncated"):
        load(art)


def test_memo_computes_once_and_returns_the_same_value_in_each_format(data_root):
    import numpy as np
    import pandas as pd

    values = {
        "table": pd.DataFrame({"pairs": [3, 4], "rate": [0.5, 0.25]}, index=["a", "b"]),
        "arrays": {"x": np.arange(6).reshape(2, 3), "names": np.array(["q0", "q1"])},
        "json": {"pairs": 3, "solved": 0.5, "order": "kept"},
    }
    for name, value in values.items():
        calls: list[int] = []
        first = memo(name, {"n": 1}, lambda v=value, c=calls: c.append(1) or v)
        again = memo(name, {"n": 1}, lambda v=value, c=calls: c.append(1) or v)
        assert calls == [1]
        if name == "table":
            pd.testing.assert_frame_equal(again, value)
        elif name == "arrays":
            assert all(np.array_equal(again[k], value[k]) for k in value)
            assert again["names"].dtype.kind == "U"  # strings without pickle
        else:
            assert again == first == value and list(again) == list(value)


def test_each_profile_has_its_own_cache_unless_one_is_named(monkeypatch):
    from jepa_geometry.artifacts import DATA_ENV, profile_cache, repo_root, use_profile_cache

    root = repo_root()
    assert profile_cache("laptop") == root / "data"  # the book's, versioned by data.dvc
    assert profile_cache("smoke") == root / ".cache" / "data-smoke"
    monkeypatch.delenv(DATA_ENV, raising=False)
    use_profile_cache("smoke")
    assert os.environ[DATA_ENV] == str(root / ".cache" / "data-smoke")
    monkeypatch.setenv(DATA_ENV, "/somewhere/else")
    use_profile_cache("paper")  # a cache named by the user wins
    assert os.environ[DATA_ENV] == "/somewhere/else"


def test_inside_cache_only_a_missing_artifact_is_reported_not_built(data_root):
    art = Artifact("results", "probe", {"x": 1})
    calls = []

    def build(tmp):
        calls.append(tmp)
        (tmp / "v.txt").write_text("1")

    with cache_only(), pytest.raises(NotCached, match="results/probe/.* is not in the cache"):
        get_or_build(art, build)
    assert calls == [] and not art.exists()
    get_or_build(art, build)  # outside the block it builds, once
    with cache_only():
        assert get_or_build(art, build) == art.path  # and a cached artifact is read
    assert len(calls) == 1


def test_a_failed_first_build_leaves_no_empty_folder(data_root):
    """Issue 71: a training that failed (a reader's term raising) left an empty
    ``checkpoints/<task>-<arm>/`` behind, which read as a model; a folder that held something
    before stays."""
    from jepa_geometry.artifacts import Artifact, get_or_build

    def fail(tmp: Path) -> None:
        (tmp / "half").write_text("x")
        raise RuntimeError("the term raised")

    art = Artifact("checkpoints", "tworoom-mine", {"seed": 0})
    with pytest.raises(RuntimeError):
        get_or_build(art, fail)
    assert not art.write_path.parent.exists()
    kept = Artifact("checkpoints", "tworoom-mine", {"seed": 1})
    get_or_build(kept, lambda tmp: (tmp / "m").write_text("m") and None)
    with pytest.raises(RuntimeError):
        get_or_build(art, fail)
    assert art.write_path.parent.is_dir() and not art.exists() and kept.exists()
