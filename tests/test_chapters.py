"""Every chapter of the toc, end to end at the smoke profile, then the HTML book from them.

The chapters run through the same function as ``make book`` (``run_chapter``) into a copy of
the book's sources in a temporary folder; the last test builds that copy with Jupyter Book
with warnings as errors, so a broken cross-reference or citation fails CI too.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from jepa_geometry.book.pipeline import EXECUTED_DIR, chapter_sources, run_chapter

from .conftest import REPO

CHAPTERS = chapter_sources(REPO)


@pytest.fixture(scope="module")
def book_copy(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("book")
    for name in ("_config.yml", "_toc.yml", "data.dvc"):
        shutil.copy(REPO / name, dst / name)
    shutil.copytree(REPO / "book", dst / "book", ignore=shutil.ignore_patterns("chapters"))
    return dst


@pytest.mark.chapters
@pytest.mark.parametrize("source", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_runs_at_smoke(source: Path, book_copy: Path):
    out = book_copy / EXECUTED_DIR / f"{source.stem}.ipynb"
    run = run_chapter(source, out, {"profile": "smoke"}, timeout=600)
    nb = nbformat.read(run.output, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "smoke" in injected[0].source
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.chapters
def test_book_builds_from_executed_chapters(book_copy: Path):
    missing = [
        c.stem for c in CHAPTERS if not (book_copy / EXECUTED_DIR / f"{c.stem}.ipynb").exists()
    ]
    if missing:
        pytest.skip(f"chapters did not run: {missing}")
    jb = Path(sys.executable).parent / "jupyter-book"
    res = subprocess.run(
        [jb, "build", ".", "--warningiserror", "--nitpick", "--keep-going", "--quiet"],
        cwd=book_copy,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    for c in CHAPTERS:
        html = book_copy / "_build" / "html" / EXECUTED_DIR / f"{c.stem}.html"
        assert html.is_file() and "<img" in html.read_text()
