"""A papermill I/O handler so ``papermill chapters/<chapter>.md out.ipynb -p ...`` works.

Papermill only reads JSON notebooks; our chapters are MyST-markdown text notebooks. This
handler is registered (entry point ``papermill.io``) for paths starting with ``chapters/``:
it reads ``.md`` chapters through jupytext and hands everything else to papermill's local
file handler.
"""

from __future__ import annotations

from papermill.iorw import LocalHandler


class ChapterHandler(LocalHandler):
    def read(self, path: str) -> str:
        if path.endswith(".md"):
            import jupytext
            import nbformat

            return nbformat.writes(jupytext.read(path))
        return super().read(path)


chapter_handler = ChapterHandler()
