"""Chapters 1-3: metric leverage, the linear-Gaussian closed forms and the 2-D toy."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from jepa_geometry.book.plots.shared import PAGE_WIDTH, axes_legend_below
from jepa_geometry.book.style import arm_colour, label
from jepa_geometry.theory.linear_gaussian import quadratic_form_grid


def plot_leverage_identity(lev: pd.DataFrame) -> plt.Figure:
    """Each principal direction's predicted cost contribution 2λ_j beside its Monte-Carlo
    measurement (:func:`~jepa_geometry.theory.leverage.metric_leverage` output), log scale."""
    long = lev.melt(
        id_vars="pc",
        value_vars=["predicted_contribution", "measured_contribution"],
        var_name="",
        value_name="cost contribution",
    )
    long[""] = long[""].map(label)
    fig, ax = plt.subplots()
    sns.lineplot(data=long, x="pc", y="cost contribution", hue="", style="", markers=True, ax=ax)
    ax.set(
        yscale="log",
        xlabel="principal direction j",
        title=r"Expected cost contribution $= 2\lambda_j$",
    )
    return fig


def plot_leverage_sweep(sweep: pd.DataFrame) -> plt.Figure:
    """Probe R², the state's share of the cost and Spearman(cost, state distance) against the
    state's scale (:func:`~jepa_geometry.theory.leverage.leverage_sweep` output)."""
    cols = ["probe_r2", "state_leverage_share", "cost_state_spearman"]
    long = sweep.melt(
        id_vars="state_scale", value_vars=cols, var_name="measure", value_name="value"
    )
    long["measure"] = long["measure"].map(label)
    fig, ax = plt.subplots()
    sns.lineplot(data=long, x="state_scale", y="value", hue="measure", marker="o", ax=ax)
    ax.set(
        xscale="log",
        xlabel="scale of the state directions",
        title="The probe decodes q at every scale; the cost listens only at large scale",
    )
    axes_legend_below(fig, ax)  # the measures under the axes, not over their lines
    return fig


def plot_cumulative_leverage(lev: pd.DataFrame, title: str) -> plt.Figure:
    """Cumulative share of the planning cost carried by the leading principal directions."""
    fig, ax = plt.subplots()
    ax.plot(lev.pc, lev.leverage_share.cumsum(), marker=".")
    ax.set(
        xlabel="number of leading principal directions",
        ylabel="cumulative share of the planning cost",
        title=title,
    )
    return fig


def plot_box_planning(
    metric: np.ndarray,
    goal: np.ndarray,
    half_width: float,
    x_star: np.ndarray,
    x_hat: np.ndarray,
    title: str,
) -> plt.Figure:
    """Theorem 1's picture: the reachable box ``[-w, w]²``, the task cost's circles around the
    goal, the latent metric's ellipses (scaled to the planner's optimum ``x̂``), the task
    optimum ``x*`` and the latent optimum ``x̂``."""
    pal = sns.color_palette()
    fig, ax = plt.subplots(figsize=(5.6, 5.2))
    w = half_width
    ax.add_patch(
        plt.Rectangle(
            (-w, -w), 2 * w, 2 * w, fc=pal[0], alpha=0.12, ec="k", lw=1.2, label="reachable set"
        )
    )
    x, y, c = quadratic_form_grid(np.eye(2), goal, 2.2)
    ax.contour(
        x,
        y,
        c,
        levels=[r**2 for r in (0.25, 0.5, 0.75, 1.0, 1.5)],
        colors="grey",
        linestyles=":",
        linewidths=1,
    )
    x, y, c = quadratic_form_grid(metric, goal, 2.2)
    c_hat = (x_hat - goal) @ metric @ (x_hat - goal)
    ax.contour(
        x,
        y,
        c,
        levels=sorted({c_hat * f for f in (0.25, 0.5, 1.0, 2.0, 3.0)}),
        colors=[pal[3]],
        linewidths=1.2,
    )
    ax.plot(*goal, "k*", ms=14, label="goal $x_g$")
    ax.plot(*x_star, "o", color=pal[2], ms=9, label="task-optimal $x^*$")
    ax.plot(*x_hat, "s", color=pal[3], ms=8, label=r"latent-optimal $\hat x$ ($\Sigma^{-1}$)")
    ax.plot([], [], ":", color="grey", label="task cost level sets")
    ax.plot([], [], "-", color=pal[3], label=r"$\Sigma^{-1}$ cost level sets")
    ax.set(
        xlim=(-1.4, 2.4),
        ylim=(-1.9, 1.9),
        aspect="equal",
        xlabel="$x_1$",
        ylabel="$x_2$",
        title=title,
    )
    ax.legend(loc="lower left", fontsize=8)
    return fig


