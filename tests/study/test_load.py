"""Every task's study read from the cache (jepa_geometry.study.load): what is not built is
reported, never built."""

from __future__ import annotations

import pytest

from jepa_geometry.artifacts import NotCached
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.load import load_studies


def test_missing_studies_are_reported_not_built(data_root):
    studies = load_studies(load_profile("smoke"))
    assert studies.studies == {} and set(studies.missing) == {
        "tworoom",
        "pusht",
        "reacher",
        "cube",
        "pointmaze",
    }
    assert all("not built at this profile" in why for why in studies.missing.values())
    built = [p for p in data_root.rglob("manifest.json")]
    assert built == []  # nothing was trained, collected or planned
    with pytest.raises(NotCached, match="no task study that plans is cached at profile 'smoke'"):
        load_studies(load_profile("smoke"), require_planned=True)
    with pytest.raises(ValueError, match="tasks must be a non-empty list"):
        load_studies(load_profile("smoke"), tasks=["maze"])
