"""The models' logged embedding diagnostics as one long table, read from their training logs.

The rows are :func:`~jepa_geometry.wm.objective.embedding_diagnostics` as training logged them
every ``log_every`` steps (the isotropy measures, ΛReg's spectrum for ΛReg arms); chapters 5
and 7 draw them, the scaling study reads them at every compute point, and the verdict reads
their last logged values. Reading a log trains a model missing from the cache
(:func:`~jepa_geometry.wm.training.training_log`), so this is a computation of the study, not a
page's formatting.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from jepa_geometry.analysis.measurements import model_list
from jepa_geometry.profiles import Profile
from jepa_geometry.wm.objective import DIAGNOSTICS
from jepa_geometry.wm.training import training_log


def diagnostics_long(logs: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Training logs of one seed (rows with ``step``, ``arm`` and the logged columns, as
    :func:`~jepa_geometry.wm.training.train_one_seed` returns them) as one row per
    (arm, step, diagnostic) with its ``value`` and ``train_seed = seed``: the
    :data:`~jepa_geometry.wm.objective.DIAGNOSTICS` an arm logged (NaN ones, which the arm does
    not have, are dropped)."""
    names = [d for d in DIAGNOSTICS if d in logs]
    out = logs.melt(id_vars=["step", "arm"], value_vars=names, var_name="diagnostic").dropna()
    out.insert(1, "train_seed", seed)
    return out[["arm", "train_seed", "step", "diagnostic", "value"]].reset_index(drop=True)


def training_diagnostics(
    task: str,
    arms: Sequence[str],
    profile: Profile,
    models: Sequence[tuple[str, int]] | None = None,
) -> pd.DataFrame:
    """Every logged embedding diagnostic of every (arm, training seed) model (or of
    ``models``, :func:`~jepa_geometry.analysis.measurements.model_list`), long form: one row
    per (arm, train_seed, step, diagnostic) with its ``value``
    (:func:`~jepa_geometry.wm.objective.embedding_diagnostics`; ΛReg's only for ΛReg arms).
    Models missing from the cache are trained first."""
    jobs = model_list(arms, profile, models)
    parts = []
    for s in dict.fromkeys(seed for _, seed in jobs):  # seed by seed, in the models' order
        logs = [
            pd.DataFrame(training_log(task, m, s, profile)).assign(arm=m)
            for m, seed in jobs
            if seed == s
        ]
        parts.append(diagnostics_long(pd.concat(logs, ignore_index=True), s))
    return pd.concat(parts, ignore_index=True)


__all__ = ["diagnostics_long", "training_diagnostics"]
