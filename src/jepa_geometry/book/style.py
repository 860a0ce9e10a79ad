"""How the book colours and names what it shows: one colour per arm (:data:`ARM_COLOURS`) and
per task (:data:`TASK_COLOURS`), and one display name per code name (:data:`DISPLAY_NAMES`),
for every figure and table.

A colour given per figure (the n-th colour of a palette to the n-th arm drawn) changes with
the arms a figure shows, so one arm would take one colour in one figure and another in the
next; and a code name (``lewm``, ``lambda_reg``, ``goal100_budget150``) in a legend or a header
is a word the reader has to translate. Here each arm has its colour wherever it is drawn, and
each code name one display name wherever it is shown: a figure calls :func:`arm_colour`,
:func:`task_colour` and :func:`label`; a table :func:`shown` (or :func:`named` for a text it
composes).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

import pandas as pd

from jepa_geometry.book.display import AS_WRITTEN
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.wm.arms import HALF_Q_SUFFIX

ARM_COLOURS: dict[str, str] = {
    "lewm": "#0173b2",  # blue: the baseline
    "scale": "#de8f05",  # orange
    "aux": "#029e73",  # green
    "anisowm": "#d55e00",  # vermillion
    "scale+anisowm": "#cc78bc",  # purple
    "dinowm": "#ca9161",  # brown
    "scale-halfq": "#fbafe4",  # pink
    "random": "#949494",  # grey: the random policy's floor (a band: drawn translucent)
    "ceiling": "#000000",  # black: the simulator as the model
}
"""Every arm the book trains (the studies' arms, :data:`~jepa_geometry.study.cells.STUDY_ARMS`
and the half-q ablation), the random policy's floor and the ceiling, each in one colour of
seaborn's colourblind palette (the floor grey, the ceiling black)."""

OWN_ARM_COLOURS: tuple[str, ...] = ("#56b4e9", "#001c7f", "#12711c", "#8c0800", "#591e71")
"""The colours kept for arms the map does not name (a reader's own objective, a sum no study
trains): none is a colour of :data:`ARM_COLOURS`, and :func:`arm_colour` picks one by the
arm's name alone, so such an arm too has one colour in every figure."""

TASK_COLOURS: dict[str, str] = {
    "tworoom": "#332288",  # indigo
    "pusht": "#117733",  # dark green
    "reacher": "#88ccee",  # cyan
    "cube": "#aa4499",  # magenta
    "pointmaze": "#999933",  # olive
}
"""One colour per task (Paul Tol's colour-blind safe muted palette), apart from the arms'
colours: a figure coloured by task is not read as one coloured by arm."""

NEUTRAL = "#404040"
"""The dark grey of a legend key that stands for no one arm or task (chapter 9's key to the
arms' marker shapes, drawn beside the tasks' colours)."""

