"""Chapter 8's planning tables across the five tasks: both papers' headline tables, the
ceiling on every task, MPPI at T* and SCALE's other planning tables, each read from the task
studies :func:`~jepa_geometry.study.load.load_studies` found in the cache (nothing here trains
or plans). The geometry across the tasks is :mod:`.across_geometry`.

The papers' numbers come from the reference-data file only
(:mod:`jepa_geometry.verdict.reference`); each table
keeps them in their own columns, beside ours, never as ours.

* **SCALE's main grid** (SCALE Section 5, its 4-arm table): success per task x solver averaged
  over the five budget tiers, under SCALE's protocol (goal 25 env steps ahead, budget 50), where
  every study with planning has it. SCALE reports that SCALE beats LeWM on "all 15 task-solver
  averages"; :func:`favour_count` counts ours the same way, with and without the interval.
* **AnisoWM's main table** (AnisoWM Figure 3): LeWM and AnisoWM at CEM T1 under the LeWM
  paper's protocol of each task.
* **SCALE's other tables** (:func:`scale_overall_table`, :func:`training_seed_table`): its
  overall contrasts (ours tested over training seeds, beside its Wilcoxon tests) and the
  training-seed replications, where the studies have the data; the rest are listed with why
  not (:data:`SCALE_TABLES_OUT_OF_REACH`).

The claims read across the tasks (the book's verdict, the cross-lens questions, the
preconditions per task) are evaluated on these studies in :mod:`jepa_geometry.verdict.across`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry import stats
from jepa_geometry.book.style import display_name, named
from jepa_geometry.book.tables.planning import ceiling_columns, lewm_paper_protocol
from jepa_geometry.book.tables.shared import arm_order, mark_papers, paper_value, verdict_style
from jepa_geometry.envs import task_title
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.planning.solver import PAPER_SOLVER, SOLVER_NAMES, STUDY_SOLVERS, TIERS
from jepa_geometry.stats import format_rate
from jepa_geometry.study.cells import paired_table, success_table
from jepa_geometry.study.load import Studies
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.verdict.across import SHORT_VERDICTS
from jepa_geometry.verdict.reference import reference_numbers
from jepa_geometry.verdict.rule import EXTENSION, PRIMARY, SECONDARY, paired_unit_evidence

CONTRAST_ARMS: tuple[str, ...] = (
    "scale",
    "aux",
    "anisowm",
    "scale+anisowm",
    "scale-halfq",
    "dinowm",
)
SCALE_TABLE_ARMS: tuple[str, ...] = ("lewm", "scale", "aux", "dinowm")
"""The arms of SCALE's 4-arm grid (its tables' columns), in its order."""


# --------------------------------------------------------------------------------------------
# SCALE's main grid
# --------------------------------------------------------------------------------------------


def _tier_mean(episodes: pd.DataFrame, protocol: str, solver: str) -> pd.DataFrame:
    """Per (arm, seed, pair) success averaged over the budget tiers planned, random floor
    included (its seed is -1)."""
    t = episodes[(episodes["protocol"] == protocol) & (episodes["solver"] == solver)]
    return t.groupby(["arm", "train_seed", "episode"])["success"].mean().reset_index()


def _tier_means(studies: Studies, protocol: str) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """``(task, solver, tier means)`` for every planned study with ``protocol`` and solver."""
    for task in studies.planned:
        st = studies.studies[task]
        if protocol in st.spec.protocols:
            for solver in STUDY_SOLVERS:
                yield task, solver, _tier_mean(st.episodes, protocol, solver)


def _scale_solver_value(task: str, arm: str, solver: str) -> float:
    """SCALE's per-solver mean for our ``solver`` label at the same temperature: its main grid
    (:data:`~jepa_geometry.planning.solver.PAPER_SOLVER`), or its ``T*`` table for our MPPI at
    ``T*``."""
    if solver == "mppi":
        return paper_value("scale_success_mppi_tuned", task, arm)
    return paper_value("scale_success_per_solver", task, arm, solver=PAPER_SOLVER[solver])


def scale_success(studies: Studies, protocol: str = SCALE_PROTOCOL) -> pd.DataFrame:
    """SCALE's main grid: per task x solver x arm, success averaged over the budget tiers
    (SCALE's per-solver mean), with a 95 % interval (bootstrap over training seeds and pairs of
    the tier means) and SCALE's value (percent; NaN where it reports none).

    Columns: task, solver, arm, rate, low, high, seeds, pairs, paper. SCALE's main grid plans
    MPPI at swm's shipped temperature: its values sit beside our ``mppi_swm`` rows, and its
    ``T*`` table's beside our ``mppi`` rows at the study's ``T*`` (also
    :func:`mppi_tstar_table`).
    """
    rows = []
    for task, solver, tm in _tier_means(studies, protocol):
        for arm in arm_order(list(set(tm["arm"]))):
            m = stats.success_matrix(tm[tm["arm"] == arm])
            paper = _scale_solver_value(task, arm, solver)
            rows.append(
                {"task": task, "solver": solver, "arm": arm, **stats.matrix_rate(m), "paper": paper}
            )
    return pd.DataFrame(
        rows, columns=["task", "solver", "arm", "rate", "low", "high", "seeds", "pairs", "paper"]
    )


def scale_contrasts(
    studies: Studies, protocol: str = SCALE_PROTOCOL, arms: Sequence[str] = CONTRAST_ARMS
) -> pd.DataFrame:
    """Each arm minus ``lewm`` per task x solver on the tier-mean success of the same (seed,
    pair) units, the verdict rule's 95 % t-interval over training seeds
    (:func:`~jepa_geometry.verdict.rule.paired_unit_evidence`), with
    SCALE's difference of per-solver means where it reports both arms (percentage points)."""
    rows = []
    for task, solver, tm in _tier_means(studies, protocol):
        for arm in [a for a in arms if a in set(tm["arm"])]:
            ev = paired_unit_evidence(tm, arm, BASELINE, "success", "episode")
            paper = _scale_solver_value(task, arm, solver) - _scale_solver_value(
                task, BASELINE, solver
            )
            rows.append(
                {
                    "task": task,
                    "solver": solver,
                    "arm": arm,
                    "diff": ev.effect,
                    "low": ev.low,
                    "high": ev.high,
                    "units": ev.units,
                    "paper": paper,
                }
            )
    return pd.DataFrame(
        rows, columns=["task", "solver", "arm", "diff", "low", "high", "units", "paper"]
    )


