"""``evidence diff`` and ``evidence check`` say identical, equal or different (issue 70).

A render or rebuild on another CPU than the evidence's differs in the last digits of its
floats: equal, exit 0, with the largest difference printed. A flipped success, integer or
label, or a float beyond the tolerance, is different: exit 1, naming where.
"""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
import torch

from jepa_geometry.artifacts import DATA_ENV, READ_ONLY_ENV, sha256_file
from jepa_geometry.book import evidence
from jepa_geometry.book.evidence import GLUE_PREFIX, SampleFile
from jepa_geometry.book.evidence_compare import (
    DIFFERENT,
    EQUAL,
    FLOAT_TOLERANCE,
    IDENTICAL,
    combine,
    compare_files,
    printed_unit,
)
from jepa_geometry.book.run import READS_KEY
from jepa_geometry.book.toc import EXECUTED_DIR
from jepa_geometry.cli import commands, main

PAGE = "ch01_toy"
TABLE = (
    '<table id="T_1c2cc201">\n<tr><td id="T_1c2cc201_row0_col0" class="data row0 col0" >'
    "0.2743</td></tr>\n</table>"
)
COMMITTED = {
    "pairs": "37",
    "success": "'75.2 [61.5, 88.0] %'",
    "loss": "0.23888460289220817",
    "arm": "'lewm'",
    "tbl": TABLE,
}


def repository(root: Path, values: dict[str, str]) -> None:
    """A repository with one page: its chapter, its executed notebook glueing ``values`` and
    the committed values :data:`COMMITTED`."""
    (root / "data.dvc").write_text("")
    (root / "_toc.yml").write_text(f"root: intro\nchapters:\n  - file: book/chapters/{PAGE}\n")
    (root / "chapters").mkdir()
    (root / "chapters" / f"{PAGE}.md").write_text("# toy\n")
    outputs = [
        {"metadata": {"scrapbook": {"name": k}}, "data": {GLUE_PREFIX + "text/plain": [v]}}
        for k, v in values.items()
    ]
    nb = {
        "metadata": {"papermill": {"parameters": {"profile": "laptop"}}, READS_KEY: []},
        "cells": [{"outputs": outputs}],
    }
    (root / EXECUTED_DIR).mkdir(parents=True)
    (root / EXECUTED_DIR / f"{PAGE}.ipynb").write_text(json.dumps(nb))
    pages = root / "evidence" / "laptop" / "pages"
    pages.mkdir(parents=True)
    (pages / f"{PAGE}.json").write_text(json.dumps(COMMITTED))


@pytest.fixture
def diff(tmp_path, monkeypatch, capsys):
    """``jepa-geometry evidence diff`` in a repository whose page glued the given values:
    its exit status and printed lines."""
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "data"))
    monkeypatch.setenv(READ_ONLY_ENV, "")
    monkeypatch.chdir(tmp_path)

    def run(**changed: str) -> tuple[int, list[str]]:
        repository(tmp_path, {**COMMITTED, **changed})
        status = main(["evidence", "diff"])
        return status, capsys.readouterr().out.splitlines()

    return run


def test_diff_says_identical_when_every_glued_value_is_the_committed_one(diff):
    assert diff() == (
        0,
        ["identical: the glued values of 1 page(s) are the committed ones, bit for bit"],
    )


def test_diff_says_equal_when_floats_differ_in_their_last_digits(diff):
    """Another CPU's render: a float's last digits and, with them, a table's cell and its id
    (a hash of its data) differ; every integer, label and word is the same."""
    table = TABLE.replace("1c2cc201", "9f00ab12").replace("0.2743", "0.27431")
    status, out = diff(loss="0.2388846028922082", tbl=table)
    assert status == 0
    assert out == [
        f"equal: the glued values of 1 page(s) match the committed ones, every discrete value "
        f"exactly and every float within {FLOAT_TOLERANCE}; largest difference 1e-05 "
        f"(relative 3.6e-05) at {PAGE}/tbl (number 1)"
    ]
    assert str(FLOAT_TOLERANCE) == "relative 0.0001 or absolute 5e-05"


@pytest.mark.parametrize(
    "changed, line",
    [
        ({"pairs": "38"}, f"{PAGE}/pairs (number 1): committed 37, now 38"),
        ({"arm": "'scale'"}, f"{PAGE}/arm: text committed \"'lewm'\", now \"'scale'\""),
        (
            {"success": "'75.8 [61.5, 88.0] %'"},
            f"{PAGE}/success (number 1): committed 75.2, now 75.8",
        ),
        ({"loss": "0.2395"}, f"{PAGE}/loss (number 1): committed 0.23888460289220817, now 0.2395"),
        ({"loss": "0.23888 and more"}, f"{PAGE}/loss: text committed '', now ' and more'"),
    ],
    ids=["integer", "label", "rate", "float-beyond-tolerance", "words"],
)
def test_diff_says_different_and_names_what_differs(diff, changed, line):
    status, out = diff(**changed)
    assert status == 1
    assert out == [
        f"{DIFFERENT}  {line}",
        "different: the glued values of 1 page(s) differ from the committed ones "
        "(1 finding(s) above)",
    ]


