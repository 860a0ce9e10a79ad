"""The book's figures, in the order of the chapters that draw them, and the one place they are
saved.

Every figure of the book goes through :func:`savefig` with a stable id (``scale_fig3``,
``aniso_fig1``, ``ours_...``), so regenerated figures land at a predictable path,
``data/figures/<profile>/<fig_id>.png``, next to the other artifacts of the run. What a figure
plots is computed elsewhere (the library's layers below); these functions only draw it.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.patches import Circle

from jepa_geometry.analysis import landscape
from jepa_geometry.artifacts import atomic_path, data_root
from jepa_geometry.envs import task_title
from jepa_geometry.study.grid import GRID_SOLVERS, SOLVER_NAMES
from jepa_geometry.theory.linear_gaussian import quadratic_form_grid

_FIG_ID = re.compile(r"^[a-z][a-z0-9_]*$")


INLINE_DPI = 110
"""Pixels per inch of the figures the pages show (the kernel's inline PNGs)."""
PAGE_WIDTH = 6.4
"""Inches of the widest figure's axes: at :data:`INLINE_DPI` it is 704 px, which a 1280-px
browser window's text column (660 CSS px) shows at about its native size (CSS draws 96 px per
inch), leaving room for a legend beside the axes, so 8-pt tick labels stay about 11 px high.
Wider content is stacked in rows of panels."""


def set_theme(inline: bool = False) -> None:
    """The book's seaborn style: white grid, readable at print width.

    With ``inline=True`` inside a Jupyter kernel, figures are also shown inline (even when
    ``MPLBACKEND=Agg`` is set in the environment the kernel inherited).
    """
    if inline:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell":
            shell.run_line_magic("matplotlib", "inline")
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update(
        {"figure.dpi": INLINE_DPI, "savefig.dpi": 150, "figure.figsize": (6.4, 4.0)}
    )


def figure_path(fig_id: str, profile: str) -> Path:
    if not _FIG_ID.match(fig_id):
        raise ValueError(f"bad figure id {fig_id!r}: lowercase snake_case, e.g. 'scale_fig3'")
    return data_root() / "figures" / profile / f"{fig_id}.png"


def savefig(fig: plt.Figure, fig_id: str, profile: str) -> Path:
    """Save ``fig`` atomically as ``data/figures/<profile>/<fig_id>.png`` and return the path."""
    path = figure_path(fig_id, profile)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", bbox_inches="tight")
    return path


# --- chapter 1: metric leverage ------------------------------------------------------------------


def plot_leverage_identity(lev: pd.DataFrame) -> plt.Figure:
    """Each principal direction's predicted cost contribution 2λ_j beside its Monte-Carlo
    measurement (:func:`~jepa_geometry.theory.leverage.metric_leverage` output), log scale."""
    long = lev.melt(
        id_vars="pc",
        value_vars=["predicted_contribution", "measured_contribution"],
        var_name="",
        value_name="cost contribution",
    )
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
    fig, ax = plt.subplots()
    sns.lineplot(data=long, x="state_scale", y="value", hue="measure", marker="o", ax=ax)
    ax.set(
        xscale="log",
        xlabel="scale of the state directions",
        title="The probe decodes q at every scale; the cost listens only at large scale",
    )
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


# --- chapters 2-3: the closed forms and the 2-D toy ----------------------------------------------


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
    fig.suptitle("Lowest 10 % of latent cost (blue) vs the distance disc (dashed)", y=1.03)
    return fig


def plot_prediction_vs_regret(
    long: pd.DataFrame, reference: float, n_seeds: int, seed: int = 0
) -> plt.Figure:
    """AnisoWM Figure 1(b)'s analogue: held-out prediction error and normalized planning
    regret against the process noise, one panel each, per regularizer with 95 % intervals
    over seeds (bootstrap drawn with ``seed``, so the figure is the same on every run).
    ``long`` is :func:`~jepa_geometry.study.tables.theory.long_table` output with the measures
    ``heldout_error`` and ``normalized_regret``; ``reference`` is the Σ⁻¹ regret."""
    g = sns.relplot(
        data=long,
        x="noise",
        y="value",
        hue="regularizer",
        col="measure",
        kind="line",
        marker="o",
        errorbar=("ci", 95),
        seed=seed,
        facet_kws={"sharey": False},
        height=2.8,
        aspect=1.0,
    )
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
    ax.legend(fontsize=7, loc="best")
    return fig


# --- chapters 4-5: the tasks and the world models ------------------------------------------------


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
        title=f"{task}: steps 0, {stride}, ... of held-out episode {int(strip['episode'])}",
    )
    for j, name in enumerate(names):
        ax_q.plot(strip["step"], strip["q"][:, j], label=name)
    ax_q.set(xlabel="env step", ylabel="standardized q")
    ax_q.legend(ncol=min(5, len(names)), fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def plot_loss_terms(long: pd.DataFrame, title: str) -> plt.Figure:
    """One log-scale panel per loss term over training steps, one line per arm.

    ``long`` is :func:`jepa_geometry.study.tables.models.loss_terms_long` output (columns step, arm,
    term, value); panels do not share a y axis, since the terms differ by orders of magnitude.
    """
    grid = sns.relplot(
        data=long,
        x="step",
        y="value",
        hue="arm",
        col="term",
        kind="line",
        col_wrap=2,
        height=2.4,
        facet_kws={"sharey": False},
    )
    grid.set(yscale="log")
    grid.figure.suptitle(title, y=1.03)
    return grid.figure


def plot_lambda_target_spectrum(summary: pd.DataFrame) -> plt.Figure:
    """ΛReg's target spectrum during training: largest and smallest target variance and the
    share of coordinates with ``v > 1``, per arm.

    ``summary`` is :func:`jepa_geometry.study.tables.models.lambda_target_summary` output.
    """
    fig, ax = plt.subplots()
    for m, g in summary.groupby("arm", sort=False):
        ax.plot(g["step"], g["largest v"], label=f"{m}: largest v")
        ax.plot(g["step"], g["smallest v"], "--", label=f"{m}: smallest v")
        ax.plot(g["step"], g["share of v > 1"], ":", label=f"{m}: share of v > 1")
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
    training (:func:`jepa_geometry.study.tables.geometry.training_diagnostics`), one line per
    (arm, seed), one colour per arm; reference lines: κ, 0 for the correlations, and the
    top-8 share of an isotropic Gaussian on one training batch (``isotropic_top8``,
    :func:`jepa_geometry.wm.objective.isotropic_top_share`)."""
    fig, axes = plt.subplots(2, 2, figsize=(PAGE_WIDTH, 5.4), sharex=True)
    axes = axes.ravel()
    arms = list(dict.fromkeys(diagnostics["arm"]))
    colors = dict(zip(arms, sns.color_palette("tab10", len(arms)), strict=True))
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
                color=colors[m],
                lw=1,
                label=m if s == d[d["arm"] == m]["train_seed"].min() else None,
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


# --- chapter 6: planning -------------------------------------------------------------------------


def plot_success_cells(table, protocol: str, arms: list[str]) -> plt.Figure:
    """Success (95 % CI bars) per solver cell for each arm, one panel per solver.

    ``table`` is :func:`jepa_geometry.study.grid.success_table` output; the random floor
    (``arm == "random"``) is drawn as a grey band when present.
    """
    t = table[table["protocol"] == protocol]
    solvers = [s for s in GRID_SOLVERS if s in set(t["solver"])]
    fig, axes = plt.subplots(
        len(solvers),
        1,
        figsize=(PAGE_WIDTH, 2.4 * len(solvers) + 0.8),
        sharey=True,
        squeeze=False,
    )
    palette = dict(zip(arms, sns.color_palette("colorblind", len(arms)), strict=True))
    for ax, solver in zip(axes[:, 0], solvers, strict=True):
        s = t[t["solver"] == solver]
        budgets = sorted(set(s["budget"]))
        x = {b: i for i, b in enumerate(budgets)}
        rnd = s[s["arm"] == "random"]
        if not rnd.empty:
            ax.axhspan(100 * rnd.low.min(), 100 * rnd.high.max(), color="0.85", label="random")
        for j, m in enumerate(arms):
            r = s[s["arm"] == m].sort_values("budget")
            if r.empty:
                continue
            off = (j - (len(arms) - 1) / 2) * 0.12
            xs = [x[b] + off for b in r.budget]
            err = [100 * (r.rate - r.low), 100 * (r.high - r.rate)]
            ax.errorbar(
                xs,
                100 * r.rate,
                yerr=err,
                fmt="o-",
                ms=4,
                lw=1,
                capsize=2,
                color=palette[m],
                label=m,
            )
        ax.set_xticks(range(len(budgets)), budgets)
        ax.set_title(SOLVER_NAMES[solver], fontsize=10)
        ax.set_ylabel("success (%)")
    axes[-1, 0].set_xlabel("budget tier")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8)
    fig.tight_layout(rect=(0, 0.08 if len(labels) <= 4 else 0.12, 1, 1))
    return fig


def plot_paired(paired, protocol: str, arms: list[str]) -> plt.Figure:
    """Forest plot: each arm minus the baseline per cell, with paired 95 % CIs."""
    t = paired[paired["protocol"] == protocol].copy()
    t["cell"] = t["solver"].map(SOLVER_NAMES) + " " + t["budget"]
    order = {s: i for i, s in enumerate(GRID_SOLVERS)}
    t = t.sort_values(["solver", "budget"], key=lambda c: c.map(order) if c.name == "solver" else c)
    cells = list(dict.fromkeys(t["cell"]))
    arms = [m for m in arms if m in set(t["arm"])]
    fig, ax = plt.subplots(figsize=(6.4, 0.35 * len(cells) * len(arms) / 2 + 1.5))
    palette = dict(zip(arms, sns.color_palette("colorblind", len(arms)), strict=True))
    for j, m in enumerate(arms):
        r = t[t["arm"] == m].set_index("cell").loc[[c for c in cells if c in set(t.cell)]]
        y = [cells.index(c) + (j - (len(arms) - 1) / 2) * 0.18 for c in r.index]
        d = 100 * r["diff"]
        err = [d - 100 * r.low, 100 * r.high - d]
        ax.errorbar(d, y, xerr=err, fmt="o", ms=4, capsize=2, color=palette[m], label=f"{m} - lewm")
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(range(len(cells)), cells)
    ax.invert_yaxis()
    ax.set_xlabel("success difference vs lewm (percentage points)")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


# --- chapter 7: geometry -------------------------------------------------------------------------


def plot_lambda_spectra(lambda_spectra: dict) -> plt.Figure:
    """AnisoWM Figure 5's analogue: the final learned ΛReg target variances of every
    (arm, seed), sorted, beside the first model's sorted spectrum over training (a heat map).

    ``lambda_spectra`` is :attr:`jepa_geometry.analysis.measurements.Geometry.lambda_spectra`.
    """
    if not lambda_spectra:
        raise ValueError("no ΛReg spectra: none of the measured arms has a ΛReg term")
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.2))
    for (m, s), sp in sorted(lambda_spectra.items()):
        axes[0].plot(
            np.arange(1, len(sp["final_sorted"]) + 1), sp["final_sorted"], label=f"{m} seed {s}"
        )
    axes[0].axhline(1.0, color="0.5", lw=0.8, ls="--")
    axes[0].set(
        xlabel="coordinate (sorted)", ylabel="target variance $v_i$", title="final learned spectrum"
    )
    axes[0].legend(fontsize=7)
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
        title=f"spectrum over training ({m}, seed {s})",
    )
    fig.tight_layout()
    return fig


def plot_pca_probes(spectra: pd.DataFrame, probes: pd.DataFrame, arms: list[str]) -> plt.Figure:
    """SCALE's geometry at a glance: the PCA spectrum of held-out embeddings (first 16 PCs, band:
    range over seeds) and the R² of q from the top-k PCs against the full embedding."""
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.4))
    spec = spectra[spectra.pc <= 16]
    sns.lineplot(
        data=spec,
        x="pc",
        y="share",
        hue="arm",
        hue_order=arms,
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
        value_name="R2",
        value_vars=["r2_top2", "r2_top4", "r2_top8", "r2_full_ridge", "r2_full_mlp"],
    )
    sns.barplot(
        data=long, x="probe", y="R2", hue="arm", hue_order=arms, errorbar=("pi", 100), ax=axes[1]
    )
    axes[1].set(
        ylim=(min(0, long.R2.min()), 1.02), title="R² of q: leading PCs\nvs the full embedding"
    )
    axes[1].legend(fontsize=7)
    axes[1].tick_params(axis="x", labelrotation=30)
    fig.tight_layout()
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
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 3.4))
    sns.pointplot(
        data=r,
        x="metric",
        y="value",
        hue="arm",
        hue_order=arms,
        dodge=0.5,
        linestyle="none",
        errorbar=("ci", 95),
        seed=seed,
        ax=ax,
    )
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--")
    ax.set(title="Rank channels (τ) and ordering agreement (chance 0.5), mean over seeds x starts")
    ax.legend(fontsize=7)
    return fig


def plot_landscapes(
    grid: landscape.Grid,
    z_grid: np.ndarray,
    goal_indices: list[int],
    axes: Any = None,
    quantile: float = 0.1,
) -> Any:
    """One panel per goal: log cost heat map over the grid, the low set's outline (solid), the
    disc of the same area (dashed) and the goal (star); the title gives iou and ρ.
    Returns the figure."""
    if axes is None:
        n = len(goal_indices)
        fig, axes = plt.subplots(1, n, figsize=(min(PAGE_WIDTH, 2.4 * n), min(PAGE_WIDTH / n, 2.4)))
    axes = np.atleast_1d(axes)
    if len(axes) != len(goal_indices):
        raise ValueError(f"{len(goal_indices)} goals but {len(axes)} axes")
    step_x, step_y = grid.xs[1] - grid.xs[0], grid.ys[1] - grid.ys[0]
    x0, x1 = grid.xs[0] - step_x / 2, grid.xs[-1] + step_x / 2
    y0, y1 = grid.ys[0] - step_y / 2, grid.ys[-1] + step_y / 2
    extent = (x0, x1, y1, y0)  # image rows run down, as the frame's y
    for ax, g in zip(axes, goal_indices, strict=True):
        r = landscape.cost_landscape(
            z_grid, grid.positions, g, quantile, landscape.grid_period(grid.task)
        )
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
    grid: landscape.Grid, z_grids: dict[str, np.ndarray], goals: list[int], seed: int
) -> plt.Figure:
    """AnisoWM Figure 4's panels: one row per arm (its model of training seed ``seed``), one
    column per goal, each a :func:`plot_landscapes` panel."""
    rows, cols = len(z_grids), len(goals)
    side = min(PAGE_WIDTH / cols, 2.6)
    fig, axes = plt.subplots(rows, cols, figsize=(side * cols, 0.97 * side * rows), squeeze=False)
    for row, (arm, z_grid) in zip(axes, z_grids.items(), strict=True):
        plot_landscapes(grid, z_grid, goals, axes=row)
        row[0].set_ylabel(f"{arm} (seed {seed})")
    fig.tight_layout()
    return fig


def plot_landscape_distribution(landscape_rows: pd.DataFrame, arms: list[str]) -> plt.Figure:
    """Box plots of the landscape IoU and Spearman ρ over random goals, every seed pooled."""
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.2))
    for ax, col in zip(axes, ["iou", "spearman"], strict=True):
        sns.boxplot(data=landscape_rows, x="arm", y=col, order=arms, ax=ax, fliersize=1)
        ax.set(title=f"{col} over random goals (all seeds)", xlabel="")
        ax.tick_params(axis="x", labelrotation=20)
    fig.tight_layout()
    return fig


# --- chapter 8: across the tasks -----------------------------------------------------------------


def _arm_palette(arms: list[str]) -> dict[str, Any]:
    return dict(zip(arms, sns.color_palette("colorblind", len(arms)), strict=True))


def plot_scale_grid(grid: pd.DataFrame) -> plt.Figure:
    """SCALE's main grid as one faceted figure: rows tasks, columns solvers; per arm our
    tier-mean success with its 95 % interval (dots and bars) and SCALE's value (open
    diamonds, same colour); the random policy as a grey band.

    ``grid`` is :func:`jepa_geometry.study.across.scale_grid` output.
    """
    tasks = list(dict.fromkeys(grid["task"]))
    solvers = [s for s in GRID_SOLVERS if s in set(grid["solver"])]
    arms = [a for a in dict.fromkeys(grid["arm"]) if a != "random"]
    palette = _arm_palette(arms)
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
                ax.axhspan(100 * r.low, 100 * r.high, color="0.85", zorder=0)
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
                    color=palette[arm],
                )
                if np.isfinite(r.paper):
                    ax.plot(x, r.paper, "D", mfc="none", mec=palette[arm], ms=6)
            ax.set_xticks(range(len(arms)), arms, rotation=45, ha="right", fontsize=8)
            if i == 0:
                ax.set_title(SOLVER_NAMES[solver])
            if j == 0:
                ax.set_ylabel(f"{task_title(task)}\nsuccess (%)")
    handles = [
        plt.Line2D([], [], ls="", marker="o", color="0.3", label="ours (95 % CI)"),
        plt.Line2D([], [], ls="", marker="D", mfc="none", mec="0.3", label="SCALE"),
        plt.matplotlib.patches.Patch(color="0.85", label="random policy"),
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

    ``contrasts`` is :func:`jepa_geometry.study.across.scale_contrasts` output.
    """
    arms = list(dict.fromkeys(contrasts["arm"]))
    rows = list(dict.fromkeys(zip(contrasts.task, contrasts.solver, strict=True)))
    labels = [f"{task_title(t)} {SOLVER_NAMES[s]}" for t, s in rows]
    palette = _arm_palette(arms)
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
                color=palette[arm],
            )
            if np.isfinite(r.paper):
                ax.plot(r.paper, y, "D", mfc="none", mec="k", ms=5)
        ax.axvline(0, color="k", lw=0.8)
        ax.set_title(f"{arm} − lewm", fontsize=10)
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

    ``geometry`` is :func:`jepa_geometry.study.across.geometry_table` output.
    """
    g = geometry[geometry.measure.isin(measures)].copy()
    g["row"] = [f"{task_title(t)} · {a}" for t, a in zip(g.task, g.arm, strict=True)]
    order = list(dict.fromkeys(g["row"]))
    ours = g.pivot(index="row", columns="measure", values="ours").reindex(order)[measures]
    paper = g.pivot(index="row", columns="measure", values="paper").reindex(order)[measures]
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
    """The learned ΛReg target variances, sorted, one line per task (mean over seeds): how
    far from the isotropic 1 each task's Λ moved.

    ``spectra`` is :func:`jepa_geometry.study.across.lambda_spectra_by_task` output.
    """
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    for task, g in spectra.groupby("task", sort=False):
        ax.plot(g["rank"], g["variance"], lw=1.5, label=task)
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

    ``success`` is :func:`jepa_geometry.extensions.kappa_tables.success_by_kappa` output,
    ``spectra`` is :func:`jepa_geometry.extensions.kappa_tables.sorted_spectra` output; empty
    frames (a sweep not built) give a one-line figure that says so.
    """
    if success.empty:  # the sweep is not built at this profile: say so in place of the figure
        fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 1.0))
        ax.axis("off")
        ax.text(0.5, 0.5, "κ sweep not built at this profile", ha="center", va="center")
        return fig
    tasks = list(dict.fromkeys(success["task"]))
    fig, axes = plt.subplots(1, 1 + len(tasks), figsize=(PAGE_WIDTH, 3.2))
    colours = dict(zip(tasks, sns.color_palette(n_colors=len(tasks)), strict=True))
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
                color=colours[task],
                ls=ls,
                marker="o",
                ms=3,
                capsize=2,
                label=f"{task} ({split})",
            )
    ax.set_xticks(range(len(kappas)), [f"{k:g}" for k in kappas])
    ax.set(xlabel="κ (bound on cond Λ)", ylabel="success (%)", title="CEM T1 success")
    handles, labels = ax.get_legend_handles_labels()  # below the panels: it would hide points
    fig.legend(handles, labels, loc="lower center", ncol=len(tasks) * 2, fontsize=7)
    for ax, task in zip(axes[1:], tasks, strict=True):
        g = spectra[spectra["task"] == task]
        kappas = sorted(set(g["kappa"]))
        cmap = plt.get_cmap("viridis", len(kappas))
        for i, k in enumerate(kappas):
            s = g[g["kappa"] == k]
            ax.plot(s["rank"], s["variance"], color=cmap(i), lw=1.2, label=f"κ = {k:g}")
        ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
        ax.set(xlabel="coordinate rank / D", ylabel="target variance $v_i$", title=task)
        ax.legend(fontsize=6)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


