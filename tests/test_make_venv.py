"""``make`` and a virtualenv shared between two clones: the Makefile reinstalls only a venv its
own checkout installed (the stamp names it), and uses another checkout's as it is, with its own
``src/`` first on ``PYTHONPATH``, or stops in one line when the two locks differ.

Each case runs the real Makefile in a scratch clone (the Makefile, ``pyproject.toml``, the lock
and ``_toc.yml``) against a fake venv whose ``python`` and ``jepa-geometry`` are stubs that
write down each call, so a reinstall would show as a call of ``python -m pip`` and nothing is
installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

STUB = """#!/bin/sh
echo "$(basename "$0") $* PYTHONPATH=$PYTHONPATH" >> {log}
"""


def _clone(folder: Path) -> Path:
    """A scratch checkout: what the Makefile reads, newer than any stamp made before."""
    folder.mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", "requirements.lock", "_toc.yml"):
        shutil.copy(REPO / name, folder / name)
    return folder


def _venv(folder: Path, owner: str | None) -> tuple[Path, Path]:
    """A fake venv in ``folder`` stamped by ``owner`` (None: an empty stamp, as written before
    stamps named their checkout), its stamp older than every clone's files; the venv and the
    log its stubs write."""
    log = folder / "calls.log"
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "jepa-geometry", "uv"):
        (bin_dir / name).write_text(STUB.format(log=log))
        (bin_dir / name).chmod(0o755)
    stamp = folder / ".venv" / ".installed"
    stamp.write_text("" if owner is None else f"{owner}\n")
    old = time.time() - 3600
    os.utime(stamp, (old, old))
    return folder / ".venv", log


def _make(clone: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize("stamp", ["owner", "empty"])
def test_a_clone_uses_another_checkout_s_venv_as_it_is(tmp_path, stamp):
    """``make chapter`` in a clone sharing ``../other/.venv`` reinstalls nothing (its lock and
    pyproject.toml are newer than the stamp), says so in one line and runs this clone's code."""
    other = _clone(tmp_path / "other")
    venv, log = _venv(other, str(other) if stamp == "owner" else None)
    clone = _clone(tmp_path / "clone")
    res = _make(clone, "chapter", "CH=ch01_metric_leverage", f"VENV={venv}")
    assert res.returncode == 0, res.stderr
    said = [line for line in res.stdout.splitlines() if line.startswith("make: ")]
    assert said == [
        f"make: {venv} was installed by {other} from the same requirements.lock: used as it "
        "is, not reinstalled from here, with this checkout's src/ first on PYTHONPATH"
    ]
    calls = log.read_text().splitlines()
    assert calls == [f"jepa-geometry chapter ch01_metric_leverage PYTHONPATH={clone}/src"]
    assert (venv / ".installed").read_text() == ("" if stamp == "empty" else f"{other}\n")


def test_a_clone_stops_on_another_checkout_s_venv_of_another_lock(tmp_path):
    other = _clone(tmp_path / "other")
    venv, log = _venv(other, str(other))
    clone = _clone(tmp_path / "clone")
    with (clone / "requirements.lock").open("a") as f:
        f.write("# re-locked in this clone\n")
    res = _make(clone, "book", "PROFILE=smoke", f"VENV={venv}")
    assert res.returncode != 0
    (error,) = res.stderr.splitlines()
    assert f"{venv} was installed by {other}, whose requirements.lock is not" in error
    assert not log.exists()  # neither reinstalled nor run


@pytest.mark.parametrize("stamp", ["owner", "empty"])
def test_a_checkout_still_reinstalls_its_own_venv_when_its_lock_is_newer(tmp_path, stamp):
    """The checkout that installed the venv (its stamp names it, or an empty stamp of the venv
    inside it) reinstalls it as before, and the new stamp names the checkout."""
    clone = _clone(tmp_path / "clone")
    _venv(clone, str(clone) if stamp == "owner" else None)
    res = _make(clone, "-n", "chapter", "CH=ch01_metric_leverage")
    assert res.returncode == 0, res.stderr
    assert "-m pip install --quiet --no-deps --no-build-isolation -e ." in res.stdout
    assert f'echo "{clone}" > .venv/.installed' in res.stdout
    assert "make: " not in res.stdout
