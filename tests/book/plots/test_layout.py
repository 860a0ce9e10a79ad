"""Every figure of the book leaves its data, its tick labels and its titles readable (issue 68,
item 5: a reader found legends over the spectra, tick labels run together on narrow panels
and panel titles touching).

Each figure of :mod:`tests.book.plots.test_style_maps` is drawn (``fig.canvas.draw()``) and
checked in display coordinates:

- a legend's box covers no data artist of an axes: no point of a line or of a collection's
  paths (markers, error bars, bands), no bar, no image inside the axes lies under it (a legend
  below the axes or outside them is fine); reference lines drawn across the axes (``axhline``,
  ``axvline``) are not data;
- the tick labels of one axis do not overlap each other;
- the titles of the panels (and the figure's) do not touch each other.
"""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import Collection, PathCollection
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.transforms import Bbox

from tests.book.plots.test_style_maps import CASES, _legends

STEP = 2.0
"""Pixels between the points a line's segments are sampled at."""


def _sample(xy: np.ndarray) -> np.ndarray:
    """The points of a polyline ``xy`` (display coordinates), every :data:`STEP` pixels."""
    xy = xy[np.isfinite(xy).all(axis=1)]
    if len(xy) < 2:
        return xy
    out = [xy[:1]]
    for a, b in itertools.pairwise(xy):
        n = max(1, int(np.ceil(np.hypot(*(b - a)) / STEP)))
        t = np.linspace(0, 1, n + 1)[1:, None]
        out.append(a + t * (b - a))
    return np.concatenate(out)


def _of_data(artist, ax: plt.Axes) -> bool:
    """Whether ``artist`` is drawn in ``ax``'s data coordinates (not a reference line across
    the axes in axes coordinates, not a decoration)."""
    if not artist.get_visible():
        return False
    if isinstance(artist, Collection) and len(artist.get_offsets()):
        transform = artist.get_offset_transform()
    else:
        transform = artist.get_transform()
    return transform.contains_branch(ax.transData)


def _points(artist) -> np.ndarray:
    """The display points of a line or a collection: its vertices and its segments sampled."""
    if isinstance(artist, Line2D):
        xy = artist.get_transform().transform(artist.get_xydata())
        return _sample(xy) if artist.get_linestyle() not in ("None", "") else xy
    if isinstance(artist, PathCollection) or (
        isinstance(artist, Collection) and len(artist.get_offsets()) and not artist.get_paths()
    ):
        return artist.get_offset_transform().transform(artist.get_offsets())
    pts = [np.empty((0, 2))]
    for path in artist.get_paths():
        pts.append(_sample(artist.get_transform().transform(path.vertices)))
    return np.concatenate(pts)


def _inside(points: np.ndarray, box: Bbox) -> np.ndarray:
    x, y = points[:, 0], points[:, 1]
    return (x > box.x0) & (x < box.x1) & (y > box.y0) & (y < box.y1)


def _under(artist: Collection, area: Bbox) -> bool:
    """Whether a corner of ``area`` lies inside one of the collection's closed paths."""
    corners = area.corners()
    transform = artist.get_transform()
    return any(
        p.contains_points(corners, transform).any() for p in artist.get_paths() if len(p) > 2
    )


