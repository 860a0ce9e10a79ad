"""AnisoWM's κ sweep on trained models (chapter 8), one module each:

* :mod:`.sweep`: the sweep as data (tasks, bounds κ, the arm, its models and cells) and its
  cost, stated before anything trains;
* :mod:`.build`: building it (cached, resumable; its units of the study grid) and reading its
  results from the cache;
* :mod:`.saturation`: what is read off a training log, fixed before the sweep trained (when Λ
  reaches its bound, how far the allocation moves after that); its claims are records of the
  one registry, judged by :mod:`jepa_geometry.verdict.kappa_claims`;
* what chapter 8 shows of it is a page table, :mod:`jepa_geometry.book.tables.kappa`.

The names below are the package's entry points, for ``from jepa_geometry.extensions import
kappa``.
"""

from jepa_geometry.extensions.kappa.build import (
    GRID,
    KappaResults,
    grid_units,
    load_results,
    missing,
)
from jepa_geometry.extensions.kappa.saturation import (
    SATURATION_TOLERANCE,
    allocation_change,
    saturated,
    saturation_step,
)
from jepa_geometry.extensions.kappa.sweep import (
    ARM,
    DEFAULT_KAPPA,
    ESTIMATE_FILE,
    KAPPA_SWEEP,
    SOLVER,
    SPLITS,
    TIER,
    KappaError,
    KappaSweep,
    cost_sentence,
    estimate_artifact,
    estimate_cost,
    measured_cost,
    state_estimate,
    stated_estimate,
)

__all__ = [
    "ARM",
    "TIER",
    "DEFAULT_KAPPA",
    "ESTIMATE_FILE",
    "GRID",
    "KAPPA_SWEEP",
    "SATURATION_TOLERANCE",
    "SOLVER",
    "SPLITS",
    "KappaError",
    "KappaResults",
    "KappaSweep",
    "allocation_change",
    "cost_sentence",
    "estimate_artifact",
    "estimate_cost",
    "grid_units",
    "load_results",
    "measured_cost",
    "missing",
    "saturated",
    "saturation_step",
    "state_estimate",
    "stated_estimate",
]
