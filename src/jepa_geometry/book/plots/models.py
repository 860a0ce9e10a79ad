"""Chapters 4-5: a task's episode strip, and the world models' training (loss terms,
ΛReg's target spectrum, the embedding diagnostics)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from jepa_geometry.book.plots.shared import PAGE_WIDTH, by_arm
from jepa_geometry.book.style import arm_colour, label


def plot_task_strip(task: str, strip: dict[str, np.ndarray], stride: int) -> plt.Figure:
    """The first held-out episode of a dataset as the models see it: its frames side by side
    above the episode's q, standardized with the training split's statistics (as SCALE's loss
    sees it), one line per q coordinate.

    ``strip`` is :func:`jepa_geometry.envs.dataset.episode_strip` of every ``stride``-th frame.
    """
    names = [str(n) for n in strip["q_names"]]
    fig, (ax_img, ax_q) = plt.subplots(
        2, 1, figsize=(PAGE_WIDTH, 3.6), gridspec_kw={"height_ratios": [1, 1.3]}
    )
    ax_img.imshow(strip["frames"], interpolation="nearest")
    ax_img.set(
        xticks=[],
        yticks=[],
        title=f"{label(task)}: steps 0, {stride}, ... of held-out episode {int(strip['episode'])}",
    )
    for j, name in enumerate(names):
        ax_q.plot(strip["step"], strip["q"][:, j], label=label(name))
    ax_q.set(xlabel="env step", ylabel="standardized q")
    ax_q.legend(ncol=min(5, len(names)), fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def plot_loss_terms(long: pd.DataFrame, title: str) -> plt.Figure:
    """One log-scale panel per loss term over training steps, titled by the term's display
    name, one line per arm in its colour.

    ``long`` is :func:`jepa_geometry.book.tables.models.loss_terms_long` output (columns step, arm,
    term, value); panels do not share a y axis, since the terms differ by orders of magnitude.
    """
    arms = list(dict.fromkeys(long["arm"]))
    shown = by_arm(long, arms)
    shown["data"] = shown["data"].assign(term=long["term"].map(label))
    grid = sns.relplot(
        **shown,
        x="step",
        y="value",
        col="term",
        kind="line",
        col_wrap=2,
        height=2.4,
        facet_kws={"sharey": False},
    )
    grid.set(yscale="log")
    grid.set_titles("{col_name}")
    grid.figure.suptitle(title, y=1.03)
    return grid.figure


def plot_lambda_target_spectrum(summary: pd.DataFrame) -> plt.Figure:
    """ΛReg's target spectrum during training: largest and smallest target variance and the
    share of coordinates with ``v > 1``, per arm in its colour (one line style per quantity).

    ``summary`` is :func:`jepa_geometry.book.tables.models.lambda_target_summary` output.
    """
    fig, ax = plt.subplots()
    for m, g in summary.groupby("arm", sort=False):
        c, name = arm_colour(m), label(m)
        ax.plot(g["step"], g["largest v"], color=c, label=f"{name}: largest v")
        ax.plot(g["step"], g["smallest v"], "--", color=c, label=f"{name}: smallest v")
        ax.plot(g["step"], g["share of v > 1"], ":", color=c, label=f"{name}: share of v > 1")
    ax.set(xlabel="step", ylabel="target variance", title="ΛReg target spectrum during training")
    ax.legend(fontsize=8)
    return fig


DIAGNOSTIC_PANELS: tuple[tuple[str, str], ...] = (
    ("cond_lambda", "cond Λ (ΛReg arms; bound κ)"),
    ("corr_v_var_z", "corr(v, Var z)"),
    ("corr_v_rel_err", "corr(v, relative prediction error)"),
    ("top8_share", "top-8 share of the embedding's variance"),
)


def plot_training_diagnostics(
    diagnostics: pd.DataFrame, kappa: float, isotropic_top8: float
) -> plt.Figure:
    """Was Λ selected, and is the embedding isotropic? The diagnostics of every model over
    training (:func:`jepa_geometry.study.diagnostics.training_diagnostics`), one line per
    (arm, seed), one colour per arm; reference lines: κ, 0 for the correlations, and the
    top-8 share of an isotropic Gaussian on one training batch (``isotropic_top8``,
    :func:`jepa_geometry.wm.objective.isotropic_top_share`)."""
    fig, axes = plt.subplots(2, 2, figsize=(PAGE_WIDTH, 5.4), sharex=True)
    axes = axes.ravel()
    arms = list(dict.fromkeys(diagnostics["arm"]))
    refs = {
        "cond_lambda": kappa,
        "corr_v_var_z": 0.0,
        "corr_v_rel_err": 0.0,
        "top8_share": isotropic_top8,
    }
    for ax, (name, title) in zip(axes, DIAGNOSTIC_PANELS, strict=True):
        d = diagnostics[diagnostics["diagnostic"] == name]
        for (m, s), g in d.groupby(["arm", "train_seed"], sort=False):
            ax.plot(
                g["step"],
                g["value"],
                color=arm_colour(m),
                lw=1,
                label=label(m) if s == d[d["arm"] == m]["train_seed"].min() else None,
            )
        ax.axhline(refs[name], color="0.4", lw=0.8, ls="--")
        lo, hi = ax.get_ylim()  # keep the reference line in view
        pad = 0.05 * (max(hi, refs[name]) - min(lo, refs[name]))
        ax.set_ylim(min(lo, refs[name] - pad), max(hi, refs[name] + pad))
        ax.set_title(title, fontsize=10)
        if ax in axes[2:]:
            ax.set_xlabel("training step")
        if d.empty:
            ax.text(0.5, 0.5, "no ΛReg arm", ha="center", transform=ax.transAxes)
    handles, labels = axes[-1].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=min(len(arms), 4),
        fontsize=8,
        bbox_to_anchor=(0.5, -0.08),
    )
    fig.tight_layout()
    return fig
