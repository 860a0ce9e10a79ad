"""The chapter pipeline: MyST chapters -> papermill (with a profile) -> executed notebooks -> book.

Chapters are jupytext MyST-markdown notebooks in ``chapters/``. A **page** of the book is one
execution of a chapter (:class:`Page`): ``book/chapters/<page>`` in ``_toc.yml`` is either the
chapter ``chapters/<page>.md`` itself or, for a page named ``chNN_<task>_<rest>``, the
*task chapter* ``chapters/chNN_<rest>.md`` executed with ``task=<task>``: one source, one page
per task (:func:`book_pages`). A task page other than the chapter's default task is
*localised* before it runs (:func:`localise`): its title names its task, and its labels and
links to the other pages of the same task get the task in their names, so the pages of
several tasks never share a Sphinx label. Every chapter has one cell tagged
``parameters`` holding literals only (papermill injects its overrides *after* that cell).
:func:`run_chapter` validates the requested parameters against that cell *before* any
execution -- an unknown name or a value of the wrong type fails with the valid choices --
then executes the chapter with papermill and writes the executed notebook atomically.

:func:`build_book` runs every chapter of ``_toc.yml`` (in :func:`execution_order`, one at a
time or ``jobs`` pages side by side), printing one line per chapter with its wall time, and
skips a chapter whose executed notebook already carries the same fingerprint (chapter source,
parameters and library source), so a rebuild with a warm cache only re-renders HTML.
"""

from __future__ import annotations

import ast
import hashlib
import html
import json
import math
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jupytext
import yaml
from IPython.display import HTML, display
from myst_nb import glue

from jepa_geometry.artifacts import (
    DATA_ENV,
    READ_LOG_ENV,
    READ_ONLY_ENV,
    atomic_path,
    environ,
    profile_cache,
    repo_root,
    use_profile_cache,
)
from jepa_geometry.book.display import use_for_data_frames
from jepa_geometry.book.page_log import relay
from jepa_geometry.book.parameters import check_parameter
from jepa_geometry.book.plots.shared import set_theme
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.jobs import WORKERS_ENV, check_workers, default_workers, stop_pool
from jepa_geometry.profiles import PROFILES, Profile, ProfileError, load_profile
from jepa_geometry.study import cluster, kappa, own
from jepa_geometry.study.spec import available_studies, load_study

EXECUTED_DIR = Path("book") / "chapters"
RUNS_DIR = Path("runs")  # chapter runs with non-default parameters (git- and DVC-ignored)
FINGERPRINT_KEY = "jepa_geometry_fingerprint"
READS_KEY = "jepa_geometry_reads"  # the artifacts (kind/name/key) the page read


class ChapterError(RuntimeError):
    """A chapter failed, or was asked to run with invalid parameters."""


def _root() -> Path:
    root = repo_root()
    if root is None:
        raise ChapterError("not inside the jepa-geometry repository (no data.dvc found above cwd)")
    return root


@dataclass(frozen=True)
class Page:
    """One page of the book: a chapter source executed with fixed parameters.

    ``name`` is the page (``book/chapters/<name>.ipynb``), ``source`` the chapter it executes,
    ``parameters`` what the page passes to it (``{"task": ...}`` for a task page, else empty).
    """

    name: str
    source: Path
    parameters: dict[str, Any]

    @property
    def task(self) -> str | None:
        return self.parameters.get("task")


_TASK_PAGE = re.compile(r"^(ch\d\d)_([a-z]+)_(.+)$")


def _page(name: str, root: Path) -> Page:
    """The page ``name`` of ``_toc.yml``: its own chapter, or a task chapter run for a task."""
    own = root / "chapters" / f"{name}.md"
    if own.is_file():
        return Page(name, own, {})
    m = _TASK_PAGE.match(name)
    if m and m.group(2) in TASKS:
        source = root / "chapters" / f"{m.group(1)}_{m.group(3)}.md"
        if source.is_file() and "task" in parameters_of(jupytext.read(source)):
            return Page(name, source, {"task": m.group(2)})
    raise ChapterError(
        f"_toc.yml lists book/chapters/{name} but neither chapters/{name}.md nor a task "
        f"chapter chapters/chNN_<rest>.md (a page chNN_<task>_<rest>, task one of "
        f"{', '.join(TASKS)}) exists"
    )


