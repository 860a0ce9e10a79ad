"""Every page of the toc, end to end at the smoke profile, then the HTML book from them.

A task chapter runs once per task page. The pages run through the same function as ``make
book`` (``run_chapter``) into a copy of
the book's sources in a temporary folder; the last test builds that copy with Jupyter Book
with warnings as errors, so a broken cross-reference or citation fails CI too.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from jepa_geometry.book.pipeline import EXECUTED_DIR, Page, book_pages, run_chapter

from .browser import check_book, ensure_chromium
from .conftest import REPO

PAGES = book_pages(REPO)


@pytest.fixture(scope="module")
def book_copy(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("book")
    for name in ("_config.yml", "_toc.yml", "data.dvc"):
        shutil.copy(REPO / name, dst / name)
    shutil.copytree(REPO / "book", dst / "book", ignore=shutil.ignore_patterns("chapters"))
    return dst


@pytest.mark.chapters
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_chapter_runs_at_smoke(page: Page, book_copy: Path):
    out = book_copy / EXECUTED_DIR / f"{page.name}.ipynb"
    run = run_chapter(page.source, out, {**page.parameters, "profile": "smoke"}, timeout=600)
    nb = nbformat.read(run.output, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "smoke" in injected[0].source
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.chapters
def test_book_builds_from_executed_chapters(book_copy: Path):
    missing = [p.name for p in PAGES if not (book_copy / EXECUTED_DIR / f"{p.name}.ipynb").exists()]
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
    for p in PAGES:
        html = book_copy / "_build" / "html" / EXECUTED_DIR / f"{p.name}.html"
        assert html.is_file()
        if "savefig(" in p.source.read_text():  # a chapter that draws figures shows them
            assert "<img" in html.read_text()


@pytest.mark.chapters
def test_every_page_reads_offline_in_a_browser(book_copy: Path):
    """Headless Chromium opens every page of the smoke book: no raw TeX (MathJax is served
    by the book, not a CDN), no broken image, link or fragment, no console error."""
    html = book_copy / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.skip("the book was not built")
    ensure_chromium()
    report = check_book(html)
    bad = {page: problems for page, problems in report.items() if problems}
    assert len(report) >= len(PAGES) and not bad, bad
    assert all((book_copy / "_build" / "screenshots" / f"{p.replace('/', '__')}.png").is_file()
               for p in report)  # fmt: skip


def test_the_browser_check_finds_what_a_reader_would(tmp_path: Path):
    ensure_chromium()
    site = tmp_path / "html"
    site.mkdir()
    (site / "ok.html").write_text('<html><body><p id="here">fine</p><a href="#here">x</a></body>')
    (site / "bad.html").write_text(
        "<html><body><p>\\(\\Sigma^{-1}\\)</p><img src='missing.png'>"
        "<a href='nowhere.html'>a</a><a href='ok.html#gone'>b</a>"
        "<script>throw new Error('boom')</script></body></html>"
    )
    report = check_book(site)
    assert report["ok.html"] == []
    kinds = sorted({p.split(":")[0] for p in report["bad.html"]})
    assert kinds == ["broken fragment", "broken image", "broken link", "console", "raw TeX"]
