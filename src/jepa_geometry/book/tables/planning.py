"""Chapter 6's planning pages: success grids, paired differences, the pre-registered checks,
the papers' success numbers beside ours, and the read-outs the takeaways quote.

Chapters call these instead of reshaping data frames themselves, so every table of the book
is a named, tested function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry import stats
from jepa_geometry.book.display import format_p, p_phrase
from jepa_geometry.book.style import display_name, named, shown
from jepa_geometry.book.tables.shared import arm_order
from jepa_geometry.envs import task_class, task_title
from jepa_geometry.envs.collect import episode_counts
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.planning.solver import PAPER_SOLVER, budget_tiers
from jepa_geometry.profiles import Profile
from jepa_geometry.stats import format_rate
from jepa_geometry.study.cells import CELL_KEYS, ceiling_seconds_per_pair, paired_table
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.verdict.reference import reference_numbers
from jepa_geometry.wm.model import build_world_model


def success_by_cell(table: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """Wide view of :func:`~jepa_geometry.study.cells.success_table` for one protocol: rows solver /
    budget / training seeds pooled, columns arms (the random floor counts as one seed), solvers
    and arms by their display names."""
    t = table[table["protocol"] == protocol].copy()
    if t.empty:
        raise ValueError(f"no rows for protocol {protocol!r}; have: {sorted(set(table.protocol))}")
    t["cell"] = [format_rate(r, lo, hi) for r, lo, hi in zip(t.rate, t.low, t.high, strict=True)]
    t["seeds"] = t.groupby(["solver", "budget"])["seeds"].transform("max")  # the arms' seeds
    wide = t.pivot(index=["solver", "budget", "seeds"], columns="arm", values="cell")
    return shown(wide[arm_order(list(wide.columns))])


def timing_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Planning wall time per protocol x solver x budget: mean and total over models
    (protocols and solvers by their display names)."""
    g = cells.groupby(CELL_KEYS, sort=True)["eval_seconds"]
    out = pd.DataFrame({"models": g.size(), "mean_s": g.mean(), "total_s": g.sum()}).reset_index()
    return shown(out, cells=["protocol", "solver"])


# The papers' success tables and the cell of our grid each one is comparable with.
PROTOCOL_SLUGS: dict[str, str] = {
    "goal25_budget50": "code_protocol",
    "goal100_budget150": "lewm_protocol",
    "goal50_budget100": "goal50_protocol",
}
PROTOCOL_WORDS: dict[str, str] = {
    "goal25_budget50": "SCALE's protocol, goal 25 env steps ahead with a budget of 50",
    "goal100_budget150": "LeWM's Two-Room protocol, goal 100 env steps ahead with a budget of 150",
    "goal50_budget100": "goal 50 env steps ahead with a budget of 100 (ours, between the two)",
}


def protocol_slug(protocol: str) -> str:
    """The short name of a protocol in figure file names (``code_protocol``)."""
    return PROTOCOL_SLUGS[protocol]


def protocol_words(protocol: str) -> str:
    """A protocol in words, for prose."""
    return PROTOCOL_WORDS[protocol]


def lewm_paper_protocol(task: str) -> str:
    """The protocol of the LeWM and AnisoWM papers' success numbers on ``task``: goal +100 /
    budget 150 on Two-Room (the LeWM paper's stated protocol), the official code's goal +25 /
    budget 50 elsewhere (our reading; book: rec-protocol)."""
    return "goal100_budget150" if task == "tworoom" else SCALE_PROTOCOL


PAPER_SUCCESS_CELLS: tuple[tuple[str, str | None, str | None, str | None], ...] = (
    # (reference table, our protocol (None: the LeWM paper's for the task), our solver label
    # (None: the one at the table's solver and temperature, OUR_SOLVER), budget (None: the
    # table's))
    ("scale_success_per_tier", SCALE_PROTOCOL, None, None),
    ("aniso_success", None, "cem", "T1"),
    ("lewm_success", None, "cem", "T1"),
)
OUR_SOLVER: dict[str, str] = {paper: ours for ours, paper in PAPER_SOLVER.items()}
"""A solver of SCALE's main grid -> our solver label at the same temperature: SCALE plans MPPI
at swm's T = 0.5, so its ``mppi`` sits beside our ``mppi_swm``, not our ``mppi`` at ``T*``."""