DISPLAY_NAMES: dict[str, str] = {
    # arms (sums and half-q arms are composed by display_name)
    "lewm": "LeWM",
    "scale": "SCALE",
    "aux": "Aux",
    "anisowm": "AnisoWM",
    "dinowm": "DINO-WM",
    "scale_half_q": "SCALE half-q",  # the reference file's spelling of scale-halfq
    # loss terms and regularizers
    "pred": "prediction",
    "sigreg": "SIGReg",
    "lambda_reg": "ΛReg",
    "lambdareg": "ΛReg",
    # the papers' weights
    "kappa": "κ",
    "alpha_lr": "α learning rate (x)",
    "alpha_warmup": "α warm-up (steps)",
    # solvers
    "cem": "CEM",
    "icem": "iCEM",
    "mppi": "MPPI",
    "mppi_swm": "MPPI at T = 0.5",
    # SCALE's probes of q
    "var_top2": "variance share, top-2 PCs",
    "var_top4": "variance share, top-4 PCs",
    "var_top8": "variance share, top-8 PCs",
    "r2_top2": "R², top-2 PCs",
    "r2_top4": "R², top-4 PCs",
    "r2_top8": "R², top-8 PCs",
    "r2_full_ridge": "R², full (ridge)",
    "r2_full_mlp": "R², full (MLP)",
    "ratio_p90_over_p10": "p90/p10 ratio",
    # the rank channels, the ordering agreement and the landscapes
    "tau_pred": "Kendall τ, predictor",
    "tau_geom": "Kendall τ, geometry",
    "tau_total": "Kendall τ, total",
    "rollout_error": "rollout error",
    "agree_enc": "agreement, encoder cost",
    "agree_pred": "agreement, predictor cost",
    "iou": "IoU",
    "spearman": "Spearman ρ",
    # the training diagnostics
    "top2_share": "top-2 share",
    "top8_share": "top-8 share",
    "cond_lambda": "cond Λ",
    "corr_v_var_z": "corr(v, Var z)",
    "corr_v_rel_err": "corr(v, relative error)",
    # the theory's measures
    "heldout_error": "held-out error",
    "normalized_regret": "normalized regret",
    "metric_regret": "metric regret",
    "predicted_contribution": "predicted, 2λ_j",
    "measured_contribution": "measured (Monte Carlo)",
    "probe_r2": "probe R²",
    "state_leverage_share": "state's share of the cost",
    "cost_state_spearman": "Spearman(cost, state distance)",
    "state_scale": "state scale",
}
"""Code name -> the name a figure or a table shows. Tasks show their titles (``tworoom`` ->
Two-Room), protocols their goal and budget (``goal100_budget150`` -> goal 100, budget 150), an
arm's sum and half-q suffix their parts (``scale+anisowm`` -> SCALE + AnisoWM,
``scale-halfq`` -> SCALE half-q): :func:`display_name` composes those."""

_PROTOCOL = re.compile(r"^goal(\d+)_budget(\d+)$")
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+$")
_TOKEN = re.compile(r"[\w+./-]+")
_ARMS = {a for a in ARM_COLOURS if "+" not in a and not a.endswith(HALF_Q_SUFFIX)}
_OBJECTIVE = re.compile(r"(?:[\w.-]+/)*[A-Za-z_]\w*\.py")  # a reader's objective file


def _arm_name(name: str) -> str | None:
    """An arm's display name composed of its parts (``scale+anisowm`` -> SCALE + AnisoWM,
    ``scale-halfq`` -> SCALE half-q), a reader's objective file by its stem, as its models'
    artifact names and the chapter's claims name it (:func:`~jepa_geometry.wm.arms.arm_label`:
    ``examples/objectives/mine.py``, the arm LeWM + the file's term, -> mine,
    ``scale+examples/objectives/mine.py`` -> SCALE + mine; a table's header keeps the stem as
    written, :data:`~jepa_geometry.book.display.AS_WRITTEN`), a stem kept as it is
    (``lewm+mine`` -> LeWM + mine); None when no part is a built-in arm or a file, so that a
    name which only looks like one stays as it is."""
    parts = name.removesuffix(HALF_Q_SUFFIX).split("+")
    files = {p for p in parts if _OBJECTIVE.fullmatch(p)}
    if not (set(parts) & _ARMS or files) or not all(re.fullmatch(r"[\w./-]+", p) for p in parts):
        return None
    shown = [
        DISPLAY_NAMES.get(p, p) if p in _ARMS else PurePosixPath(p).stem if p in files else p
        for p in parts
    ]
    AS_WRITTEN.update(PurePosixPath(p).stem for p in files)
    return " + ".join(shown) + (" half-q" if name.endswith(HALF_Q_SUFFIX) else "")


