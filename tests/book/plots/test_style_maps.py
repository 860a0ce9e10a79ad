"""Every figure of the book colours an arm or a task by the book's one map and labels it by
its display name (:mod:`jepa_geometry.book.style`), whichever arms or tasks it shows (issue
68: SCALE was orange in one figure and blue in the next, legends read ``lewm``, facets
``term = lambda_reg``).

Each figure function is built on small synthetic inputs; a figure fails when a text it shows
(title, axis label, tick label, legend entry or title) holds a code name the map names
differently or an identifier (``ratio_p90_over_p10``), when a legend entry naming an arm or a
task is drawn in another colour than the map's, or, for a figure of arms, when any colour it
draws is neither grey nor the map's colour of one of its arms.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import Collection, QuadMesh
from matplotlib.colors import to_rgba
from matplotlib.image import AxesImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from jepa_geometry.analysis import landscape
from jepa_geometry.book import plots, style
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.planning.solver import SOLVER_NAMES
from tests.book.plots.test_primary import _primary as primary_rows

ARMS = ("lewm", "scale", "aux", "anisowm", "scale+anisowm", "dinowm", "scale-halfq")
SOME = ("scale", "anisowm")  # a figure of a few arms: colours must not follow their order
WORDS = {"scale"}  # a code name that is also an English word: flagged only alone
_TOKEN = re.compile(r"[\w+./-]+")
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+$")
RENAMED = {n for s, n in SOLVER_NAMES.items() if style.display_name(s) != n}
"""Names the study gives a solver label that the book shows otherwise (``MPPI at swm's T``:
swm, stable-worldmodel, is a package the reader need not know)."""


def code_names(text: str) -> list[str]:
    """The code names ``text`` shows: a label that is one whole, or a word of it that the map
    names differently (English words of the map alone only), or an identifier; math ($...$)
    is not a label's words."""
    text = re.sub(r"\$[^$]*\$", "", text).strip()
    found = [text] if text in WORDS else []
    found += [n for n in RENAMED if n in text]
    for token in _TOKEN.findall(text):
        if token in WORDS:
            continue
        if style.display_name(token) != token or _IDENTIFIER.match(token):
            found.append(token)
    return found


def test_the_check_finds_code_names_and_passes_display_names():
    assert code_names("term = lambda_reg") == ["lambda_reg"]
    assert code_names("scale − lewm") == ["lewm"]
    assert code_names("scale") == ["scale"]
    assert not RENAMED  # the study names every solver label as the book shows it
    assert code_names("goal100_budget150") == ["goal100_budget150"]
    assert code_names("scale of the state directions") == []
    assert code_names("target variance $v_i$") == []
    assert code_names("SCALE − LeWM") == code_names("Kendall τ, predictor") == []


def _legends(fig: plt.Figure) -> list[Legend]:
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]


def texts(fig: plt.Figure) -> Iterator[str]:
    """Every text a reader sees: titles, axis labels, tick labels, legends, figure texts."""
    fig.canvas.draw()
    if fig._suptitle is not None:
        yield fig._suptitle.get_text()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        yield from (ax.get_title(loc) for loc in ("left", "center", "right"))
        yield ax.get_xlabel()
        yield ax.get_ylabel()
        yield from (t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels())
    for legend in _legends(fig):
        yield legend.get_title().get_text()
        yield from (t.get_text() for t in legend.get_texts())
    yield from (t.get_text() for t in fig.texts if isinstance(t, Text))


def _rgb(colour) -> tuple[float, float, float]:
    return tuple(round(c, 3) for c in to_rgba(colour)[:3])


def _grey(rgb: tuple[float, float, float]) -> bool:
    return max(rgb) - min(rgb) < 0.02


def _handle_colour(handle) -> tuple[float, float, float] | None:
    if isinstance(handle, Line2D):
        colour = handle.get_color() if handle.get_linestyle() != "None" else handle.get_mec()
        return _rgb(colour)
    if isinstance(handle, Patch):
        return _rgb(handle.get_facecolor())
    if isinstance(handle, Collection):  # a band's face, an error bar's line
        seen = [c for c in [*handle.get_facecolor(), *handle.get_edgecolor()] if c[3] > 0]
        return _rgb(seen[0]) if seen else None
    return None


