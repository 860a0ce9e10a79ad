"""Papermill reads a MyST chapter by its path, and the chapter's first call stops a bad
parameter papermill injected."""

import subprocess
import sys

from tests.conftest import REPO


def _papermill(*args, cwd=REPO):
    return subprocess.run(
        [sys.executable, "-m", "papermill", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_papermill_reads_chapter_and_rejects_unknown_profile(tmp_path):
    out = tmp_path / "out.ipynb"
    res = _papermill("chapters/ch01_metric_leverage.md", str(out), "-p", "profile", "nosuch")
    assert res.returncode != 0
    assert "unknown profile 'nosuch'; valid: smoke, laptop, paper" in res.stderr + res.stdout


def test_papermill_rejects_unknown_parameter_in_first_cell(tmp_path):
    res = _papermill(
        "chapters/ch01_metric_leverage.md",
        str(tmp_path / "o.ipynb"),
        "-p",
        "profile",
        "smoke",
        "-p",
        "sede",
        "1",
    )
    assert res.returncode != 0
    assert "unknown parameter 'sede'" in res.stderr + res.stdout
