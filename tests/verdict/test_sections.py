"""Claims point at chapter sections by MyST label (verdict.claims), and every label exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jepa_geometry.artifacts import repo_root
from jepa_geometry.book.parameters import ChapterError
from jepa_geometry.book.toc import book_pages, section_link, sections
from jepa_geometry.verdict import claims
from jepa_geometry.verdict.records import LENS_CLAIMS, PAPER_CLAIMS

ROOT = repo_root()
THEORY = Path(ROOT, "src", "jepa_geometry", "book", "tables", "theory.py")


def test_every_section_a_claim_names_is_a_labelled_section_of_a_chapter() -> None:
    labels = sections(ROOT)
    named = {spec.where for spec in (*PAPER_CLAIMS, *LENS_CLAIMS) if spec.where}
    named |= {
        claims.PLANNING,
        claims.SCALE_MAIN_TABLE,
        claims.PROBES,
        claims.RANKING,
        claims.LANDSCAPE,
    }
    named |= set(re.findall(r'"(sec-[a-z0-9-]+)"', THEORY.read_text()))
    assert len(named) >= 7 and named <= set(labels), named - set(labels)
    source, title = labels[claims.PROBES]
    assert source.name == "ch07_geometry.md" and title.startswith("Where the variance sits")


def test_a_link_goes_to_the_claim_s_own_task_page_and_its_localised_label() -> None:
    pages = {p.name for p in book_pages(ROOT)}
    link = section_link(claims.PROBES, "reacher", ROOT)
    page, label = re.search(r'href="(\w+)\.html#([\w-]+)"', link).groups()
    assert page == "ch07_reacher_geometry" and page in pages
    assert label == "sec-ch07-reacher-probes"  # the label as book.toc.localise writes it
    assert "chapter 7 (Reacher): Where the variance sits" in link
    default = section_link(claims.PROBES, None, ROOT)  # a claim over every task
    assert 'href="ch07_tworoom_geometry.html#sec-ch07-probes"' in default
    assert section_link(claims.SCALE_MAIN_TABLE, "reacher", ROOT).startswith(
        '<a href="ch08_across.html#sec-ch08-scale-main">chapter 8: '
    )
    # Cube's chapter-6 page is its gate: no planning section to link to, the title alone
    assert section_link(claims.PLANNING, "cube", ROOT) == "Planning every cell"
    assert section_link("", "cube", ROOT) == ""


def test_a_label_no_chapter_has_stops_with_one_line_naming_it() -> None:
    with pytest.raises(ChapterError, match=r"no chapter section is labelled 'sec-ch07-nosuch'"):
        section_link("sec-ch07-nosuch", "tworoom", ROOT)