def book_pages(root: Path | None = None) -> list[Page]:
    """The pages listed in ``_toc.yml`` under ``book/chapters/``, in reading order."""
    root = root or _root()
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return [_page(Path(f).name, root) for f in files if Path(f).parts[:2] == EXECUTED_DIR.parts]


def chapter_sources(root: Path | None = None) -> list[Path]:
    """The chapter sources the pages of ``_toc.yml`` execute, each once, in reading order."""
    out: list[Path] = []
    for page in book_pages(root):
        if page.source not in out:
            out.append(page.source)
    return out


def resolve_page(name: str | Path, root: Path | None = None) -> Page:
    """A page from its name (``ch06_reacher_planning``), a unique prefix (``ch02``), or a
    chapter source's path or name (run with its defaults); otherwise a one-line error listing
    the valid names."""
    root = root or _root()
    pages = book_pages(root)
    path = Path(name)
    for candidate in (path, root / path):
        if candidate.suffix == ".md" and candidate.is_file():
            return Page(candidate.stem, candidate.resolve(), {})
    stem = path.stem if path.suffix == ".md" else str(name)
    sources = {p.source.stem: p.source for p in pages}
    if stem in sources:
        return Page(stem, sources[stem], {})
    matches = [p for p in pages if p.name == stem] or [p for p in pages if p.name.startswith(stem)]
    if len(matches) != 1:
        valid = sorted({p.name for p in pages} | set(sources))
        raise ChapterError(f"unknown chapter {str(name)!r}; valid: {', '.join(valid)}")
    return matches[0]


def resolve_chapter(name: str | Path, root: Path | None = None) -> Path:
    """The chapter source of :func:`resolve_page`."""
    return resolve_page(name, root).source


_LABEL = r"\b((?:tbl|fig|eq|sec|ex)-{ch}-)"