def test_a_value_missing_on_either_side_is_different(diff):
    status, out = diff(extra="'new'")
    assert status == 1
    assert out[0] == f"{DIFFERENT}  {PAGE}/extra: new, not committed (now \"'new'\")"


def episodes(**changes: list) -> pd.DataFrame:
    """A planning cell's per-episode table (as ``episodes.parquet`` holds it)."""
    frame = pd.DataFrame(
        {
            "episode": [0, 1, 2],
            "success": [True, True, False],
            "steps": [16, 3, 50],
            "final_distance": [14.559054, 13.782186, 32.761289],
            "arm": ["lewm", "lewm", "lewm"],
        }
    )
    for column, values in changes.items():
        frame[column] = values
    return frame


def pair(tmp_path: Path, name: str, write, was, now) -> tuple[Path, Path]:
    """``name`` written by ``write`` with the committed value ``was`` and rebuilt ``now``."""
    (tmp_path / "was").mkdir(exist_ok=True)
    (tmp_path / "now").mkdir(exist_ok=True)
    write(was, tmp_path / "was" / name)
    write(now, tmp_path / "now" / name)
    return tmp_path / "was" / name, tmp_path / "now" / name


def parquet(frame: pd.DataFrame, path: Path) -> None:
    frame.to_parquet(path, index=False)


CELL = "results/plan-toy/abc/episodes.parquet"
NEAR = [14.559054, 13.782186 * (1 + 1e-6), 32.761289]  # another CPU's planning distances


@pytest.mark.parametrize(
    "now, outcome, found",
    [
        (episodes(), IDENTICAL, None),
        (episodes(final_distance=NEAR), EQUAL, f"{CELL}/final_distance[1]"),
        (
            episodes(success=[True, False, False]),
            DIFFERENT,
            f"{CELL}/success[1]: committed True, now False (1 of 3 values differ)",
        ),
        (
            episodes(steps=[16, 4, 50]),
            DIFFERENT,
            f"{CELL}/steps[1]: committed 3, now 4 (1 of 3 values differ)",
        ),
        (
            episodes(arm=["lewm", "lewm", "scale"]),
            DIFFERENT,
            f"{CELL}/arm[2]: text committed 'lewm', now 'scale'",
        ),
        (
            episodes(final_distance=[14.559054, 13.79, 32.77]),
            DIFFERENT,
            f"{CELL}/final_distance[1]: committed 13.782186, now 13.79 (2 of 3 values differ)",
        ),
    ],
    ids=["identical", "float-last-digits", "success", "steps", "label", "float-beyond"],
)
def test_a_planning_cell_compares_discrete_columns_exactly_and_floats_within_tolerance(
    tmp_path, now, outcome, found
):
    was_path, now_path = pair(tmp_path, "episodes.parquet", parquet, episodes(), now)
    c = compare_files(was_path, now_path, CELL)
    assert c.outcome == outcome
    if outcome == EQUAL:
        assert (c.largest.where, c.largest.abs) == (found, pytest.approx(13.782186e-6))
    else:
        assert c.differences == ([found] if found else [])


def write_json(value, path: Path) -> None:
    path.write_text(json.dumps(value))


def test_a_training_log_a_model_and_a_dataset_compare_value_by_value(tmp_path):
    """The files of ``check`` other than planning cells: log.json, model.pt, episodes.h5;
    any other kind of file is compared by its bytes."""
    log = [{"step": 50, "loss": 0.806552385687828}, {"step": 100, "loss": 0.3345415884256363}]
    near = [{**log[0], "loss": 0.806552385687828 * (1 + 1e-6)}, log[1]]
    c = compare_files(*pair(tmp_path, "log.json", write_json, log, near), "log.json")
    assert (c.outcome, c.largest.where) == (EQUAL, "log.json[0]/loss")
    moved = [log[0], {**log[1], "step": 101}]
    c = compare_files(*pair(tmp_path, "log.json", write_json, log, moved), "log.json")
    assert c.differences == ["log.json[1]/step: committed 100, now 101"]

    weights = torch.linspace(-1, 1, 12, dtype=torch.float32).reshape(3, 4)
    blob = {"config": {"dim": 4}, "state": {"w": weights}, "meta": {"arm": "lewm"}}
    other = {**blob, "state": {"w": weights + 1e-7}}
    c = compare_files(*pair(tmp_path, "model.pt", torch.save, blob, other), "model.pt")
    assert c.outcome == EQUAL and c.largest.where.startswith("model.pt/state/w[")
    other = {**blob, "meta": {"arm": "scale"}}
    c = compare_files(*pair(tmp_path, "model.pt", torch.save, blob, other), "model.pt")
    assert c.differences == ["model.pt/meta/arm: text committed 'lewm', now 'scale'"]

    def h5(q: np.ndarray, path: Path) -> None:
        with h5py.File(path, "w") as f:
            f.create_dataset("q", data=q)
            f.create_dataset("episode", data=np.arange(3))
            f.attrs["task"] = "toy"

    q = np.array([0.5, 1.25, 2.0], dtype=np.float32)
    c = compare_files(*pair(tmp_path, "episodes.h5", h5, q, q * np.float32(1 + 1e-6)), "d")
    assert c.outcome == EQUAL and c.largest.where.startswith("d/q[")
    c = compare_files(*pair(tmp_path, "episodes.h5", h5, q, q + 1), "d")
    assert c.differences == ["d/q[0]: committed 0.5, now 1.5 (3 of 3 values differ)"]

    def text(value: str, path: Path) -> None:
        path.write_text(value)

    c = compare_files(*pair(tmp_path, "notes.txt", text, "a 1.0", "a 1.00000001"), "notes.txt")
    assert c.differences == ["notes.txt: the bytes differ (no value comparison of notes.txt)"]


