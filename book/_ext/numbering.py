"""Sphinx extension: glued tables are numbered as tables, numbers restart on every chapter, and
the pages of a chapter executed once per task number theirs apart.

* A ``{glue:figure}`` whose label starts with ``tbl-`` holds a table: MyST-NB puts every glued
  output in a figure node, so Sphinx numbered it "Fig. N". Such nodes become
  :class:`glued_table`, an enumerable node of type ``table``: their captions and every
  ``{numref}`` to them read "Table N" and follow the tables' own counter.
* Sphinx numbers figures and tables across the whole book unless the table of contents is
  numbered, and a numbered Jupyter Book restarts at 1 in every part (each part is a toctree).
  After Sphinx has assigned its numbers, a page of chapter ``chNN`` numbers its figures and
  tables ``NN.1``, ``NN.2``, ... in reading order; other pages number theirs from 1.
* A chapter executed as several pages (a task chapter: one page per task) numbers them
  ``NN.k.1``, ``NN.k.2``, ..., ``k`` the page's place among the chapter's pages in reading
  order: on the Reacher page of chapter 6, the second of its pages, "Table 6.2.5" is the table
  that reads "Table 6.1.5" on the Two-Room page. No two pages share a number, so a number
  names one table of the book.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from docutils import nodes

TABLE_PREFIX = "tbl-"
CHAPTER = re.compile(r"(?:^|/)ch(\d\d)_[^/]*$")


class glued_table(nodes.figure):  # noqa: N801 (docutils names node classes in lower case)
    """A glued output that is a table: a figure node numbered as a table."""


def _visit(translator: Any, node: glued_table) -> None:
    translator.visit_figure(node)


def _depart(translator: Any, node: glued_table) -> None:
    translator.depart_figure(node)


def _tables_as_tables(app: Any, doctree: nodes.document) -> None:
    for fig in list(doctree.findall(nodes.figure)):
        if type(fig) is nodes.figure and any(i.startswith(TABLE_PREFIX) for i in fig["ids"]):
            table = glued_table(fig.rawsource, *fig.children, **fig.attributes)
            fig.replace_self(table)
            for fid in table["ids"]:  # labels and {numref} find their node through these
                doctree.ids[fid] = table


def chapter_pages(docnames: Iterable[str]) -> dict[int, list[str]]:
    """The pages of each chapter ``NN`` among ``docnames`` (the book's, in reading order)."""
    pages: dict[int, list[str]] = {}
    for docname in docnames:
        match = CHAPTER.search(docname)
        if match:
            pages.setdefault(int(match.group(1)), []).append(docname)
    return pages


def chapter_numbers(
    docname: str,
    numbers: dict[str, dict[str, tuple[int, ...]]],
    pages: Sequence[str] = (),
) -> dict[str, dict[str, tuple[int, ...]]]:
    """``numbers`` (figure type -> id -> Sphinx's number) renumbered for the page ``docname``:
    ``(NN, i)`` on a page of chapter ``chNN``, ``(NN, k, i)`` when ``pages`` (the book's pages
    in reading order) hold several pages of that chapter, ``docname`` the ``k``-th, and ``(i,)``
    elsewhere; ``i`` counts each type from 1 in Sphinx's (reading) order."""
    match = CHAPTER.search(docname)
    prefix: tuple[int, ...] = ()
    if match:
        chapter = int(match.group(1))
        siblings = chapter_pages(pages).get(chapter, [])
        prefix = (chapter,)
        if len(siblings) > 1 and docname in siblings:
            prefix = (chapter, siblings.index(docname) + 1)
    return {
        figtype: {
            fid: (*prefix, i) for i, fid in enumerate(sorted(ids, key=lambda f: ids[f]), start=1)
        }
        for figtype, ids in numbers.items()
    }


def reading_order(env: Any) -> list[str]:
    """The book's pages in reading order: its toctrees walked from the root page."""
    order: list[str] = []

    def walk(docname: str) -> None:
        if docname not in order:
            order.append(docname)
            for child in env.toctree_includes.get(docname, []):
                walk(child)

    walk(env.config.root_doc)
    return order


def _renumber(app: Any, env: Any) -> list[str]:
    changed = []
    pages = reading_order(env)
    for docname, numbers in env.toc_fignumbers.items():
        renumbered = chapter_numbers(docname, numbers, pages)
        if renumbered != numbers:
            env.toc_fignumbers[docname] = renumbered
            changed.append(docname)
    return changed


def setup(app: Any) -> dict[str, bool]:
    app.add_enumerable_node(glued_table, "table", html=(_visit, _depart))
    app.connect("doctree-read", _tables_as_tables)
    # after Sphinx's own TocTreeCollector (priority 500) has assigned its numbers
    app.connect("env-get-updated", _renumber, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
