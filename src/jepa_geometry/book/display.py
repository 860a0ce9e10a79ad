"""How a page shows a data frame: blanks for missing values, numbers a reader can scan, headers
in words, and no row numbers.

pandas renders a frame with ``NaN`` where a caption promises a blank, every float with six
decimals (``74.000000``), identifiers as headers (``top8_share``) and a 0..n index that
carries nothing. :func:`table_html` renders a
frame as the pages show it, and :func:`use_for_data_frames` makes it the HTML form of every
data frame a chapter displays or glues (:func:`~jepa_geometry.book.present.setup_chapter`
calls it); the text form, which the evidence compares, is pandas' own.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from functools import partial
from html import escape
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd
from IPython import get_ipython
from pandas import get_option
from pandas.io.formats.style import Styler
from pandas.io.formats.style_render import _default_formatter

SIGNIFICANT = 4  # digits of a non-integer number


def yes_no(value: Any) -> str:
    """A truth value as a reader says it: ``yes`` or ``no`` (pandas writes ``True``/``False``)."""
    return "yes" if value else "no"


def format_number(value: Any) -> str:
    """A cell as text: missing values blank, truth values yes or no, integral numbers without
    decimals (thousands separated), others with :data:`SIGNIFICANT` significant digits;
    anything else as ``str``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool | np.bool_):
        return yes_no(value)
    if not isinstance(value, Real):
        return str(value)
    x = float(value)
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if abs(x) >= 1e9:
        return f"{x:.{SIGNIFICANT}g}"
    if x.is_integer():
        return f"{int(x):,}"
    if abs(x) >= 10**SIGNIFICANT:
        return f"{x:,.0f}"
    return f"{x:.{SIGNIFICANT}g}"


P_FLOOR = 0.001
"""The smallest p-value a page prints as a number: below it a p reads ``< 0.001``. A McNemar
test over hundreds of pooled units reaches 1e-82, which says no more than 1e-4 about the
question, and a p-value's digits beyond the third carry no meaning."""


def format_p(p: Any) -> str:
    """A p-value as a reader takes it in: three decimals, ``< 0.001`` below :data:`P_FLOOR`,
    blank when missing."""
    if p is None or not np.isfinite(float(p)):
        return ""
    return f"< {P_FLOOR:g}" if float(p) < P_FLOOR else f"{float(p):.3f}"


def p_phrase(p: Any) -> str:
    """What follows "p" in a sentence: ``= 0.012`` or ``< 0.001`` (:func:`format_p`)."""
    text = format_p(p)
    return text if text.startswith("<") else f"= {text}"


def header(name: Any) -> str:
    """A column name as a header: words, not an identifier (``top8_share`` reads
    ``top8 share``); a name a reader looks up as written kept as it is: a file's path (a
    reader's objective names its arm by its file, ``examples/objectives/variance_match.py``)
    or a dotted key of a training log (``objective.min_std``, what the reader's term returned
    as ``min_std``), and a reader's arm (:data:`AS_WRITTEN`, set as code); a number as
    :func:`format_number` writes it."""
    if not isinstance(name, str):
        return format_number(name)
    if name in AS_WRITTEN:
        return f"<code>{escape(name)}</code>"  # the reader's own name, set as code
    return name if _looked_up(name) else name.replace("_", " ")


AS_WRITTEN: set[str] = set()
"""Names a header keeps as written though they look like identifiers: a reader's arm, named by
its objective file's stem (``variance_match``) in every table, claim and checkpoint
(:func:`~jepa_geometry.book.style.display_name` adds each one it names)."""


def _looked_up(name: str) -> bool:
    """Whether ``name`` is a path or a dotted key: one word with a ``/`` or a ``.``."""
    return not any(c.isspace() for c in name) and ("/" in name or "." in name)


def _axis_name(name: Any) -> Any:
    return None if name is None else header(name)


def styler_html(styler: Styler) -> str:
    """A table a chapter styled itself, as the pages show it: its own formats, and
    :func:`format_number` wherever it gave none (:func:`_unformatted`), :func:`header` for the
    column names, yes or no in its truth-valued columns, and no row numbers."""
    for cell in _unformatted(styler):
        styler._display_funcs[cell] = format_number
    if not styler._display_funcs_index:  # row labels the chapter did not format
        styler = styler.format_index(format_number, axis=0)
    truth = [c for c in styler.data.columns if _truth_valued(styler.data[c])]
    if truth:
        styler = styler.format(format_number, subset=truth)
    if _plain_index(styler.data):
        styler = styler.hide(axis="index")
    return unbroken_intervals(styler.format_index(header, axis=1).to_html())