def localise(
    nb: Any, page: Page, default_task: str, family: list[str], pages: Sequence[str] = ()
) -> None:
    """Make a task page of a task chapter its own page, in place (before it executes).

    ``family`` lists the chapter prefixes (``ch06``, ``ch07``) whose sources are task chapters: in
    every markdown cell and in the cells' metadata (MyST-NB figure names), their labels
    ``tbl-ch06-…`` (figures, tables, equations, sections, exercises) become ``tbl-ch06-<task>-…``
    and their page names ``ch06_<default>_…`` become ``ch06_<task>_…``; the first heading names the
    task (``Two-Room`` becomes ``Reacher``); and in markdown, the commands and calls of the
    exercises name the page's task (``--task tworoom`` and ``"tworoom"`` become ``--task reacher``
    and ``"reacher"``). Labels of other chapters are left alone. The default task's page is never
    localised, so its labels and links stay those of the chapter. A sibling page name that ``pages``
    (the book's pages) does not hold becomes the task's one page with that prefix, if it has exactly
    one (Cube's chapter-6 page is ``ch06_cube_gate``, not ``ch06_cube_planning``).
    """
    task = page.task
    if task is None or task == default_task:
        return
    subs = []
    for ch in family:
        subs.append((re.compile(_LABEL.format(ch=ch)), rf"\g<1>{task}-"))
        subs.append((re.compile(rf"\b({ch})_{default_task}_"), rf"\g<1>_{task}_"))

    own = {ch: [p for p in pages if p.startswith(f"{ch}_{task}_")] for ch in family}

    def sibling(m: re.Match[str]) -> str:
        name, ch = m.group(0), m.group(1)
        return own[ch][0] if pages and name not in pages and len(own[ch]) == 1 else name

    sibling_name = re.compile(rf"\b({'|'.join(map(re.escape, family))})_{task}_[a-z0-9_]+")

    def fix(text: str) -> str:
        for pattern, repl in subs:
            text = pattern.sub(repl, text)
        return sibling_name.sub(sibling, text) if family else text

    commands = [(f"--task {default_task}", f"--task {task}"), (f'"{default_task}"', f'"{task}"')]

    def fix_meta(value: Any) -> Any:
        if isinstance(value, str):
            return fix(value)
        if isinstance(value, dict):
            return {k: fix_meta(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix_meta(v) for v in value]
        return value

    titled = False
    for cell in nb.cells:
        cell.metadata = type(cell.metadata)(fix_meta(dict(cell.metadata)))
        if cell.cell_type != "markdown":
            continue
        text = fix(cell.source)
        for old, new in commands:
            text = text.replace(old, new)
        if not titled and text.lstrip().startswith("# "):
            head, _, rest = text.partition("\n")
            text = head.replace(task_title(default_task), task_title(task)) + (
                "\n" + rest if rest else ""
            )
            titled = True
        cell.source = text


def _task_family(root: Path) -> list[str]:
    """The chapter prefixes (``ch06``) of the task chapters the toc runs per task."""
    return sorted({p.source.stem[:4] for p in book_pages(root) if p.task is not None})


def run_folder(chapter: str, defaults: dict[str, Any], given: dict[str, Any]) -> Path | None:
    """``runs/<chapter>/<changed parameters>-<hash>/`` for a run whose parameters differ from
    the chapter's defaults, None for the book's own run (every parameter at its default).

    An experiment writes its notebook, figures and new artifacts there and only *reads* the
    book's cache, so it can never overwrite the book's figures or its DVC-tracked data.
    """
    changed = {k: v for k, v in sorted(given.items()) if defaults.get(k) != v}
    if not changed:
        return None
    slug = re.sub(r"[^A-Za-z0-9=,.+-]", "_", ",".join(f"{k}={v}" for k, v in changed.items()))
    digest = hashlib.sha256(json.dumps(changed, default=str).encode()).hexdigest()[:8]
    return _root() / RUNS_DIR / chapter / f"{slug[:60]}-{digest}"


def parameters_of(nb: Any) -> dict[str, Any]:
    """Names and default values of the cell tagged ``parameters`` (literals only)."""
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ChapterError(
            f"a chapter needs exactly one cell tagged 'parameters', found {len(cells)}"
        )
    params: dict[str, Any] = {}
    for node in ast.parse(cells[0].source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            raise ChapterError("the parameters cell may only hold 'name = literal' lines")
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            raise ChapterError("the parameters cell may only hold 'name = literal' lines")
        try:
            params[target.id] = ast.literal_eval(node.value)
        except ValueError as e:
            raise ChapterError(f"parameter {target.id!r} is not a literal: {e}") from e
    if "profile" not in params:
        raise ChapterError("the parameters cell must define 'profile'")
    return params


def chapter_listing(root: Path | None = None, width: int = 96) -> str:
    """Every chapter with its parameters and their defaults, and the pages it is executed as:
    what ``jepa-geometry chapter --help`` lists."""
    root = root or _root()
    pages: dict[Path, list[Page]] = {}
    for page in book_pages(root):
        pages.setdefault(page.source, []).append(page)
    lines = ["chapters, their parameters (defaults) and the pages they are executed as:"]
    for source, its in pages.items():
        params = parameters_of(jupytext.read(source))
        names = ", ".join(p.name for p in its if p.name != source.stem)
        lines.append(f"  {source.stem}" + (f"  (pages: {names})" if names else ""))
        text = " ".join(f"{k}={v!r}" for k, v in params.items())
        lines += textwrap.wrap(text, width, initial_indent=" " * 6, subsequent_indent=" " * 6)
    lines.append(
        "a parameter is set with -p NAME=VALUE; profile=smoke reads and writes the smoke "
        "cache (.cache/data-smoke), as `make book PROFILE=smoke` does"
    )
    return "\n".join(lines)


def _same_type(default: Any, value: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float)
    if isinstance(default, list | tuple):
        return isinstance(value, list | tuple)
    if default is None:
        return True
    return isinstance(value, type(default))


def validate_parameters(name: str, defaults: dict[str, Any], given: dict[str, Any]) -> None:
    """Fail early on an unknown parameter, a wrong type, a value outside its rule
    (:mod:`jepa_geometry.book.parameters`), or an unknown profile."""
    for key, value in given.items():
        if key not in defaults:
            raise ChapterError(
                f"{name}: unknown parameter {key!r}; valid: {', '.join(sorted(defaults))}"
            )
        if not _same_type(defaults[key], value):
            raise ChapterError(
                f"{name}: parameter {key!r} must be {type(defaults[key]).__name__} "
                f"(default {defaults[key]!r}), got {value!r}"
            )
        try:
            check_parameter(name, key, value)
        except ValueError as e:
            raise ChapterError(str(e)) from None
    profile = given.get("profile", defaults["profile"])
    if profile not in PROFILES:
        raise ProfileError(f"{name}: unknown profile {profile!r}; valid: {', '.join(PROFILES)}")


_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})
_LITERAL_TYPES = (int, float, str, bool, list, tuple, dict, type(None))