def favour_count(contrasts: pd.DataFrame, arm: str = "scale") -> dict[str, Any]:
    """SCALE's headline count for ``arm`` - LeWM: of the task x solver averages, how many
    favour ``arm`` in SCALE's table, in ours by the point estimate, and in ours with the whole
    95 % interval above zero (and below zero). Ours are counted on SCALE's footing: its main
    grid's solvers at its temperatures (:data:`~jepa_geometry.planning.solver.PAPER_SOLVER`; our
    MPPI at ``T*`` is not one of its cells)."""
    ours = contrasts[(contrasts["arm"] == arm) & contrasts["solver"].isin(list(PAPER_SOLVER))]
    ref = reference_numbers(table="scale_success_per_solver")
    wide = ref.pivot_table(index=["task", "solver"], columns="arm", values="value")
    paper = wide[arm] - wide[BASELINE] if arm in wide else pd.Series(dtype=float)
    return {
        "cells": len(ours),
        "point": int((ours["diff"] > 0).sum()),
        "interval_above": int((ours["low"] > 0).sum()),
        "interval_below": int((ours["high"] < 0).sum()),
        "paper_cells": int(paper.notna().sum()),
        "paper_favour": int((paper > 0).sum()),
    }


def favour_sentence(count: dict[str, Any], arm: str = "scale") -> str:
    """:func:`favour_count` in words."""
    return (
        f"SCALE's table favours {display_name(arm)} over {display_name(BASELINE)} in "
        f"{count['paper_favour']} of its {count['paper_cells']} task × solver averages; ours, "
        f"in {count['point']} of "
        f"{count['cells']} by the point estimate, {count['interval_above']} with the whole "
        f"95 % interval above zero and {count['interval_below']} with it below"
    )


