"""Committed evidence against what was computed now: *identical*, *equal* or *different*.

Two builds of the same code on different CPUs agree on every discrete outcome but not on every
bit of every float: the models train in fp32, and an AMD EPYC and an Intel Xeon sum in
different orders. :func:`compare_files` (a rebuilt payload file against the committed one) and
:func:`compare_values` (glued values, JSON-like data) therefore report one of three outcomes:

* *identical*: bit for bit the same;
* *equal*: every discrete value the same (successes, steps, plans, chosen units, labels,
  strings, integers, truth values) and every float within :data:`FLOAT_TOLERANCE`;
* *different*: anything else, one line per finding, naming where and giving committed and now.

A number inside a text (a glued value, a table's HTML, a string column) counts as a number:
the text around the numbers must be the same, an integer exactly, a decimal within the
tolerance. The largest float difference is kept (:attr:`Comparison.largest`), so an *equal*
says how close it came to its tolerance.
"""

from __future__ import annotations

import filecmp
import json
import math
import pickle
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

IDENTICAL, EQUAL, DIFFERENT = "identical", "equal", "different"


@dataclass(frozen=True)
class Tolerance:
    """How far apart two floats may be and still count as equal: ``|a - b|`` at most
    ``abs``, or at most ``rel`` times the larger of ``|a|`` and ``|b|`` (:func:`math.isclose`)."""

    rel: float
    abs: float

    def allowed(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The largest difference allowed between ``a`` and ``b``, element by element."""
        return np.maximum(self.abs, self.rel * np.maximum(np.abs(a), np.abs(b)))

    def __str__(self) -> str:
        return f"relative {self.rel:g} or absolute {self.abs:g}"


FLOAT_TOLERANCE = Tolerance(rel=1e-4, abs=5e-5)
"""The tolerance of every float the evidence comparisons meet, stated once.

Models train and plan in fp32 everywhere; builds of the same code on an AMD EPYC and on an
Intel Xeon differ by about 1e-6 relative in training losses and by up to 1.5e-5 in planning
distances, and glued values computed from them differ in their last digits
(``0.23888460289220817`` against ``0.2388846028922082``). The relative bound is a hundred
times the losses' difference; the absolute one, about three times the distances', serves
values near zero, where a relative bound means nothing (a difference of two distances keeps
their absolute error). A number a page *prints* is also equal within one unit of its last
printed digit (:func:`printed_unit`): rounding to four significant digits turns a difference
of 1e-7 into one of 1e-4 when it crosses a rounding boundary. A change of the code moves
results by far more, and moves discrete outcomes too, which must match exactly.
"""


def printed_unit(*texts: str) -> float:
    """One unit in the last printed digit of the coarser of ``texts`` (decimal numbers as a
    page prints them): ``"+7.07"`` -> 0.01, ``"0.000389"`` -> 1e-06, ``"1.2e-05"`` -> 1e-06;
    a full-precision float's unit is far below :data:`FLOAT_TOLERANCE`, which then decides."""
    units = []
    for t in texts:
        mantissa, _, exponent = t.lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        units.append(10.0 ** (int(exponent or 0) - decimals))
    return max(units)


SHOWN = 20
"""Findings printed per comparison (a rebuilt file, a diff) before the rest is counted: a
changed training log differs at every step, and one screen tells what differs."""

NUMBER = re.compile(r"((?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
"""A number in a text: digits with an optional sign, decimals and exponent, not glued to a
word before it (``x30``, ``row0`` and ``top8`` are text, so they compare exactly)."""

TABLE_ID = re.compile(r"\bT_[0-9a-f]+(?=[_\" ])")
"""A page table's HTML id: a hash of the table's data (:func:`~jepa_geometry.book.display.
table_html`), so it changes with the last digit of any cell; the cells are compared instead."""


@dataclass(frozen=True)
class Largest:
    """The float difference nearest its tolerance: absolute, relative (to the larger of the
    two values), the share of the tolerance it uses, and where."""

    abs: float
    rel: float
    share: float
    where: str

    def __str__(self) -> str:
        return f"largest difference {self.abs:.2g} (relative {self.rel:.2g}) at {self.where}"


@dataclass
class Comparison:
    """What a comparison found: whether every byte was the same, one line per difference
    (empty: identical or equal) and the largest float difference (None: no float differed)."""

    identical: bool = True
    differences: list[str] = field(default_factory=list)
    largest: Largest | None = None
    uncompared: list[str] = field(default_factory=list)
    """Files whose bytes are not the committed ones and whose committed copy is nowhere here
    (a model's weights, which the evidence does not hold, before ``dvc pull``): their values
    cannot be compared, so they count as neither equal nor different, and the summary names
    them."""

    @property
    def outcome(self) -> str:
        """:data:`IDENTICAL`, :data:`EQUAL` or :data:`DIFFERENT`: what the values that could be
        compared show (:attr:`uncompared` names the rest)."""
        if self.differences:
            return DIFFERENT
        return IDENTICAL if self.identical and not self.uncompared else EQUAL

    def shown(self) -> list[str]:
        """The first :data:`SHOWN` differences, and a line counting the rest."""
        rest = len(self.differences) - SHOWN
        return self.differences[:SHOWN] + ([f"... and {rest} more"] if rest > 0 else [])

    def summary(self, subject: str, tolerance: Tolerance = FLOAT_TOLERANCE) -> str:
        """One line: the outcome for ``subject`` (plural: "the glued values of 18 pages")."""
        if self.outcome == IDENTICAL:
            return f"identical: {subject} are the committed ones, bit for bit"
        if self.outcome == EQUAL:
            largest = f"; {self.largest}" if self.largest else ""
            if not self.uncompared:
                return (
                    f"equal: {subject} match the committed ones, every discrete value exactly "
                    f"and every float within {tolerance}{largest}"
                )
            return (
                f"equal: the others of {subject} match the committed ones, every discrete "
                f"value exactly and every float within {tolerance}{largest}; not compared: "
                f"{', '.join(self.uncompared)} (bytes not the committed ones, and no committed "
                "copy here to compare values with: `dvc pull` fetches it)"
            )
        n = len(self.differences)
        return f"different: {subject} differ from the committed ones ({n} finding(s) above)"


def combine(parts: Iterable[Comparison]) -> Comparison:
    """One comparison of several: identical if each is, every difference, the largest float
    difference of all."""
    out = Comparison()
    for part in parts:
        out.identical &= part.identical
        out.differences += part.differences
        out.uncompared += part.uncompared
        if part.largest and (out.largest is None or part.largest.share > out.largest.share):
            out.largest = part.largest
    return out


class _Walk:
    """A comparison under way: committed values against those of now, finding by finding."""

    def __init__(self, tolerance: Tolerance) -> None:
        self.tolerance = tolerance
        self.found = Comparison()

    def differ(self, where: str, what: str) -> None:
        self.found.identical = False
        self.found.differences.append(f"{where}: {what}")

    def values(self, was: Any, now: Any, where: str) -> None:
        """Compare two values of any kind the artifacts hold: mappings key by key, sequences
        item by item, arrays and tensors element by element, texts by :meth:`text`, truth
        values and integers exactly, floats within the tolerance."""
        if isinstance(was, torch.Tensor) and isinstance(now, torch.Tensor):
            was, now = _numpy(was), _numpy(now)
        if isinstance(was, np.ndarray) and isinstance(now, np.ndarray):
            self.arrays(was, now, where)
        elif isinstance(was, dict) and isinstance(now, dict):
            for key in [k for k in was if k not in now]:
                self.differ(f"{where}/{key}", f"missing now (committed {_short(was[key])})")
            for key in [k for k in now if k not in was]:
                self.differ(f"{where}/{key}", f"new, not committed (now {_short(now[key])})")
            for key in [k for k in was if k in now]:
                self.values(was[key], now[key], f"{where}/{key}")
        elif isinstance(was, list | tuple) and isinstance(now, list | tuple):
            if len(was) != len(now):
                self.differ(where, f"{len(was)} items committed, {len(now)} now")
            else:
                for i, (a, b) in enumerate(zip(was, now, strict=True)):
                    self.values(a, b, f"{where}[{i}]")
        elif isinstance(was, str) and isinstance(now, str):
            self.text(was, now, where)
        elif _is_int(was) and _is_int(now):
            if int(was) != int(now):
                self.differ(where, f"committed {was}, now {now}")
        elif _is_real(was) and _is_real(now):
            self.arrays(np.asarray(was, np.float64), np.asarray(now, np.float64), where)
        elif type(was) is not type(now) or was != now:
            self.differ(where, f"committed {_short(was)}, now {_short(now)}")

    def text(self, was: str, now: str, where: str) -> None:
        """Two texts: the same words and signs between their numbers, the numbers compared
        as numbers (an integer exactly, a decimal within the tolerance)."""
        if was == now:
            return
        self.found.identical = False
        a, b = NUMBER.split(TABLE_ID.sub("T_", was)), NUMBER.split(TABLE_ID.sub("T_", now))
        for i in range(0, max(len(a), len(b)), 2):  # the text between numbers: even places
            wa, wb = a[i] if i < len(a) else None, b[i] if i < len(b) else None
            if wa != wb:
                self.differ(where, f"text committed {_snippet(wa, wb)}, now {_snippet(wb, wa)}")
                return
        for k, (x, y) in enumerate(zip(a[1::2], b[1::2], strict=True), start=1):
            if any(c in x + y for c in ".eE"):
                self.arrays(
                    np.asarray(float(x)),
                    np.asarray(float(y)),
                    f"{where} (number {k})",
                    x,
                    y,
                    floor=printed_unit(x, y),
                )
            elif int(x) != int(y):
                self.differ(f"{where} (number {k})", f"committed {x}, now {y}")

    def arrays(
        self,
        was: np.ndarray,
        now: np.ndarray,
        where: str,
        shown_was: str = "",
        shown_now: str = "",
        floor: float = 0.0,
    ) -> None:
        """Two arrays (or scalars): the same shape and type; floats within the tolerance (or
        ``floor``, a printed number's last-digit unit) with missing values (NaN) in the same
        places, anything else exactly. One line per array, at its first difference, with how
        many differ."""
        if was.shape != now.shape or was.dtype != now.dtype:
            self.differ(where, f"committed {_kind(was)}, now {_kind(now)}")
            return
        if was.dtype.kind == "O":
            for i, (a, b) in enumerate(
                zip(was.ravel().tolist(), now.ravel().tolist(), strict=True)
            ):
                self.values(a, b, where + _index(was.shape, i))
            return
        if was.dtype.kind != "f":
            bad = was != now
        else:
            bad = self.floats(was.astype(np.float64), now.astype(np.float64), where, floor)
        if np.any(bad):
            first = int(np.flatnonzero(bad)[0])
            x = shown_was or repr(was.flat[first].item())
            y = shown_now or repr(now.flat[first].item())
            count = f" ({int(np.sum(bad))} of {bad.size} values differ)" if bad.size > 1 else ""
            self.differ(where + _index(was.shape, first), f"committed {x}, now {y}{count}")

    def floats(self, a: np.ndarray, b: np.ndarray, where: str, floor: float = 0.0) -> np.ndarray:
        """Where ``a`` and ``b`` differ beyond the tolerance or ``floor`` (NaN only against
        NaN, an infinity only against itself); the difference nearest what it is allowed kept
        as the largest."""
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, np.abs(a - b))
            allowed = np.maximum(self.tolerance.allowed(a, b), floor)
            share = np.where(diff == 0, 0.0, diff / allowed)
        share = np.where(np.isnan(share), np.inf, share)  # NaN or infinity against a number
        top = int(np.argmax(share)) if share.size else 0
        if share.size and share.flat[top] > 0:
            self.found.identical = False
            scale = max(abs(a.flat[top]), abs(b.flat[top]))
            rel = float(diff.flat[top] / scale) if scale else math.inf
            here = where + _index(a.shape, top)
            found = Largest(float(diff.flat[top]), rel, float(share.flat[top]), here)
            if self.found.largest is None or found.share > self.found.largest.share:
                self.found.largest = found
        return share > 1


def _numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


def _is_real(x: Any) -> bool:
    return _is_int(x) or isinstance(x, float | np.floating)


def _index(shape: tuple[int, ...], flat: int) -> str:
    """``[i, j]`` of the element at ``flat`` in an array of ``shape``; nothing for a scalar."""
    if not shape:
        return ""
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _kind(x: np.ndarray) -> str:
    return f"{x.dtype} of shape {x.shape}" if x.shape else f"{x.dtype} {x.item()!r}"


def _short(x: Any, width: int = 80) -> str:
    text = repr(x)
    return text if len(text) <= width else text[: width - 3] + "..."


def _snippet(text: str | None, other: str | None, width: int = 50) -> str:
    """``text`` around where it first departs from ``other``, quoted; ``(end)`` if none."""
    if text is None:
        return "(end)"
    common = 0
    for c, d in zip(text, other or "", strict=False):
        if c != d:
            break
        common += 1
    start = max(0, common - width // 2)
    return repr(text[start : start + width])


def compare_values(
    was: Any, now: Any, where: str, tolerance: Tolerance = FLOAT_TOLERANCE
) -> Comparison:
    """The committed value ``was`` against ``now`` (texts, numbers, mappings, sequences,
    arrays, tensors), findings named from ``where``: identical when no value differs in any
    bit, else equal or different by the module's rule."""
    walk = _Walk(tolerance)
    walk.values(was, now, where)
    return walk.found


def _h5(path: Path) -> dict[str, Any]:
    """An HDF5 file as ``{name: array}`` for its datasets and ``{name.attrs: {...}}`` for the
    attributes of every group and dataset (the file's own under ``/.attrs``); read whole, as
    training reads it."""
    import h5py
    import hdf5plugin  # noqa: F401 - registers the Blosc filter the datasets are written with

    out: dict[str, Any] = {}
    with h5py.File(path, "r") as f:
        out["/.attrs"] = dict(f.attrs)

        def visit(name: str, node: Any) -> None:
            out[f"{name}.attrs"] = dict(node.attrs)
            if isinstance(node, h5py.Dataset):
                out[name] = node[()]

        f.visititems(visit)
    return out


def _parquet(path: Path) -> dict[str, np.ndarray]:
    """A table as ``{column: values}`` (an index other than row numbers as columns too)."""
    frame = pd.read_parquet(path)
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    return {str(c): frame[c].to_numpy() for c in frame.columns}


LOADERS = {
    ".json": lambda p: json.loads(p.read_text()),
    ".parquet": _parquet,
    ".npy": lambda p: np.load(p, allow_pickle=False),
    ".npz": lambda p: dict(np.load(p, allow_pickle=False)),
    ".h5": _h5,
    ".pt": lambda p: torch.load(p, map_location="cpu", weights_only=True),
}
"""How each kind of payload file is read for a comparison value by value: a planning cell's
per-episode table, a training log, a dataset's HDF5 columns, a model's config and weights."""


def compare_files(
    was: Path, now: Path, where: str, tolerance: Tolerance = FLOAT_TOLERANCE
) -> Comparison:
    """The committed file ``was`` against the rebuilt ``now``: identical when the bytes are;
    else both read by :data:`LOADERS` and compared value by value (:func:`compare_values`).
    A kind of file no loader reads is different when its bytes are."""
    if filecmp.cmp(was, now, shallow=False):
        return Comparison()
    load = LOADERS.get(was.suffix)
    if load is None:
        return Comparison(False, [f"{where}: the bytes differ (no value comparison of {was.name})"])
    try:
        found = compare_values(load(was), load(now), where, tolerance)
    except (OSError, ValueError, RuntimeError, pickle.UnpicklingError) as e:
        return Comparison(False, [f"{where}: unreadable ({type(e).__name__}: {e})"])
    found.identical = False  # the same values in other bytes (a file's metadata): equal
    return found


__all__ = [
    "DIFFERENT",
    "EQUAL",
    "FLOAT_TOLERANCE",
    "IDENTICAL",
    "LOADERS",
    "Comparison",
    "Largest",
    "Tolerance",
    "combine",
    "compare_files",
    "compare_values",
]
