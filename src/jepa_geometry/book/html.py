"""The book's HTML: Jupyter Book's build of the executed pages, each page carrying a banner that
names the profile the pages were built with (:func:`build_html`); and one page a reader ran,
rendered beside its notebook (:func:`notebook_html`), to read in a browser without building the
book.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from jepa_geometry.artifacts import atomic_path
from jepa_geometry.book.run import GLUE_PREFIX, PROFILE_KEY
from jepa_geometry.book.toc import EXECUTED_DIR, book_root

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

    root = root or book_root()
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
    root = root or book_root()
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


UNFINISHED = Path("_build") / ".html-unfinished"
"""Marks an HTML build under way; left behind, the build was interrupted (:func:`build_html`)."""


def build_html(root: Path | None = None, quiet: bool = True) -> int:
    """Jupyter Book's HTML build of the executed pages, with the profile banner
    (:func:`html_config`); the exit status of ``jupyter-book build``.

    Sphinx builds incrementally from its saved environment, and a build interrupted while it
    writes (Ctrl-C in ``make book``'s last step) leaves that environment and the search index
    half written: the next build failed ("search index couldn't be loaded"), the one after
    left the bibliography out of the search. So :data:`UNFINISHED` marks a build under way,
    and a build that finds the mark of an interrupted one rebuilds every page from scratch
    (``--all``)."""

    root = root or book_root()
    config = html_config(root)
    mark = root / UNFINISHED
    fresh = ["--all"] if mark.exists() else []
    mark.touch()
    cmd = [
        str(Path(sys.executable).parent / "jupyter-book"),
        "build",
        ".",
        "--config",
        str(config),
        "--warningiserror",
        "--nitpick",
        "--keep-going",
        *fresh,
    ]
    status = subprocess.run([*cmd, "--quiet"] if quiet else cmd, cwd=root).returncode
    if status == 0:
        mark.unlink()
    return status


HIDDEN_TAGS = {
    "remove_cell_tags": ("remove-cell",),
    "remove_input_tags": ("remove-input", "hide-input"),
    "remove_all_outputs_tags": ("remove-output",),
}
"""The cell tags the book hides (:func:`~jepa_geometry.book.present.present` sets them), hidden
the same way in a page's own HTML."""


_GLUE_BLOCK = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{glue(?::(?P<kind>figure|md|text|any))?\}[ \t]*(?P<name>\S+)[ \t]*\n"
    r"(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.M | re.S,
)
_GLUE_ROLE = re.compile(
    r"\{glue(?::(?P<kind>text|md|any))?\}`(?P<name>[^`:]+)(?::(?P<fmt>[^`]*))?`"
)
_REF_ROLE = re.compile(r"\{(?:numref|ref|eq)\}`(?:[^`<]*<)?(?P<label>[^`>]+)>?`")


def glued_outputs(nb: Any) -> dict[str, dict[str, Any]]:
    """The values a page glued (``myst_nb.glue``), by name: their MIME bundles."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                data = out.get("data", {})
                found[name] = {k.removeprefix(GLUE_PREFIX): v for k, v in data.items()}
    return found


def _glued_text(bundle: dict[str, Any], fmt: str | None) -> str:
    text = str(bundle.get("text/plain", "")).strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if fmt:
        try:
            return format(float(text), fmt)
        except ValueError:
            pass
    return text


def _glued_block(bundle: dict[str, Any]) -> str:
    if "text/html" in bundle:
        return "".join(bundle["text/html"])
    if "image/png" in bundle:
        return f'<img src="data:image/png;base64,{"".join(bundle["image/png"]).strip()}">'
    if "text/markdown" in bundle:
        return "".join(bundle["text/markdown"])
    return f"<pre>{html.escape(_glued_text(bundle, None))}</pre>"


def resolve_glue(nb: Any) -> None:
    """Put a page's glued values where its prose shows them, in place, as MyST-NB does in the
    book: ``{glue:figure}`` blocks become the glued table or figure with its label and caption,
    ``{glue:text}`` and ``{glue:md}`` roles their values; ``{numref}`` and ``{ref}`` roles
    name their label (the figures carry their labels, not the book's numbers); the glued
    outputs leave the code cells that made them."""
    glued = glued_outputs(nb)

    def block(m: re.Match[str]) -> str:
        bundle = glued.get(m.group("name"))
        if bundle is None:
            return m.group(0)
        if m.group("kind") == "md":
            return "".join(bundle.get("text/markdown", "")) or _glued_text(bundle, None)
        options = [line for line in m.group("body").splitlines() if line.startswith(":")]
        caption = "\n".join(
            line for line in m.group("body").splitlines() if not line.startswith(":")
        ).strip()
        label = next(
            (o.split(":", 2)[2].strip() for o in options if o.startswith(":name:")),
            m.group("name"),
        )
        return f"\n{_glued_block(bundle)}\n\n**{label}.** {caption}\n"

    def role(m: re.Match[str]) -> str:
        bundle = glued.get(m.group("name"))
        if bundle is None:
            return m.group(0)
        if m.group("kind") == "md" and "text/markdown" in bundle:
            return "".join(bundle["text/markdown"])
        return _glued_text(bundle, m.group("fmt"))

    for cell in nb.cells:
        if cell.cell_type == "code":  # a glued value is shown where the prose puts it
            cell.outputs = [
                o for o in cell.get("outputs", []) if "scrapbook" not in o.get("metadata", {})
            ]
        if cell.cell_type == "markdown":
            text = _GLUE_BLOCK.sub(block, cell.source)
            text = _GLUE_ROLE.sub(role, text)
            cell.source = _REF_ROLE.sub(lambda m: f"**{m.group('label')}**", text)


def notebook_html(notebook: Path) -> Path:
    """Render an executed notebook as HTML beside it (``<name>.html`` next to ``<name>.ipynb``)
    with nbconvert: its glued values in its prose (:func:`resolve_glue`), without the cells,
    inputs and outputs the book hides (:data:`HIDDEN_TAGS`); the HTML file's path."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    resolve_glue(nb)
    exporter = HTMLExporter()
    exporter.register_preprocessor(TagRemovePreprocessor(enabled=True, **HIDDEN_TAGS), enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": notebook.stem}})
    out = notebook.with_suffix(".html")
    with atomic_path(out) as tmp:
        tmp.write_text(body, encoding="utf-8")
    return out