SATURATION_RATE = 0.9
"""The rule for "a protocol saturates a task": the baseline's success averaged over the budget
tiers is at least 90 %, so that less than 10 points are left for any arm to gain over it and
differences between arms are squeezed against 100 %."""


def saturation_sentence(
    studies: Studies, task: str, arm: str = BASELINE, solver: str = "cem"
) -> str:
    """Whether each protocol the study of ``task`` planned saturates it, in words: ``arm``'s
    ``solver`` success averaged over the budget tiers (each tier pooled over the seeds and
    pairs it planned) and at the hardest tier (the smallest budget, the last of
    :data:`~jepa_geometry.planning.solver.TIERS` planned), SCALE's protocol first. A protocol
    saturates the task when the tier mean is at least :data:`SATURATION_RATE`."""
    st = studies.studies[task]
    eps = st.episodes[(st.episodes["arm"] == arm) & (st.episodes["solver"] == solver)]
    parts, saturated = [], []
    for protocol in sorted(st.spec.protocols, key=lambda p: p != SCALE_PROTOCOL):
        tiers = eps[eps["protocol"] == protocol].groupby("budget")["success"].mean()
        if tiers.empty:
            continue
        hardest = [t for t in TIERS if t in tiers.index][-1]
        name = "SCALE's protocol" if protocol == SCALE_PROTOCOL else protocol
        parts.append(
            f"{100 * tiers.mean():.1f} % under {name} ({100 * tiers[hardest]:.1f} % at "
            f"{hardest}, the smallest budget)"
        )
        if tiers.mean() >= SATURATION_RATE:
            saturated.append(name)
    title = task_title(task)
    verdict = (
        f"so {' and '.join(saturated)} saturate{'s' * (len(saturated) == 1)} {title}"
        if saturated
        else f"so no protocol here saturates {title}"
    )
    return (
        f"Averaged over the budget tiers, {arm}'s {SOLVER_NAMES[solver]} success on {title} "
        f"is {' and '.join(parts)}; a protocol saturates a task, by this page's rule, when "
        f"that mean is at least {100 * SATURATION_RATE:.0f} %, {verdict}"
    )


def scale_success_display(
    grid: pd.DataFrame, arms: Sequence[str] = SCALE_TABLE_ARMS
) -> pd.DataFrame:
    """The main grid as SCALE prints it: rows task / solver, for each arm our tier-mean success
    with its interval and SCALE's value in the next column."""
    out = []
    for (task, solver), g in grid.groupby(["task", "solver"], sort=False):
        row: dict[str, Any] = {
            "task": task_title(task),
            "solver": SOLVER_NAMES[solver],
            "seeds": int(g[g.arm != "random"]["seeds"].max()),
            "pairs": int(g["pairs"].max()),
        }
        g = g.set_index("arm")
        for arm in [*arms, "random"]:
            if arm in g.index:
                r = g.loc[arm]
                row[f"{arm} (%)"] = format_rate(r.rate, r.low, r.high)
                if arm != "random":
                    row[f"{arm}, SCALE (%)"] = r.paper
        out.append(row)
    return pd.DataFrame(out)


def scale_tier_table(
    studies: Studies, arms: Sequence[str] = SCALE_TABLE_ARMS, protocol: str = SCALE_PROTOCOL
) -> pd.DataFrame:
    """SCALE's per-tier table: success per task x solver x tier for ``arms``, ours (pooled over
    the seeds planned, 95 % interval) beside SCALE's (percent)."""
    rows = []
    for task in studies.planned:
        st = studies.studies[task]
        if protocol not in st.spec.protocols:
            continue
        succ = success_table(st.episodes[st.episodes["protocol"] == protocol])
        for (solver, tier), g in succ.groupby(["solver", "budget"], sort=True):
            row: dict[str, Any] = {
                "task": task_title(task),
                "solver": SOLVER_NAMES[solver],
                "tier": tier,
            }
            g = g.set_index("arm")
            for arm in arms:
                if arm in g.index:
                    r = g.loc[arm]
                    row[f"{arm} (%)"] = format_rate(r.rate, r.low, r.high)
                    row[f"{arm}, SCALE (%)"] = (
                        paper_value(
                            "scale_success_per_tier",
                            task,
                            arm,
                            solver=PAPER_SOLVER[solver],
                            tier=tier,
                        )
                        if solver in PAPER_SOLVER
                        else np.nan
                    )
            rows.append(row)
    return pd.DataFrame(rows)


