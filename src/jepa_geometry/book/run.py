"""Running pages: one chapter with papermill (:func:`run_chapter`), a reader's own run of it
(:func:`run_experiment`), and the whole book (:func:`build_book`).

Every chapter has one cell tagged ``parameters`` holding literals only (papermill injects its
overrides *after* that cell). :func:`run_chapter` validates the requested parameters against
that cell *before* any execution -- an unknown name or a value of the wrong type fails with
the valid choices -- then executes the chapter with papermill and writes the executed notebook
atomically.

:func:`build_book` runs every chapter of ``_toc.yml`` (in :func:`execution_order`, one at a
time or ``jobs`` pages side by side), printing one line per chapter with its wall time, and
skips a chapter whose executed notebook already carries the same fingerprint (chapter source,
parameters and library source), so a rebuild with a warm cache only re-renders HTML.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jupytext

from jepa_geometry import cluster
from jepa_geometry.artifacts import (
    DATA_ENV,
    READ_LOG_ENV,
    atomic_path,
    data_root,
    environ,
    figure_folder,
    profile_cache,
)
from jepa_geometry.book.page_log import relay
from jepa_geometry.book.parameters import ChapterError, parameters_of, validate_parameters
from jepa_geometry.book.present import present
from jepa_geometry.book.toc import (
    EXECUTED_DIR,
    Page,
    book_pages,
    book_root,
    localise,
    resolve_page,
    task_family,
)
from jepa_geometry.extensions import kappa, own_objective
from jepa_geometry.jobs import (
    WORKERS_ENV,
    check_workers,
    default_workers,
    end_with_parent,
    stop_pool,
)
from jepa_geometry.profiles import PROFILES, ProfileError, load_profile
from jepa_geometry.study.spec import available_studies, load_study
from jepa_geometry.wm.arms import objective_file
from jepa_geometry.wm.user_objective import file_sha256

RUNS_DIR = Path("runs")  # chapter runs with non-default parameters (git- and DVC-ignored)
FINGERPRINT_KEY = "jepa_geometry_fingerprint"
READS_KEY = "jepa_geometry_reads"  # the artifacts (kind/name/key) the page read
PROFILE_KEY = "jepa_geometry_profile"  # the profile an executed page was built with
GLUE_PREFIX = "application/papermill.record/"  # myst-nb's glue outputs (scrapbook format)


READ_LOGS_ENV = "JEPA_GEOMETRY_READ_LOGS"
"""The folder where the pages of one command note what their kernels read (a file a page,
named by ``$JEPA_GEOMETRY_READ_LOG``): :func:`read_logs` makes it and removes it."""

READ_LOGS_PREFIX = "jepa-geometry-reads-"
"""A read-log folder's name in the temporary directory: this prefix, then the pid of the
command that made it, then a random part (:func:`read_logs`)."""


@contextmanager
def read_logs() -> Iterator[Path]:
    """The folder of this command's read logs for the duration of the block: the one the
    command that started this process made (``$JEPA_GEOMETRY_READ_LOGS``), or a new one,
    removed when the block ends.

    Why a folder the command owns: an interrupted book ends its side-by-side pages with
    SIGTERM, and a page's own clean-up never ran, which left ``/tmp/<page>-reads-*.txt``
    behind; the command itself ends by its ``finally``. A folder whose command was killed
    with ``kill -9`` (its pid gone) is removed by the next command that makes one; nothing else
    in the temporary directory is touched."""
    given = os.environ.get(READ_LOGS_ENV)
    if given and Path(given).is_dir():
        yield Path(given)
        return
    temp = Path(tempfile.gettempdir())
    for old in temp.glob(f"{READ_LOGS_PREFIX}*"):
        pid = old.name.removeprefix(READ_LOGS_PREFIX).split("-")[0]
        mine = old.is_dir() and old.stat().st_uid == os.getuid()
        if mine and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{READ_LOGS_PREFIX}{os.getpid()}-"))
    try:
        with environ({READ_LOGS_ENV: str(folder)}):
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


READABLE = 60
"""The most characters of a run folder's readable part (the parameters other than the task
and the objective file, and the file's stem), so a path stays short; the task and the hashes
are never cut, so two runs cut alike still differ by their hash."""


def objective_version(objective: str) -> str:
    """``<stem>-<sha256[:8]>`` of an objective file: its name and the first 8 hex digits of
    the sha256 of its bytes (read now), the version a chapter run keys its folder by. The
    same digest names the file in its models' keys
    (:func:`~jepa_geometry.wm.arms.objective_key`)."""
    path = objective_file(own_objective.own_arm(objective))
    return f"{Path(path).stem[:READABLE]}-{file_sha256(path)[:8]}"


def run_folder(chapter: str, defaults: dict[str, Any], given: dict[str, Any]) -> Path | None:
    """``runs/<chapter>/<task>-[<file>-<sha>-]<other parameters>-<hash>/`` for a run whose
    parameters differ from the chapter's defaults, None for the book's own run (every
    parameter at its default).

    An experiment writes its notebook and figures there (the book's page and figures are
    never overwritten). The name is keyed by what the run computes, readably: the task
    first (a chapter with a ``task`` parameter), then the objective file's stem and the
    first 8 hex digits of its content's sha256 (a chapter with an ``objective`` parameter:
    the same ``mine.py`` with another weight is another run, so each version keeps its own
    notebook and HTML), then the other changed parameters, and a hash of all of them (the
    file by its content). Only the readable parameters are cut (:data:`READABLE`), never the
    task or the hash, so two names cut alike still differ by their hash.
    """
    changed = {k: v for k, v in sorted(given.items()) if defaults.get(k) != v}
    if not changed:
        return None
    merged = {**defaults, **given}
    task = merged.get("task")  # chapter 10 takes a list of tasks too: joined by "+"
    head = ["+".join(task) if isinstance(task, list | tuple) else str(task)] if task else []
    keyed = dict(changed)
    if "objective" in merged:
        version = objective_version(str(merged["objective"]))
        head.append(version)
        keyed["objective"] = version  # the file by its content, not its path
    rest = {k: v for k, v in changed.items() if k not in ("task", "objective")}
    words = ",".join(f"{k}={_items(v)}" for k, v in rest.items())
    slug = re.sub(r"[^A-Za-z0-9=,.+-]", "_", words)
    digest = hashlib.sha256(json.dumps(keyed, default=str).encode()).hexdigest()[:8]
    parts = [re.sub(r"[^A-Za-z0-9_.+-]", "_", h) for h in head]
    parts += [slug[:READABLE]] if slug else []
    return book_root() / RUNS_DIR / chapter / "-".join([*parts, digest])


def _items(value: Any) -> str:
    """A parameter's value in a run's name: a list as its items (``solvers=cem+icem``)."""
    return "+".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def _library_digest() -> str:
    src = Path(__file__).parents[1]  # the whole package, not only book/
    h = hashlib.sha256()
    for p in sorted(src.rglob("*")):
        if p.suffix in (".py", ".yaml") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(src)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def fingerprint(source: Path, parameters: dict[str, Any]) -> str:
    """Hash of the chapter text, its parameters and the library source."""
    h = hashlib.sha256(source.read_bytes())
    h.update(repr(sorted(parameters.items())).encode())
    h.update(_library_digest().encode())
    return h.hexdigest()[:16]


KERNEL_THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""The threads of a page kernel's own numerical work (numpy's BLAS, PyTorch's OpenMP): one,
whether the page runs alone or beside others, whatever the caller set. BLAS sums a product in
an order that depends on its thread count, so a value the kernel computes itself (chapter 1's
Monte Carlo check of ``2 λ_j``) differed in its last digits between a page rendered alone on
2 threads and two pages side by side on one each, and a glued number must not depend on how
the book was built. One thread also keeps side-by-side kernels from spinning OpenMP threads
that wait for a core the other holds (a small MLP ran 15 times slower). The build units a
kernel starts run in their own processes, one thread each
(:func:`jepa_geometry.jobs.job_threads`)."""

