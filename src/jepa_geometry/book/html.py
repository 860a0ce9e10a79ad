"""The book's HTML: Jupyter Book's build of the executed pages, each page carrying a banner that
names the profile the pages were built with (:func:`build_html`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from jepa_geometry.artifacts import atomic_path
from jepa_geometry.book.run import PROFILE_KEY
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


def build_html(root: Path | None = None, quiet: bool = True) -> int:
    """Jupyter Book's HTML build of the executed pages, with the profile banner
    (:func:`html_config`); the exit status of ``jupyter-book build``."""

    root = root or book_root()
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
