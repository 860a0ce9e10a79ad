"""Shared test set-up: one artifact cache per test run, one torch thread per xdist worker, a
non-interactive matplotlib, and the book's pages executed at smoke once per run (``executed``,
into the ``book_copy`` every worker shares).

``make test`` runs the suite on every core with pytest-xdist (``-n``). All workers of one run
share one smoke cache (``<run>/data``): the cache's own per-artifact file locks let two
workers ask for the same dataset or model, the second waiting for the first and reusing its
result, so every smoke input is built once per run whichever worker needs it first.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from jepa_geometry.book.run import AFTER_ALL, execution_order, run_chapter
from jepa_geometry.book.toc import EXECUTED_DIR, Page, book_pages
from jepa_geometry.jobs import WORKERS_ENV

REPO = Path(__file__).resolve().parents[1]
PAGES = execution_order(book_pages(REPO))  # as `make book` starts them: the ladder first
WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1", ... under xdist, else None
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("DVC_NO_ANALYTICS", "1")
if WORKER:  # tests side by side, one core each: chapter kernels and subprocesses inherit it,
    # and a page or study builds its jobs in its own process (jobs.default_workers)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"
    os.environ[WORKERS_ENV] = "1"


def pytest_configure(config: pytest.Config) -> None:
    if WORKER:
        import torch

        torch.set_num_threads(1)


BOOK_BUILD = (
    "test_book_builds_from_executed_chapters",
    "test_every_page_reads_offline_in_a_browser",
)
AFTER_PAGES = ("test_pages_render_from_their_exported_evidence_alone",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest first, so that ``--dist load`` keeps both workers busy to the end: the tests
    marked ``first`` (minutes each: started last, one would end the run alone), the pages
    (in toc order), the other ``slow`` tests, then what waits for the pages: the cross-task
    page, the render from the exported evidence (two minutes of pages), the HTML book and its
    browser check (which overlap with that render on the other worker); the short tests last,
    filling both workers to the end."""

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("first"):
            return -1
        if any(page in item.name for page in AFTER_ALL):
            return 2  # it waits for every other page
        if item.originalname in AFTER_PAGES:
            return 3
        if item.originalname in BOOK_BUILD:
            return 4
        if item.get_closest_marker("chapters"):
            return 0
        return 1 if item.get_closest_marker("slow") else 5

    items.sort(key=rank)  # stable: collection order within a rank


def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of this test run that every xdist worker shares (a worker's own basetemp is
    a subfolder of it); without xdist, the run's basetemp itself."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if WORKER else base


@pytest.fixture(autouse=True, scope="session")
def _isolated_data_root(tmp_path_factory: pytest.TempPathFactory):
    """Point the artifact cache at this run's shared folder so tests never touch data/."""
    root = run_dir(tmp_path_factory) / "data"
    root.mkdir(exist_ok=True)
    old = os.environ.get("JEPA_GEOMETRY_DATA")
    os.environ["JEPA_GEOMETRY_DATA"] = str(root)
    yield root
    if old is None:
        os.environ.pop("JEPA_GEOMETRY_DATA", None)
    else:
        os.environ["JEPA_GEOMETRY_DATA"] = old


@pytest.fixture(scope="session")
def smoke_datasets(_isolated_data_root: Path) -> Path:
    """The five tasks' smoke datasets in the run's shared cache (collected once per run, by
    whichever worker asks first); returns that cache's ``datasets`` folder."""
    from jepa_geometry.envs import TASKS
    from jepa_geometry.envs.dataset import load_dataset
    from jepa_geometry.profiles import load_profile

    smoke = load_profile("smoke")
    for task in TASKS:
        load_dataset(task, smoke, workers=1, progress=False)
    return _isolated_data_root / "datasets"


@pytest.fixture
def data_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty artifact cache for one test."""
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture(scope="session")
def book_copy(tmp_path_factory) -> Path:
    """The book's sources, copied once per run into the folder every worker shares."""
    dst = run_dir(tmp_path_factory) / "book"
    with FileLock(str(dst) + ".lock"):
        if not (dst / "_toc.yml").is_file():
            dst.mkdir(exist_ok=True)
            shutil.copytree(REPO / "book", dst / "book", ignore=shutil.ignore_patterns("chapters"))
            for name in ("data.dvc", "_config.yml", "_toc.yml"):  # _toc.yml last: "copied"
                shutil.copy(REPO / name, dst / name)
    return dst


def executed(page: Page, book_copy: Path) -> Path:
    """The page executed at smoke into the shared book copy, once per run (the page's lock
    makes a second asker wait for the first run and reuse it; a failed run leaves nothing,
    so the next asker runs it again and sees the same error)."""
    if page.name in AFTER_ALL:  # as in `make book`: after every page before it
        for earlier in PAGES[: PAGES.index(page)]:
            executed(earlier, book_copy)
    out = book_copy / EXECUTED_DIR / f"{page.name}.ipynb"
    with FileLock(str(out) + ".lock"):
        params = {**page.parameters, "profile": "smoke"}
        return run_chapter(page.source, out, params, force=False, timeout=600).output