def _named(text: str) -> tuple[str, str] | None:
    """``(what, colour)`` of the arm or task a legend entry names (first word(s), by its
    display name or its code name), or None."""
    names = {style.display_name(a): a for a in style.ARM_COLOURS} | {
        a: a for a in style.ARM_COLOURS
    }
    found = [
        (n, a)
        for n, a in names.items()
        if text == n or (text.startswith(n) and not text[len(n)].isalnum())
    ]
    if found:
        arm = max(found, key=lambda f: len(f[0]))[1]
        return arm, style.arm_colour(arm)
    for t in TASKS:
        for n in (task_title(t), t):
            if text == n or (text.startswith(n) and not text[len(n)].isalnum()):
                return t, style.task_colour(t)
    return None


def wrong_legend_colours(fig: plt.Figure) -> list[str]:
    """Legend entries naming an arm or a task drawn in another colour than the map's."""
    wrong = []
    for legend in _legends(fig):
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            named = _named(text.get_text())
            drawn = _handle_colour(handle)
            if named and drawn is not None and not _grey(drawn) and drawn != _rgb(named[1]):
                wrong.append(f"{text.get_text()!r} drawn {drawn}, the map's {named[0]}: {named[1]}")
    return wrong


def drawn_colours(fig: plt.Figure) -> set[tuple[float, float, float]]:
    """The colours of every line, marker, patch and collection of the figure's axes (images
    and heat maps, coloured by value, left out), transparent ones left out."""
    out: set[tuple[float, float, float]] = set()

    def add(colour) -> None:
        rgba = to_rgba(colour)
        if rgba[3] > 0:
            out.add(tuple(round(c, 3) for c in rgba[:3]))

    for ax in fig.axes:
        for line in ax.lines:  # its line where it has one, its markers' edge and face
            if line.get_linestyle() != "None":
                add(line.get_color())
            if line.get_marker() not in ("None", "", None):
                for c in (line.get_mec(), line.get_mfc()):
                    if not (isinstance(c, str) and c == "none"):
                        add(c)
        for patch in ax.patches:
            add(patch.get_facecolor())
            add(patch.get_edgecolor())
        for coll in ax.collections:
            if isinstance(coll, QuadMesh | AxesImage):
                continue
            for c in [*coll.get_facecolor(), *coll.get_edgecolor()]:
                add(c)
    return out


def foreign_colours(fig: plt.Figure, arms: tuple[str, ...]) -> list[tuple[float, float, float]]:
    """The colours a figure of ``arms`` draws that are neither grey nor one of theirs."""
    theirs = {_rgb(style.arm_colour(a)) for a in arms}
    return sorted(c for c in drawn_colours(fig) - theirs if not _grey(c))


# --- synthetic inputs, one per figure -------------------------------------------------------


def _success_table(arms) -> pd.DataFrame:
    rows = []
    for solver in ("cem", "mppi_swm"):
        for b in ("T1", "T3"):
            for i, arm in enumerate([*arms, "random"]):
                r = 0.2 + 0.05 * i
                rows.append(dict(protocol="goal25_budget50", solver=solver, budget=b, arm=arm))
                rows[-1].update(rate=r, low=r - 0.05, high=r + 0.05, seeds=3)
    return pd.DataFrame(rows)


def _paired(arms) -> pd.DataFrame:
    rows = [
        dict(protocol="goal25_budget50", solver=s, budget=b, arm=a, diff=0.02 * i)
        for i, a in enumerate(arms)
        for s in ("cem", "mppi_swm")
        for b in ("T1", "T3")
    ]
    return pd.DataFrame(rows).assign(
        low=lambda t: t["diff"] - 0.05, high=lambda t: t["diff"] + 0.05
    )


def _loss_long(arms) -> pd.DataFrame:
    terms = {"pred": 1.0, "sigreg": 0.5, "lambda_reg": 0.3, "scale": 0.2, "aux": 0.1}
    rows = [
        dict(step=s, arm=a, term=t, value=v * (1 + 1 / s))
        for a in arms
        for t, v in terms.items()
        for s in (1, 2, 3)
    ]
    return pd.DataFrame(rows)


def _lambda_summary(arms) -> pd.DataFrame:
    rows = [
        {"arm": a, "step": s, "largest v": 2.0, "smallest v": 0.5, "share of v > 1": 0.4}
        for a in arms
        for s in (1, 2)
    ]
    return pd.DataFrame(rows)


