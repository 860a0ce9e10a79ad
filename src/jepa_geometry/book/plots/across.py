"""Chapter 8: across the tasks (SCALE's grid and contrasts, the geometry measures, ΛReg's
spectra by task, AnisoWM's κ sweep on trained models)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from jepa_geometry.book.plots.shared import PAGE_WIDTH, legend_below
from jepa_geometry.book.style import arm_colour, label, task_colour
from jepa_geometry.planning.solver import STUDY_SOLVERS
from jepa_geometry.study.spec import BASELINE


def plot_scale_success(grid: pd.DataFrame) -> plt.Figure:
    """SCALE's main grid as one faceted figure: rows tasks, columns solvers; per arm our
    tier-mean success with its 95 % interval (dots and bars) and SCALE's value (open
    diamonds, same colour); the random policy as a translucent band of its colour.

    ``grid`` is :func:`jepa_geometry.book.tables.across.scale_success` output.
    """
    tasks = list(dict.fromkeys(grid["task"]))
    solvers = [s for s in STUDY_SOLVERS if s in set(grid["solver"])]
    arms = [a for a in dict.fromkeys(grid["arm"]) if a != "random"]
    fig, axes = plt.subplots(
        len(tasks),
        len(solvers),
        figsize=(min(PAGE_WIDTH, 2.0 * len(solvers) + 1.0), 2.1 * len(tasks) + 0.6),
        sharex=True,
        squeeze=False,
    )
    for i, task in enumerate(tasks):
        for j, solver in enumerate(solvers):
            ax = axes[i, j]
            g = grid[(grid.task == task) & (grid.solver == solver)].set_index("arm")
            if "random" in g.index:
                r = g.loc["random"]
                ax.axhspan(
                    100 * r.low,
                    100 * r.high,
                    color=arm_colour("random"),
                    alpha=0.35,
                    lw=0,
                    zorder=0,
                )
            for x, arm in enumerate(arms):
                if arm not in g.index:
                    continue
                r = g.loc[arm]
                ax.errorbar(
                    x,
                    100 * r.rate,
                    yerr=[[100 * (r.rate - r.low)], [100 * (r.high - r.rate)]],
                    fmt="o",
                    ms=4,
                    capsize=2,
                    color=arm_colour(arm),
                )
                if np.isfinite(r.paper):
                    ax.plot(x, r.paper, "D", mfc="none", mec=arm_colour(arm), ms=6)
            ax.set_xticks(range(len(arms)), map(label, arms), rotation=45, ha="right", fontsize=8)
            if i == 0:
                ax.set_title(label(solver))
            if j == 0:
                ax.set_ylabel(f"{label(task)}\nsuccess (%)")
    handles = [
        plt.Line2D([], [], ls="", marker="o", color="0.3", label="ours (95 % CI)"),
        plt.Line2D([], [], ls="", marker="D", mfc="none", mec="0.3", label="SCALE"),
        plt.matplotlib.patches.Patch(color=arm_colour("random"), alpha=0.35, label="random policy"),
    ]
    fig.legend(
        handles=handles,
        loc="upper center",
        ncol=3,
        fontsize=8,
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def plot_contrast_forest(contrasts: pd.DataFrame) -> plt.Figure:
    """Forest plot of each arm minus LeWM per task x solver (tier-mean success, paired 95 %
    intervals), one panel per arm; SCALE's difference as an open diamond where it reports it.

    ``contrasts`` is :func:`jepa_geometry.book.tables.across.scale_contrasts` output.
    """
    arms = list(dict.fromkeys(contrasts["arm"]))
    rows = list(dict.fromkeys(zip(contrasts.task, contrasts.solver, strict=True)))
    labels = [f"{label(t)} {label(s)}" for t, s in rows]
    ncols = min(len(arms), 2)
    nrows = -(-len(arms) // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(PAGE_WIDTH, nrows * (0.24 * len(rows) + 1.2)),
        sharey=True,
        squeeze=False,
    )
    for ax in axes.ravel()[len(arms) :]:
        ax.set_visible(False)
    for ax, arm in zip(axes.ravel(), arms, strict=False):
        c = contrasts[contrasts.arm == arm].set_index(["task", "solver"])
        for y, key in enumerate(rows):
            if key not in c.index:
                continue
            r = c.loc[key]
            d = 100 * r["diff"]
            ax.errorbar(
                d,
                y,
                xerr=[[d - 100 * r.low], [100 * r.high - d]],
                fmt="o",
                ms=4,
                capsize=2,
                color=arm_colour(arm),
            )
            if np.isfinite(r.paper):
                ax.plot(r.paper, y, "D", mfc="none", mec="k", ms=5)
        ax.axvline(0, color="k", lw=0.8)
        ax.set_title(f"{label(arm)} − {label(BASELINE)}", fontsize=10)
        ax.set_xlabel("difference (pp)", fontsize=9)
    axes[0, 0].set_yticks(range(len(rows)), labels)
    axes[0, 0].invert_yaxis()
    for ax in axes[:, 0]:
        ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    return fig


def plot_geometry_heatmap(geometry: pd.DataFrame, measures: list[str]) -> plt.Figure:
    """The geometry measures as two heat maps side by side, ours and the papers' (blank where
    a paper reports none): rows task / arm, columns measures, each cell annotated; the colour
    of each measure is scaled over both panels together (its min to its max), so a colour
    means the same value left and right.

    ``geometry`` is :func:`jepa_geometry.book.tables.across_geometry.geometry_table` output.
    """
    g = geometry[geometry.measure.isin(measures)].copy()
    g["row"] = [f"{label(t)} · {label(a)}" for t, a in zip(g.task, g.arm, strict=True)]
    order = list(dict.fromkeys(g["row"]))
    ours = g.pivot(index="row", columns="measure", values="ours").reindex(order)[measures]
    paper = g.pivot(index="row", columns="measure", values="paper").reindex(order)[measures]
    ours.columns = paper.columns = [label(m) for m in measures]
    both = pd.concat([ours, paper])
    lo, hi = both.min(), both.max()
    span = (hi - lo).replace(0, 1.0)
    fig, axes = plt.subplots(
        2,
        1,
        figsize=(min(PAGE_WIDTH, 0.62 * len(measures) + 2.8), 0.6 * len(order) + 3.0),
    )
    for ax, data, title in ((axes[0], ours, "ours"), (axes[1], paper, "papers")):
        sns.heatmap(
            (data - lo) / span,
            ax=ax,
            cmap="viridis",
            vmin=0,
            vmax=1,
            cbar=False,
            annot=data.map(lambda v: "" if np.isnan(v) else f"{v:.2f}"),
            fmt="",
            annot_kws={"fontsize": 6},
            linewidths=0.3,
            linecolor="white",
        )
        ax.set_title(title)
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.grid(False)
        ax.tick_params(axis="x", labelrotation=60, labelsize=8)
        ax.tick_params(axis="y", labelsize=8)
    axes[0].xaxis.tick_top()  # the measures' names above the first panel and below the second
    plt.setp(axes[0].get_xticklabels(), rotation=60, ha="left", rotation_mode="anchor")
    fig.tight_layout()
    return fig


def plot_lambda_by_task(spectra: pd.DataFrame) -> plt.Figure:
    """The learned ΛReg target variances, sorted, one line per task in its colour (mean over
    seeds): how far from the isotropic 1 each task's Λ moved.

    ``spectra`` is :func:`jepa_geometry.book.tables.across_geometry.lambda_spectra_by_task` output.
    """
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    for task, g in spectra.groupby("task", sort=False):
        ax.plot(g["rank"], g["variance"], lw=1.5, color=task_colour(task), label=label(task))
    ax.axhline(1.0, color="k", lw=0.8, ls="--", label="isotropic (SIGReg)")
    ax.set_xlabel("coordinate rank / D (largest first)")
    ax.set_ylabel("target variance $v_i$")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_trained_kappa_sweep(success: pd.DataFrame, spectra: pd.DataFrame) -> plt.Figure:
    """AnisoWM's κ sweep on trained models: CEM T1 success against κ per task (evaluation
    pairs with Wilson 95 % intervals, validation pairs dashed), and per task the final learned
    target variances, sorted, one line per κ.

    ``success`` is :func:`jepa_geometry.book.tables.kappa.success_by_kappa` output,
    ``spectra`` is :func:`jepa_geometry.book.tables.kappa.sorted_spectra` output; empty
    frames (a sweep not built)
    give a one-line figure that says so.
    """
    if success.empty:  # the sweep is not built at this profile: say so in place of the figure
        fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 1.0))
        ax.axis("off")
        ax.text(0.5, 0.5, "κ sweep not built at this profile", ha="center", va="center")
        return fig
    tasks = list(dict.fromkeys(success["task"]))
    fig, axes = plt.subplots(1, 1 + len(tasks), figsize=(PAGE_WIDTH, 3.2))
    ax = axes[0]
    kappas = sorted(set(success["kappa"]))
    pos = {k: i for i, k in enumerate(kappas)}  # κ evenly spaced: the sweep's points in order
    for task in tasks:
        for split, ls in (("evaluation", "-"), ("validation", "--")):
            g = success[(success["task"] == task) & (success["split"] == split)]
            err = [100 * (g["success"] - g["low"]), 100 * (g["high"] - g["success"])]
            ax.errorbar(
                g["kappa"].map(pos),
                100 * g["success"],
                yerr=err if split == "evaluation" else None,
                color=task_colour(task),
                ls=ls,
                marker="o",
                ms=3,
                capsize=2,
                label=f"{label(task)} ({split})",
            )
    ax.set_xticks(range(len(kappas)), [f"{k:g}" for k in kappas])
    ax.set(xlabel="κ (bound on cond Λ)", ylabel="success (%)", title="CEM T1 success")
    handles, labels = ax.get_legend_handles_labels()  # below the panels: it would hide points
    for ax, task in zip(axes[1:], tasks, strict=True):
        g = spectra[spectra["task"] == task]
        kappas = sorted(set(g["kappa"]))
        cmap = plt.get_cmap("viridis", len(kappas))
        for i, k in enumerate(kappas):
            s = g[g["kappa"] == k]
            ax.plot(s["rank"], s["variance"], color=cmap(i), lw=1.2, label=f"κ = {k:g}")
        ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
        ax.set(xlabel="coordinate rank / D", ylabel="target variance $v_i$", title=label(task))
        ax.legend(fontsize=6)
    legend_below(fig, handles, labels, ncol=len(tasks) * 2, fontsize=7)
    return fig
