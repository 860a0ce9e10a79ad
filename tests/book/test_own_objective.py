"""Chapter 10 with a file of the reader's own, through papermill as a reader runs it
(``jepa-geometry chapter``): the page trains, plans, measures and judges the file it was given,
and states the cost of that first. The default page (the shipped example) runs with every other
page in ``test_chapters.py``."""

from __future__ import annotations

import re
import shutil

import nbformat
import pytest

from jepa_geometry.book.evidence import glued_values
from jepa_geometry.cli import main
from jepa_geometry.profiles import load_profile
from jepa_geometry.verdict.rule import LABELS
from jepa_geometry.wm.training import world_model_artifact
from jepa_geometry.wm.user_objective import file_sha256

TERM = """
import torch

def term(z, z_hat, q, step):
    steps = (z[:, 1:] - z[:, :-1]).norm(dim=-1)
    moves = (q[:, 1:] - q[:, :-1]).norm(dim=-1)
    return 0.05 * ((steps - moves) ** 2).mean(), {"mean_step": steps.mean().detach()}
"""


@pytest.mark.slow
def test_chapter_10_trains_and_judges_the_reader_s_file_through_papermill(
    smoke_datasets, data_root, tmp_path, capsys
):
    shutil.copytree(smoke_datasets / "tworoom", data_root / "datasets" / "tworoom")
    path = tmp_path / "step_match.py"
    path.write_text(TERM)
    out = tmp_path / "ch10.ipynb"
    argv = ["chapter", "ch10_own_objective", str(out), "-p", "profile=smoke"]
    assert main([*argv, "-p", f"objective={path}"]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert printed.startswith("ch10_own_objective (profile=smoke): ")  # the cost, stated first
    assert re.search(
        r"units are not in the cache: .*\(3 of them the new arm step_match's\)", printed
    )
    nb = nbformat.read(out, as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    glued = glued_values(nb)
    assert glued["ch10_file"] == repr(str(path)) and glued["ch10_name"] == "'step_match'"
    assert glued["ch10_sha"] == repr(file_sha256(path)[:12])
    assert glued["ch10_plans_verdict"].strip("'") in LABELS
    art = world_model_artifact("tworoom", f"lewm+{path}", 0, load_profile("smoke"))
    assert art.exists() and art.spec["objective"]["sha256"] == file_sha256(path)