# --- chapter 9: toward the papers' scale --------------------------------------------------------


def _scaling_panels(n: int) -> tuple[plt.Figure, np.ndarray]:
    cols = min(n, 2)
    rows = -(-n // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(PAGE_WIDTH, 2.3 * rows + 0.6), squeeze=False, sharex=True
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes


def _paper_budgets(ax: plt.Axes, budgets: pd.DataFrame, palette: dict[str, Any]) -> None:
    for b in budgets.itertuples():
        if b.task in palette:
            ax.axvline(b.flops, color=palette[b.task], ls=":", lw=1)


def plot_scaling_effects(
    effects: pd.DataFrame, claims: list[str], budgets: pd.DataFrame
) -> plt.Figure:
    """One panel per claim: our effect (dot, 95 % interval bar) against training FLOPs (log
    scale), one colour per task; open squares at the higher-resolution point; the paper's
    effect as a dashed line of the task's colour; the verdict's minimum effect in the claim's
    direction as a grey dotted line, zero as a thin line; the papers' training budget as a
    dotted vertical line per task.

    ``effects`` is :func:`jepa_geometry.extensions.scaling_results.claim_effects` output,
    ``budgets`` one :func:`~jepa_geometry.extensions.scaling_results.paper_budget` row per task.
    """
    tasks = list(dict.fromkeys(effects["task"]))
    palette = dict(zip(tasks, sns.color_palette("colorblind", len(tasks)), strict=True))
    fig, axes = _scaling_panels(len(claims))
    for ax, claim in zip(axes.flat, claims, strict=False):
        sub = effects[effects["claim"] == claim]
        for task, grp in sub.groupby("task", sort=False):
            for res, marker, mfc in ((1.0, "o", None), (None, "s", "none")):
                g = grp[grp["image"] == 1.0] if res else grp[grp["image"] != 1.0]
                if g.empty:
                    continue
                g = g.sort_values("flops")
                ax.errorbar(
                    g["flops"], g["effect"],
                    yerr=[g["effect"] - g["low"], g["high"] - g["effect"]],
                    fmt=marker + ("-" if res else ""), ms=4, capsize=2, mfc=mfc,
                    color=palette[task], label=task_title(task) if res else None,
                )  # fmt: skip
            paper = grp["paper_effect"].dropna()
            if not paper.empty:
                ax.axhline(float(paper.iloc[0]), color=palette[task], ls="--", lw=1)
        d, thr, m = (float(sub[c].iloc[0]) for c in ("direction", "threshold", "min_effect"))
        ax.axhline(d * (thr + m), color="0.5", ls=":", lw=1)
        ax.axhline(0.0, color="0.7", lw=0.6)
        _paper_budgets(ax, budgets, palette)
        ax.set_xscale("log")
        ax.set_title(textwrap.fill(claim, 48), fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("training FLOPs per model", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("effect (a - b)", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8,
                   bbox_to_anchor=(0.5, -0.02))  # fmt: skip
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def plot_scaling_premises(premises: pd.DataFrame, budgets: pd.DataFrame) -> plt.Figure:
    """One panel per premise measure: each (task, arm)'s mean over seeds (dot, range bar over
    seeds) against training FLOPs (log scale), one colour per task, one marker per arm; the
    measure's reference (the isotropic share 8 / D, the bound κ, zero) as a grey dotted line;
    the papers' training budget as a dotted vertical line per task.

    ``premises`` is :func:`jepa_geometry.extensions.scaling_results.premise_table` output.
    """
    measures = list(dict.fromkeys(premises["measure"]))
    tasks = list(dict.fromkeys(premises["task"]))
    palette = dict(zip(tasks, sns.color_palette("colorblind", len(tasks)), strict=True))
    arms = list(dict.fromkeys(premises["arm"]))
    markers = dict(zip(arms, "o^sDvP<>", strict=False))
    fig, axes = _scaling_panels(len(measures))
    for ax, measure in zip(axes.flat, measures, strict=False):
        sub = premises[premises["measure"] == measure]
        for (task, arm), g in sub.groupby(["task", "arm"], sort=False):
            g = g.sort_values("flops")
            ax.errorbar(
                g["flops"], g["value"], yerr=[g["value"] - g["low"], g["high"] - g["value"]],
                fmt=markers[arm] + "-", ms=4, capsize=2, color=palette[task], lw=0.8,
            )  # fmt: skip
        ref = sub["reference"].dropna()
        if not ref.empty:
            ax.axhline(float(ref.mean()), color="0.5", ls=":", lw=1)
        _paper_budgets(ax, budgets, palette)
        ax.set_xscale("log")
        ax.set_title(measure, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("training FLOPs per model", fontsize=8)
    handles = [
        plt.Line2D([], [], color=palette[t], marker="o", ls="", label=task_title(t)) for t in tasks
    ] + [plt.Line2D([], [], color="0.3", marker=markers[a], ls="", label=a) for a in arms]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8,
               bbox_to_anchor=(0.5, -0.01))  # fmt: skip
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig
