"""jepa-geometry: the library behind *Planning in the Right Geometry*.

The subpackages follow the data flow (the README's module map, and :data:`LAYERS` in
:mod:`jepa_geometry.layers`): ``envs`` (tasks, datasets) -> ``wm`` (model, losses, training)
-> ``planning`` (cost, solvers, goal-reaching protocol) -> ``analysis`` (probes, rank channels,
cost landscapes) -> ``theory`` (closed forms, the 2-D toy) -> ``study`` (a task's study and
its grid) -> ``cluster`` (the grid on a job engine) -> ``verdict`` (the rule, the papers'
numbers, every claim) -> ``extensions`` (the κ sweep, the scaling study, your objective) ->
``book`` (chapter pipeline, page tables, plots) -> ``cli``.

The names a reader of the papers looks for are importable from here, e.g.
``from jepa_geometry import sigreg, LambdaReg, scale_loss, metric_leverage``. They are
resolved on first use (PEP 562), so ``import jepa_geometry`` stays cheap and the package root
adds no import edge between the layers.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module that defines it (one home per concept)
EXPORTS: dict[str, str] = {
    # the papers' objectives (LeWM, SCALE, AnisoWM) and their arms
    "sigreg": "jepa_geometry.wm.losses",
    "LambdaReg": "jepa_geometry.wm.losses",
    "scale_loss": "jepa_geometry.wm.losses",
    "sample_pairs": "jepa_geometry.wm.losses",
    "AuxHead": "jepa_geometry.wm.losses",
    "ARMS": "jepa_geometry.wm.arms",
    "arm_weights": "jepa_geometry.wm.arms",
    # the world model and its training
    "WorldModel": "jepa_geometry.wm.model",
    "build_world_model": "jepa_geometry.wm.model",
    "encode_frames": "jepa_geometry.wm.model",
    "train_world_model": "jepa_geometry.wm.training",
    "load_world_model": "jepa_geometry.wm.training",
    # tasks and data
    "TASKS": "jepa_geometry.envs",
    "make_task": "jepa_geometry.envs",
    "load_dataset": "jepa_geometry.envs.dataset",
    # planning
    "Planner": "jepa_geometry.planning.solver",
    "LatentGoalCost": "jepa_geometry.planning.solver",
    "budget_tiers": "jepa_geometry.planning.solver",
    "evaluate_arm": "jepa_geometry.planning.evaluator",
    "PlanningCell": "jepa_geometry.planning.evaluator",
    "make_protocol": "jepa_geometry.planning.protocol",
    # analysis and theory
    "pca": "jepa_geometry.analysis.probes",
    "geometry_probe": "jepa_geometry.analysis.probes",
    "ridge_probe_r2": "jepa_geometry.analysis.probes",
    "metric_leverage": "jepa_geometry.theory.leverage",
    "measure_arms": "jepa_geometry.analysis.measurements",
    # a task's study and its verdict
    "plan_study": "jepa_geometry.study.cells",
    "paper_claims": "jepa_geometry.verdict.records",
    "verdict_table": "jepa_geometry.verdict.rule",
    "reference_numbers": "jepa_geometry.verdict.reference",
    # infrastructure
    "PROFILES": "jepa_geometry.profiles",
    "Profile": "jepa_geometry.profiles",
    "ProfileError": "jepa_geometry.profiles",
    "load_profile": "jepa_geometry.profiles",
    "Artifact": "jepa_geometry.artifacts",
    "ArtifactError": "jepa_geometry.artifacts",
    "data_root": "jepa_geometry.artifacts",
    "get_or_build": "jepa_geometry.artifacts",
    "setup_chapter": "jepa_geometry.book.present",
    "page_log": "jepa_geometry.book.page_log",
}

__all__ = sorted(EXPORTS)
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in EXPORTS:
        value = getattr(importlib.import_module(EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'jepa_geometry' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *EXPORTS})
