"""CI keeps code and committed evidence together (issue 51): the cross-task page, a task's
planning page and the reader's own objective (chapter 10) render at the laptop
profile from ``evidence/laptop`` alone, cache-only (nothing collected, trained or planned), and
every glued value equals the committed one (identical, or equal: floats within the stated
tolerance, as a render on another CPU gives). A change that would alter
a laptop number fails here, in minutes, instead of silently needing hours of rebuild."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jepa_geometry.artifacts import CACHE_ONLY_ENV, DATA_ENV, READ_ONLY_ENV
from jepa_geometry.book.evidence import evidence_pages, glued_comparison
from jepa_geometry.book.run import run_chapter
from jepa_geometry.book.toc import EXECUTED_DIR, resolve_page
from jepa_geometry.cli import main
from tests.conftest import REPO


def checked_pages() -> list[str]:
    """The pages CI renders, those of them whose evidence is committed: the cross-task page
    (about a minute: it reads every task's planning cells and geometry measurements, the κ
    sweep and the ceiling), the first task's planning page and the reader's own objective
    (seconds each from the evidence: they read, never build). The geometry pages' measurements
    are read by the cross-task page, so none of them is rendered here: ``make test`` keeps to
    12 minutes."""
    committed = evidence_pages(REPO, "laptop")
    planning = [p for p in committed if p.startswith("ch06_") and p.endswith("_planning")]
    own = [p for p in committed if p in ("ch08_across", "ch10_own_objective")]
    return own + planning[:1]


@pytest.mark.slow
@pytest.mark.parametrize("page", checked_pages())
def test_a_laptop_page_renders_from_the_committed_evidence_to_the_same_values(
    page, tmp_path, monkeypatch
):
    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv(DATA_ENV, str(empty))  # the book's data/ stands behind it, read-only,
    monkeypatch.setenv(READ_ONLY_ENV, str(REPO / "data"))  # and the evidence behind that
    monkeypatch.setenv(CACHE_ONLY_ENV, "1")  # a missing artifact stops the page
    found = resolve_page(page)
    out = tmp_path / EXECUTED_DIR / f"{page}.ipynb"
    run_chapter(found.source, out, {**found.parameters, "profile": "laptop"})
    assert glued_comparison(REPO, "laptop", [page], executed=tmp_path).differences == []
    if page.endswith("_planning"):
        _diff_against_perturbed_evidence(page, out, tmp_path / "perturbed", monkeypatch)
    kinds = ("datasets", "checkpoints", "results")  # a page's drawn figures go to figures/
    assert [p for k in kinds for p in (empty / k).rglob("*") if p.is_file()] == []  # none built


def _diff_against_perturbed_evidence(page: str, executed: Path, root: Path, monkeypatch) -> None:
    """``evidence diff`` of the rendered planning page against its committed values with one
    change each (issue 70): MPPI's temperature T* in its last digit, as another CPU's render
    gives (equal, exit 0), then one success flipped, a unit the arm solved counted to LeWM
    (different, exit 1)."""
    committed = json.loads((REPO / "evidence" / "laptop" / "pages" / f"{page}.json").read_text())
    (root / EXECUTED_DIR).mkdir(parents=True)
    shutil.copy(executed, root / EXECUTED_DIR / executed.name)
    (root / "chapters").mkdir()
    shutil.copy(resolve_page(page).source, root / "chapters")
    (root / "data.dvc").write_text("")
    (root / "_toc.yml").write_text(f"root: intro\nchapters:\n  - file: {EXECUTED_DIR}/{page}\n")
    monkeypatch.chdir(root)

    def diff(**changed: str) -> int:
        pages = root / "evidence" / "laptop" / "pages"
        pages.mkdir(parents=True, exist_ok=True)
        (pages / f"{page}.json").write_text(json.dumps({**committed, **changed}))
        return main(["evidence", "diff", "--only", page])

    t_star = committed["ch06_t_star"]  # a float's repr, e.g. '21.333333333333332'
    last = str((int(t_star[-1]) + 3) % 10)
    assert diff(ch06_t_star=t_star[:-1] + last) == 0  # equal
    a_only, b_only = (int(n) for n in committed["ch06_d_units"].strip("'").split(" and "))
    assert diff(ch06_d_units=f"'{a_only - 1} and {b_only + 1}'") == 1  # different