def beside_papers(table: pd.DataFrame, task: str, arms: Sequence[str]) -> pd.DataFrame:
    """The papers' success rates (reference file) beside ours at the comparable cell.

    ``table`` is :func:`~jepa_geometry.study.cells.success_table` output. A paper value sits
    beside our cell at the same protocol, budget and solver temperature (:data:`OUR_SOLVER`).
    Rows whose cell we did not plan, and tables with no number for ``task``, are left out;
    protocols, solvers and arms by their display names.
    """
    ours = table.set_index(["protocol", "solver", "budget", "arm"])
    rows = []
    for ref_table, protocol, solver, budget in PAPER_SUCCESS_CELLS:
        protocol = protocol or lewm_paper_protocol(task)
        ref = reference_numbers(table=ref_table, task=task, allow_empty=True)
        for _, r in ref[ref["arm"].isin(list(arms))].iterrows():
            key = (protocol, solver or OUR_SOLVER[r["solver"]], budget or r["tier"], r["arm"])
            if key not in ours.index:
                continue
            o = ours.loc[key]
            rows.append(
                {
                    "paper": r["paper"],
                    "protocol": protocol,
                    "solver": key[1],
                    "budget": key[2],
                    "arm": r["arm"],
                    "paper value (%)": r["value"],
                    "ours (%)": format_rate(o["rate"], o["low"], o["high"]),
                }
            )
    columns = ["paper", "protocol", "solver", "budget", "arm", "paper value (%)", "ours (%)"]
    return shown(pd.DataFrame(rows, columns=columns), cells=["protocol", "solver", "arm"])


HEADROOM_WINDOW: tuple[float, float] = (0.30, 0.85)
"""Fixed before the Two-Room run: the baseline's CEM T1 success must leave room both ways for
the arms to differ (below 30 % the planner fails for every arm; above 85 % it saturates)."""


def _cell(table: pd.DataFrame, protocol: str, solver: str, budget: str) -> pd.DataFrame:
    t = table[(table.protocol == protocol) & (table.solver == solver) & (table.budget == budget)]
    if t.empty:
        have = sorted(set(zip(table.protocol, table.solver, table.budget, strict=True)))
        raise ValueError(f"no cell {protocol}/{solver}/{budget} in the table; have: {have}")
    return t.set_index("arm")


def headroom(
    table: pd.DataFrame,
    protocol: str,
    baseline: str = BASELINE,
    window: tuple[float, float] = HEADROOM_WINDOW,
) -> dict[str, Any]:
    """The pre-registered headroom check: is the baseline's CEM T1 success inside ``window``?

    ``table`` is :func:`~jepa_geometry.study.cells.success_table` output. Returns the rate,
    its interval, ``inside`` and a one-line ``text`` for the chapter.
    """
    r = _cell(table, protocol, "cem", "T1").loc[baseline]
    inside = bool(window[0] <= r.rate <= window[1])
    text = (
        f"{baseline}, CEM T1: {format_rate(r.rate, r.low, r.high)} % -> "
        f"{'inside' if inside else 'OUTSIDE'} the {100 * window[0]:.0f}-{100 * window[1]:.0f} "
        "% window"
    )
    return {
        "rate": float(r.rate),
        "low": float(r.low),
        "high": float(r.high),
        "inside": inside,
        "text": text,
    }


def headroom_side(room: dict[str, Any], low: float, high: float) -> str:
    """Where :func:`headroom`'s baseline rate sits against the window ``[low, high]``, and what
    that means for the comparison, in words."""
    if room["inside"]:
        return "inside the window, so the arms have room to differ both ways"
    side = "below" if room["rate"] < low else "above"
    return (
        f"{side} the {100 * low:.0f}-{100 * high:.0f} % window, so the arms have little room "
        "to differ"
    )


