"""Tests of the book's figures, one file per module of :mod:`jepa_geometry.book.plots`."""

import io

import matplotlib.pyplot as plt


def png(fig) -> bytes:
    """``fig`` rendered as PNG bytes (then closed): two equal renders give equal bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