def test_check_compares_with_the_committed_copy_that_has_the_committed_sha256(tmp_path):
    """A heavy file is not in the evidence tree: it is compared with the copy ``dvc pull``
    fetched into ``data/`` when that copy has the committed sha256, never with another."""
    was, now = pair(tmp_path, "log.json", write_json, [0.25], [0.25 * (1 + 1e-7)])
    sha = sha256_file(was)
    stale = tmp_path / "stale.json"
    stale.write_text("[0.3]")
    found = evidence._against_committed("c/log.json", sha, [stale, was], now)
    assert found.outcome == EQUAL
    found = evidence._against_committed("c/log.json", sha, [stale], now)
    assert found.differences == [
        "c/log.json: sha256 differs, and no committed copy to compare values with (dvc pull)"
    ]
    # no copy anywhere (weights before `dvc pull`): not compared, named, and not a difference
    found = evidence._against_committed("m/model.pt", sha, [tmp_path / "absent.pt"], now)
    assert found.differences == [] and found.uncompared == ["m/model.pt"]
    both = combine([found, evidence._against_committed("c/log.json", sha, [was], now)])
    assert both.outcome == EQUAL
    said = both.summary("the 2 rebuilt files")
    assert said.startswith("equal: the others of the 2 rebuilt files") and "m/model.pt" in said
    assert combine([found]).summary("x").endswith("`dvc pull` fetches it)")


def test_check_prints_each_file_s_outcome_and_exits_1_only_when_one_differs(
    tmp_path, monkeypatch, capsys
):
    """The command's report of a rebuild (the rebuild itself, minutes of training, is
    :func:`~jepa_geometry.book.evidence.sample_check`'s; here its comparisons are given)."""
    monkeypatch.chdir(Path(__file__).parent)
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "data"))
    same = pair(tmp_path, "a.parquet", parquet, episodes(), episodes())
    near = pair(tmp_path, "b.parquet", parquet, episodes(), episodes(final_distance=NEAR))
    flipped = pair(tmp_path, "c.parquet", parquet, episodes(), episodes(steps=[16, 3, 49]))

    def check(*files: tuple[str, tuple[Path, Path]]) -> tuple[int, list[str]]:
        cell = "results/plan-toy/abc"
        found = [SampleFile(cell, n, compare_files(*p, f"{cell}/{n}")) for n, p in files]
        monkeypatch.setattr(commands, "sample_check", lambda *a, **k: found)
        status = main(["evidence", "check", "--quiet"])
        return status, capsys.readouterr().out.splitlines()

    cell = "results/plan-toy/abc"
    status, out = check(("a.parquet", same), ("b.parquet", near))
    assert status == 0
    assert out == [
        f"identical  {cell}/a.parquet",
        f"equal      {cell}/b.parquet: largest difference 1.4e-05 (relative 1e-06) at "
        f"{cell}/b.parquet/final_distance[1]",
        f"equal: the 2 rebuilt files match the committed ones, every discrete value exactly "
        f"and every float within {FLOAT_TOLERANCE}; largest difference 1.4e-05 (relative "
        f"1e-06) at {cell}/b.parquet/final_distance[1]",
    ]
    status, out = check(("a.parquet", same), ("c.parquet", flipped))
    assert status == 1
    assert out == [
        f"identical  {cell}/a.parquet",
        f"{DIFFERENT}  {cell}/c.parquet/steps[2]: committed 50, now 49 (1 of 3 values differ)",
        "different: the 2 rebuilt files differ from the committed ones (1 finding(s) above)",
    ]


@pytest.mark.parametrize("now, status", [("75.3", 0), ("75.4", 1)])
def test_a_printed_number_is_equal_within_one_unit_of_its_last_digit(diff, now, status):
    """Rounding to the printed digits turns a float's last-bit difference into a change of the
    last printed digit where it crosses a rounding boundary: 75.2 against 75.3 is equal (one
    unit of 0.1), 75.2 against 75.4 is not."""
    got, out = diff(success=f"'{now} [61.5, 88.0] %'")
    assert got == status
    assert out[-1].startswith("equal:" if status == 0 else "different:")


def test_a_printed_numbers_unit_is_its_last_digit():
    assert printed_unit("+7.07") == pytest.approx(0.01)
    assert printed_unit("0.000389", "0.00039") == pytest.approx(1e-5)
    assert printed_unit("1.2e-05") == pytest.approx(1e-6)
