"""Sphinx extension: drop JavaScript assets that an extension registered twice on a page.

Under Jupyter Book 1.0.4, sphinx-thebe and sphinx-togglebutton add their inline configuration
scripts twice; the second ``const THEBE_JS_URL = ...`` is a SyntaxError in every page's
console (found by the browser check in tests/book/test_chapters.py). Keeping the first copy of each
identical asset fixes that without touching either extension.
"""

from __future__ import annotations

from typing import Any


def _key(asset: Any) -> tuple:
    attrs = getattr(asset, "attributes", {}) or {}
    # an inline script's filename is None or "" depending on who registered it: the same asset
    return (getattr(asset, "filename", str(asset)) or None, tuple(sorted(attrs.items())))


def _dedupe(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    seen: set[tuple] = set()
    unique = []
    for asset in context.get("script_files", []):
        key = _key(asset)
        if key not in seen:
            seen.add(key)
            unique.append(asset)
    context["script_files"] = unique


def setup(app: Any) -> dict[str, bool]:
    app.connect("html-page-context", _dedupe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