KERNEL_QUIET_ASYNCIO = (
    "--IPKernelApp.exec_lines=__import__('logging').getLogger('asyncio').setLevel(50)"
)
"""A line the kernel runs before the page (out of its history, binding no name): its asyncio
logs critical errors only."""


@dataclass
class ChapterRun:
    name: str
    output: Path
    seconds: float
    skipped: bool


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_chapter(
    source: Path,
    output: Path,
    parameters: dict[str, Any] | None = None,
    *,
    force: bool = True,
    timeout: int | None = None,
    progress: bool = False,
) -> ChapterRun:
    """Execute one MyST chapter with papermill and write the executed notebook to ``output``.

    Parameters are validated against the chapter's ``parameters`` cell before execution. A
    task chapter run for another task than its default is localised first
    (:func:`~jepa_geometry.book.toc.localise`).
    With ``force=False`` a chapter whose existing output has the same fingerprint is skipped.
    With ``progress``, what the kernel's build finished (one line per model, cell and stage,
    :mod:`~jepa_geometry.book.page_log`) and the kernel's stderr stream to this process's
    stderr while the page runs; the notebook keeps neither.
    """
    import nbformat
    import papermill

    source = Path(source).resolve()
    if not source.is_file():
        raise ChapterError(f"no chapter at {source}")
    name = source.stem
    nb = jupytext.read(source)
    given = dict(parameters or {})
    defaults = parameters_of(nb)
    validate_parameters(name, defaults, given)
    fp = fingerprint(source, {**defaults, **given})
    output = Path(output)
    # what a page meets in a cell minutes in, checked before its kernel starts: a bad
    # $JEPA_GEOMETRY_WORKERS, a page or a cache it may not write (a read-only checkout)
    default_workers()
    check_writable(output.parent, "the executed notebooks")
    check_writable(data_root(), "the page's artifacts")
    profile = {**defaults, **given}.get("profile")
    if profile is not None:  # the folder of its figures may exist and be another's
        check_writable(figure_folder(str(profile)), "the page's figures")
    if not force and output.is_file():
        old = nbformat.read(output, as_version=4)
        if old.metadata.get(FINGERPRINT_KEY) == fp:
            return ChapterRun(output.stem, output, 0.0, True)
    task = given.get("task", defaults.get("task"))  # a list (chapter 10): no one task's page
    if "task" in defaults and isinstance(task, str) and task != defaults["task"]:
        localise(
            nb,
            Page(output.stem, source, given),
            defaults["task"],
            task_family(book_root()),
            [p.name for p in book_pages(book_root())],
        )

    t0 = time.perf_counter()
    # the kernel inherits $JEPA_GEOMETRY_READ_LOG: every artifact it reads is noted in ``log``,
    # and $JEPA_GEOMETRY_PAGE_LOG: what its build finished, relayed here with ``progress``;
    # output_path=None: papermill keeps the notebook in memory; we write it once, atomically
    with read_logs() as folder:
        fd, log = tempfile.mkstemp(prefix=f"{name}-", suffix=".txt", dir=folder)
        os.close(fd)
        try:
            with (
                relay(_to_stderr if progress else None) as said,
                environ({READ_LOG_ENV: log, **KERNEL_THREADS, **said}),
            ):
                executed = papermill.execute_notebook(
                    nb,
                    None,
                    parameters=given,
                    cwd=str(source.parent),
                    kernel_name="python3",
                    # the kernel's own log stays quiet: its warnings were a TCP-transport note,
                    # its one error jupyter_client's SIGINT, which it sends every kernel before
                    # shutting it down ("KeyboardInterrupt caught in kernel"), and a kernel shut
                    # down while a cell ran (Ctrl-C) logged its pending asyncio tasks ("Task was
                    # destroyed but it is pending!"); a failing cell still stops the page with
                    # its traceback
                    extra_arguments=["--IPKernelApp.log_level=CRITICAL", KERNEL_QUIET_ASYNCIO],
                    progress_bar=False,
                    execution_timeout=timeout,
                    stderr_file=sys.stderr if progress else None,
                )
            reads = sorted(set(Path(log).read_text().split()))
        except papermill.PapermillExecutionError as e:
            raise ChapterError(
                f"chapter {name} failed in cell {e.exec_count}: {e.ename}: {e.evalue}"
            ) from e
        finally:
            Path(log).unlink(missing_ok=True)
    present(executed)
    executed.metadata[FINGERPRINT_KEY] = fp
    executed.metadata[READS_KEY] = reads
    executed.metadata[PROFILE_KEY] = given.get("profile", defaults["profile"])
    with atomic_path(output) as tmp:
        nbformat.write(executed, tmp)
    return ChapterRun(output.stem, output, time.perf_counter() - t0, False)


