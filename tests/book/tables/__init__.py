"""Tests of the page tables, one file per module of :mod:`jepa_geometry.book.tables`."""