def setup_chapter(namespace: dict[str, Any], chapter: str) -> Profile:
    """First call of every chapter, right after its parameters cell: validate and load the profile.

    ``namespace`` is the notebook's ``globals()``. The chapter's declared parameters are read
    from its own ``parameters`` cell (``chapters/<chapter>.md``), so a name injected by
    papermill that the chapter does not declare, a value of the wrong type, or an unknown
    profile fails here, before any work, naming the valid choices. Profile overrides are the
    declared parameters whose names are dotted profile keys with ``__`` for ``.``
    (``train__steps = 200`` overrides ``train.steps``).
    """
    root = _root()
    source = root / "chapters" / f"{chapter}.md"
    if not source.is_file():
        raise ChapterError(f"no chapter {chapter!r} at {source}")
    nb = jupytext.read(source)
    defaults = parameters_of(nb)
    given = {
        k: v
        for k, v in namespace.items()
        if not k.startswith("_") and k not in _IPYTHON_NAMES and isinstance(v, _LITERAL_TYPES)
    }
    validate_parameters(chapter, defaults, given)
    overrides = {k.replace("__", "."): v for k, v in given.items() if "__" in k}

    set_theme(inline=True)
    use_for_data_frames()
    profile = load_profile(given.get("profile", defaults["profile"]), overrides)
    use_profile_cache(profile.name)  # a kernel started by hand (JupyterLab) picks it too
    display(HTML(parameters_html({**defaults, **given}, defaults)))
    glue("reading_minutes", reading_minutes(nb), display=False)
    return profile


READING_WPM = 200
"""Words a reader of technical prose takes in per minute (formulas and tables read slower,
figures faster: an estimate for planning a class, not a measurement)."""


def reading_minutes(nb: Any) -> int:
    """Minutes to read a chapter's prose: the words of its markdown cells at
    :data:`READING_WPM`, rounded up (computed from the source, so every build agrees)."""
    words = sum(len(c.source.split()) for c in nb.cells if c.cell_type == "markdown")
    return max(1, math.ceil(words / READING_WPM))


def parameters_html(values: dict[str, Any], defaults: dict[str, Any]) -> str:
    """A page's parameters as a reader sees them once, near its top: the profile in the summary
    line, every parameter in a folded table, those changed from the chapter's defaults first
    and marked."""
    changed = [k for k in values if values[k] != defaults.get(k)]
    order = changed + [k for k in values if k not in changed]
    rows = "".join(
        f"<tr><td><code>{html.escape(k)}</code></td><td><code>{html.escape(repr(values[k]))}"
        f"</code></td><td>{'changed' if k in changed else 'default'}</td></tr>"
        for k in order
    )
    n = len([k for k in changed if k != "profile"])
    summary = f"This build's parameters: profile <b>{html.escape(str(values['profile']))}</b>, " + (
        f"{n} changed from the chapter's defaults" if n else "the chapter's defaults"
    )
    return (
        f'<details class="build-parameters"><summary>{summary}</summary>'
        "<table><thead><tr><th>parameter</th><th>value</th><th></th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details>"
    )


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


PROFILE_KEY = "jepa_geometry_profile"  # the profile an executed page was built with
PLUMBING = "remove-cell"


