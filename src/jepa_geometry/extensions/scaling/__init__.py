"""The scaling study, the papers' effects as training compute grows (chapter 9), one module
each:

* :mod:`.spec` with ``scaling.yaml``: the study as written, its compute points, each point's
  profile and training FLOPs;
* :mod:`.choice`: the cost of a unit and the choice of the units within the budget, fixed
  before the first model trained (kept as first stated);
* :mod:`.build`: building the chosen units (the command line, or units of the study grid),
  the gate at each point;
* :mod:`.results`: what each built point measured, every claim's effect there, success beside
  the ceiling, the premises, LeWM's own budget;
* :mod:`.trend`: each effect's trend against training FLOPs and where it would cross the
  verdict's minimum effect;
* chapter 9's tables and sentences are page tables, :mod:`jepa_geometry.book.tables.scaling`.

The names below are the package's entry points, for ``from jepa_geometry.extensions import
scaling``; the trend of one effect is :func:`.trend.trend` (the package's ``trend`` is the
module).
"""

from jepa_geometry.extensions.scaling.build import (
    GRID,
    gate,
    grid_units,
    point_cells,
    state_choice,
)
from jepa_geometry.extensions.scaling.choice import (
    CHOICE,
    UNIT_PARTS,
    by_point,
    choose_units,
    chosen,
    cost_statement,
    priority,
    seconds_per_step,
    stated_units,
    unit_cost,
)
from jepa_geometry.extensions.scaling.results import (
    BUILDS_IN_PAGE,
    PAPER_STEPS_TABLE,
    PointResult,
    ScalingResults,
    budget_table,
    claim_effects,
    paper_budget,
    point_result,
    premise_table,
    scaling_results,
    success_by_point,
    task_ceilings,
)
from jepa_geometry.extensions.scaling.spec import (
    GATED_TASKS,
    SCALING_FILE,
    Point,
    ScalingError,
    ScalingSpec,
    cem_cells,
    load_scaling,
    main_protocol,
    point_flops,
    point_profile,
    scaling_from_dict,
    step_flops,
    step_flops_artifact,
    study_profile,
)
from jepa_geometry.extensions.scaling.trend import (
    N_TREND_BOOT,
    READINGS,
    SE_FLOOR,
    TREND_COLUMNS,
    TREND_SEED,
    crossing_words,
    reading,
    trend_table,
    wls_line,
)

__all__ = [
    "BUILDS_IN_PAGE",
    "CHOICE",
    "GATED_TASKS",
    "GRID",
    "N_TREND_BOOT",
    "PAPER_STEPS_TABLE",
    "READINGS",
    "SCALING_FILE",
    "SE_FLOOR",
    "TREND_COLUMNS",
    "TREND_SEED",
    "UNIT_PARTS",
    "Point",
    "PointResult",
    "ScalingError",
    "ScalingResults",
    "ScalingSpec",
    "budget_table",
    "by_point",
    "cem_cells",
    "choose_units",
    "chosen",
    "claim_effects",
    "cost_statement",
    "crossing_words",
    "gate",
    "grid_units",
    "load_scaling",
    "main_protocol",
    "paper_budget",
    "point_cells",
    "point_flops",
    "point_profile",
    "point_result",
    "premise_table",
    "priority",
    "reading",
    "scaling_from_dict",
    "scaling_results",
    "seconds_per_step",
    "state_choice",
    "stated_units",
    "step_flops",
    "step_flops_artifact",
    "study_profile",
    "success_by_point",
    "task_ceilings",
    "trend_table",
    "unit_cost",
    "wls_line",
]
