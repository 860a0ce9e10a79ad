"""Every page of the toc, end to end at the smoke profile, then the HTML book from them.

A task chapter runs once per task page. The pages run through the same function as ``make
book`` (``run_chapter``) into one copy of the book's sources that every xdist worker of the
run shares; each page is executed once, under its own lock, by whichever test needs it first
(its own test, or the book build waiting for it). Jupyter Book then builds that copy once,
with warnings as errors, so a broken cross-reference or citation fails CI too; the build test
and the browser check each wait for that one build, on whichever worker they run.
"""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from filelock import FileLock
from PIL import Image

from jepa_geometry.artifacts import CACHE_ONLY_ENV, DATA_ENV, READ_ONLY_ENV, is_heavy
from jepa_geometry.book.evidence import export_evidence, glued_values, incomplete_in_data
from jepa_geometry.book.run import run_chapter
from jepa_geometry.book.toc import EXECUTED_DIR, Page
from tests.book.browser import check_book, ensure_chromium
from tests.conftest import PAGES, REPO, executed

EVIDENCE_PAGES = ("ch01_metric_leverage", "ch04_tasks", "ch05_world_model")
"""Pages rendered from the exported smoke evidence in CI (every page does: a render of all 16
from it reproduced every glued value; these three keep CI short). The cross-task page and the
first planning page are rendered from evidence by ``tests/book/test_laptop_evidence.py``, from
the committed laptop evidence, which the same export wrote."""


@pytest.mark.chapters
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_chapter_runs_at_smoke(page: Page, book_copy: Path):
    nb = nbformat.read(executed(page, book_copy), as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "smoke" in injected[0].source
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


def built_book(book_copy: Path) -> subprocess.CompletedProcess | None:
    """Jupyter Book's build of the shared copy once every page is executed, once per run
    (under a lock: the browser check waits for it); ``None`` when an earlier test built it."""
    with FileLock(str(book_copy / "_build.lock")):
        if (book_copy / "_build" / "html" / "index.html").is_file():
            return None
        for page in PAGES:  # each page as its own test left it, or run now if none has yet
            executed(page, book_copy)
        cli = Path(sys.executable).parent / "jepa-geometry"
        return subprocess.run(
            [cli, "html"],
            cwd=book_copy,
            capture_output=True,
            text=True,
            timeout=600,
        )


@pytest.mark.chapters
def test_book_builds_from_executed_chapters(book_copy: Path):
    res = built_book(book_copy)
    if res is not None:
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert (book_copy / "_build" / "html" / "index.html").is_file()
    for p in PAGES:
        html = book_copy / "_build" / "html" / EXECUTED_DIR / f"{p.name}.html"
        assert html.is_file()
        text = html.read_text()
        if "savefig(" in p.source.read_text():  # a chapter that draws figures shows them
            assert "<img" in text
        # every page says which profile built it, shows its parameters once, and no plumbing
        assert (
            "Smoke build." in text
            and text.count("This build&#39;s parameters") + text.count("This build's parameters")
            == 1
        )
        assert "setup_chapter(" not in text and "from myst_nb import glue" not in text


@pytest.mark.chapters
def test_every_page_reads_offline_in_a_browser(book_copy: Path):
    """Headless Chromium opens every page of the smoke book: no raw TeX (MathJax is served
    by the book, not a CDN), no broken image, link or fragment, no console error."""
    res = built_book(book_copy)
    assert res is None or res.returncode == 0, "the book did not build"
    html = book_copy / "_build" / "html"
    ensure_chromium()
    report = check_book(html)
    bad = {page: problems for page, problems in report.items() if problems}
    assert len(report) >= len(PAGES) and not bad, bad
    assert all(
        (book_copy / "_build" / "screenshots" / f"{p.replace('/', '__')}.png").is_file()
        for p in report
    )


@pytest.mark.slow
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
    (site / "plumbing.html").write_text(
        "<html><body><main><article><div class='cell_input'>import x</div><p>text</p>"
        "<table><tr><td>nan</td><td>1</td></tr></table></article></main></body></html>"
    )
    Image.new("RGB", (2000, 40)).save(site / "wide.png")
    (site / "ch06_x.html").write_text(
        "<html><body><main><article><p>prose</p><img src='wide.png' style='width:700px'>"
        "<figure id='tbl-a'><figcaption><span class='caption-number'>Fig. 3 </span>t"
        "</figcaption></figure><table><thead><tr><th>top8_share</th><th>arm</th></tr></thead>"
        "<tr><td>1</td><td>lewm</td></tr></table></article></main></body></html>"
    )
    for task in ("a", "b"):  # two task pages of a chapter that number a table alike
        (site / f"ch07_{task}.html").write_text(
            "<html><body><main><article><p>prose</p><figure id='tbl-x'><figcaption>"
            "<span class='caption-number'>Table 7.1 </span>t</figcaption></figure>"
            "</article></main></body></html>"
        )
    report = check_book(site)
    assert report["ok.html"] == []
    assert report["ch07_a.html"] == ["'Table 7.1' is captioned on another page too: ch07_b.html"]
    assert report["ch07_b.html"] == ["'Table 7.1' is captioned on another page too: ch07_a.html"]
    assert sorted(report["ch06_x.html"]) == [
        "'Fig. 3' on a chapter-6 page",
        "1 headers read as identifiers, e.g. 'top8_share'",
        "figure wide.png drawn 2000 px wide is shown at 700 px (text 2.9x smaller)",
        "table tbl-a captioned 'Fig. 3'",
    ]
    kinds = sorted({p.split(":")[0] for p in report["bad.html"]})
    assert kinds == ["broken fragment", "broken image", "broken link", "console", "raw TeX"]
    assert report["plumbing.html"] == [
        "1 table cells read 'nan' (blank expected)",
        "the page opens with code, not prose",
    ]


@pytest.mark.chapters
def test_pages_render_from_their_exported_evidence_alone(book_copy, tmp_path, monkeypatch):
    """Export what the smoke book read (manifests and small files, never a dataset's frames or
    a model's weights), then render pages in an empty cache that may build nothing: every
    glued value equals the one of the build that produced the evidence."""
    for page in PAGES:
        executed(page, book_copy)
    evidence = tmp_path / "evidence"
    export = export_evidence(REPO, "smoke", evidence, executed=book_copy)
    assert export.artifacts > 0 and export.pages == len(PAGES)
    files = [p.relative_to(evidence) for p in evidence.rglob("*") if p.is_file()]
    assert not [f for f in files if is_heavy(f.parts[0], f.name)]
    assert incomplete_in_data(REPO, book_copy) == []  # the run's cache: everything, frames too
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "empty"))
    monkeypatch.setenv(READ_ONLY_ENV, str(evidence))
    monkeypatch.setenv(CACHE_ONLY_ENV, "1")
    assert len(incomplete_in_data(REPO, book_copy)) == export.artifacts  # data/ not versioned
    for page in [p for p in PAGES if p.name in EVIDENCE_PAGES]:
        out = tmp_path / f"{page.name}.ipynb"
        run_chapter(page.source, out, {**page.parameters, "profile": "smoke"}, timeout=600)
        want = json.loads((evidence / "pages" / f"{page.name}.json").read_text())
        assert glued_values(json.loads(out.read_text())) == want, page.name
