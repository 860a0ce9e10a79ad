"""Chapters 4 and 5: the tasks, their datasets and pairs, the world models' sizes and weights,
and their training (loss terms, diagnostics, ΛReg's target spectrum).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.analysis.probes import latent_probe_r2
from jepa_geometry.artifacts import memo
from jepa_geometry.book.style import shown
from jepa_geometry.envs import TASKS, q_indices, task_class
from jepa_geometry.envs.dataset import dataset_artifact, load_dataset, tabulate_tasks
from jepa_geometry.planning.protocol import pair_difficulty
from jepa_geometry.profiles import Profile
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.model import WorldModel
from jepa_geometry.wm.training import load_world_model, world_model_artifact


def task_table(tasks: Sequence[str] = TASKS) -> pd.DataFrame:
    """One row per task, indexed by the task's title: environment id, action dim, SCALE's q
    and half q (coordinate names joined by ", "; "-" for a task without a half-q variant), the
    success rule and the behaviour policy of its dataset.

    Read from the Task classes alone (no environment is built), so the table the book shows
    is the definitions the code runs: ``half q = [q_names[i] for i in q_indices(task, "half")]``.
    """
    rows = []
    for t in tasks:
        cls = task_class(t)
        half = [cls.q_names[i] for i in q_indices(t, "half")] if cls.half_q else None
        rows.append(
            {
                "task": t,
                "environment": cls.env_id,
                "action dim": cls.action_dim,
                "q": ", ".join(cls.q_names),
                "half q": ", ".join(half) if half is not None else "-",
                "success": cls.success_rule,
                "behaviour policy": cls.behaviour_policy,
            }
        )
    return shown(pd.DataFrame(rows).set_index("task"))


def dataset_table(summaries: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The datasets' summaries (:func:`~jepa_geometry.envs.dataset.dataset_summaries`), one row per
    task, plus the collection throughput ``frames/s = frames / collect s`` (rounded to whole frames
    per second).

    Throughput is what sizes a profile: rendering dominates collection, so it tells how long
    a larger dataset of the same task would take on this machine.
    """
    stats = pd.DataFrame(list(summaries.values())).set_index("task")
    stats["frames/s"] = (stats["frames"] / stats["collect s"]).round(0)
    return stats


def parameter_table(models: Mapping[str, WorldModel]) -> pd.DataFrame:
    """Parameters per part (rows: encoder, projector, action_encoder, predictor, pred_proj,
    then ``total``), one column per named model.

    ``total = sum over parts``, which equals ``num_parameters()`` because every parameter of
    the model belongs to one of its parts; comparing that total with a published count (LeWM's
    18,034,478) is how the ``paper`` profile is checked to build the paper's architecture.
    """
    sizes = pd.DataFrame({name: m.parameter_counts() for name, m in models.items()})
    sizes.loc["total"] = sizes.sum()
    return sizes


def latent_probe_table(
    task: str, arms: Sequence[str], seed: int, profile: Profile, max_frames: int = 6000
) -> pd.Series:
    """:func:`~jepa_geometry.analysis.probes.latent_probe_r2` of each arm's model of ``task``
    (training seed ``seed``), by arm; each kept as a small cached result, so a page shows it without
    the model or frames."""
    data = dataset_artifact(task, profile).key
    out = {}
    for arm in arms:
        spec = {
            "model": world_model_artifact(task, arm, seed, profile).key,
            "dataset": data,
            "max_frames": max_frames,
        }

        def probe(a: str = arm) -> float:
            model = load_world_model(task, a, seed, profile)
            return latent_probe_r2(model, load_dataset(task, profile, progress=False), max_frames)

        out[arm] = float(memo(f"latent-probe-{task}", spec, probe))
    return pd.Series(out, name="held-out probe R² of q from z")


def pair_difficulty_table(tasks: Sequence[str], profile: Profile, goal_offset: int) -> pd.DataFrame:
    """:func:`~jepa_geometry.planning.protocol.pair_difficulty` of each task's held-out pairs, one
    row per task, each kept as a small cached result (:func:`~jepa_geometry.artifacts.memo`), so the
    table renders without the datasets."""
    rows = {}
    for task in tasks:

        def compute(t: str = task) -> dict[str, float]:
            data = {t: load_dataset(t, profile, progress=False)}
            table = tabulate_tasks(
                data, profile.data.image_size, lambda env, d: pair_difficulty(env, d, goal_offset)
            )
            return table.to_dict(orient="index")[t]  # an integer column stays an integer

        spec = {"dataset": dataset_artifact(task, profile).key, "goal_offset": goal_offset}
        rows[task] = memo(f"pair-difficulty-{task}", spec, compute)
    return pd.DataFrame.from_dict(rows, orient="index")