AFTER_ALL: tuple[str, ...] = ("ch08_across",)
"""Pages that read the other pages' artifacts from the cache only: they run after every other
page (in a wave of their own), so they never see a study half built."""

SWEEP_PAGE = "ch08_across"
"""The page that shows AnisoWM's κ sweep (:mod:`jepa_geometry.extensions.kappa`): the
book builds the sweep (cached, resumable) after the task pages and before this page, which
reads it from the cache only."""

LADDER_CHAPTER = "ch06_gate"
"""The chapter whose pages climb a task's ladder: more datasets and models than any other page
at every profile, so the book starts them first."""


def execution_order(pages: Sequence[Page]) -> list[Page]:
    """The order in which pages start: chapter by chapter (every page of a chapter source
    together, in reading order), the pages of :data:`LADDER_CHAPTER` first and those of
    :data:`AFTER_ALL` last.

    Side by side (``jobs`` > 1), a page that reads another's models waits on the cache's locks
    while that page trains them, holding a kernel idle: in reading order each task's geometry
    page started beside its planning page and waited for it. Chapter by chapter, a task's
    geometry page starts only after every planning page has started, and the ladder, the
    longest page, runs beside the short theory pages instead of alone at the end. The order
    changes no number (every artifact is the same whoever builds it, :mod:`jepa_geometry.jobs`).
    """
    rest = [p for p in pages if p.name not in AFTER_ALL]
    chapters = list(dict.fromkeys(p.source.stem for p in rest))  # first appearance
    chapters.sort(key=lambda stem: stem != LADDER_CHAPTER)  # stable: the ladder first
    grouped = [p for stem in chapters for p in rest if p.source.stem == stem]
    return grouped + [p for p in pages if p.name in AFTER_ALL]


