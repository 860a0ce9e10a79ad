"""DVC: data.dvc tracks data/, and a push / fresh-clone pull round trip restores identical files."""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

DVC = Path(sys.executable).parent / "dvc"
pytestmark = pytest.mark.skipif(not DVC.exists(), reason="dvc not installed in this environment")


def run(*args, cwd):
    env = {
        **os.environ,
        "DVC_NO_ANALYTICS": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    res = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, f"{args}: {res.stdout}\n{res.stderr}"
    return res.stdout


def sha256_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_repo_tracks_data_with_an_offline_default_remote():
    outs = yaml.safe_load((REPO / "data.dvc").read_text())["outs"]
    assert outs[0]["path"] == "data"
    config = (REPO / ".dvc" / "config").read_text()
    assert "analytics = false" in config and "check_update = false" in config
    assert "remote = localstore" in config
    url = next(line.split("=", 1)[1].strip() for line in config.splitlines() if "url =" in line)
    assert "://" not in url  # a plain directory: works offline on any machine
    assert "/data" in (REPO / ".gitignore").read_text()


def test_push_then_fresh_clone_pull_restores_identical_files(tmp_path):
    origin, store = tmp_path / "origin", tmp_path / "store"
    origin.mkdir()
    run("git", "init", "-q", cwd=origin)
    run(DVC, "init", "-q", cwd=origin)
    # Same configuration as the project's: analytics off, relative local default remote.
    shutil.copy(REPO / ".dvc" / "config", origin / ".dvc" / "config")
    run(
        DVC, "remote", "modify", "localstore", "url", "../store", cwd=origin
    )  # stored relative to .dvc/
    data = origin / "data"
    (data / "datasets" / "x").mkdir(parents=True)
    (data / "datasets" / "x" / "episodes.h5").write_bytes(os.urandom(200_000))
    (data / "checkpoints").mkdir()
    (data / "checkpoints" / "model.pt").write_bytes(os.urandom(50_000))
    (data / "README.md").write_text("cache\n")
    before = sha256_tree(data)
    run(DVC, "add", "data", "-q", cwd=origin)
    run("git", "add", "-A", cwd=origin)
    run("git", "commit", "-qm", "track data", cwd=origin)
    run(DVC, "push", "-q", cwd=origin)
    assert "up to date" in run(DVC, "status", cwd=origin)
    assert store.is_dir()

    clone = tmp_path / "clone"
    run("git", "clone", "-q", str(origin), str(clone), cwd=tmp_path)
    assert not (clone / "data").exists()
    run(DVC, "pull", "-q", cwd=clone)
    assert sha256_tree(clone / "data") == before


def test_locks_and_half_written_files_are_never_versioned(tmp_path):
    """The project's .dvcignore keeps the cache's litter out of `dvc add data`."""
    repo = tmp_path / "r"
    repo.mkdir()
    run("git", "init", "-q", cwd=repo)
    run(DVC, "init", "-q", cwd=repo)
    shutil.copy(REPO / ".dvcignore", repo / ".dvcignore")
    data = repo / "data"
    litter = [
        data / ".locks" / "datasets-tworoom-abc.lock",
        data / "datasets" / "tworoom" / ".tmp-abc123-x9" / "episodes.h5",
        data / "checkpoints" / "tworoom-lewm" / ".abc123.resume.pt",
        data / "checkpoints" / "tworoom-lewm" / ".abc123.resume.pt.tmpq1w2",
        data / "figures" / "smoke" / ".fig.png.tmpzz",
    ]
    kept = data / "datasets" / "tworoom" / "abc123" / "episodes.h5"
    for p in [*litter, kept]:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x")
    run(DVC, "add", "data", "-q", cwd=repo)
    cached = {p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file()}
    listed = run(DVC, "ls", "--dvc-only", "-R", ".", cwd=repo).split()
    assert "data/datasets/tworoom/abc123/episodes.h5" in listed
    for p in litter:
        assert p.relative_to(repo).as_posix() not in listed
    assert len(cached) == len(litter) + 1  # the litter stays on disk, only unversioned
