"""The evidence tree: its size budget and its export page by page (``book.evidence``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jepa_geometry.artifacts import DATA_ENV, Artifact, get_or_build
from jepa_geometry.book.evidence import (
    BUDGET_MB,
    GLUE_PREFIX,
    EvidenceError,
    export_evidence,
    over_budget,
    sample_artifacts,
)
from jepa_geometry.book.run import READS_KEY
from jepa_geometry.book.toc import EXECUTED_DIR, book_pages
from tests.conftest import REPO


def _file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def test_the_budget_names_a_large_file_a_figure_and_a_large_tree(tmp_path):
    tree = tmp_path / "laptop"
    _file(tree / "results" / "plan-tworoom" / "abc" / "episodes.parquet", 1_500_000)
    _file(tree / "pages" / "ch01.json", 2_000)
    assert over_budget(tree, total_mb=2.0, file_mb=2.0) == []
    _file(tree / "results" / "big" / "k" / "z_grid.npy", 2_000_001)  # 1 byte over 2 MB
    _file(tree / "figures" / "x" / "k" / "fig.PNG", 10)
    lines = over_budget(tree, total_mb=2.0, file_mb=2.0)
    assert lines[0] == "results/big/k/z_grid.npy: 2.00 MB > 2 MB per file"
    assert lines[1] == "figures/x/k/fig.PNG: a figure (pages render their figures)"
    assert lines[2] == f"{tree}: 3.5 MB in 4 files > 2 MB"
    assert len(lines) == 3
    assert BUDGET_MB == {"total": 60.0, "file": 2.0}  # the budget the README states


def page_notebook(executed: Path, page: str, reads: list[str], value: str) -> None:
    """A notebook as ``make book`` leaves it: laptop parameters, the artifacts the page read
    and one glued value (myst-nb's scrapbook output)."""
    nb = {
        "metadata": {"papermill": {"parameters": {"profile": "laptop"}}, READS_KEY: reads},
        "cells": [
            {
                "outputs": [
                    {
                        "metadata": {"scrapbook": {"name": "n"}},
                        "data": {GLUE_PREFIX + "text/plain": [value]},
                    }
                ]
            }
        ],
    }
    path = executed / EXECUTED_DIR / f"{page}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))


def test_a_partial_export_adds_its_pages_and_removes_nothing(tmp_path, monkeypatch):
    """A build that spans machines exports page by page: each export adds its pages' artifacts
    and values and keeps what earlier ones wrote; the whole book's export then removes what no
    page reads. An unknown page stops the export before it writes anything."""
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "data"))
    arts = {}
    for name in ("a", "b", "stale"):
        art = Artifact("results", f"toy-{name}", {"n": name})
        get_or_build(art, lambda tmp, n=name: (tmp / "v.json").write_text(json.dumps(n)) and None)
        arts[name] = f"results/{art.name}/{art.key}"
    pages = [p.name for p in book_pages(REPO)]
    executed, dest = tmp_path / "book", tmp_path / "evidence"
    for page in pages:
        page_notebook(executed, page, [arts["a"]], f"'{page}'")
    page_notebook(executed, pages[1], [arts["b"]], "'two'")

    first = export_evidence(REPO, "laptop", dest, executed, only=[pages[0]])
    assert (first.artifacts, first.pages) == (1, 1)
    second = export_evidence(REPO, "laptop", dest, executed, only=[pages[1]])
    assert (second.artifacts, second.copied, second.removed) == (1, 1, 0)
    assert sorted(str(m.parent.relative_to(dest)) for m in dest.rglob("manifest.json")) == sorted(
        [arts["a"], arts["b"]]
    )
    assert json.loads((dest / "pages" / f"{pages[1]}.json").read_text()) == {"n": "'two'"}
    assert sorted(p.stem for p in (dest / "pages").glob("*.json")) == sorted(pages[:2])

    with pytest.raises(EvidenceError, match=r"unknown page\(s\) \['nope'\]; valid: ch01"):
        export_evidence(REPO, "laptop", dest / "x", executed, only=["nope"])
    assert not (dest / "x").exists()

    shutil.copytree(tmp_path / "data" / arts["stale"], dest / arts["stale"])
    whole = export_evidence(REPO, "laptop", dest, executed)
    assert (whole.artifacts, whole.removed, whole.pages) == (2, 1, len(pages))
    assert not (dest / arts["stale"]).exists()
    assert len(list((dest / "pages").glob("*.json"))) == len(pages)


@pytest.mark.parametrize("task", ["pusht", "tworoom"])
def test_the_sample_rebuild_check_compares_what_the_committed_evidence_holds(task):
    """The check's dataset, model and cell are the task study's, at its rung of its ladder
    (Push-T plans at 96 px): at the base profile it named a cell no page reads."""
    _, job, arts = sample_artifacts(task, "laptop")
    evidence = REPO / "evidence" / "laptop"
    if not (evidence / "pages" / f"ch06_{task}_planning.json").is_file():
        pytest.skip(f"no committed laptop evidence of {task}'s planning page")
    assert job.solver in ("cem", "icem") and job.arm == "lewm"
    assert [a.kind for a in arts[:2]] == ["datasets", "checkpoints"]
    refs = [f"{a.kind}/{a.name}/{a.key}" for a in arts]
    assert [r for r in refs if not (evidence / r / "manifest.json").is_file()] == []