def _diagnostics(arms) -> pd.DataFrame:
    rows = [
        dict(arm=a, train_seed=s, step=t, diagnostic=d, value=0.1 * t + s)
        for a in arms
        for s in (0, 1)
        for t in (1, 2)
        for d in ("cond_lambda", "corr_v_var_z", "corr_v_rel_err", "top8_share")
    ]
    return pd.DataFrame(rows)


def _lambda_spectra(arms) -> dict:
    rng = np.random.default_rng(0)
    return {
        (a, s): {
            "final_sorted": np.sort(rng.uniform(0.5, 2, 8))[::-1],
            "v": rng.uniform(0.5, 2, (3, 8)),
            "steps": np.array([0, 10, 20]),
        }
        for a in arms
        for s in (0, 1)
    }


def _spectra_and_probes(arms) -> tuple[pd.DataFrame, pd.DataFrame]:
    spectra = pd.DataFrame(
        [
            dict(arm=a, train_seed=s, pc=p, share=0.5**p)
            for a in arms
            for s in (0, 1)
            for p in (1, 2)
        ]
    )
    cols = ["r2_top2", "r2_top4", "r2_top8", "r2_full_ridge", "r2_full_mlp"]
    probes = pd.DataFrame(
        [
            {"arm": a, "train_seed": s, **dict.fromkeys(cols, 0.5 + 0.1 * s)}
            for a in arms
            for s in (0, 1)
        ]
    )
    return spectra, probes


def _ranking(arms) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    cols = ("tau_pred", "tau_geom", "tau_total", "agree_enc", "agree_pred")
    rows = [
        {"arm": a, "train_seed": s, "source": src, "start": k, **{c: rng.uniform() for c in cols}}
        for a in arms
        for s in (0, 1)
        for src in ("gaussian", "dataset")
        for k in range(3)
    ]
    return pd.DataFrame(rows)


def _grid() -> landscape.LandscapePositions:
    xs = ys = np.linspace(0.0, 1.0, 4)
    mask = np.ones((4, 4), bool)
    positions = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 2)
    return landscape.LandscapePositions(
        "tworoom", xs, ys, mask, positions, np.zeros((16, 2, 2, 3), np.uint8)
    )


def _panel() -> dict:
    cost = np.linspace(0, 1, 16)
    return {
        "goal_position": np.array([0.5, 0.5]),
        "cost": cost,
        "low_set": cost < 0.3,
        "disc_radius": 0.2,
        "iou": 0.5,
        "spearman": 0.7,
    }


def _landscape_rows(arms) -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(arm=a, train_seed=s, iou=0.1 * i + 0.2 * s, spearman=0.5)
            for i, a in enumerate(arms)
            for s in (0, 1)
        ]
    )


def _scale_grid(arms) -> pd.DataFrame:
    rows = [
        dict(task=t, solver=s, arm=a, rate=0.3, low=0.2, high=0.4, paper=35.0)
        for t in ("tworoom", "pusht")
        for s in ("cem", "mppi_swm")
        for a in [*arms, "random"]
    ]
    return pd.DataFrame(rows)


def _contrasts(arms) -> pd.DataFrame:
    rows = [
        dict(arm=a, task=t, solver=s, diff=0.05, low=0.0, high=0.1, paper=4.0)
        for a in arms
        for t in ("tworoom", "pusht")
        for s in ("cem", "mppi_swm")
    ]
    return pd.DataFrame(rows)


MEASURES = ["var_top2", "ratio_p90_over_p10", "tau_pred"]


def _geometry(arms) -> pd.DataFrame:
    rows = [
        dict(task=t, arm=a, measure=m, ours=0.5 + 0.1 * i, paper=0.4)
        for t in ("tworoom", "pusht")
        for i, a in enumerate(arms)
        for m in MEASURES
    ]
    return pd.DataFrame(rows)


def _by_task(tasks) -> pd.DataFrame:
    return pd.DataFrame(
        [dict(task=task_title(t), rank=r, variance=1 + r) for t in tasks for r in (0.25, 0.75)]
    )


def _kappa(tasks) -> tuple[pd.DataFrame, pd.DataFrame]:
    success = pd.DataFrame(
        [
            dict(task=task_title(t), kappa=k, split=sp, success=0.5, low=0.4, high=0.6)
            for t in tasks
            for k in (1.0, 2.0)
            for sp in ("evaluation", "validation")
        ]
    )
    spectra = pd.DataFrame(
        [
            dict(task=task_title(t), kappa=k, rank=r, variance=1 + r)
            for t in tasks
            for k in (1.0, 2.0)
            for r in (0.25, 0.75)
        ]
    )
    return success, spectra