def floor_side(floor: Any) -> str:
    """Whether the planner beats the random policy (:func:`~jepa_geometry.study.cells.
    floor_check`'s interval excludes 0), in words."""
    if floor.low > 0:
        return "works: the interval excludes 0"
    return "does not beat the random policy here: the interval includes 0"


def tier_spread(
    table: pd.DataFrame, protocol: str, arms: Sequence[str], first: str = "T1", last: str = "T5"
) -> pd.DataFrame:
    """CEM success at the richest and the poorest budget tier per arm (rows, by their display
    names), and their difference in percentage points: do the tiers spread the arms (the
    second pre-registered check)?"""
    hi, lo = _cell(table, protocol, "cem", first), _cell(table, protocol, "cem", last)
    keep = [a for a in arms if a in hi.index and a in lo.index]
    out = pd.DataFrame(
        {f"{first} (%)": 100 * hi.loc[keep, "rate"], f"{last} (%)": 100 * lo.loc[keep, "rate"]}
    )
    out[f"{first} - {last} (pp)"] = out[f"{first} (%)"] - out[f"{last} (%)"]
    out.index.name = None
    return shown(out)


MCNEMAR_CAVEAT = "McNemar p pools seeds and pairs as independent: descriptive, no verdict reads it"
"""Said wherever a McNemar p is shown: the exact test counts every (training seed, pair) unit
as independent, so with several seeds it ignores the spread between trained models."""