def _statements(source: str) -> list[ast.stmt] | None:
    try:
        return ast.parse(source).body
    except SyntaxError:  # IPython magics: not plumbing
        return None


def _is_glue(node: ast.stmt) -> bool:
    call = node.value if isinstance(node, ast.Expr) else None
    return isinstance(call, ast.Call) and getattr(call.func, "id", None) == "glue"


def _glues_quietly(node: ast.stmt) -> bool:
    """A ``glue(..., display=False)`` statement: it hands a value to the prose, shows nothing."""
    return _is_glue(node) and any(
        k.arg == "display" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in node.value.keywords  # type: ignore[attr-defined]
    )


def _lines_of(node: ast.stmt) -> set[int]:
    return set(range(node.lineno - 1, node.end_lineno or node.lineno))


def _without_quiet_glue(source: str, body: list[ast.stmt]) -> str:
    """``source`` without its quiet ``glue`` statements (their whole lines), the rest as
    written; a line a quiet glue shares with another statement stays."""
    others = set().union(*(_lines_of(n) for n in body if not _glues_quietly(n)))
    drop = set().union(*(_lines_of(n) for n in body if _glues_quietly(n))) - others
    lines = source.splitlines()
    return "\n".join(line for i, line in enumerate(lines) if i not in drop).strip("\n")