CEILING_ACROSS_ARMS: tuple[str, ...] = ("lewm", "scale", "random")


def ceiling_across(studies: Studies, arms: Sequence[str] = CEILING_ACROSS_ARMS) -> pd.DataFrame:
    """The ceiling on every task (planned or not): CEM success averaged over the five tiers of
    the study's main protocol (SCALE's per-solver mean) for the simulator as the model and for
    ``arms`` **on the ceiling's pairs**, each with a 95 % interval (bootstrap over training
    seeds and pairs of the tier means), and the gap ``ceiling - arm`` with the same bootstrap
    of its per (seed, pair) differences (the ceiling's one outcome per pair against each
    seed's).

    Columns: task, protocol, arm, rate, low, high, seeds, pairs, gap, gap_low, gap_high (gap
    NaN on the ceiling's rows). A task without a ceiling has no rows; an arm that did not plan
    (a failed gate) has none either.
    """
    cols = ["task", "protocol", "arm", "rate", "low", "high", "seeds", "pairs"]
    cols += ["gap", "gap_low", "gap_high"]
    rows = []
    for task, st in studies.studies.items():
        top = st.plans.ceiling
        if top.empty:
            continue
        protocol = st.spec.main_protocol
        pairs = set(top.loc[top["arm"] == "ceiling", "episode"])
        both = pd.concat([st.episodes, top], ignore_index=True)
        both = both[both["episode"].isin(pairs)].drop_duplicates(
            ["arm", "train_seed", "protocol", "solver", "budget", "episode"]
        )
        tm = _tier_mean(both, protocol, "cem")
        best = tm[tm["arm"] == "ceiling"].sort_values("episode")["success"].to_numpy(float)
        for arm in ["ceiling", *arms]:
            t = tm[tm["arm"] == arm]
            if t.empty:
                continue
            m = stats.success_matrix(t)
            gap = {"gap": np.nan, "gap_low": np.nan, "gap_high": np.nan}
            if arm != "ceiling":
                d = stats.matrix_rate(best[None, :] - m)
                gap = {"gap": d["rate"], "gap_low": d["low"], "gap_high": d["high"]}
            rows.append(
                {"task": task, "protocol": protocol, "arm": arm, **stats.matrix_rate(m), **gap}
            )
    return pd.DataFrame(rows, columns=cols)


def ceiling_across_display(grid: pd.DataFrame) -> pd.DataFrame:
    """:func:`ceiling_across` as the page shows it: one row per task (its main protocol and the
    ceiling's pairs), per arm the tier-mean success with its interval, and each arm's gap to
    the ceiling in points."""
    out = []
    for task, g in grid.groupby("task", sort=False):
        row: dict[str, Any] = {
            "task": task_title(task),
            "protocol": g["protocol"].iloc[0],
            "pairs": int(g["pairs"].max()),
        }
        out.append({**row, **ceiling_columns(g)})
    return pd.DataFrame(out)


def mppi_tstar_table(
    studies: Studies, grid: pd.DataFrame, arms: Sequence[str] = SCALE_TABLE_ARMS
) -> pd.DataFrame:
    """SCALE's MPPI-at-T* table: per task our MPPI success (tier mean, at the study's T*,
    chosen on validation pairs of its main protocol; the MPPI rows of ``grid``,
    :func:`scale_success` output) beside SCALE's at its tuned T*."""
    rows = []
    for task in studies.planned:
        g = grid[(grid.task == task) & (grid.solver == "mppi")].set_index("arm")
        if g.empty:
            continue
        row: dict[str, Any] = {
            "task": task_title(task),
            "T* (ours)": studies.studies[task].plans.temperature,
        }
        for arm in [a for a in arms if a in g.index]:
            r = g.loc[arm]
            row[f"{arm} (%)"] = format_rate(r.rate, r.low, r.high)
            row[f"{arm}, SCALE at T* (%)"] = paper_value("scale_success_mppi_tuned", task, arm)
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# AnisoWM's main table
# --------------------------------------------------------------------------------------------


