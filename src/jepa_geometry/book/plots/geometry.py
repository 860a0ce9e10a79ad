"""Chapter 7: the trained models' geometry (ΛReg's spectra, PCA and probes of q, the rank
channels, the cost landscapes)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.patches import Circle

from jepa_geometry.analysis import landscape
from jepa_geometry.book.plots.shared import PAGE_WIDTH, axes_legend_below, by_arm
from jepa_geometry.book.style import arm_colour, label


def plot_lambda_spectra(lambda_spectra: dict) -> plt.Figure:
    """AnisoWM Figure 5's analogue: the final learned ΛReg target variances of every
    (arm, seed), sorted, in the arm's colour, beside the first model's sorted spectrum over
    training (a heat map).

    ``lambda_spectra`` is :attr:`jepa_geometry.analysis.measurements.Geometry.lambda_spectra`.
    """
    if not lambda_spectra:
        raise ValueError("no ΛReg spectra: none of the measured arms has a ΛReg term")
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.4))
    seeds = pd.Series([m for m, _ in lambda_spectra]).value_counts()
    for (m, s), sp in sorted(lambda_spectra.items()):
        x = np.arange(1, len(sp["final_sorted"]) + 1)
        n = int(seeds[m])
        first = s == min(t for a, t in lambda_spectra if a == m)
        shown = f"{label(m)} ({n} seed{'s' if n > 1 else ''})" if first else None
        axes[0].plot(x, sp["final_sorted"], color=arm_colour(m), label=shown)
    axes[0].axhline(1.0, color="0.5", lw=0.8, ls="--")
    axes[0].set(
        xlabel="coordinate (sorted)", ylabel="target variance $v_i$", title="final learned spectrum"
    )
    (m, s), sp = sorted(lambda_spectra.items())[0]
    v = np.sort(sp["v"], axis=1)[:, ::-1]
    im = axes[1].imshow(
        v.T,
        aspect="auto",
        cmap="viridis",
        origin="upper",
        extent=[sp["steps"][0], sp["steps"][-1], v.shape[1], 0],
    )
    fig.colorbar(im, ax=axes[1], label="$v_i$ (sorted)")
    axes[1].set(
        xlabel="training step",
        ylabel="coordinate (sorted)",
        title=f"spectrum over training\n({label(m)}, seed {s})",
    )
    axes[0].set_title(axes[0].get_title(), fontsize=10)
    axes[1].set_title(axes[1].get_title(), fontsize=10)
    axes_legend_below(fig, axes[0])
    return fig


def plot_pca_probes(spectra: pd.DataFrame, probes: pd.DataFrame, arms: list[str]) -> plt.Figure:
    """SCALE's geometry at a glance: the PCA spectrum of held-out embeddings (first 16 PCs, band:
    range over seeds) and the R² of q from the top-k PCs against the full embedding."""
    # the bar panel wider: its five two-line probe names side by side
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.4), width_ratios=(1, 2))
    sns.lineplot(
        **by_arm(spectra[spectra.pc <= 16], arms),
        x="pc",
        y="share",
        marker="o",
        ms=4,
        errorbar=("pi", 100),
        ax=axes[0],
    )
    axes[0].set(
        yscale="log",
        xlabel="principal component",
        ylabel="variance share",
        title="PCA spectrum, held-out frames\n(band: range over seeds)",
    )
    long = probes.melt(
        id_vars=["arm", "train_seed"],
        var_name="probe",
        value_name="R²",
        value_vars=["r2_top2", "r2_top4", "r2_top8", "r2_full_ridge", "r2_full_mlp"],
    )
    long["probe"] = long["probe"].map(label).str.replace(", ", "\n", n=1)  # two short lines
    sns.barplot(
        **by_arm(long, arms), x="probe", y="R²", saturation=1, errorbar=("pi", 100), ax=axes[1]
    )
    axes[1].set(
        ylim=(min(0, long["R²"].min()), 1.02), title="R² of q: leading PCs\nvs the full embedding"
    )
    axes[1].tick_params(axis="x", labelsize=8)
    axes[1].set_xlabel("")
    axes[1].get_legend().remove()
    axes_legend_below(fig, axes[0])  # the arms of both panels, under them
    return fig


RANK_METRICS: dict[str, tuple[str, ...]] = {
    "gaussian": ("tau_pred", "tau_geom", "tau_total"),  # SCALE's τ channels
    "dataset": ("agree_enc", "agree_pred"),  # AnisoWM's ordering agreement
}


def plot_ranking(ranking: pd.DataFrame, arms: list[str], seed: int) -> plt.Figure:
    """SCALE's τ channels (Gaussian candidates) and AnisoWM's ordering agreement (recorded
    candidates), mean over seeds x starts with 95 % bootstrap intervals drawn with ``seed`` (so
    the figure is the same on every run)."""
    parts = [
        ranking[ranking.source == source].melt(
            id_vars=["arm", "train_seed", "source", "start"],
            value_vars=list(cols),
            var_name="metric",
            value_name="value",
        )
        for source, cols in RANK_METRICS.items()
    ]
    r = pd.concat(parts, ignore_index=True)
    r["metric"] = r["metric"].map(label)
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 4.2))  # tall enough for the slanted metric names
    sns.pointplot(
        **by_arm(r, arms),
        x="metric",
        y="value",
        dodge=0.5,
        linestyle="none",
        errorbar=("ci", 95),
        seed=seed,
        ax=ax,
    )
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--")
    ax.set(title="Rank channels (τ) and ordering agreement (chance 0.5), mean over seeds x starts")
    ax.set_title(ax.get_title(), fontsize=10)
    ax.tick_params(axis="x", labelsize=8)
    # steep enough that the long names ("agreement, predictor cost") clear their neighbours
    plt.setp(ax.get_xticklabels(), rotation=55, ha="right", rotation_mode="anchor")
    axes_legend_below(fig, ax)
    return fig


def plot_landscapes(
    grid: landscape.LandscapePositions, panels: list[dict[str, Any]], axes: Any = None
) -> Any:
    """One panel per goal: log cost heat map over the grid, the low set's outline (solid), the
    disc of the same area (dashed) and the goal (star); the title gives iou and ρ. ``panels``
    are :func:`~jepa_geometry.analysis.landscape.cost_landscape` results (at least its
    ``goal_position``, ``cost``, ``low_set``, ``disc_radius``, ``iou`` and ``spearman``).
    Returns the figure."""
    if axes is None:
        n = len(panels)
        fig, axes = plt.subplots(1, n, figsize=(min(PAGE_WIDTH, 2.4 * n), min(PAGE_WIDTH / n, 2.4)))
    axes = np.atleast_1d(axes)
    if len(axes) != len(panels):
        raise ValueError(f"{len(panels)} goals but {len(axes)} axes")
    step_x, step_y = grid.xs[1] - grid.xs[0], grid.ys[1] - grid.ys[0]
    x0, x1 = grid.xs[0] - step_x / 2, grid.xs[-1] + step_x / 2
    y0, y1 = grid.ys[0] - step_y / 2, grid.ys[-1] + step_y / 2
    extent = (x0, x1, y1, y0)  # image rows run down, as the frame's y
    for ax, r in zip(axes, panels, strict=True):
        ax.imshow(np.log1p(grid.to_image(r["cost"])), extent=extent, cmap="viridis")
        ax.contour(grid.xs, grid.ys, grid.to_image(r["low_set"]), levels=[0.5], colors="white")
        ax.add_patch(Circle(r["goal_position"], r["disc_radius"], fill=False, ls="--", ec="red"))
        ax.plot(*r["goal_position"], marker="*", color="red", ms=10)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y1, y0)
        ax.set_title(f"IoU {r['iou']:.2f}, ρ {r['spearman']:.2f}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    return axes[0].figure


def plot_landscape_examples(
    grid: landscape.LandscapePositions, panels: dict[str, list[dict[str, Any]]], seed: int
) -> plt.Figure:
    """AnisoWM Figure 4's panels: one row per arm (its model of training seed ``seed``), one
    column per goal, each a :func:`plot_landscapes` panel
    (:func:`~jepa_geometry.analysis.measurements.landscape_examples`' ``panels``)."""
    rows, cols = len(panels), len(next(iter(panels.values())))
    side = min(PAGE_WIDTH / cols, 2.6)
    fig, axes = plt.subplots(rows, cols, figsize=(side * cols, 0.97 * side * rows), squeeze=False)
    for row, (arm, arm_panels) in zip(axes, panels.items(), strict=True):
        plot_landscapes(grid, arm_panels, axes=row)
        row[0].set_ylabel(f"{label(arm)} (seed {seed})")
    fig.tight_layout()
    return fig


def plot_landscape_distribution(landscape_rows: pd.DataFrame, arms: list[str]) -> plt.Figure:
    """Box plots of the landscape IoU and Spearman ρ over random goals, every seed pooled, one
    box per arm in its colour."""
    shown = by_arm(landscape_rows, arms)
    height = 1.2 + 0.3 * len(shown["hue_order"])
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, max(2.4, height)), sharey=True)
    for ax, col in zip(axes, ["iou", "spearman"], strict=True):
        sns.boxplot(
            **shown, y="arm", x=col, order=shown["hue_order"], saturation=1, ax=ax, fliersize=1
        )
        ax.set(title=label(col), xlabel=label(col), ylabel="")
        ax.set_title(ax.get_title(), fontsize=10)
    fig.suptitle("Over random goals, every seed pooled", fontsize=10)
    fig.tight_layout()
    return fig