def _run_page(page: Page, out: Path, profile: str, force: bool, progress: bool) -> ChapterRun:
    return run_chapter(
        page.source, out, {**page.parameters, "profile": profile}, force=force, progress=progress
    )


def _share_cores(workers: str) -> None:
    """Pool initializer of side-by-side pages: the build jobs each page's kernel may run at
    once (``$JEPA_GEOMETRY_WORKERS``, :func:`~jepa_geometry.jobs.default_workers`), unless the
    caller set it, so that the pages' pools together use the cores once (the kernels' own work
    runs on one thread: :data:`KERNEL_THREADS`); and the page's process ends with this one
    (:func:`~jepa_geometry.jobs.end_with_parent`)."""
    end_with_parent()
    os.environ.setdefault(WORKERS_ENV, workers)


def check_writable(folder: Path, what: str) -> None:
    """Stop in one line, before any work, unless this user may write ``folder`` (or create it:
    its nearest existing parent): a page in a read-only checkout would otherwise run to its end,
    minutes or hours, and then fail writing it."""
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not os.access(existing, os.W_OK):
        raise ChapterError(
            f"{what} go to {folder}, but {existing} is not writable by this user (uid "
            f"{os.getuid()}): a read-only checkout? Build in a clone you may write"
        )


@read_logs()  # its pages' read logs, removed however they end
def build_book(
    profile: str,
    *,
    force: bool = False,
    only: Iterable[str] | None = None,
    out_dir: Path | None = None,
    stream=sys.stdout,
    progress: bool = True,
    jobs: int = 1,
    kappa_sweep: bool = True,
) -> list[ChapterRun]:
    """Run every chapter of the toc with ``profile`` into ``book/chapters/`` (one line each).

    With ``jobs`` > 1 that many pages execute side by side, each in its own kernel: two pages
    that need the same dataset or model share it through the cache's per-artifact locks (the
    second waits for the first), so every number is the same as in a serial build (every model
    and planning cell is built on one thread, :mod:`jepa_geometry.jobs`). The pages of
    :data:`AFTER_ALL` run after all the others, once AnisoWM's κ sweep is built
    (:data:`SWEEP_PAGE`; ``kappa_sweep=False`` skips it, for a toc whose page does not read
    it). Side-by-side pages share the cores: each
    builds with ``cores // jobs`` jobs at once (:func:`_share_cores`). The kernels' progress
    bars stream to stderr only when pages run one at a time.
    """
    if profile not in PROFILES:
        raise ProfileError(f"unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
    jobs = check_workers(jobs)
    root = book_root()
    out_dir = out_dir or root / EXECUTED_DIR
    pages = book_pages(root)
    if only:
        wanted = set(only)
        unknown = wanted - {p.name for p in pages}
        if unknown:
            raise ChapterError(
                f"unknown page(s) {sorted(unknown)}; valid: {', '.join(p.name for p in pages)}"
            )
        pages = [p for p in pages if p.name in wanted]
    check_writable(out_dir, "the executed pages")
    n = len(pages)
    index = {p.name: i for i, p in enumerate(pages, 1)}
    runs: dict[str, ChapterRun] = {}

    def done(run: ChapterRun) -> None:
        status = "cached" if run.skipped else f"{run.seconds:7.1f} s"
        print(f"[{index[run.name]}/{n}] {run.name}: {status}", file=stream, flush=True)
        runs[run.name] = run

    total = time.perf_counter()
    ordered = execution_order(pages)
    last = [p for p in ordered if p.name in AFTER_ALL]
    for wave in ([p for p in ordered if p not in last], last):
        if kappa_sweep and any(p.name == SWEEP_PAGE for p in wave):  # after the task studies
            print(f"κ sweep (profile={profile}) ...", file=stream, flush=True)
            t0 = time.perf_counter()
            cluster.build_here(
                kappa.GRID,
                load_profile(profile),
                default_workers(),
                progress,
                say=lambda line: print(line, file=stream, flush=True),
            )
            print(f"κ sweep: {time.perf_counter() - t0:7.1f} s", file=stream, flush=True)
        if jobs == 1 or len(wave) < 2:
            for page in wave:
                print(
                    f"[{index[page.name]}/{n}] {page.name} (profile={profile}) ...",
                    file=stream,
                    flush=True,
                )
                done(_run_page(page, out_dir / f"{page.name}.ipynb", profile, force, progress))
            continue
        print(  # of the n pages the lines count to: the others run before or after the wave
            f"{len(wave)} of {n} pages, {jobs} at a time (profile={profile}) ...",
            file=stream,
            flush=True,
        )
        share = str(max(default_workers() // jobs, 1))  # each page's build jobs (jobs module)
        with ProcessPoolExecutor(
            jobs, mp_context=mp.get_context("spawn"), initializer=_share_cores, initargs=(share,)
        ) as pool:
            futures = [
                pool.submit(_run_page, page, out_dir / f"{page.name}.ipynb", profile, force, False)
                for page in wave
            ]
            try:
                for fut in as_completed(futures):
                    done(fut.result())
            except BaseException as e:  # no queued page starts; an interruption ends the
                # running ones (their kernels end with their page's process, ipykernel)
                stop_pool(pool, futures, isinstance(e, KeyboardInterrupt))
                raise
    print(f"all chapters: {time.perf_counter() - total:.1f} s", file=stream, flush=True)
    return [runs[p.name] for p in pages]


def page_workers(defaults: dict[str, Any], parameters: dict[str, Any]) -> int:
    """The build jobs a page runs at once: its ``workers`` parameter where it has one and it
    is set, else :func:`~jepa_geometry.jobs.default_workers` (one per core, or
    ``$JEPA_GEOMETRY_WORKERS``), as the page's own build reads it."""
    given = {**defaults, **parameters}.get("workers")
    return default_workers() if given is None else int(given)


def cost_statement(page: Page, parameters: dict[str, Any]) -> str | None:
    """What building the study a task page reads would cost, stated before its kernel starts
    (and alone by ``chapter --dry-run``), or None when the page reads no study.

    A task page at laptop from an empty cache trains and plans for hours; the kernel's own
    bars do not reach a log or a notebook, so without this line the page said nothing for
    that long, where ``study``, ``book`` and ``scaling`` state their cost first. The estimate
    is the grid's (:func:`~jepa_geometry.cluster.dry_run`, ``grid --dry-run``); for the
    page of a reader's own objective (a chapter with an ``objective`` parameter), of the page's
    own units (:func:`~jepa_geometry.extensions.own_objective.cost_statement`). Both count what is
    already in the cache, whichever command built it, and say the rest in core-hours and in
    wall time with the page's build jobs (:func:`page_workers`) on this machine
    (:func:`~jepa_geometry.cluster.cost_line`).

    The parameters are validated first, as the run validates them
    (:func:`~jepa_geometry.book.parameters.validate_parameters`): the statement reads them
    (a page's task, objective file and seeds), so a bad one stops in its own line naming the
    valid values, not in a traceback of the statement's arithmetic.
    """
    defaults = {**parameters_of(jupytext.read(page.source)), **page.parameters}
    validate_parameters(page.source.stem, defaults, {**page.parameters, **parameters})
    name = parameters.get("profile", defaults["profile"])
    with environ({DATA_ENV: experiment_cache(name)}):  # the cache the run would use
        return _cost(page, defaults, parameters, name)


def _cost(
    page: Page, defaults: dict[str, Any], parameters: dict[str, Any], name: str
) -> str | None:
    """:func:`cost_statement` once the cache is the run's."""
    workers = page_workers(defaults, parameters)
    if "objective" in defaults:  # chapter 10: its own units, not the task's whole study
        given = {**defaults, **parameters}
        studies = own_objective.own_studies(
            given["task"], given["objective"], load_profile(name), given["seeds"]
        )
        text = own_objective.cost_statement(studies, workers, given["solvers"])
        return f"{page.name} (profile={name}): {text}"
    task = parameters.get("task", page.task)
    if task not in available_studies():
        return None
    units = cluster.dry_run([load_study(task)], load_profile(name), reads_only=True)  # its rung
    return (
        f"{page.name} (profile={name}) reads the {task} study: "
        f"{cluster.cost_line(units, workers)} (estimated as `jepa-geometry grid --tasks "
        f"{task} --dry-run --profile {name}`)"
    )


def experiment_cache(profile: str) -> str:
    """The cache a chapter run reads and writes: ``$JEPA_GEOMETRY_DATA`` when set, else its
    profile's (:func:`~jepa_geometry.artifacts.profile_cache`), the one ``train``, ``study``
    and ``grid`` with ``--profile`` use. A run once wrote its models into its own folder
    (``runs/<...>/data``), where those commands, and its own cost line, never found them."""
    return os.environ.get(DATA_ENV) or str(profile_cache(profile))


def _experiment(chapter: str | Path, parameters: dict[str, Any]) -> tuple[Page, Path, str]:
    """A chapter run's page, notebook and cache (:func:`experiment_output`)."""
    page = resolve_page(chapter)
    defaults = {**parameters_of(jupytext.read(page.source)), **page.parameters}
    parameters = {**page.parameters, **parameters}
    validate_parameters(page.source.stem, defaults, parameters)
    folder = run_folder(page.name, defaults, parameters)
    out = book_root() / EXECUTED_DIR if folder is None else folder
    profile = str(parameters.get("profile", defaults["profile"]))
    return page, out / f"{page.name}.ipynb", experiment_cache(profile)


def experiment_output(chapter: str | Path, parameters: dict[str, Any]) -> Path:
    """The notebook :func:`run_experiment` writes for ``parameters`` (``chapter
    --dry-run`` names it without running anything)."""
    return _experiment(chapter, parameters)[1]


def run_experiment(chapter: str | Path, parameters: dict[str, Any]) -> ChapterRun:
    """Run one chapter the way a reader re-runs it (``make chapter``, ``jepa-geometry chapter``).

    With every parameter at its default this is the book's own run: the notebook goes to
    ``book/chapters/``. Otherwise the notebook and its figures go to the run folder of
    :func:`run_folder`, so the book's page is never overwritten. Either way the artifacts
    go to the run's cache (:func:`experiment_cache`): the models a run trains are those
    ``train``, ``study`` and ``grid`` find, and theirs are the run's. No artifact is ever
    overwritten there (every key names what it was computed from, the objective file's
    content included), so the run adds the reader's models beside the book's.
    """
    page, output, cache = _experiment(chapter, parameters)
    with environ({DATA_ENV: cache}):
        return run_chapter(page.source, output, {**page.parameters, **parameters}, progress=True)