def anisowm_table(studies: Studies, arm: str = "anisowm") -> pd.DataFrame:
    """AnisoWM's Figure 3: for every task the paper reports (reference file), LeWM and
    AnisoWM at CEM T1 under the LeWM paper's protocol of the task, ours (all training seeds,
    95 % interval) beside the paper's, and our paired difference; a task without a planned
    study says why."""
    ref = reference_numbers(table="aniso_success")
    rows = []
    for task in dict.fromkeys(ref["task"]):
        row: dict[str, Any] = {
            "task": task_title(task),
            "LeWM, AnisoWM (%)": paper_value("aniso_success", task, BASELINE),
            "AnisoWM, AnisoWM (%)": paper_value("aniso_success", task, arm),
        }
        protocol = lewm_paper_protocol(task)
        st = studies.studies.get(task)
        if st is None or not st.spec.plans or protocol not in st.spec.protocols:
            row["note"] = (
                studies.missing.get(task, "no study")
                if st is None
                else "not planned: the gate failed at every rung"
                if not st.spec.plans
                else f"{protocol} not planned"
            )
            rows.append(row)
            continue
        succ = success_table(st.episodes)
        cell = succ[(succ.protocol == protocol) & (succ.solver == "cem") & (succ.budget == "T1")]
        cell = cell.set_index("arm")
        row["LeWM (%)"] = format_rate(*cell.loc[BASELINE, ["rate", "low", "high"]])
        row["AnisoWM (%)"] = format_rate(*cell.loc[arm, ["rate", "low", "high"]])
        t1 = st.episodes[
            (st.episodes.protocol == protocol)
            & (st.episodes.solver == "cem")
            & (st.episodes.budget == "T1")
        ]
        ev = paired_unit_evidence(t1, arm, BASELINE, "success", "episode")
        row["AnisoWM - LeWM (pp)"] = format_rate(ev.effect, ev.low, ev.high)
        row["McNemar p"] = float(paired_table(t1).set_index("arm").loc[arm, "p_mcnemar"])
        row["seeds x pairs"] = ev.units
        row["note"] = protocol
        rows.append(row)
    cols = [
        "task",
        "LeWM (%)",
        "AnisoWM (%)",
        "AnisoWM - LeWM (pp)",
        "McNemar p",
        "seeds x pairs",
        "LeWM, AnisoWM (%)",
        "AnisoWM, AnisoWM (%)",
        "note",
    ]
    return pd.DataFrame(rows).reindex(columns=cols)


# --------------------------------------------------------------------------------------------
# SCALE's other tables: overall means and their tests, PCs per variance, training seeds
# --------------------------------------------------------------------------------------------

SCALE_CONTRASTS: tuple[tuple[str, str], ...] = (
    ("scale", "lewm"),
    ("aux", "lewm"),
    ("scale", "aux"),
    ("dinowm", "lewm"),
    ("dinowm", "scale"),
)
"""SCALE's paired contrasts of its overall means (arm, versus), in its table's order."""


def _cell_means(
    episodes: pd.DataFrame, protocol: str, by: Sequence[str] = ("solver", "budget")
) -> pd.DataFrame:
    """Success per ``by`` cell x arm under ``protocol`` (wide: one column per arm, the random
    floor left out), on SCALE's cells: its main grid's solvers at its temperatures
    (:data:`~jepa_geometry.planning.solver.PAPER_SOLVER`; our MPPI at ``T*`` is not one). By
    (solver, tier), each cell pools the seeds and pairs it planned; with ``train_seed`` in
    ``by``, one seed's pairs."""
    t = episodes[
        (episodes["protocol"] == protocol)
        & (episodes["arm"] != "random")
        & episodes["solver"].isin(list(PAPER_SOLVER))
    ]
    return t.pivot_table(index=list(by), columns="arm", values="success")