def plot_regret_vs_eta(noise_table: pd.DataFrame, delta_h: float, eta_c: float) -> plt.Figure:
    """Planning regret of the soft minimiser's metric against the process noise η
    (:func:`~jepa_geometry.theory.linear_gaussian.regret_vs_noise` output; collapsed rows,
    regret NaN, are left out), with the Σ⁻¹ limit Δ_H and the collapse threshold."""
    fig, ax = plt.subplots()
    ok = noise_table.dropna(subset=["regret"])
    sns.lineplot(data=ok, x="eta", y="regret", marker="o", ax=ax, label=r"regret of $M_\eta$")
    ax.axhline(delta_h, ls="--", color="k", label=r"$\Delta_H$ ($\Sigma^{-1}$)")
    ax.axvline(eta_c, ls=":", color="grey", label="collapse threshold")
    ax.set(
        xscale="log",
        xlabel=r"process noise $\eta$ (λ = 1)",
        ylabel="planning regret",
        title=r"Exact prediction, vanishing noise: regret rises to $\Delta_H$",
    )
    ax.legend()
    return fig


def plot_kappa_sweep(sweep: pd.DataFrame, rho_sigreg: float, cond: float) -> plt.Figure:
    """Normalized face regret of ΛReg's selected metric against its condition bound κ
    (:func:`~jepa_geometry.theory.linear_gaussian.kappa_sweep` output), with SIGReg's ρ and
    ``κ = cond Σ`` marked."""
    fig, ax = plt.subplots()
    sns.lineplot(
        data=sweep,
        x="kappa",
        y="normalized_regret",
        marker="o",
        ax=ax,
        label="selected ΛReg metric",
    )
    ax.axhline(rho_sigreg, ls="--", color="k", label="SIGReg (κ = 1)")
    ax.axvline(cond, ls=":", color="grey", label="κ = cond Σ")
    ax.set(
        xscale="log",
        xlabel="κ",
        ylabel="normalized face regret ρ(κ)",
        title="ΛReg in the linear model: regret vs condition bound",
    )
    ax.legend()
    return fig


def plot_lowest_cost_sets(
    metrics: dict[str, np.ndarray], agreement: pd.DataFrame, grid: int = 41, quantile: float = 0.1
) -> plt.Figure:
    """AnisoWM Figure 4's analogue: for each metric M, the lowest-``quantile`` set of
    ``xᵀ M x`` on a ``grid²`` window ``[-1, 1]²`` around the goal (blue) against the disc with the
    same share of points (dashed). ``agreement`` is
    :func:`~jepa_geometry.theory.linear_gaussian.cost_distance_table` output (panel titles)."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(PAGE_WIDTH, 3.2), sharey=True)
    axg = np.linspace(-1, 1, grid)
    p = np.stack(np.meshgrid(axg, axg), -1)
    dist = np.linalg.norm(p, axis=-1)
    rows = agreement.set_index("model")
    for ax, (name, m) in zip(axes, metrics.items(), strict=True):
        cost = np.einsum("...i,ij,...j->...", p, m, p)
        low = cost <= np.quantile(cost, quantile)
        ax.imshow(low, origin="lower", extent=(-1, 1, -1, 1), cmap="Blues", vmin=0, vmax=1.4)
        ax.add_patch(
            plt.Circle((0, 0), np.quantile(dist, quantile), fill=False, ls="--", color="k")
        )
        row = rows.loc[name]
        ax.set(title=f"{name}\nρ = {row.spearman:.2f}, IoU = {row.iou:.2f}", xlabel="$x_1$")
    axes[0].set_ylabel("$x_2$")
    fig.suptitle("Lowest 10 % of latent cost (blue) vs the distance disc (dashed)")
    fig.tight_layout()  # room for the suptitle above the two-line panel titles
    return fig


REGULARIZER_ARMS: dict[str, str] = {"sigreg": "lewm", "lambdareg": "anisowm"}
"""The 2-D toy's regularizers and the arm each is the regularizer of: SIGReg LeWM's, ΛReg
AnisoWM's."""