def covered(fig: plt.Figure) -> list[str]:
    """The data artists a legend of ``fig`` covers, as ``'legend over <artist> in <axes>'``."""
    renderer = fig.canvas.get_renderer()
    found = []
    for legend in _legends(fig):
        box = legend.get_window_extent(renderer).padded(-1)
        for i, ax in enumerate(fig.axes):
            if not ax.get_visible() or not box.overlaps(ax.bbox):
                continue
            area = Bbox.intersection(box, ax.bbox)
            name = f"axes {i} ({ax.get_title()!r})"
            for artist in [*ax.lines, *ax.collections]:
                if not _of_data(artist, ax):
                    continue
                pts = _points(artist)
                pts = pts[_inside(pts, ax.bbox.padded(1))] if len(pts) else pts
                hit = len(pts) and _inside(pts, area).any()
                if not hit and not isinstance(artist, Line2D | PathCollection):
                    hit = _under(artist, area)  # a band or a polygon under the whole legend
                if hit:
                    found.append(
                        f"legend over {type(artist).__name__} {artist.get_label()!r} in {name}"
                    )
            for artist in [*ax.patches, *ax.images]:
                if not isinstance(artist, Patch | AxesImage) or not _of_data(artist, ax):
                    continue
                ext = artist.get_window_extent(renderer)
                if ext.width > 0 and ext.height > 0 and Bbox.intersection(ext, area) is not None:
                    inter = Bbox.intersection(ext, area)
                    if inter.width > 1 and inter.height > 1:
                        found.append(f"legend over {type(artist).__name__} in {name}")
    return sorted(set(found))


def _shown_ticklabels(ax: plt.Axes, axis: str) -> list:
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t for t in labels if t.get_visible() and t.get_text().strip()]


def colliding_ticklabels(fig: plt.Figure) -> list[str]:
    """Pairs of tick labels of one axis whose boxes overlap."""
    renderer = fig.canvas.get_renderer()
    shown = [
        (i, axis, t, t.get_window_extent(renderer))
        for i, ax in enumerate(fig.axes)
        if ax.get_visible() and ax.axison
        for axis in ("x", "y")
        for t in _shown_ticklabels(ax, axis)
    ]
    found = []
    for (i, a, s, sb), (j, b, t, tb) in itertools.combinations(shown, 2):
        if i != j or a != b:
            continue  # one axis's labels against each other
        inter = Bbox.intersection(sb.padded(-0.5), tb.padded(-0.5))
        if inter is not None:
            found.append(f"axes {i} {a} {s.get_text()!r} × axes {j} {b} {t.get_text()!r}")
    return found


def touching_titles(fig: plt.Figure) -> list[str]:
    """Pairs of titles (the panels' and the figure's) whose boxes touch."""
    renderer = fig.canvas.get_renderer()
    titles = [
        t
        for ax in fig.axes
        if ax.get_visible()
        for t in (ax.title, ax._left_title, ax._right_title)
        if t.get_visible() and t.get_text().strip()
    ]
    if fig._suptitle is not None and fig._suptitle.get_text().strip():
        titles.append(fig._suptitle)
    boxes = [(t.get_text(), t.get_window_extent(renderer).padded(1)) for t in titles]
    return [
        f"{s!r} touches {t!r}"
        for (s, sb), (t, tb) in itertools.combinations(boxes, 2)
        if Bbox.intersection(sb, tb) is not None
    ]


def test_the_checks_find_a_legend_over_data_ticks_and_titles_that_collide():
    fig, (a, b) = plt.subplots(1, 2, figsize=(2, 2))
    a.plot([0, 1], [0.9, 0.9], label="over it")
    a.plot([0, 1], [0.1, 0.1], label="under it")
    a.set_ylim(0, 1)
    a.legend(loc="upper right")
    a.set_xticks([0, 0.01], ["long label", "another one"])
    a.set_title("a long title for a narrow panel")
    b.set_title("another long title")
    fig.canvas.draw()
    assert covered(fig) and colliding_ticklabels(fig) and touching_titles(fig)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.axhline(0.5, color="0.5")  # a reference line is not data
    fig.legend(loc="lower center")
    fig.tight_layout(rect=(0, 0.15, 1, 1))
    fig.canvas.draw()
    assert covered(fig) == colliding_ticklabels(fig) == touching_titles(fig) == []
    plt.close(fig)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_figure_keeps_its_data_ticks_and_titles_readable(case):
    fig = case.build()
    try:
        fig.canvas.draw()
        assert covered(fig) == [], "a legend over the data"
        assert colliding_ticklabels(fig) == [], "tick labels that collide"
        assert touching_titles(fig) == [], "titles that touch"
    finally:
        plt.close(fig)