def sign_flip_p(d: Sequence[float]) -> float:
    """Exact two-sided sign-flip permutation p of "the mean of ``d`` is 0", one entry per
    independent unit:

        p = #{s in {-1, +1}^n : |sum_i s_i d_i| >= |sum_i d_i|} / 2^n

    Under the null each unit's difference is symmetric about 0, so its sign is a fair coin
    whatever its size; no normality is assumed, which three units could not check. The
    smallest p it can reach is :func:`smallest_sign_flip_p`."""
    x = np.asarray(d, dtype=float)
    signs = 1 - 2 * ((np.arange(2 ** len(x))[:, None] >> np.arange(len(x))) & 1)
    flipped = np.abs(signs @ x)
    return float(np.mean(flipped >= abs(x.sum()) - 1e-12))


def smallest_sign_flip_p(n: int) -> float:
    """The smallest p :func:`sign_flip_p` can reach with ``n`` units, ``2 / 2^n`` (all of one
    sign; only they and their mirror image are as extreme): 0.25 with three training seeds,
    1 with one, so no data on three seeds can reach 0.05."""
    return min(1.0, 2.0 ** (1 - n))


def scale_overall_table(studies: Studies, protocol: str = SCALE_PROTOCOL) -> pd.DataFrame:
    """SCALE's overall means and their paired contrasts, regenerated: per task and contrast
    (:data:`SCALE_CONTRASTS`), our overall means of both arms (the mean over every (solver,
    tier) cell planned under SCALE's protocol), their difference, and a test over the training
    seeds, beside SCALE's means, difference and Wilcoxon p.

    The test's unit is the training seed, the only independent replication our cells have:
    every cell of a task plans the same models on the same pairs, so a test across the cells
    (as a Wilcoxon over the 15 cells would be) counts one set of models 15 times and its p
    shrinks with the number of cells, not with the evidence. Per seed ``s``,

        D_s = mean over the cells c that s planned of (success_a(s, c) - success_b(s, c)),

    and the p is :func:`sign_flip_p` of the ``D_s``: exact, with no assumption on their
    distribution (a paired t over three seeds would rest on a normality it cannot check).
    With three seeds the smallest reachable p is 0.25 (:func:`smallest_sign_flip_p`); a task
    planned with one seed has no p (NaN). SCALE's Wilcoxon pairs its six episode sets (n = 6,
    smallest p 2 / 2^6 = 0.031), the same kind of exact test over its own replications."""
    rows = []
    for task in studies.planned:
        st = studies.studies[task]
        if protocol not in st.spec.protocols:
            continue
        cells = _cell_means(st.episodes, protocol)
        seed_cells = _cell_means(st.episodes, protocol, ("train_seed", "solver", "budget"))
        for a, b in SCALE_CONTRASTS:
            if a not in cells or b not in cells:
                continue
            d = (cells[a] - cells[b]).dropna().to_numpy(float)
            per_seed = (seed_cells[a] - seed_cells[b]).dropna().groupby(level="train_seed").mean()
            n = len(per_seed)
            means = (100 * cells[[a, b]].mean()).to_numpy(float)
            paper_means = [paper_value("scale_success_overall", task, x) for x in (a, b)]
            rows.append(
                {
                    "task": task_title(task),
                    "contrast": f"{a} − {b}",
                    "cells": len(d),
                    "seeds": n,
                    "means (%)": f"{means[0]:.1f} / {means[1]:.1f}",
                    "diff (pp)": 100 * float(d.mean()),
                    "diff per seed (pp)": " / ".join(f"{100 * x:.1f}" for x in per_seed),
                    "sign-flip p (seeds)": sign_flip_p(per_seed) if n > 1 else np.nan,
                    "smallest p": smallest_sign_flip_p(n),
                    "means, SCALE (%)": " / ".join(f"{v:.2f}" for v in paper_means),
                    "diff, SCALE (pp)": paper_value(
                        "scale_success_overall_difference", task, a, versus=b
                    ),
                    "Wilcoxon p, SCALE": paper_value(
                        "scale_success_overall_wilcoxon_p", task, a, versus=b
                    ),
                }
            )
    cols = ["task", "contrast", "cells", "seeds", "means (%)", "diff (pp)"]
    cols += ["diff per seed (pp)", "sign-flip p (seeds)", "smallest p"]
    cols += ["means, SCALE (%)", "diff, SCALE (pp)", "Wilcoxon p, SCALE"]
    return pd.DataFrame(rows).reindex(columns=cols)