def plot_prediction_vs_regret(
    long: pd.DataFrame, reference: float, n_seeds: int, seed: int = 0
) -> plt.Figure:
    """AnisoWM Figure 1(b)'s analogue: held-out prediction error and normalized planning
    regret against the process noise, one panel each, per regularizer with 95 % intervals
    over seeds (bootstrap drawn with ``seed``, so the figure is the same on every run).
    ``long`` is :func:`~jepa_geometry.book.tables.theory.long_table` output with the measures
    ``heldout_error`` and ``normalized_regret``; ``reference`` is the Σ⁻¹ regret. Each
    regularizer is drawn in the colour of the arm it regularizes (:data:`REGULARIZER_ARMS`)."""
    shown = long.assign(
        regularizer=long["regularizer"].map(label), measure=long["measure"].map(label)
    )
    palette = {label(r): arm_colour(a) for r, a in REGULARIZER_ARMS.items()}
    g = sns.relplot(
        data=shown,
        x="noise",
        y="value",
        hue="regularizer",
        palette={r: c for r, c in palette.items() if r in set(shown["regularizer"])},
        col="measure",
        kind="line",
        marker="o",
        errorbar=("ci", 95),
        seed=seed,
        facet_kws={"sharey": False},
        height=2.8,
        aspect=1.0,
    )
    g.set_titles("{col_name}")
    g.axes[0, 0].set(
        xscale="log",
        yscale="log",
        ylabel="held-out prediction error (normalized)",
        xlabel=r"process noise $\sigma_w$",
    )
    ax = g.axes[0, 1]
    ax.axhline(reference, ls="--", color="k", label="Σ⁻¹ reference")
    ax.axhline(0, ls=":", color="grey")
    ax.set(xscale="log", ylabel="normalized planning regret", xlabel=r"process noise $\sigma_w$")
    ax.legend(loc="center right", fontsize=8)
    g.figure.suptitle(
        f"2-D separation, {n_seeds} seeds per point (Σ⁻¹ reference {reference:.3f})", y=1.04
    )
    return g.figure


def plot_cost_landscape(
    land: dict[str, np.ndarray],
    choices: dict[str, np.ndarray],
    start: np.ndarray,
    goal: np.ndarray,
    half_width: float,
    title: str,
    quantiles: tuple[float, ...] = (0.01, 0.03, 0.07, 0.13, 0.22),
) -> plt.Figure:
    """AnisoWM Figure 1(a)'s analogue: level sets of the task cost, the Σ⁻¹ cost and the
    learned latent cost (at the same quantiles of each over the window, so that shapes compare),
    the reachable box, and where each planner stops. ``land`` is
    :func:`~jepa_geometry.theory.toy2d.cost_landscape` output, ``choices``
    :func:`~jepa_geometry.theory.toy2d.planner_choices` output."""
    pal = sns.color_palette()
    fig, ax = plt.subplots(figsize=(6, 5.4))
    w = half_width
    ax.add_patch(
        plt.Rectangle(start - w, 2 * w, 2 * w, fc=pal[0], alpha=0.12, ec="k", label="reachable set")
    )
    for key, style, color in [
        ("task", ":", "grey"),
        ("inverse_covariance", "--", "k"),
        ("latent", "-", pal[3]),
    ]:
        field = land[key]
        ax.contour(
            land["X"],
            land["Y"],
            field,
            levels=np.quantile(field, list(quantiles)),
            linestyles=style,
            colors=[color],
            linewidths=1.2,
        )
    ax.plot(*goal, "k*", ms=14, label="goal")
    ax.plot(*choices["task"], "o", color=pal[2], ms=9, label="task-optimal $x^*$")
    ax.plot(*choices["learned"], "s", color=pal[3], ms=8, label="learned planner")
    ax.plot(
        *choices["inverse_covariance"],
        "x",
        color="k",
        ms=10,
        mew=2,
        label=r"exact $\Sigma^{-1}$ planner",
    )
    ax.plot([], [], ":", color="grey", label="task cost")
    ax.plot([], [], "--", color="k", label=r"$\Sigma^{-1}$ reference")
    ax.plot([], [], "-", color=pal[3], label="learned latent cost")
    ax.set(aspect="equal", xlabel="$x_1$", ylabel="$x_2$", title=title)
    axes_legend_below(fig, ax, fontsize=7)  # under the axes, off the reachable set
    return fig
