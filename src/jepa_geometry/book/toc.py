"""The book's table of contents: its pages, and the chapters they execute.

Chapters are jupytext MyST-markdown notebooks in ``chapters/``. A **page** of the book is one
execution of a chapter (:class:`Page`): ``book/chapters/<page>`` in ``_toc.yml`` is either the
chapter ``chapters/<page>.md`` itself or, for a page named ``chNN_<task>_<rest>``, the
*task chapter* ``chapters/chNN_<rest>.md`` executed with ``task=<task>``: one source, one page
per task (:func:`book_pages`). A task page other than the chapter's default task is
*localised* before it runs (:func:`localise`): its title names its task, and its labels and
links to the other pages of the same task get the task in their names, so the pages of
several tasks never share a Sphinx label.
"""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jupytext
import yaml

from jepa_geometry.artifacts import repo_root
from jepa_geometry.book.parameters import ChapterError, parameters_of
from jepa_geometry.envs import TASKS, task_title

EXECUTED_DIR = Path("book") / "chapters"
"""Where the executed pages are written, relative to the repository (``_toc.yml`` lists them)."""


def book_root() -> Path:
    """The repository the book is built in (the folder holding ``data.dvc`` above the working
    directory): its ``_toc.yml``, ``chapters/`` and executed pages are found from there."""
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
    root = root or book_root()
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


def resolve_page(name: str | Path, root: Path | None = None) -> Page:
    """A page from its name (``ch06_reacher_planning``), a unique prefix (``ch02``), or a
    chapter source's path or name (run with its defaults); otherwise a one-line error listing
    the valid names."""
    root = root or book_root()
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


_SECTION = re.compile(r"^\((sec-[a-z0-9-]+)\)=\n#+ +(.+?) *$", re.MULTILINE)


def sections(root: Path | None = None) -> dict[str, tuple[Path, str]]:
    """Every labelled section of the chapters: its MyST label -> (the chapter source, the
    section's title as written)."""
    return _sections(root or book_root())


@functools.cache
def _sections(root: Path) -> dict[str, tuple[Path, str]]:
    out: dict[str, tuple[Path, str]] = {}
    for source in sorted((root / "chapters").glob("*.md")):
        for m in _SECTION.finditer(source.read_text()):
            out[m.group(1)] = (source, m.group(2))
    return out


@functools.cache
def _default_task(source: Path) -> str | None:
    return parameters_of(jupytext.read(source)).get("task")


@functools.cache
def _page_names(root: Path) -> dict[str, Page]:
    return {p.name: p for p in book_pages(root)}


def section_link(label: str, task: str | None = None, root: Path | None = None) -> str:
    """An HTML link to the section ``label`` of the chapters (``sec-ch07-probes``), on
    ``task``'s page when the chapter is a task chapter (its default task's page otherwise):
    the page's name and the section's title as text, ``<page>.html#<label>`` as target (every
    page lies in ``book/chapters``; the label as localised on that page, :func:`localise`).
    Empty for an empty label; a label no chapter has is an error naming it, so a renamed or
    deleted section fails the page that points at it, not the reader who follows the link."""
    if not label:
        return ""
    root = root or book_root()
    found = _sections(root)
    if label not in found:
        raise ChapterError(f"no chapter section is labelled {label!r}; labels: {', '.join(found)}")
    source, title = found[label]
    default = _default_task(source)
    page = source.stem
    if default is not None:
        task = task if task in TASKS else default
        prefix, rest = page.split("_", 1)
        page = f"{prefix}_{task}_{rest}"
        if task != default:
            label = label.replace(f"sec-{prefix}-", f"sec-{prefix}-{task}-", 1)
    names = _page_names(root)
    if page not in names:  # a task without this page (Cube plans no cells): the title alone
        return title
    return f'<a href="{page}.html#{label}">{page_title(names[page])}: {title}</a>'


def page_title(page: Page) -> str:
    """A page's short name: ``chapter 7 (Reacher)`` for a task page, ``chapter 8`` otherwise."""
    number = int(page.name[2:4])
    return f"chapter {number} ({task_title(page.task)})" if page.task else f"chapter {number}"


def task_family(root: Path) -> list[str]:
    """The chapter prefixes (``ch06``) of the task chapters the toc runs per task."""
    return sorted({p.source.stem[:4] for p in book_pages(root) if p.task is not None})


def chapter_listing(root: Path | None = None, width: int = 96) -> str:
    """Every chapter with its parameters and their defaults, and the pages it is executed as:
    what ``jepa-geometry chapter --help`` lists."""
    root = root or book_root()
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