def present(nb: Any) -> None:
    """Tag an executed page's plumbing so that a reader sees prose, results and the library
    calls that make them, in place (MyST-NB hides what these tags name).

    Removed: the parameters cell and papermill's injected one (:func:`setup_chapter` shows the
    build's parameters once), cells that only import, and cells that only ``glue`` values
    into the prose without showing anything. The input of the cell that calls
    :func:`setup_chapter` is removed and its output (the parameters) kept. A cell that computes
    and glues shows its computation without its ``glue(..., display=False)`` lines (the
    chapter's source keeps them; the executed page is what a reader reads).
    """
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = list(cell.metadata.get("tags", []))
        body = _statements(cell.source)
        if {"parameters", "injected-parameters"} & set(tags):
            tags.append(PLUMBING)
        elif body and all(isinstance(n, ast.Import | ast.ImportFrom) for n in body):
            tags.append(PLUMBING)
        elif body and all(_is_glue(n) for n in body) and not cell.get("outputs"):
            tags.append(PLUMBING)
        elif "setup_chapter(" in cell.source:
            tags.append("remove-input")
        elif body and any(_glues_quietly(n) for n in body):
            cell.source = _without_quiet_glue(cell.source, body)
        if tags:
            cell.metadata["tags"] = list(dict.fromkeys(tags))


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
    task chapter run for another task than its default is localised first (:func:`localise`).
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
    if not force and output.is_file():
        old = nbformat.read(output, as_version=4)
        if old.metadata.get(FINGERPRINT_KEY) == fp:
            return ChapterRun(output.stem, output, 0.0, True)
    if "task" in defaults and given.get("task", defaults["task"]) != defaults["task"]:
        localise(
            nb,
            Page(output.stem, source, given),
            defaults["task"],
            _task_family(_root()),
            [p.name for p in book_pages(_root())],
        )

    t0 = time.perf_counter()
    fd, log = tempfile.mkstemp(prefix=f"{name}-reads-", suffix=".txt")
    os.close(fd)
    # the kernel inherits $JEPA_GEOMETRY_READ_LOG: every artifact it reads is noted in ``log``,
    # and $JEPA_GEOMETRY_PAGE_LOG: what its build finished, relayed here with ``progress``;
    # output_path=None: papermill keeps the notebook in memory; we write it once, atomically
    try:
        with relay(_to_stderr if progress else None) as said, environ({READ_LOG_ENV: log, **said}):
            executed = papermill.execute_notebook(
                nb,
                None,
                parameters=given,
                cwd=str(source.parent),
                kernel_name="python3",
                # the kernel's own log stays quiet: its warnings were a TCP-transport note, its
                # one error jupyter_client's SIGINT, which it sends every kernel before shutting
                # it down ("KeyboardInterrupt caught in kernel"), and a kernel shut down while
                # a cell ran (Ctrl-C) logged its pending asyncio tasks ("Task was destroyed but
                # it is pending!"); a failing cell still stops the page with its traceback
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
"""The page that shows AnisoWM's κ sweep (:mod:`jepa_geometry.study.kappa`): the book builds
the sweep (cached, resumable) after the task pages and before this page, which reads it from
the cache only."""

LADDER_CHAPTER = "ch06_gate"
"""The chapter whose pages climb a task's ladder: more datasets and models than any other page
at every profile (smoke: the Cube gate page took 84 s of a 6 min 44 s book)."""


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
    once (``$JEPA_GEOMETRY_WORKERS``, :func:`~jepa_geometry.jobs.default_workers`) and the
    OpenMP threads of the kernel's own PyTorch work (``$OMP_NUM_THREADS``), unless the caller
    set them. Kernels with one thread per core each would oversubscribe the cores, and OpenMP
    threads that spin waiting for a core the other kernel holds ran a small MLP 15 times
    slower (two 2-thread processes on the 2-core machine)."""
    os.environ.setdefault(WORKERS_ENV, workers)
    os.environ.setdefault("OMP_NUM_THREADS", workers)


def check_writable(folder: Path, what: str) -> None:
    """Stop in one line, before any work, unless this user may write ``folder`` (or create it:
    its nearest existing parent). A read-only checkout used to run a page to its end, minutes
    or hours, then fail writing it."""
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not os.access(existing, os.W_OK):
        raise ChapterError(
            f"{what} go to {folder}, but {existing} is not writable by this user (uid "
            f"{os.getuid()}): a read-only checkout? Build in a clone you may write"
        )


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
    root = _root()
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
            kappa.build_sweep(
                load_profile(profile),
                kappa.KAPPA_SWEEP,
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


def cost_statement(page: Page, parameters: dict[str, Any]) -> str | None:
    """What building the study a task page reads would cost, stated before its kernel starts,
    or None when the page reads no study or the cache holds all of it.

    A task page at laptop from an empty cache trains and plans for hours; the kernel's own
    bars do not reach a log or a notebook, so without this line the page said nothing for
    that long, where ``study``, ``book`` and ``scaling`` state their cost first. The estimate
    is the grid's (:func:`~jepa_geometry.study.cluster.dry_run`, ``grid --dry-run``); for the
    page of a reader's own objective (a chapter with an ``objective`` parameter), of the page's
    own units (:func:`~jepa_geometry.study.own.cost_statement`).
    """
    defaults = parameters_of(jupytext.read(page.source))
    name = parameters.get("profile", defaults["profile"])
    if "objective" in defaults:  # chapter 10: its own units, not the task's whole study
        given = {**defaults, **parameters}
        spec = own.own_spec(given["task"], given["objective"])
        cfg = own.with_seeds(spec.profile(load_profile(name)), given["seeds"])
        todo = own.cost_statement(spec, cfg)
        return None if todo is None else f"{page.name} (profile={name}): {todo}"
    task = parameters.get("task", page.task)
    if task not in available_studies():
        return None
    spec = load_study(task)
    units = cluster.dry_run([spec], spec.profile(load_profile(name)))
    todo = units[~units["cached"]]
    if todo.empty:
        return None
    return (
        f"{page.name} (profile={name}) reads the {task} study: {len(todo)} of its {len(units)} "
        f"units are not in the cache, about {todo['hours'].sum():.1f} h of work to build them "
        f"first (estimated as `jepa-geometry grid --tasks {task} --dry-run --profile {name}`)"
    )


def run_experiment(chapter: str | Path, parameters: dict[str, Any]) -> ChapterRun:
    """Run one chapter the way a reader re-runs it (``make chapter``, ``jepa-geometry chapter``).

    With every parameter at its default this is the book's own run: the notebook goes to
    ``book/chapters/`` and artifacts to the book's cache. Otherwise everything goes to the run
    folder of :func:`run_folder` (notebook, figures, new artifacts under ``data/`` there), and
    the cache of the run's profile (:func:`~jepa_geometry.artifacts.profile_cache`, unless
    ``$JEPA_GEOMETRY_DATA`` names one) is only read (``$JEPA_GEOMETRY_READ_ONLY``), so cached
    models are reused.
    """
    page = resolve_page(chapter)
    source = page.source
    defaults = {**parameters_of(jupytext.read(source)), **page.parameters}
    parameters = {**page.parameters, **parameters}
    validate_parameters(source.stem, defaults, parameters)
    folder = run_folder(page.name, defaults, parameters)
    profile = str(parameters.get("profile", defaults["profile"]))
    cache = os.environ.get(DATA_ENV) or str(profile_cache(profile))  # the run's profile's cache
    if folder is None:
        with environ({DATA_ENV: cache}):
            return run_chapter(
                source, _root() / EXECUTED_DIR / f"{page.name}.ipynb", parameters, progress=True
            )
    read_only = os.pathsep.join(p for p in (cache, os.environ.get(READ_ONLY_ENV)) if p)
    with environ({READ_ONLY_ENV: read_only, DATA_ENV: str(folder / "data")}):
        return run_chapter(source, folder / f"{page.name}.ipynb", parameters, progress=True)


BANNERS: dict[str, str] = {
    "smoke": "<b>Smoke build.</b> These pages were built at the <b>smoke</b> profile, which "
    "tests the code with a few episodes and minutes of training: their numbers are meaningless. "
    "The book's results are the laptop profile's.",
    "laptop": "These pages were built at the <b>laptop</b> profile: models trained for about "
    "1 % of the papers' steps on 2 CPU cores. Every number is this build's, at that scale.",
    "paper": "These pages were built at the <b>paper</b> profile: the papers' settings, on a GPU.",
}
"""The banner every page carries, by the profile that built the pages."""
BUILD_CONFIG = Path("_build") / "_config.yml"


def page_profiles(root: Path | None = None) -> dict[str, str]:
    """The profile each executed page (``book/chapters/*.ipynb``) was built with; pages executed
    before the profile was recorded are left out."""
    import nbformat

    root = root or _root()
    out = {}
    for path in sorted((root / EXECUTED_DIR).glob("*.ipynb")):
        profile = nbformat.read(path, as_version=4).metadata.get(PROFILE_KEY)
        if profile:
            out[path.stem] = profile
    return out


def banner(profiles: dict[str, str]) -> str:
    """:data:`BANNERS` for the profile of the pages, or a warning naming each profile's pages
    when they were built with several."""
    found = sorted(set(profiles.values()))
    if len(found) == 1:
        return BANNERS[found[0]]
    if not found:
        return "These pages have not been executed by <code>make book</code>."
    parts = "; ".join(
        f"<b>{p}</b>: {', '.join(sorted(k for k, v in profiles.items() if v == p))}" for p in found
    )
    return f"<b>Mixed build.</b> These pages were built at different profiles ({parts})."


def html_config(root: Path | None = None) -> Path:
    """Write ``_build/_config.yml``: the book's ``_config.yml`` with the banner of
    :func:`banner` on every page, and return its path (``jupyter-book build --config``)."""
    root = root or _root()
    cfg = yaml.safe_load((root / "_config.yml").read_text())
    cfg.setdefault("html", {})["announcement"] = banner(page_profiles(root))
    local = cfg.get("sphinx", {}).get("local_extensions") or {}
    for name, path in local.items():  # Jupyter Book reads these relative to the config file
        local[name] = str((root / path).resolve())
    out = root / BUILD_CONFIG
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        tmp.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
    return out


def build_html(root: Path | None = None, quiet: bool = True) -> int:
    """Jupyter Book's HTML build of the executed pages, with the profile banner
    (:func:`html_config`); the exit status of ``jupyter-book build``."""

    root = root or _root()
    config = html_config(root)
    cmd = [
        str(Path(sys.executable).parent / "jupyter-book"),
        "build",
        ".",
        "--config",
        str(config),
        "--warningiserror",
        "--nitpick",
        "--keep-going",
    ]
    return subprocess.run([*cmd, "--quiet"] if quiet else cmd, cwd=root).returncode
