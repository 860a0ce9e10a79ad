"""Tests of the decision rules, one file per module of :mod:`jepa_geometry.study.decisions`."""
