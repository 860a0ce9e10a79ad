"""The parser: a bad choice lists the valid ones; chapter --help lists every chapter."""

import pytest

from jepa_geometry.cli import main


def test_unknown_profile_lists_choices(capsys):
    with pytest.raises(SystemExit):
        main(["profile", "nosuch"])
    assert "choose from 'smoke', 'laptop', 'paper'" in capsys.readouterr().err


def test_chapter_help_lists_every_chapter_with_its_parameters(capsys):
    from jepa_geometry.book.toc import book_pages

    with pytest.raises(SystemExit) as stop:
        main(["chapter", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for page in book_pages():
        assert page.source.stem in out  # every chapter source, with its pages
    assert "ch07_geometry  (pages: ch07_tworoom_geometry" in out
    assert "landscape_examples=3" in out and "profile='laptop'" in out
