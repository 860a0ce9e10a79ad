"""Shared test set-up: an isolated artifact cache and a non-interactive matplotlib."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("DVC_NO_ANALYTICS", "1")


@pytest.fixture(autouse=True, scope="session")
def _isolated_data_root(tmp_path_factory: pytest.TempPathFactory):
    """Point the artifact cache at a temporary folder so tests never touch data/."""
    root = tmp_path_factory.mktemp("data")
    old = os.environ.get("JEPA_GEOMETRY_DATA")
    os.environ["JEPA_GEOMETRY_DATA"] = str(root)
    yield root
    if old is None:
        os.environ.pop("JEPA_GEOMETRY_DATA", None)
    else:
        os.environ["JEPA_GEOMETRY_DATA"] = old


@pytest.fixture
def data_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty artifact cache for one test."""
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path / "data"))
    return tmp_path / "data"
