"""The toc's pages and the chapters they execute: one chapter source, one page per task, each
page localised to its task; a page found by name, prefix or path."""

from __future__ import annotations

import copy
import re

import jupytext
import pytest

from jepa_geometry.book.parameters import ChapterError, parameters_of
from jepa_geometry.book.toc import Page, _page, book_pages, localise, resolve_page
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.study.spec import available_studies, load_study
from tests.conftest import REPO

CH06 = REPO / "chapters" / "ch06_planning.md"
LABEL = re.compile(r"(?:tbl|fig)-ch\d\d-[a-z0-9-]+")


def _labels(nb) -> set[str]:
    """Every label a notebook defines: glue-figure names, exercise labels and MyST-NB figure
    names."""
    out = set(re.findall(r":(?:name|label): (\S+)", "\n".join(c.source for c in nb.cells)))
    for c in nb.cells:
        name = c.metadata.get("mystnb", {}).get("figure", {}).get("name")
        if name:
            out.add(name)
    return out


def test_every_study_has_both_task_pages_in_the_toc():
    pages = {p.name: p for p in book_pages(REPO)}
    for task in available_studies():
        first = (
            (f"ch06_{task}_planning", "ch06_planning")
            if load_study(task).plans
            else (f"ch06_{task}_gate", "ch06_gate")
        )  # a study that does not plan
        for name, source in (first, (f"ch07_{task}_geometry", "ch07_geometry")):
            assert name in pages, f"_toc.yml lacks {name}"
            assert pages[name].source.stem == source and pages[name].parameters == {"task": task}
    assert pages["ch02_isotropy_regret"].parameters == {}


def test_a_toc_page_without_a_source_names_the_valid_forms(tmp_path):
    (tmp_path / "chapters").mkdir()
    with pytest.raises(ChapterError, match=r"neither chapters/ch06_cube_planning.md nor a task"):
        _page("ch06_cube_planning", tmp_path)  # no source at all in this folder
    with pytest.raises(ChapterError, match=r"task one of tworoom"):
        _page("ch09_nosuch_page", REPO)


def test_pages_resolve_by_name_prefix_and_source():
    assert resolve_page("ch06_reacher").parameters == {"task": "reacher"}
    assert resolve_page("ch06_planning") == Page("ch06_planning", CH06, {})
    with pytest.raises(ChapterError, match=r"unknown chapter 'ch06'; valid: .*ch06_planning"):
        resolve_page("ch06")  # ambiguous: several pages start with it


def test_localised_page_has_its_own_labels_title_links_and_commands():
    page = resolve_page("ch06_reacher_planning")
    nb = jupytext.read(CH06)
    before = copy.deepcopy(nb)
    localise(nb, page, "tworoom", ["ch06", "ch07"])
    own, base = _labels(nb), _labels(before)
    assert base and len(own) == len(base) and not own & base  # every label renamed, none shared
    assert all(label.split("-")[2] == "reacher" for label in own)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert nb.cells[0].source.startswith(f"# 6. {task_title('reacher')} end to end (I)")
    assert "ch07_reacher_geometry" in text and "ch07_tworoom_geometry" not in text
    assert "--task tworoom" not in text and "--task reacher" in text
    solutions = set(re.findall(r":::\{solution\} (\S+)", text))
    assert solutions and solutions <= own  # every solution names its page's own exercise
    refs = set(re.findall(r"\{numref\}`([^`]+)`", text))
    assert refs <= own | {r for r in refs if not r.startswith(("tbl-ch06", "fig-ch06"))}
    # code is never rewritten: the page's task comes from its parameter
    code = [
        (a.source, b.source)
        for a, b in zip(before.cells, nb.cells, strict=True)
        if a.cell_type == "code"
    ]
    assert all(a == b for a, b in code)


def test_default_task_page_and_other_chapters_stay_untouched():
    nb = jupytext.read(CH06)
    before = copy.deepcopy(nb)
    localise(nb, resolve_page("ch06_tworoom_planning"), "tworoom", ["ch06", "ch07"])
    assert [c.source for c in nb.cells] == [c.source for c in before.cells]
    other = jupytext.reads("# Two-Room x\n\nSee {numref}`tbl-ch05-arms`.\n", fmt="md:myst")
    localise(other, Page("ch06_reacher_planning", CH06, {"task": "reacher"}), "tworoom", ["ch06"])
    assert "tbl-ch05-arms" in other.cells[0].source  # ch05 is not a task chapter


def test_every_task_has_a_title():
    assert len({task_title(t) for t in TASKS}) == len(TASKS)


def test_a_sibling_page_the_book_does_not_hold_becomes_the_task_s_own():
    """Cube's chapter-6 page is its gate page: chapter 7's links to the planning page follow."""
    nb = jupytext.reads(
        "# Two-Room x\n\nSee {doc}`the planning page <ch06_tworoom_planning>` "
        "and {doc}`ch07_tworoom_geometry`.\n",
        fmt="md:myst",
    )
    page = Page("ch07_cube_geometry", CH06, {"task": "cube"})
    localise(nb, page, "tworoom", ["ch06", "ch07"], ["ch06_cube_gate", "ch07_cube_geometry"])
    text = nb.cells[0].source
    assert "<ch06_cube_gate>" in text and "{doc}`ch07_cube_geometry`" in text
    plain = jupytext.reads("See {doc}`ch06_tworoom_planning`.\n", fmt="md:myst")
    localise(plain, page, "tworoom", ["ch06"])  # no page list: names are only renamed
    assert "ch06_cube_planning" in plain.cells[0].source


def _source(name: str):
    return resolve_page(name).source


def test_the_toc_opens_with_chapter_1_and_every_chapter_defaults_to_the_laptop_profile():
    sources = list(dict.fromkeys(p.source for p in book_pages(REPO)))
    assert sources and sources[0] == REPO / "chapters" / "ch01_metric_leverage.md"
    for src in sources:
        params = parameters_of(jupytext.read(src))
        assert "profile" in params and params["profile"] == "laptop"


def test_no_executed_notebook_next_to_sources():
    assert not list((REPO / "chapters").glob("*.ipynb"))


def test_chapters_are_found_by_name_prefix_or_any_path(tmp_path, monkeypatch):
    assert _source("ch02").name == "ch02_isotropy_regret.md"
    assert _source("ch02_isotropy_regret") == _source("chapters/ch02_isotropy_regret.md")
    monkeypatch.chdir(REPO / "chapters")
    assert _source("./ch02_isotropy_regret.md") == _source("ch02")
    with pytest.raises(ChapterError, match=r"unknown chapter 'ch0'; valid: ch01_metric_leverage, "):
        _source("ch0")
