"""A copy of the library to change as a newcomer would, and a fresh process that imports it
(the toy task's and the toy planner's tests: README, *Adding a task* and *Adding a planner*)."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jepa_geometry

PACKAGE = Path(jepa_geometry.__file__).parent


def copy_library(tmp_path: Path) -> Path:
    """``jepa_geometry`` copied to ``tmp_path/src/jepa_geometry`` (``__pycache__`` aside)."""
    copy = tmp_path / "src" / "jepa_geometry"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def differences(a: Path, b: Path, prefix: str = "") -> set[str]:
    """The files that differ between two trees or are in one only (``__pycache__`` aside)."""
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])
    out = {prefix + n for n in cmp.left_only + cmp.right_only + cmp.diff_files}
    for sub in cmp.common_dirs:
        out |= differences(a / sub, b / sub, f"{prefix}{sub}/")
    return out


def run_with_copy(tmp_path: Path, code: str) -> str:
    """Run ``code`` in a fresh Python that imports the copy of :func:`copy_library` (first on
    its path), with a cache of its own and one build job; its stdout, once it exited 0."""
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path / "src"),
        "JEPA_GEOMETRY_DATA": str(tmp_path / "cache"),
        "JEPA_GEOMETRY_WORKERS": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
