"""A DVC remote over SSH, the way a team shares its cache: Debian's ``sshd`` on a localhost
port with a throw-away key (``tests/services.py``), ``dvc-ssh`` as the client. A
smoke cache is pushed from one clone and pulled into a fresh one, every file byte for byte,
with the commands the README gives for a team's own server."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.training import train_world_model
from tests.book.test_dvc import run, sha256_tree
from tests.conftest import REPO
from tests.services import ssh_server

DVC = Path(sys.executable).parent / "dvc"
pytestmark = pytest.mark.cluster


def test_a_smoke_cache_goes_to_an_ssh_remote_and_back_byte_for_byte(
    data_root, tmp_path, monkeypatch
):
    # a smoke cache: a dataset and a model (the two kinds with heavy files), with their manifests
    train_world_model("tworoom", "lewm", 0, load_profile("smoke"), progress=False)
    # DVC's SSH client reads ~/.ssh and an agent: the test's own home has neither
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    origin, store = tmp_path / "origin", tmp_path / "store"
    origin.mkdir()
    run("git", "init", "-q", cwd=origin)
    run(DVC, "init", "-q", cwd=origin)
    shutil.copy(REPO / ".dvcignore", origin / ".dvcignore")
    shutil.copytree(data_root, origin / "data")
    before = {f: h for f, h in sha256_tree(origin / "data").items() if ".locks" not in f}
    with ssh_server(tmp_path / "sshd") as ssh:
        url = f"ssh://{ssh.user}@127.0.0.1:{ssh.port}{store}"
        run(DVC, "remote", "add", "-d", "team", url, cwd=origin)
        run(DVC, "remote", "modify", "--local", "team", "keyfile", ssh.key, cwd=origin)
        run(DVC, "add", "data", "-q", cwd=origin)
        run("git", "add", "-A", cwd=origin)
        run("git", "commit", "-qm", "track data", cwd=origin)
        run(DVC, "push", "-q", cwd=origin)
        assert "are in sync" in run(DVC, "status", "--cloud", cwd=origin)

        clone = tmp_path / "clone"
        run("git", "clone", "-q", str(origin), str(clone), cwd=tmp_path)
        assert not (clone / "data").exists()
        run(DVC, "remote", "modify", "--local", "team", "keyfile", ssh.key, cwd=clone)
        run(DVC, "pull", "-q", cwd=clone)
    after = sha256_tree(clone / "data")
    print(f"dvc over ssh: {len(after)} files pushed and pulled")
    assert after == before
    assert any(f.endswith("episodes.h5") for f in after)
    assert any(f.endswith("model.pt") for f in after)
    objects = [p for p in (store / "files" / "md5").rglob("*") if p.is_file()]
    assert len(objects) > len(set(after.values()))  # every distinct file, and the folder's list
