"""What a page's kernel builds, said while it builds: one line per finished unit, outside the page.

A task page from an empty cache trains and plans for minutes (smoke) to hours (laptop) inside
its kernel, where no progress bar draws (the kernel's stderr is no terminal). The kernel's
build says what it finished through :func:`page_log`, one short line each
(:func:`~jepa_geometry.jobs.log_line`); where that line goes depends on who runs the kernel:

* a command that runs the page (``jepa-geometry chapter``, ``book`` one page at a time) names a
  file in :data:`PAGE_LOG_ENV` and relays its lines to its own stderr while the page runs
  (:func:`relay`), so the executed notebook holds no timings and stays the same from run to run;
* a command that must stay quiet (pages side by side) names ``os.devnull``;
* a reader's own kernel (JupyterLab) names nothing: the lines appear under the cell.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

PAGE_LOG_ENV = "JEPA_GEOMETRY_PAGE_LOG"
RELAY_INTERVAL_S = 0.2  # how often the relay looks for new lines


def page_log() -> Callable[[str], None]:
    """Where the kernel's build says what it finished (``build_study(..., say=page_log())``):
    appended to the file :data:`PAGE_LOG_ENV` names, else printed to stderr (under the cell)."""
    path = os.environ.get(PAGE_LOG_ENV)
    if path is None:
        return lambda line: print(line, file=sys.stderr, flush=True)

    def say(line: str) -> None:
        with open(path, "a", encoding="utf-8") as log:  # one write per line: never interleaved
            log.write(line.rstrip("\n") + "\n")

    return say


@contextmanager
def relay(say: Callable[[str], None] | None) -> Iterator[dict[str, str]]:
    """The environment a page kernel gets: its lines relayed to ``say`` while the block runs
    (a thread reads the log file every :data:`RELAY_INTERVAL_S`; what is left when the block
    ends, an interruption included, is relayed before the file is removed), or dropped when
    ``say`` is None."""
    if say is None:
        yield {PAGE_LOG_ENV: os.devnull}
        return
    fd, name = tempfile.mkstemp(prefix="page-log-", suffix=".txt")
    os.close(fd)
    path = Path(name)
    stop = threading.Event()
    offset = 0

    def forward() -> None:
        nonlocal offset
        with open(path, encoding="utf-8") as log:
            log.seek(offset)
            while line := log.readline():
                if not line.endswith("\n"):  # a line still being written: read it next time
                    break
                say(line.rstrip("\n"))
                offset = log.tell()

    def run() -> None:
        while not stop.wait(RELAY_INTERVAL_S):
            forward()

    thread = threading.Thread(target=run, name="page-log-relay", daemon=True)
    thread.start()
    try:
        yield {PAGE_LOG_ENV: str(path)}
    finally:
        stop.set()
        thread.join()
        forward()
        path.unlink(missing_ok=True)


__all__ = ["PAGE_LOG_ENV", "page_log", "relay"]