def display_name(code: str) -> str:
    """The name the book shows for ``code``: :data:`DISPLAY_NAMES`, a task's title, a
    protocol's goal and budget, an arm composed of its parts; anything else as it is."""
    if code in DISPLAY_NAMES:
        return DISPLAY_NAMES[code]
    if code in TASKS:
        return task_title(code)
    if m := _PROTOCOL.match(code):
        return f"goal {m[1]}, budget {m[2]}"
    return _arm_name(code) or code


def named(text: object) -> str:
    """``text`` with every code name in it shown by its display name (``lewm (%)`` -> LeWM
    (%), ``ceiling - scale (pp)`` -> ceiling - SCALE (pp)); its other words as they are."""
    return _TOKEN.sub(lambda m: display_name(m[0]), str(text))


def label(text: object) -> str:
    """A figure's text: :func:`named`, and any other identifier in words (``agent_x`` ->
    agent x), so a label is never a code name. (A table's headers get their words from
    :func:`~jepa_geometry.book.display.header` as the page renders them.)"""

    def word(m: re.Match[str]) -> str:
        shown = display_name(m[0])
        return shown.replace("_", " ") if shown == m[0] and _IDENTIFIER.match(shown) else shown

    return _TOKEN.sub(word, str(text))


def shown(frame: pd.DataFrame, cells: Sequence[str] = ()) -> pd.DataFrame:
    """``frame`` as a page shows it: code names in its column headers by :func:`named`, in
    its row labels by :func:`display_name` and in the cells of those columns of ``cells`` it
    has (an empty frame has none) by :func:`named` (a contrast ``scale − lewm`` names both).
    A frame the book computes with keeps its code names (a chapter looks its rows up by arm);
    this is the copy it shows."""
    out = frame.copy()
    for c in [c for c in cells if c in out.columns]:
        out[c] = out[c].map(lambda v: named(v) if isinstance(v, str) else v)
    out = out.rename(columns=lambda c: named(c) if isinstance(c, str) else c)
    if isinstance(out.index, pd.RangeIndex):  # row numbers stay pandas' own (the page hides them)
        return out
    return out.rename(index=lambda i: display_name(i) if isinstance(i, str) else i)


def _digest_index(name: str, n: int) -> int:
    """A number in ``[0, n)`` fixed by ``name`` (sha256, not Python's salted ``hash``)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") % n


def arm_colour(arm: str) -> str:
    """The colour of ``arm`` in every figure: :data:`ARM_COLOURS`, or for an arm it does not
    name one of :data:`OWN_ARM_COLOURS` chosen by the arm's name (an objective file by its
    stem, so ``lewm+examples/objectives/mine.py`` and ``lewm+mine`` share it)."""
    if arm in ARM_COLOURS:
        return ARM_COLOURS[arm]
    key = "+".join(PurePosixPath(p).stem if p.endswith(".py") else p for p in arm.split("+"))
    return OWN_ARM_COLOURS[_digest_index(key, len(OWN_ARM_COLOURS))]


_TITLES = {task_title(t): t for t in TASKS}


OTHER_TASK_COLOURS: tuple[str, ...] = ("#44aa99", "#882255", "#ddcc77", "#cc6677")
"""The rest of Paul Tol's muted palette, for a task :data:`TASK_COLOURS` does not name (a task
added by its module alone, README *Adding a task*), chosen by the task's name."""


def task_colour(task: str) -> str:
    """The colour of ``task`` (its name or its title) in every figure: :data:`TASK_COLOURS`, or
    one of :data:`OTHER_TASK_COLOURS` chosen by its name."""
    name = _TITLES.get(task, task)
    if name in TASK_COLOURS:
        return TASK_COLOURS[name]
    return OTHER_TASK_COLOURS[_digest_index(name, len(OTHER_TASK_COLOURS))]


__all__ = [
    "ARM_COLOURS",
    "DISPLAY_NAMES",
    "NEUTRAL",
    "OWN_ARM_COLOURS",
    "TASK_COLOURS",
    "arm_colour",
    "display_name",
    "label",
    "named",
    "shown",
    "task_colour",
]