def paired_display(paired: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """:func:`~jepa_geometry.study.cells.paired_table` rows of one protocol, the difference and
    its interval as text in percentage points, solvers and arms by their display names."""
    t = paired[paired.protocol == protocol].copy()
    if t.empty:
        raise ValueError(f"no paired rows for protocol {protocol!r}")
    t["diff (pp)"] = [
        format_rate(d, lo, hi) for d, lo, hi in zip(t["diff"], t.low, t.high, strict=True)
    ]
    cols = ["solver", "budget", "arm", "seeds", "diff (pp)", "a_only", "b_only", "p_mcnemar"]
    return shown(t[cols].reset_index(drop=True), cells=["solver", "arm"])


def hard_subset_size(episodes: pd.DataFrame, protocol: str) -> tuple[int, int]:
    """``(hard pairs, pairs)`` of a protocol's episode set, counted once per pair (from the
    random floor's rows, which every cell repeats)."""
    pairs = episodes[(episodes.protocol == protocol) & (episodes.arm == "random")]
    pairs = pairs.drop_duplicates("episode")
    if pairs.empty:
        raise ValueError(f"no random-floor rows for protocol {protocol!r}")
    return int(pairs.hard.sum()), len(pairs)


def rollout_ratios(profile: Profile, paper: Profile) -> dict[str, float]:
    """Per budget tier, the paper profile's rollouts per replan (samples x iterations) over
    ``profile``'s: how much less search the laptop planner does."""
    ours, theirs = budget_tiers(profile), budget_tiers(paper)
    return {t: theirs[t][0] * theirs[t][1] / (s * i) for t, (s, i) in ours.items()}


def previous_build_sentence(check: pd.DataFrame) -> str:
    """One sentence on :func:`~jepa_geometry.study.regression.previous_build_check`'s table:
    how many quantities landed inside the previous build's intervals, naming any that did not
    with both estimates."""
    if check.empty:
        return "no earlier build of this profile is recorded, so there is nothing to compare."
    inside = int(check["inside"].sum())
    head = f"{inside} of {len(check)} quantities lie inside the previous build's 95 % intervals"
    out = check[~check["inside"]]
    if out.empty:
        return head + ": by the criterion fixed in advance, the results did not change."
    named = "; ".join(
        f"{r['quantity']}: {r['this build']:.3f} now against {r['previous']:.3f} "
        f"[{r['previous low']:.3f}, {r['previous high']:.3f}]"
        for _, r in out.iterrows()
    )
    return f"{head}; outside: {named}. By the criterion fixed in advance, the results changed."


# --- small read-outs the chapters' takeaways quote -------------------------------------------


def sweep_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """The MPPI temperature sweep as temperature x budget tier of success rates."""
    return sweep.pivot(index="temperature", columns="budget", values="success")


def temperature_choice(sweep: pd.DataFrame, chosen: float, scaled_paper: float) -> dict[str, Any]:
    """How the sweep chose T*: how many temperatures tie at the best summed success (ties go to
    the lowest), and whether T* equals SCALE's T* rescaled to this embedding width."""
    total = sweep_table(sweep).sum(axis=1)
    return {
        "ties": int((total == total.max()).sum()),
        "same_as_paper": bool(abs(chosen - scaled_paper) < 1e-9),
    }


def paired_cell(paired: pd.DataFrame, protocol: str, solver: str, budget: str, arm: str):
    """One row of :func:`~jepa_geometry.study.cells.paired_table` (an arm minus the baseline in
    one cell); a one-line error naming the cell when it was not planned."""
    rows = paired[
        (paired.protocol == protocol)
        & (paired.solver == solver)
        & (paired.budget == budget)
        & (paired.arm == arm)
    ]
    if len(rows) != 1:
        raise ValueError(f"no paired row for {arm} in {protocol}/{solver}/{budget}")
    return rows.iloc[0]


def code_protocol_sentence(
    table: pd.DataFrame, paired: pd.DataFrame, protocol: str, n_hard: int, n_pairs: int
) -> str:
    """CEM T1 under ``protocol``: the baseline's and the random policy's success, ``scale`` −
    baseline (when the study has ``scale``) and the size of the hard subset, in words."""
    t1 = _cell(table, protocol, "cem", "T1")
    ours = {m: format_rate(*t1.loc[m, ["rate", "low", "high"]]) for m in (BASELINE, "random")}
    text = (
        f"at CEM T1, {BASELINE} succeeds on {ours[BASELINE]} % of the pairs and the random "
        f"policy on {ours['random']} %"
    )
    if "scale" in set(paired.arm):
        d = paired_cell(paired, protocol, "cem", "T1", "scale")
        text += f"; scale − {BASELINE} = {format_rate(d['diff'], d.low, d.high)} percentage points"
    return f"{text}; hard subset: {n_hard} of the {n_pairs} pairs"


HALF_Q_CONTRASTS: tuple[tuple[str, str], ...] = (
    ("scale", "lewm"),
    ("scale-halfq", "lewm"),
    ("scale-halfq", "scale"),
)
"""SCALE's half-q ablation: full and half q against LeWM, and half against full."""


def half_q_table(
    episodes: pd.DataFrame, task: str, protocol: str, solver: str = "cem", budget: str = "T1"
) -> pd.DataFrame:
    """SCALE's half-q ablation in one cell: each contrast of :data:`HALF_Q_CONTRASTS`, paired
    over training seeds and pairs, beside the contrast SCALE reports for the task (its mean over
    20 solver cells).

    Columns: ``contrast``, ``ours (pp)`` (difference with its paired bootstrap 95 % interval),
    ``McNemar p``, ``seeds``, ``SCALE (pp)`` (reference table
    ``scale_success_20cell_difference``; blank where SCALE reports no such contrast). Empty
    when the study trained no half-q arm.
    """
    arms = set(episodes["arm"])
    cell = episodes[
        (episodes["protocol"] == protocol)
        & (episodes["solver"] == solver)
        & (episodes["budget"] == budget)
    ]
    ref = reference_numbers(allow_empty=True, table="scale_success_20cell_difference", task=task)
    paper = {(r.arm, r.versus): r.value for r in ref.itertuples()}  # its reported contrasts
    name = {"scale-halfq": "scale_half_q"}  # the reference file's spelling
    rows = []
    for a, b in HALF_Q_CONTRASTS:
        if {a, b} - arms:
            continue
        d = paired_table(cell[cell["arm"].isin([a, b])], baseline=b).iloc[0]
        reported = paper.get((name.get(a, a), b))
        rows.append(
            {
                "contrast": f"{display_name(a)} − {display_name(b)}",
                "ours (pp)": format_rate(d["diff"], d["low"], d["high"]),
                "McNemar p": float(d["p_mcnemar"]),
                "seeds": int(d["seeds"]),
                "SCALE (pp)": ""
                if reported is None or reported != reported
                else f"{reported:+.2f}",
            }
        )
    return pd.DataFrame(rows)


def half_q_markdown(table: pd.DataFrame, task: str) -> str:
    """:func:`half_q_table` as a markdown table with its reading, or the sentence saying
    why there is none."""
    if table.empty:
        has_half = task_class(task).half_q is not None
        return f"This study trains no half-q arm: {task_title(task)} has " + (
            f"one in SCALE, but its study file does not list {display_name('scale-halfq')}."
            if has_half
            else "no half of $q$ in SCALE (its state has two coordinates)."
        )
    shown = table.assign(**{"McNemar p": table["McNemar p"].map(format_p)})
    return (
        shown.to_markdown(index=False) + "\n\nDifferences in percentage points with their "
        f"paired 95 % interval over training seeds and pairs ({MCNEMAR_CAVEAT}); SCALE's "
        "column is the contrast it reports, averaged over its 20 solver cells (one training "
        "seed, 6 episode seeds; blank where it reports none), not a result of this book."
    )


def plan_cost_table(episodes: pd.DataFrame, baseline: str = BASELINE) -> pd.DataFrame:
    """Seconds per plan of every arm in every cell, and its ratio to the baseline's there.

    A plan is one replan of one episode; with episodes planned in batches, an episode's
    ``plan_seconds`` is its share of the batch's solve time, so ``s_per_plan`` = Σ plan_seconds
    / Σ plans over the cell's training seeds and pairs. Columns: protocol, solver, budget, arm,
    s_per_plan, ratio (``s_per_plan`` over the baseline's in the same cell).
    """
    t = episodes[episodes["arm"] != "random"]
    g = t.groupby([*CELL_KEYS, "arm"], sort=True)[["plan_seconds", "plans"]].sum()
    per = (g["plan_seconds"] / g["plans"]).rename("s_per_plan").reset_index()
    base = per[per["arm"] == baseline].set_index(CELL_KEYS)["s_per_plan"]
    if base.empty:
        raise ValueError(f"no cell of the baseline {baseline!r}; arms: {sorted(set(per.arm))}")
    per["ratio"] = (
        per["s_per_plan"].to_numpy()
        / base.reindex(pd.MultiIndex.from_frame(per[CELL_KEYS])).to_numpy()
    )
    return per


DINOWM_CONTRASTS: tuple[str, ...] = ("lewm", "scale")
"""DINO-WM against the baseline and against SCALE, as SCALE contrasts it (Section 5)."""


def dinowm_table(
    episodes: pd.DataFrame, trained: pd.DataFrame, task: str, protocol: str
) -> pd.DataFrame:
    """DINO-WM's row of the study: success contrasts at CEM T1 under ``protocol`` and the
    cost ratios to LeWM, each beside SCALE's number. Empty when the study has no ``dinowm``.

    Rows (``quantity``): DINO-WM − LeWM and DINO-WM − SCALE (paired difference with its
    95 % interval in points; SCALE: its CEM difference at T1, code protocol, one training
    seed), ``training cost`` (median seconds per model, frozen-token pass included, over
    LeWM's) and ``planning cost`` (seconds per plan over LeWM's at CEM T1 under ``protocol``,
    and the median ratio over every cell). SCALE's cost ratios are approximate figures of its
    GPU runs (reference table ``scale_dinowm_cost``).
    """
    if "dinowm" not in set(episodes["arm"]):
        return pd.DataFrame()
    cell = episodes[
        (episodes["protocol"] == protocol)
        & (episodes["solver"] == "cem")
        & (episodes["budget"] == "T1")
    ]
    tier = reference_numbers(
        allow_empty=True, table="scale_success_per_tier", task=task, solver="cem", tier="T1"
    )
    paper = dict(zip(tier["arm"], tier["value"], strict=True))
    rows = []
    for versus in DINOWM_CONTRASTS:
        if versus not in set(cell["arm"]):
            continue
        d = paired_table(cell[cell["arm"].isin(["dinowm", versus])], baseline=versus).iloc[0]
        theirs = (
            f"{paper['dinowm'] - paper[versus]:+.1f} pp" if {"dinowm", versus} <= set(paper) else ""
        )
        rows.append(
            {
                "quantity": f"{display_name('dinowm')} − {display_name(versus)}, success at CEM T1",
                "ours": f"{format_rate(d['diff'], d['low'], d['high'])} pp "
                f"(McNemar p {p_phrase(d['p_mcnemar'])}, {int(d['seeds'])} seeds)",
                "SCALE": theirs,
            }
        )
    cost = reference_numbers(table="scale_dinowm_cost").set_index("quantity")["value"]
    model_s = trained.assign(s=trained["train_seconds"] + trained["token_seconds"])
    per_model = model_s.groupby("arm")["s"].median()
    rows.append(
        {
            "quantity": "training cost, seconds per model / LeWM's",
            "ours": f"{per_model['dinowm'] / per_model[BASELINE]:.2f}x "
            f"({per_model['dinowm']:.0f} s / {per_model[BASELINE]:.0f} s)",
            "SCALE": f"about {cost['training']:g}x",
        }
    )
    plans = plan_cost_table(episodes)
    dw = plans[plans["arm"] == "dinowm"]
    t1 = dw[(dw["protocol"] == protocol) & (dw["solver"] == "cem") & (dw["budget"] == "T1")]
    ms = 1e3 * t1["s_per_plan"].iloc[0]
    rows.append(
        {
            "quantity": "planning cost, seconds per plan / LeWM's",
            "ours": f"{t1['ratio'].iloc[0]:.1f}x at CEM T1 ({ms:.0f} ms per plan); "
            f"median over its {len(dw)} cells {dw['ratio'].median():.1f}x",
            "SCALE": f"about {cost['planning']:g}x",
        }
    )
    return pd.DataFrame(rows)


def dinowm_markdown(table: pd.DataFrame, task: str) -> str:
    """:func:`dinowm_table` as a markdown table with what its columns are, or the sentence
    saying why there is none."""
    if table.empty:
        return (
            f"This study has no DINO-WM arm: the {task_title(task)} study file does not "
            "list `dinowm` (it runs on Two-Room and Push-T, SCALE's two ends of the "
            "claim)."
        )
    return (
        table.to_markdown(index=False) + f"\n\n{MCNEMAR_CAVEAT}. Ours: the stand-in DINO-WM "
        "of this profile (a frozen encoder pretrained by self-distillation on the five tasks' "
        "frames, not DINOv2; see the Reconstructions page). SCALE: its DINO-WM on DINOv2 "
        "features at 224 px, from the reference file, not a result of this book. Times are the "
        "wall times recorded by the jobs that built each artifact, so two arms built in "
        "different sessions carry the machine's load of each; `benchmarks/bench_dinowm.py` "
        "measures both ratios in one run."
    )


def dinowm_sentence(episodes: pd.DataFrame, task: str, protocol: str) -> str:
    """The reading of :func:`dinowm_table`: at CEM T1, does the stand-in DINO-WM plan better or
    worse than the baseline (the paired interval decides; overlapping zero: undecided), and
    does that agree with the sign SCALE reports for the task (CEM, T1)."""
    if "dinowm" not in set(episodes["arm"]):
        return "this study has no DINO-WM arm"
    cell = episodes[
        (episodes["protocol"] == protocol)
        & (episodes["solver"] == "cem")
        & (episodes["budget"] == "T1")
    ]
    d = paired_table(cell[cell["arm"].isin(["dinowm", BASELINE])]).iloc[0]
    ours = 1 if d["low"] > 0 else -1 if d["high"] < 0 else 0
    word = {1: "better than", -1: "worse than", 0: "not distinguishably from"}[ours]
    text = (
        f"the stand-in DINO-WM plans {word} {BASELINE} at CEM T1 "
        f"({format_rate(d['diff'], d['low'], d['high'])} pp)"
    )
    tier = reference_numbers(
        allow_empty=True, table="scale_success_per_tier", task=task, solver="cem", tier="T1"
    ).set_index("arm")["value"]
    if not {"dinowm", BASELINE} <= set(tier.index):
        return text + "; SCALE reports no DINO-WM number for this task"
    theirs = float(np.sign(tier["dinowm"] - tier[BASELINE]))
    agree = (
        "the same direction as"
        if ours == theirs
        else ("no direction to compare with" if ours == 0 else "the opposite direction to")
    )
    return (
        f"{text}: {agree} SCALE's, which has DINO-WM "
        f"{'above' if theirs > 0 else 'below' if theirs < 0 else 'level with'} LeWM on "
        f"this task ({tier['dinowm'] - tier[BASELINE]:+.1f} pp at CEM T1)"
    )


def paper_gap(profile: Profile, paper: Profile, task: str, action_dim: int) -> pd.DataFrame:
    """What the ``paper`` profile (the papers' settings) spends beside ``profile``: image size,
    world-model parameters, training clips seen (steps x batch), training episodes and
    rollouts per replan at T1. Columns: ``quantity``, ``this profile``, ``paper profile``,
    ``ratio`` (paper / this)."""

    def numbers(p: Profile) -> dict[str, float]:
        tiers = budget_tiers(p)
        return {
            "image size (px)": p.data.image_size,
            "world-model parameters": build_world_model(p, action_dim).num_parameters(),
            "training clips seen (steps x batch)": p.train.steps * p.train.batch_size,
            "training episodes": episode_counts(task, p)[0],
            "rollouts per replan at T1": tiers["T1"][0] * tiers["T1"][1],
        }

    ours, theirs = numbers(profile), numbers(paper)
    return pd.DataFrame(
        [
            {
                "quantity": k,
                "this profile": ours[k],
                "paper profile": theirs[k],
                "ratio": theirs[k] / ours[k],
            }
            for k in ours
        ]
    )


# --------------------------------------------------------------------------------------------
# The ceiling: the simulator as the world model
# --------------------------------------------------------------------------------------------

CEILING_ARMS: tuple[str, ...] = (BASELINE, "scale", "random")
"""The arms set beside the ceiling: the baseline, SCALE's geometry (the one the ceiling's
cost, a distance in standardized q, idealises) and the random policy's floor."""


def ceiling_table(
    episodes: pd.DataFrame, ceiling: pd.DataFrame, arms: Sequence[str] = CEILING_ARMS
) -> pd.DataFrame:
    """Per ceiling cell: the ceiling's success and each arm's **on the same pairs** (the
    ceiling plans a seeded subset, so the arms' rows are filtered to its episodes), each with
    its 95 % interval, and the gap ``ceiling - arm`` paired per (training seed, pair): the
    ceiling has one outcome per pair, set against every seed's (as the random floor is,
    :func:`~jepa_geometry.study.cells.floor_check`). ``ceiling`` is
    :func:`~jepa_geometry.study.cells.evaluate_ceiling_cells` output (the ceiling's rows and
    the random policy's on its pairs).

    Long columns: protocol, solver, budget, arm, pairs, seeds, rate, low, high, gap, gap_low,
    gap_high (gap NaN on the ceiling's own rows). Empty when the study has no ceiling; an arm
    that did not plan the cell (a task whose gate failed) has no rows.
    """
    cols = [*CELL_KEYS, "arm", "pairs", "seeds", "rate", "low", "high"]
    cols += ["gap", "gap_low", "gap_high"]
    rows = []
    if ceiling.empty:
        return pd.DataFrame(columns=cols)
    own = ceiling[ceiling["arm"] == "ceiling"]
    both = pd.concat([episodes, ceiling[ceiling["arm"] != "ceiling"]], ignore_index=True)
    for keys, top in own.groupby(CELL_KEYS, sort=True):
        cell = dict(zip(CELL_KEYS, keys, strict=True))
        same = both[
            (both["protocol"] == cell["protocol"])
            & (both["solver"] == cell["solver"])
            & (both["budget"] == cell["budget"])
            & both["episode"].isin(top["episode"])
        ].drop_duplicates(["arm", "train_seed", "episode"])
        best = stats.success_matrix(top)[0]
        for arm, t in [("ceiling", top), *((a, same[same["arm"] == a]) for a in arms)]:
            if t.empty:
                continue
            m = stats.success_matrix(t)
            arm_m = m[0] if len(m) == 1 else m
            r = stats.success_rate(arm_m, "wilson")
            gap = {"gap": np.nan, "gap_low": np.nan, "gap_high": np.nan}
            if arm != "ceiling":
                d = stats.paired_difference(
                    best if len(m) == 1 else np.tile(best, (len(m), 1)), arm_m
                )
                gap = {"gap": d.diff, "gap_low": d.low, "gap_high": d.high}
            rows.append(
                {**cell, "arm": arm, "pairs": m.shape[1], "seeds": len(m), **r.as_dict(), **gap}
            )
    return pd.DataFrame(rows, columns=cols)


def ceiling_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`ceiling_table` as the page shows it: one row per cell (solver, tier, pairs), per
    arm its success with interval, and for each arm the gap to the ceiling in points, solvers
    and arms by their display names."""
    out = []
    for keys, g in table.groupby(CELL_KEYS, sort=True):
        cell = dict(zip(CELL_KEYS, keys, strict=True))
        row: dict[str, Any] = {
            "solver": display_name(cell["solver"]),
            "budget": cell["budget"],
            "pairs": int(g["pairs"].max()),
        }
        out.append({**row, **{named(k): v for k, v in ceiling_columns(g).items()}})
    return pd.DataFrame(out)


def ceiling_columns(rows: pd.DataFrame) -> dict[str, str]:
    """One ceiling comparison's columns as the pages show them: per arm (``rows`` of
    :func:`ceiling_table` or :func:`~jepa_geometry.book.tables.across.ceiling_across`) its
    success with interval, then each arm's gap to the ceiling, in points."""
    out = {f"{r.arm} (%)": format_rate(r.rate, r.low, r.high) for r in rows.itertuples()}
    for r in rows[rows["arm"] != "ceiling"].itertuples():
        out[f"ceiling - {r.arm} (pp)"] = format_rate(r.gap, r.gap_low, r.gap_high)
    return out


