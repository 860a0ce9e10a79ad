import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from jepa_geometry.artifacts import Artifact, ArtifactError, atomic_path, get_or_build, key_of, load


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


def test_missing_artifact_and_bad_names(data_root):
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
    assert list(art.path.parent.iterdir()) == []  # no half-built temporary directory left


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