def _effects(tasks) -> pd.DataFrame:
    rows = [
        dict(task=t, claim="SCALE beats LeWM", image=1.0, flops=f, effect=0.1, low=0.0, high=0.2)
        | dict(direction=1, threshold=0.0, min_effect=0.03, paper_effect=0.1)
        for t in tasks
        for f in (1e12, 3e12)
    ]
    return pd.DataFrame(rows)


def _premises(tasks, arms) -> pd.DataFrame:
    rows = [
        dict(measure="cond Λ", task=t, arm=a, flops=f, value=0.3, low=0.2, high=0.4, reference=1.0)
        for t in tasks
        for a in arms
        for f in (1e12, 3e12)
    ]
    return pd.DataFrame(rows)


def _budgets(tasks) -> pd.DataFrame:
    return pd.DataFrame({"task": list(tasks), "flops": [3e17] * len(tasks)})


def _toy_long() -> pd.DataFrame:
    rows = [
        dict(regularizer=r, noise=n, seed=s, measure=m, value=0.1 * n + 0.01 * s + 0.05)
        for r in ("sigreg", "lambdareg")
        for n in (0.1, 1.0)
        for s in (0, 1)
        for m in ("heldout_error", "normalized_regret")
    ]
    return pd.DataFrame(rows)


def _toy_landscape() -> tuple[dict, dict]:
    x, y = np.meshgrid(np.linspace(-1, 1, 9), np.linspace(-1, 1, 9))
    land = {"X": x, "Y": y, "task": x**2 + y**2, "inverse_covariance": 2 * x**2 + y**2}
    land["latent"] = x**2 + 2 * y**2
    choices = {k: np.array([0.1, 0.1]) for k in ("task", "learned", "inverse_covariance")}
    return land, choices


@dataclass(frozen=True)
class Case:
    """A figure built on synthetic inputs; ``arms``: the arms whose colours alone it may draw
    beside greys (None: a figure not of arms)."""

    name: str
    build: Callable[[], plt.Figure]
    arms: tuple[str, ...] | None = None