LOSS_TERMS: tuple[str, ...] = ("pred", "sigreg", "lambda_reg", "scale", "aux")
"""The loss terms a training log can hold, in the order the book plots them."""


def arm_weights_table(arms: Sequence[str], task: str, sigreg_weight: float) -> pd.DataFrame:
    """The default weights of each arm on ``task`` (rows: arms; columns: sigreg, scale, aux,
    kappa in order of first use; NaN where an arm has no such term), arms and weights by their
    display names (SIGReg, SCALE, Aux, κ).

    An arm's loss is ``L_pred + Σ_term weight · term``, so this table is the whole difference
    between the arms' objectives (:func:`jepa_geometry.wm.arms.arm_weights`).
    """
    return shown(pd.DataFrame({m: arm_weights(m, task, sigreg_weight).as_dict() for m in arms}).T)


TRAINING_SUMMARY_COLUMNS: dict[str, str] = {
    "train_seconds": "train time (s)",
    "steps_per_s": "steps/s",
    "pred": "final L_pred",
}
"""The training summary's columns (:func:`~jepa_geometry.wm.training.train_one_seed`) -> the
headers chapter 5 shows."""


def training_summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`~jepa_geometry.wm.training.train_one_seed`'s summary as chapter 5 shows it: its
    columns by :data:`TRAINING_SUMMARY_COLUMNS`, its arms by their display names."""
    return shown(summary.rename(columns=TRAINING_SUMMARY_COLUMNS))


def loss_terms_long(logs: pd.DataFrame) -> pd.DataFrame:
    """:func:`~jepa_geometry.wm.training.train_one_seed`' logs in long form: one row per
    (step, arm, term) with its ``value``.

    Only the :data:`LOSS_TERMS` present are kept, in that order, and rows whose value is NaN
    (a term the arm does not train) are dropped, so each arm appears only in the panels of
    its own terms: ``len = Σ_term #{rows where the term is logged}``.
    """
    terms = [t for t in LOSS_TERMS if t in logs]
    return logs.melt(id_vars=["step", "arm"], value_vars=terms, var_name="term").dropna()


def prediction_loss_trend(logs: pd.DataFrame) -> str:
    """Each arm's logged prediction loss ``L_pred`` at its first and its last logged step, in
    one line (``lewm 1.02 → 0.113; scale ...``, arms in the logs' order): what the loss
    curves show, in numbers. Rows without ``pred`` are skipped."""
    pred = logs.dropna(subset=["pred"]).groupby("arm", sort=False)["pred"].agg(["first", "last"])
    return "; ".join(f"{m} {r['first']:.3g} → {r['last']:.3g}" for m, r in pred.iterrows())


def lambda_target_summary(logs: pd.DataFrame) -> pd.DataFrame:
    """ΛReg's learned target spectrum over training, per arm that has one.

    For each logged row with ``lambda_v`` (``v = D softmax(clip(α, ±½ log κ))``, Σ v = D):
    ``largest v = max_i v_i``, ``smallest v = min_i v_i`` (their ratio ≤ κ) and ``share of
    v > 1 = #{i : v_i > 1} / D``, the fraction of coordinates given more than the isotropic
    variance 1. Rows are arm by arm (sorted by name), in step order; no ΛReg arm gives an
    empty table with the same columns.
    """
    cols = ["arm", "step", "largest v", "smallest v", "share of v > 1"]
    if "lambda_v" not in logs or not logs["lambda_v"].notna().any():
        return pd.DataFrame(columns=cols)
    parts = []
    for m, g in logs.dropna(subset=["lambda_v"]).groupby("arm"):
        v = np.stack(g["lambda_v"].to_numpy()).astype(np.float64)
        parts.append(
            pd.DataFrame(
                {
                    "arm": m,
                    "step": g["step"].to_numpy(),
                    "largest v": v.max(1),
                    "smallest v": v.min(1),
                    "share of v > 1": (v > 1).sum(1) / v.shape[1],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)[cols]


def lambda_spectrum_end(spectrum: pd.DataFrame) -> str:
    """ΛReg's target spectrum at each arm's last logged step (:func:`lambda_target_summary`
    rows), in one line: ``largest v / smallest v`` (at most κ: a ratio at κ means the clip is
    active) and the share of coordinates with ``v > 1``, arms sorted by name; a run without a
    ΛReg arm says so."""
    if not len(spectrum):
        return "no arm of this run trains ΛReg"
    end = spectrum.groupby("arm").last()
    return "; ".join(
        f"{m}: largest/smallest v = {r['largest v'] / r['smallest v']:.3f}, "
        f"share of v > 1 = {r['share of v > 1']:.0%}"
        for m, r in end.iterrows()
    )