SCALE_OTHER_TABLES: tuple[str, ...] = (
    "scale_success_overall",
    "scale_success_overall_difference",
    "scale_success_overall_wilcoxon_p",
    "scale_pcs_for_variance",
    "scale_success_training_seeds",
)
"""The reference tables SCALE's other tables are set beside (their sources are named)."""


def training_seed_table(
    studies: Studies,
    arms: Sequence[str] = ("lewm", "scale", "aux"),
    solvers: Sequence[str] = ("cem", "icem"),
    protocol: str = SCALE_PROTOCOL,
) -> pd.DataFrame:
    """SCALE's training-seed replications, regenerated: per task, solver and arm, our tier-mean
    success under SCALE's protocol for each training seed that planned the cell, and the spread
    across seeds (max - min, pp, as text: "—" for a cell planned with one seed, where there is
    no spread to measure, not a spread of 0), beside SCALE's per-seed values and spread (its
    seeds 3072 to 3074). A seed of ours is not one of SCALE's: only the spreads compare."""
    rows = []
    for task, solver, tm in _tier_means(studies, protocol):
        if solver not in solvers:
            continue
        ref = reference_numbers(
            allow_empty=True,
            table="scale_success_training_seeds",
            task=task,
            solver=PAPER_SOLVER[solver],
        )
        for arm in [a for a in arms if a in set(tm["arm"])]:
            per_seed = 100 * tm[tm["arm"] == arm].groupby("train_seed")["success"].mean()
            paper = ref[ref["arm"] == arm].sort_values("train_seed")["value"]
            rows.append(
                {
                    "task": task_title(task),
                    "solver": SOLVER_NAMES[solver],
                    "arm": arm,
                    "seeds": len(per_seed),
                    "per seed (%)": " / ".join(f"{x:.1f}" for x in per_seed),
                    "spread (pp)": f"{per_seed.max() - per_seed.min():.1f}"
                    if len(per_seed) > 1
                    else "—",
                    "per seed, SCALE (%)": " / ".join(f"{x:.2f}" for x in paper),
                    "spread, SCALE (pp)": float(paper.max() - paper.min())
                    if len(paper)
                    else np.nan,
                }
            )
    return pd.DataFrame(rows)


SCALE_TABLES_OUT_OF_REACH: dict[str, str] = {
    "scale_success_gd": "the gradient-descent planner: our grid plans with CEM, iCEM and MPPI",
    "scale_success_20cell_sd": "its 20 cells include the GD solver (its differences are set "
    "beside ours on the planning pages, as the closest published contrast)",
    "scale_success_20cell_wilcoxon_p": "as scale_success_20cell_sd",
    "scale_weight_sweep": "sweeps of SCALE's λ and Aux's w need a model trained per weight; "
    "every study trains the papers' one weight per task",
    "scale_qinput_distilled": "the q-only input and distilled SCALE arms are not trained here",
    "scale_frozen_encoder_tau_gap": "the frozen-encoder decomposition retrains each arm's "
    "predictor on its frozen encoder, a second training no study runs",
    "scale_frozen_encoder_space_share": "as scale_frozen_encoder_tau_gap",
    "scale_success_half_q_per_solver": "the half-q arm per solver on Reacher and Cube: our "
    "Reacher study trains no half-q arm (its cost is on the Reconstructions page) and Cube's "
    "study does not plan",
    "scale_mppi_temperature_sweep": "SCALE's success per MPPI temperature on LeWM, at its cost "
    "scale (a sum over 192 dimensions); each study chooses its own T* by the same rule on its "
    "own temperature grid and validation pairs (chapter 6), so the temperatures differ",
    "scale_success_mppi_shipped_heldout": "MPPI at T = 0.5 on the episode sets of SCALE's T* "
    "comparison; our MPPI at swm's temperature sits beside its main grid instead",
    "scale_success_mppi_tuned_per_tier": "SCALE's arm alone at T*, per tier; our T* cells sit "
    "beside its tier mean (scale_success_mppi_tuned)",
}
"""SCALE's tables in the reference file that this book cannot regenerate, and why."""


