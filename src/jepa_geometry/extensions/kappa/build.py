"""Building AnisoWM's κ sweep (cached, resumable) and reading it (cache only).

The sweep's units (:func:`grid_units`, :data:`GRID`): its datasets, models and cells, as the
study grid submits them (``jepa-geometry grid --with kappa``) and as
:func:`~jepa_geometry.cluster.build_here` builds them on one machine (``jepa-geometry kappa``,
and the book before its cross-task page), the cost stated first
(:func:`~.sweep.state_estimate`).
:func:`load_results` reads what the rules read (:class:`KappaResults`) and refuses, naming
the first missing piece, when the sweep is not built.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from jepa_geometry import cluster
from jepa_geometry.analysis.probes import lambda_spectrum
from jepa_geometry.artifacts import load
from jepa_geometry.extensions.kappa.saturation import allocation_change, saturated, saturation_step
from jepa_geometry.extensions.kappa.sweep import (
    DEFAULT_KAPPA,
    KAPPA_SWEEP,
    KappaError,
    KappaSweep,
    state_estimate,
)
from jepa_geometry.profiles import Profile
from jepa_geometry.verdict.preconditions import lambda_departure
from jepa_geometry.wm.checkpoint import LOG_FILE
from jepa_geometry.wm.training import model_untrained, world_model_artifact


def grid_units(stage: str, base: Profile, sweep: KappaSweep = KAPPA_SWEEP) -> list[cluster.Unit]:
    """The sweep's units of one stage of the study grid (:mod:`~jepa_geometry.cluster`):
    its tasks' datasets, its models, and one planning job per model (its evaluation and
    validation cells); the κ = 2 models and cells are the task studies' own, which the grid
    runs once."""
    if stage == "collect":
        return [cluster.collect_unit(t, sweep.profile(t, base)) for t in sweep.tasks]
    if stage == "train":
        return [cluster.train_unit(*m) for m in sweep.models(base)]
    if stage != "plan":
        return []
    cells = sweep.cells(base)
    return [
        u
        for t in sweep.tasks
        for u in cluster.plan_units(stage, t, [c for c in cells if c.task == t], " (κ sweep)")
    ]


def missing(sweep: KappaSweep, base: Profile) -> list[str]:
    """What the cache lacks of the sweep, one name per model or cell (empty: built)."""
    out = [
        f"model {m[0]} κ={(m[4] or {}).get('kappa', DEFAULT_KAPPA):g} seed {m[2]}"
        for m in sweep.models(base)
        if model_untrained(*m)
    ]
    out += [
        f"cell {c.task} κ={(c.weights or {}).get('kappa', DEFAULT_KAPPA):g} "
        f"{'validation' if c.n_pairs else 'evaluation'}"
        for c in sweep.cells(base)
        if c.unbuilt()
    ]
    return out


@dataclass
class KappaResults:
    """What the rules read, per task and κ (first training seed).

    ``models``: task, kappa, D, cond (learned cond Λ), departure (of Λ from the identity,
    :func:`~jepa_geometry.verdict.preconditions.lambda_departure`), saturated, above_mean
    (#{v_i > 1}),
    first_saturated (the first logged step with cond Λ at its bound, NaN if never),
    allocation_change. ``spectra``: task, kappa, rank (largest first, as a fraction of D),
    variance. ``success``: (task, κ, split) -> per-pair outcomes, pairs in episode order.
    ``seed_spectra``: (task, training seed) -> the final sorted v at the default κ;
    ``seed_changes``: (task, training seed) -> its :func:`~.saturation.allocation_change` at
    the default κ (NaN: that model never reached its bound).
    """

    models: pd.DataFrame
    spectra: pd.DataFrame
    success: dict[tuple[str, float, str], np.ndarray]
    seed_spectra: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    seed_changes: dict[tuple[str, int], float] = field(default_factory=dict)


def _log(args: tuple) -> list[dict]:
    return json.loads((load(world_model_artifact(*args)) / LOG_FILE).read_text())


def load_results(base: Profile, sweep: KappaSweep = KAPPA_SWEEP) -> KappaResults:
    """The sweep's measurements from the cache (nothing is built); a missing piece is an
    error naming it (build with ``jepa-geometry kappa``)."""
    gone = missing(sweep, base)
    if gone:
        raise KappaError(
            f"the κ sweep is not built ({len(gone)} missing, e.g. {gone[0]}); "
            f"run: jepa-geometry kappa --profile {base.name}"
        )
    rows, spectra, seed_spectra, seed_changes = [], [], {}, {}
    for m in sweep.models(base):
        task, _, seed, _, w = m
        kappa = float((w or {}).get("kappa", DEFAULT_KAPPA))
        log = _log(m)
        sp = lambda_spectrum(log)
        if kappa == DEFAULT_KAPPA:  # every training seed: the spread between models
            seed_spectra[(task, seed)] = sp["final_sorted"]
            seed_changes[(task, seed)] = allocation_change(sp["steps"], sp["v"], kappa)
        if seed != sweep.profile(task, base).seeds.train[0]:
            continue
        first = saturation_step(sp["steps"], sp["v"], kappa)
        rows.append(
            {
                "task": task,
                "kappa": kappa,
                "D": int(sp["v"].shape[1]),
                "cond": sp["cond"],
                "departure": lambda_departure(sp["v"][-1], kappa),
                "saturated": bool(saturated(sp["cond"], kappa)),
                "above_mean": sp["above_mean"],
                "first_saturated": np.nan if first is None else float(first),
                "allocation_change": allocation_change(sp["steps"], sp["v"], kappa),
            }
        )
        d = len(sp["final_sorted"])
        spectra += [
            {"task": task, "kappa": kappa, "rank": (i + 0.5) / d, "variance": float(v)}
            for i, v in enumerate(sp["final_sorted"])
        ]
    success = {}
    for c in sweep.cells(base):
        eps = c.evaluate(progress=False).episodes.sort_values("episode")
        split = "validation" if c.n_pairs else "evaluation"
        kappa = float((c.weights or {}).get("kappa", DEFAULT_KAPPA))
        success[(c.task, kappa, split)] = eps["success"].to_numpy(dtype=float)
    return KappaResults(
        pd.DataFrame(rows), pd.DataFrame(spectra), success, seed_spectra, seed_changes
    )


GRID = cluster.Extension("kappa", grid_units, state_estimate)
"""The sweep as an extension of the study grid (``jepa-geometry grid --with kappa``)."""


__all__ = [
    "GRID",
    "KappaResults",
    "grid_units",
    "load_results",
    "missing",
]