_INTERVAL = re.compile(r"(?<=[^\s<>])( \[[^\[\]<>]{1,40}\])")


def unbroken_intervals(html: str) -> str:
    """``html`` with every interval kept on one line: an estimate and its ``[low, high]`` (at
    most 40 characters between the brackets) joined by no-break spaces, so a narrow column
    wraps between cells' words, never inside ``+7.07 [+1.6, +12.5]``. Only the HTML changes;
    the text form the evidence compares is pandas' own."""
    return _INTERVAL.sub(lambda m: m.group(1).replace(" ", "\u00a0"), html)


def _unformatted(styler: Styler) -> list[tuple[int, int]]:
    """The cells of ``styler`` left to pandas' own number format (every float with six
    decimals, ``0.090000``). A ``Styler`` starts with :func:`format_number` everywhere
    (:func:`use_for_data_frames` makes it pandas' default formatter), but ``format({column:
    ...})`` resets every other column to pandas' six decimals; those cells hold pandas'
    formatter at its default precision, which only the private ``_display_funcs`` tells
    (pandas has no public way to ask which cells a chapter formatted). A precision the
    chapter chose (``format(precision=3)``) is kept."""
    default = get_option("styler.format.precision")

    def pandas_own(func: Any) -> bool:  # None: never formatted, pandas' default applies
        return func is None or (
            isinstance(func, partial)
            and func.func is _default_formatter
            and func.keywords.get("precision") == default
        )

    rows, cols = styler.data.shape
    funcs = styler._display_funcs
    return [(r, c) for r in range(rows) for c in range(cols) if pandas_own(funcs.get((r, c)))]


def _truth_valued(column: pd.Series) -> bool:
    """Whether every value of ``column`` that is not missing is a truth value (and one is)."""
    values = column.dropna()
    return len(values) > 0 and all(isinstance(v, bool | np.bool_) for v in values)


def _plain_index(df: pd.DataFrame) -> bool:
    """Whether the index is pandas' default 0..n-1 with no name (row numbers, nothing else)."""
    idx = df.index
    return isinstance(idx, pd.RangeIndex) and idx.name is None and idx.start == 0 and idx.step == 1


def table_html(df: pd.DataFrame) -> str:
    """``df`` as HTML the way the pages show it (:func:`format_number` for every cell,
    :func:`header` for the column names, no row numbers); deterministic, so the same frame
    renders to the same bytes."""
    uuid = hashlib.sha256(df.to_csv().encode()).hexdigest()[:8]
    df = df.rename_axis(index=_axis_name, columns=_axis_name)
    styler = df.style.format(format_number).format_index(header, axis=1).set_uuid(uuid)
    if _plain_index(df):
        styler = styler.hide(axis="index")
    else:
        styler = styler.format_index(format_number, axis=0)
    return unbroken_intervals(styler.to_html())


def use_for_data_frames() -> None:
    """Register :func:`table_html` as the HTML form of data frames and :func:`styler_html` as
    that of the tables a chapter styles itself, in the running IPython kernel (nothing outside
    one), and make :func:`format_number` with blanks for missing values the latter's default
    format."""
    pd.set_option("styler.format.na_rep", "")
    pd.set_option("styler.format.formatter", format_number)
    shell = get_ipython()
    if shell is not None:
        html = shell.display_formatter.formatters["text/html"]
        html.for_type(pd.DataFrame, table_html)
        html.for_type(Styler, styler_html)


@dataclass(frozen=True)
class Findings:
    """Short findings shown as a list, each a bold lead and its sentence.

    Glued by the page that computes them and pasted on another page (MyST-NB pastes across
    pages only text, HTML and images): its HTML is the list the reader sees, its text form
    (``- lead sentence`` per line) is what the evidence compares, so a changed number is a
    changed value (an ``IPython.display.HTML`` object's text form would hide it)."""

    items: tuple[tuple[str, str], ...]

    def __repr__(self) -> str:
        return "\n".join(f"- {lead} {text}" for lead, text in self.items)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<li><strong>{escape(lead)}</strong> {escape(text)}</li>" for lead, text in self.items
        )
        return f'<ul class="findings">{rows}</ul>'
