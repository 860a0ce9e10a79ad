"""A page's kernel says what its build finished while it builds, outside the notebook (issue 52,
case 6: a task page at laptop from an empty cache said nothing for hours)."""

from __future__ import annotations

import threading
import time

import nbformat
import pytest

from jepa_geometry.book import page_log as pl
from jepa_geometry.book import run as book_run
from tests.book.test_run import tiny_book


def test_lines_said_in_the_log_reach_the_relay_in_order_and_the_file_goes():
    heard: list[str] = []
    with pl.relay(heard.append) as env:
        path = env[pl.PAGE_LOG_ENV]
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(pl.PAGE_LOG_ENV, path)
            say = pl.page_log()
            say("train tworoom: 1 of 18 built (4 min 2 s)")
            say("train tworoom: 2 of 18 built (4 min 9 s)\n")
    assert heard == [
        "train tworoom: 1 of 18 built (4 min 2 s)",
        "train tworoom: 2 of 18 built (4 min 9 s)",
    ]
    assert not pl.Path(path).exists()


def test_a_line_half_written_is_relayed_once_whole(tmp_path):
    heard: list[str] = []
    with pl.relay(heard.append) as env:
        with open(env[pl.PAGE_LOG_ENV], "a") as log:
            log.write("plan tworoom: 1 of")
            log.flush()
            time.sleep(3 * pl.RELAY_INTERVAL_S)  # the relay sees the half line, and waits
            log.write(" 25 built (2 min 35 s)\n")
    assert heard == ["plan tworoom: 1 of 25 built (2 min 35 s)"]


def test_without_a_relay_lines_go_nowhere_and_a_reader_s_kernel_shows_them(monkeypatch, capsys):
    with pl.relay(None) as env:
        monkeypatch.setenv(pl.PAGE_LOG_ENV, env[pl.PAGE_LOG_ENV])
        pl.page_log()("dropped")
    monkeypatch.delenv(pl.PAGE_LOG_ENV)
    pl.page_log()("shown under the cell")
    assert capsys.readouterr().err == "shown under the cell\n"


@pytest.mark.slow
def test_a_chapter_relays_its_kernel_s_lines_while_it_runs_and_keeps_none(tmp_path, monkeypatch):
    """The page says a line, then waits until the command has printed it: a relay that only
    printed at the end would time the page out. The executed notebook holds no such line."""
    seen = tmp_path / "seen"
    body = (
        "import jepa_geometry as jg\n"
        "jg.page_log()('train tworoom: 1 of 18 built (4 min 2 s)')\n"
        "deadline = time.time() + 60\n"
        f"while not pathlib.Path({str(seen)!r}).exists():\n"
        "    assert time.time() < deadline, 'the line never reached the command'\n"
        "    time.sleep(0.1)\n"
        "print('page done')"
    )
    tiny_book(tmp_path, {"ch01_builds": body}, ["ch01_builds"])
    monkeypatch.chdir(tmp_path)
    heard: list[str] = []

    def to_stderr(line: str) -> None:
        heard.append(line)
        seen.touch()

    monkeypatch.setattr(book_run, "_to_stderr", to_stderr)
    out = tmp_path / "out.ipynb"
    run = threading.Thread(
        target=book_run.run_chapter,
        args=(tmp_path / "chapters" / "ch01_builds.md", out),
        kwargs={"progress": True},
    )
    run.start()
    run.join(timeout=180)
    assert heard == ["train tworoom: 1 of 18 built (4 min 2 s)"]
    text = "".join(
        str(o.get("text", "")) for c in nbformat.read(out, 4).cells for o in c.get("outputs", [])
    )
    assert "page done" in text and "built" not in text