def out_of_reach_table() -> pd.DataFrame:
    """:data:`SCALE_TABLES_OUT_OF_REACH` with each table's source (from the reference file)."""
    rows = []
    for table, why in SCALE_TABLES_OUT_OF_REACH.items():
        ref = reference_numbers(table=table)
        rows.append({"SCALE's table": table, "source": ref["source"].iloc[0], "why not": why})
    return pd.DataFrame(rows)


def primary_display(primary: pd.DataFrame) -> Any:
    """The papers' headline claims (:func:`~jepa_geometry.verdict.across.primary_table`) as
    chapter 8 opens with them, one line a claim so the table fits a screen: the claim (its
    statement names its paper), the task and the label (short, coloured), our interval beside
    the paper's effect (shaded), this run's resolution, what would decide an undecided claim
    (seeds and their cost), and the label's reason last; no cell wraps, so every claim is one
    line and the table scrolls sideways where the page is narrower."""
    decide = primary["seeds to decide"].astype(str)
    cost = primary["their cost"].str.replace(" more: ", " more, ", regex=False)
    shown = pd.DataFrame(
        {
            "claim": primary["claim"],
            "task": primary["task"],
            "verdict": primary["verdict"].replace(SHORT_VERDICTS),
            "ours [95% CI]": primary["ours [95% CI]"],
            "paper's effect": primary["paper's effect"],
            "resolution": primary["resolution"],
            "seeds to decide": decide.where(cost == "", decide + " (" + cost + ")"),
            "why this label": primary["reason"],
        }
    )
    styled = verdict_style(shown, ()).set_properties(
        **{"white-space": "nowrap", "font-size": "0.8em", "padding": "0.1rem 0.35rem"}
    )
    return mark_papers(styled)


STICKY_FIRST = 'class="sticky-first"'
"""The table attribute that keeps a table's first column in view while it scrolls sideways
(``book/_static/wide-tables.css``)."""


def verdict_board_display(board: pd.DataFrame) -> Any:
    """The book's verdict as chapter 8 shows it first: one line per claim-task pair, in the
    order a reader asks (the claim, kept in view while the table scrolls; the task; the label,
    coloured, and why it reads so; ours beside the paper's effect and the claim's minimum), the
    primary families first, then the secondary ones and our extensions. The long form (units,
    p-values, premises, seeds to decide) stays in :func:`~jepa_geometry.book.tables.geometry.
    verdict_display` below it."""
    rank = board["family"].map({PRIMARY: 0, SECONDARY: 1, EXTENSION: 2}).fillna(3)
    rows = board.assign(_rank=rank).sort_values(["_rank", "paper"], kind="stable")
    shown = pd.DataFrame(
        {
            "claim": rows["claim"],
            "task": rows["task"],
            "verdict": rows["verdict"].replace(SHORT_VERDICTS),
            "why": rows["reason"],
            "ours [95% CI]": rows["our effect [95% CI]"],
            "paper's effect": rows["paper's effect"],
            "min effect": rows["min effect"],
            "family": rows["family"],
        }
    )
    short = ["task", "verdict", "ours [95% CI]", "paper's effect", "min effect", "family"]
    styled = (
        verdict_style(shown, ("claim", "why"))
        .set_table_attributes(STICKY_FIRST)
        .set_properties(**{"font-size": "0.8em", "padding": "0.1rem 0.35rem"})
        .set_properties(subset=short, **{"white-space": "nowrap"})
        .set_properties(subset=["claim", "why"], **{"min-width": "12em"})
    )
    return mark_papers(styled)


def coverage_display(coverage: pd.DataFrame) -> pd.DataFrame:
    """Which tasks are in chapter 8's tables (:meth:`~jepa_geometry.study.load.Studies.
    coverage`) as the page shows it: arms and protocols by their display names, the protocols
    apart by semicolons ("goal 100, budget 150; goal 25, budget 50")."""
    out = coverage.copy()
    if "arms" in out:
        out["arms"] = out["arms"].map(lambda v: named(v) if isinstance(v, str) else v)
    if "protocols" in out:
        out["protocols"] = out["protocols"].map(
            lambda v: "; ".join(display_name(p) for p in v.split(", ")) if isinstance(v, str) else v
        )
    return out
