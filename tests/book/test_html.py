"""The HTML build: the banner names the profile of the pages, and a page numbers its figures
and tables from its chapter (and, on a chapter's task pages, from its task page)."""

import importlib.util

import pytest

from jepa_geometry.book.html import BANNERS, banner
from tests.conftest import REPO


def test_the_banner_names_the_profile_or_each_profile_s_pages_of_a_mixed_build():
    assert banner({"ch01": "smoke", "ch02": "smoke"}) == BANNERS["smoke"]
    mixed = banner({"ch01": "smoke", "ch02": "laptop"})
    assert mixed.startswith("<b>Mixed build.</b>") and "<b>laptop</b>: ch02" in mixed


def _numbering():
    spec = importlib.util.spec_from_file_location("numbering", REPO / "book/_ext/numbering.py")
    numbering = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(numbering)
    return numbering


def test_a_chapter_page_numbers_its_figures_and_tables_from_its_chapter():
    numbering = _numbering()
    sphinx_numbers = {"figure": {"fig-b": (41,), "fig-a": (40,)}, "table": {"tbl-a": (97,)}}
    assert numbering.chapter_numbers("book/chapters/ch06_cube_gate", sphinx_numbers) == {
        "figure": {"fig-a": (6, 1), "fig-b": (6, 2)},  # reading order kept
        "table": {"tbl-a": (6, 1)},  # each kind counts from 1
    }
    assert numbering.chapter_numbers("book/reconstructions", sphinx_numbers)["figure"] == {
        "fig-a": (1,),
        "fig-b": (2,),
    }


def test_the_task_pages_of_a_chapter_number_their_figures_and_tables_apart():
    numbering = _numbering()
    pages = [
        "book/intro",
        "book/chapters/ch05_world_model",
        "book/chapters/ch06_tworoom_planning",
        "book/chapters/ch07_tworoom_geometry",
        "book/chapters/ch06_reacher_planning",
        "book/chapters/ch07_reacher_geometry",
        "book/chapters/ch06_cube_gate",
        "book/chapters/ch08_across",
    ]
    sphinx_numbers = {"table": {"tbl-b": (8,), "tbl-a": (7,)}}
    numbered = {
        page.rsplit("/", 1)[-1]: numbering.chapter_numbers(page, sphinx_numbers, pages)["table"]
        for page in pages
    }
    assert numbered["ch06_tworoom_planning"] == {"tbl-a": (6, 1, 1), "tbl-b": (6, 1, 2)}
    assert numbered["ch06_reacher_planning"] == {"tbl-a": (6, 2, 1), "tbl-b": (6, 2, 2)}
    assert numbered["ch06_cube_gate"]["tbl-a"] == (6, 3, 1)  # its own source, same chapter
    assert numbered["ch07_reacher_geometry"]["tbl-a"] == (7, 2, 1)
    # a chapter of one page keeps NN.i, and every number names one table of the book
    assert numbered["ch05_world_model"]["tbl-a"] == (5, 1)
    assert numbered["ch08_across"] == {"tbl-a": (8, 1), "tbl-b": (8, 2)}
    chapter_pages = [n for p, n in numbered.items() if p.startswith("ch")]
    all_numbers = [num for n in chapter_pages for num in n.values()]
    assert len(set(all_numbers)) == len(all_numbers)


def test_an_html_build_after_an_interrupted_one_rebuilds_every_page(tmp_path, monkeypatch):
    import subprocess

    from jepa_geometry.book import html

    (tmp_path / "_config.yml").write_text("title: t\n")
    calls = []

    def interrupted(cmd, cwd):
        calls.append(cmd)
        raise KeyboardInterrupt  # Ctrl-C while Sphinx writes

    monkeypatch.setattr(subprocess, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        html.build_html(tmp_path)
    assert (tmp_path / html.UNFINISHED).exists() and "--all" not in calls[-1]

    def finishes(cmd, cwd):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(subprocess, "run", finishes)
    assert html.build_html(tmp_path) == 0
    assert "--all" in calls[-1] and not (tmp_path / html.UNFINISHED).exists()
    assert html.build_html(tmp_path) == 0 and "--all" not in calls[-1]  # incremental again
