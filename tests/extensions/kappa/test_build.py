"""Building and reading the κ sweep (extensions.kappa.build): one smoke build end to end, by
the route of ``jepa-geometry kappa`` (its grid units built here, ``cluster.build_here``)."""

from __future__ import annotations

import numpy as np
import pytest

from jepa_geometry import cluster
from jepa_geometry.book import tables
from jepa_geometry.extensions import kappa
from jepa_geometry.profiles import load_profile
from jepa_geometry.verdict.kappa_claims import kappa_verdicts
from jepa_geometry.verdict.rule import BY_CONSTRUCTION, LABELS


@pytest.mark.slow
def test_the_smoke_sweep_builds_reads_back_and_judges_the_same_twice():
    """The smoke sweep (10 tiny models, 20 cells; about 50 s on one core) built, read back and
    judged; a second read finds everything cached and gives the same outcomes."""
    base = load_profile("smoke")
    said = []
    # the run's shared cache: another test may be building some of the sweep beside it
    stages = cluster.build_here(kappa.GRID, base, 1, progress=False, say=said.append)
    assert said and said[0].startswith("κ sweep cost estimate")
    assert list(stages["stage"]) == list(cluster.STAGES) and stages["waiting"].sum() == 0
    assert kappa.missing(kappa.KAPPA_SWEEP, base) == []
    res = kappa.load_results(base)
    assert len(res.models) == 10
    table = tables.kappa.kappa_sweep_table(res)
    assert list(table["κ"][:5]) == [1.0, 1.5, 2.0, 4.0, 8.0]
    rows = kappa_verdicts(res, kappa.KAPPA_SWEEP)
    assert set(rows["verdict"]) <= {*LABELS, BY_CONSTRUCTION} and len(rows) == 6
    # a rerun is cached: nothing left to build, same numbers
    assert kappa.estimate_cost(kappa.KAPPA_SWEEP, base)["estimated seconds"].sum() == 0
    rerun = cluster.build_here(kappa.GRID, base, 1, progress=False, say=said.append)
    assert rerun["built"].sum() == 0
    again = kappa.load_results(base)
    assert all(np.array_equal(res.success[k], again.success[k]) for k in res.success)