def ceiling_cost(spec: Any, profile: Profile, ceiling: pd.DataFrame) -> dict[str, float]:
    """The ceiling's cost in minutes of one core: the rule's upper bound stated before it ran
    (:func:`~jepa_geometry.study.cells.ceiling_seconds_per_pair` x its pairs) and the measured
    solve time (the sum of its episodes' ``plan_seconds``)."""
    pairs = int(ceiling["episode"].nunique()) if len(ceiling) else 0
    return {
        "estimate_min": ceiling_seconds_per_pair(spec, profile) * pairs / 60,
        "measured_min": float(ceiling["plan_seconds"].sum()) / 60 if len(ceiling) else 0.0,
        "pairs": float(pairs),
    }


def ceiling_sentence(table: pd.DataFrame, budget: str = "T1") -> str:
    """What the ceiling says at ``budget`` in words: where a perfect model lands under our
    planner, and how much of the distance is the budget's and how much the model's."""
    t = table[(table["budget"] == budget) & (table["solver"] == "cem")]
    top = t[t["arm"] == "ceiling"]
    if top.empty:
        return "the study has no ceiling"
    c = top.iloc[0]
    text = (
        f"with the simulator as its model, CEM at {budget} reaches "
        f"{format_rate(c.rate, c.low, c.high)} % of {int(c.pairs)} pairs"
    )
    base = t[t["arm"] == BASELINE]
    if not base.empty:
        b = base.iloc[0]
        return text + (
            f"; on the same pairs {BASELINE} reaches {format_rate(b.rate, b.low, b.high)} %, "
            f"{format_rate(b.gap, b.gap_low, b.gap_high)} points below the ceiling: roughly, "
            "that gap is the model's, and the ceiling's own distance to 100 % the budget's"
        )
    rnd = t[t["arm"] == "random"]
    if rnd.empty:
        return text + " (no learned model planned these pairs)"
    r = rnd.iloc[0]
    return text + (
        f"; no learned model planned them, and the random policy reaches "
        f"{format_rate(r.rate, r.low, r.high)} %, "
        f"{format_rate(r.gap, r.gap_low, r.gap_high)} points below the ceiling"
    )
