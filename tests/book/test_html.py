"""The HTML build: the banner names the profile of the pages, and a page numbers its figures
and tables from its chapter."""

import importlib.util

from jepa_geometry.book.html import BANNERS, banner
from tests.conftest import REPO


def test_the_banner_names_the_profile_or_each_profile_s_pages_of_a_mixed_build():
    assert banner({"ch01": "smoke", "ch02": "smoke"}) == BANNERS["smoke"]
    mixed = banner({"ch01": "smoke", "ch02": "laptop"})
    assert mixed.startswith("<b>Mixed build.</b>") and "<b>laptop</b>: ch02" in mixed


def test_a_chapter_page_numbers_its_figures_and_tables_from_its_chapter():
    spec = importlib.util.spec_from_file_location("numbering", REPO / "book/_ext/numbering.py")
    numbering = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(numbering)
    sphinx_numbers = {"figure": {"fig-b": (41,), "fig-a": (40,)}, "table": {"tbl-a": (97,)}}
    assert numbering.chapter_numbers("book/chapters/ch06_cube_gate", sphinx_numbers) == {
        "figure": {"fig-a": (6, 1), "fig-b": (6, 2)},  # reading order kept
        "table": {"tbl-a": (6, 1)},  # each kind counts from 1
    }
    assert numbering.chapter_numbers("book/reconstructions", sphinx_numbers)["figure"] == {
        "fig-a": (1,),
        "fig-b": (2,),
    }