LANDSCAPE, CHOICES = _toy_landscape()
CASES: list[Case] = [
    # chapters 1-3
    Case(
        "leverage_identity",
        lambda: plots.plot_leverage_identity(
            pd.DataFrame(
                {
                    "pc": [1, 2],
                    "predicted_contribution": [2.0, 1.0],
                    "measured_contribution": [2.1, 0.9],
                }
            )
        ),
    ),
    Case(
        "leverage_sweep",
        lambda: plots.plot_leverage_sweep(
            pd.DataFrame(
                {
                    "state_scale": [0.1, 1.0],
                    "probe_r2": [0.9, 0.9],
                    "state_leverage_share": [0.1, 0.5],
                    "cost_state_spearman": [0.2, 0.8],
                }
            )
        ),
    ),
    Case(
        "cumulative_leverage",
        lambda: plots.plot_cumulative_leverage(
            pd.DataFrame({"pc": [1, 2], "leverage_share": [0.6, 0.4]}), "t"
        ),
    ),
    Case(
        "box_planning",
        lambda: plots.plot_box_planning(
            np.diag([1.0, 4.0]),
            np.array([1.0, 0.5]),
            0.5,
            np.array([0.5, 0.5]),
            np.array([0.5, 0.2]),
            "t",
        ),
    ),
    Case(
        "regret_vs_eta",
        lambda: plots.plot_regret_vs_eta(
            pd.DataFrame({"eta": [0.1, 1.0], "regret": [0.2, 0.1]}), 0.3, 0.5
        ),
    ),
    Case(
        "kappa_sweep",
        lambda: plots.plot_kappa_sweep(
            pd.DataFrame({"kappa": [1.0, 2.0, 4.0], "normalized_regret": [0.5, 0.3, 0.2]}), 0.5, 3.0
        ),
    ),
    Case(
        "lowest_cost_sets",
        lambda: plots.plot_lowest_cost_sets(
            {"SIGReg (Σ⁻¹)": np.eye(2), "ΛReg κ = 2": np.diag([1.0, 2.0])},
            pd.DataFrame(
                {"model": ["SIGReg (Σ⁻¹)", "ΛReg κ = 2"], "spearman": [0.9, 0.8], "iou": [0.7, 0.6]}
            ),
            grid=9,
        ),
    ),
    Case("prediction_vs_regret", lambda: plots.plot_prediction_vs_regret(_toy_long(), 0.1, 2)),
    Case(
        "cost_landscape",
        lambda: plots.plot_cost_landscape(
            LANDSCAPE, CHOICES, np.zeros(2), np.array([0.5, 0.5]), 0.5, "t"
        ),
    ),
    # chapters 4-5
    Case(
        "task_strip",
        lambda: plots.plot_task_strip(
            "pusht",
            {
                "frames": np.zeros((4, 8, 3), np.uint8),
                "q_names": np.array(["agent_x", "block_y", "cos_theta"]),
                "step": np.arange(3),
                "q": np.zeros((3, 3)),
                "episode": 0,
            },
            2,
        ),
    ),
    Case("loss_terms", lambda: plots.plot_loss_terms(_loss_long(SOME), "t"), SOME),
    Case(
        "lambda_target_spectrum",
        lambda: plots.plot_lambda_target_spectrum(_lambda_summary(("anisowm", "scale+anisowm"))),
        ("anisowm", "scale+anisowm"),
    ),
    Case(
        "training_diagnostics",
        lambda: plots.plot_training_diagnostics(_diagnostics(SOME), 2.0, 0.3),
        SOME,
    ),
    # chapter 6
    Case(
        "success_cells",
        lambda: plots.plot_success_cells(_success_table(SOME), "goal25_budget50", list(SOME)),
        SOME,
    ),
    Case(
        "paired",
        lambda: plots.plot_paired(_paired(SOME), "goal25_budget50", ["lewm", *SOME]),
        SOME,
    ),
    # chapter 7
    Case(
        "lambda_spectra",
        lambda: plots.plot_lambda_spectra(_lambda_spectra(("anisowm",))),
        ("anisowm",),
    ),
    Case("pca_probes", lambda: plots.plot_pca_probes(*_spectra_and_probes(SOME), list(SOME)), SOME),
    Case("ranking", lambda: plots.plot_ranking(_ranking(SOME), list(SOME), seed=0), SOME),
    Case("landscapes", lambda: plots.plot_landscapes(_grid(), [_panel(), _panel()])),
    Case(
        "landscape_examples",
        lambda: plots.plot_landscape_examples(_grid(), {a: [_panel()] for a in SOME}, 0),
    ),
    Case(
        "landscape_distribution",
        lambda: plots.plot_landscape_distribution(_landscape_rows(SOME), list(SOME)),
        SOME,
    ),
    # chapter 8
    Case("scale_success", lambda: plots.plot_scale_success(_scale_grid(SOME)), SOME),
    Case("contrast_forest", lambda: plots.plot_contrast_forest(_contrasts(SOME)), SOME),
    Case("geometry_heatmap", lambda: plots.plot_geometry_heatmap(_geometry(SOME), MEASURES)),
    Case("lambda_by_task", lambda: plots.plot_lambda_by_task(_by_task(("pusht", "cube")))),
    Case(
        "trained_kappa_sweep", lambda: plots.plot_trained_kappa_sweep(*_kappa(("cube", "reacher")))
    ),
    Case("primary", lambda: plots.plot_primary(primary_rows())),
    # chapter 9
    Case(
        "scaling_effects",
        lambda: plots.plot_scaling_effects(
            _effects(("pusht", "cube")), ["SCALE beats LeWM"], _budgets(("pusht", "cube"))
        ),
    ),
    Case(
        "scaling_premises",
        lambda: plots.plot_scaling_premises(
            _premises(("pusht", "cube"), SOME), _budgets(("pusht",))
        ),
    ),
]


def test_every_figure_function_is_checked():
    """A figure function added to :mod:`jepa_geometry.book.plots` gets a case here."""
    functions = {n.removeprefix("plot_") for n in plots.__all__ if n.startswith("plot_")}
    assert functions == {c.name for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_figure_labels_and_colours_by_the_book_s_maps(case):
    fig = case.build()
    try:
        shown = {t: code_names(t) for t in texts(fig) if t}
        assert {t: c for t, c in shown.items() if c} == {}, "labels with code names"
        assert wrong_legend_colours(fig) == []
        if case.arms is not None:
            assert foreign_colours(fig, case.arms) == [], "colours outside the arms' map"
    finally:
        plt.close(fig)
