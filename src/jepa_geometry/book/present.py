"""What a reader sees of a page: the chapter's first call (:func:`setup_chapter`: its
parameters checked and shown once, the profile loaded, the style set), its reading time, and the
executed page's plumbing hidden (:func:`present`), so a reader reads prose, results and the
library calls that make them.
"""

from __future__ import annotations

import ast
import html
import math
from typing import Any

import jupytext
from IPython.display import HTML, display
from myst_nb import glue

from jepa_geometry.artifacts import use_profile_cache
from jepa_geometry.book.display import use_for_data_frames
from jepa_geometry.book.parameters import ChapterError, parameters_of, validate_parameters
from jepa_geometry.book.plots.shared import set_theme
from jepa_geometry.book.toc import book_root
from jepa_geometry.profiles import Profile, load_profile

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
    root = book_root()
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
