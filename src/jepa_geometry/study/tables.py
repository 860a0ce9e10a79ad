"""The tables the chapters show: our measurements reshaped, and the papers' numbers beside them.

Chapters call these instead of reshaping data frames themselves, so every table of the book
is a named, tested function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.envs import task_class, task_title
from jepa_geometry.envs.dataset import episode_counts
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import Profile
from jepa_geometry.stats import bootstrap_interval
from jepa_geometry.study.grid import CELL_KEYS, STUDY_ARMS, paired_table
from jepa_geometry.study.reference import reference_numbers
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.study.verdict import verdict_table
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.losses import sigreg_gaussian_floor
from jepa_geometry.wm.model import build_world_model
from jepa_geometry.wm.training import (
    DIAGNOSTICS,
    batch_isotropic_share,
    diagnostics_long,
    last_logged,
    training_log,
)

RANKING_COLUMNS: dict[str, tuple[str, ...]] = {
    "gaussian": ("tau_pred", "tau_geom", "tau_total", "rollout_error"),  # SCALE's channels
    "dataset": ("agree_enc", "agree_pred"),  # AnisoWM's cost-ordering agreement
}


def ranking_table(ranking_rows: pd.DataFrame, arms: list[str]) -> pd.DataFrame:
    """Per arm: each ranking metric's mean over (seed, start) with its 95 % interval
    (two-stage bootstrap over training seeds and starts; starts with a NaN dropped), as text.

    SCALE's τ channels and rollout error come from the Gaussian candidates, AnisoWM's agreement
    from the recorded ones (:data:`RANKING_COLUMNS`).
    """
    out: dict[str, dict[str, str]] = {}
    for source, cols in RANKING_COLUMNS.items():
        r = ranking_rows[ranking_rows["source"] == source]
        for m in arms:
            for c in cols:
                x = r[r["arm"] == m].pivot(index="train_seed", columns="start", values=c)
                x = x.dropna(axis=1).to_numpy()
                lo, hi = bootstrap_interval(x if len(x) > 1 else x[0])
                out.setdefault(c, {})[m] = f"{x.mean():.3f} [{lo:.3f}, {hi:.3f}]"
    return pd.DataFrame(out).loc[arms]


# SCALE's geometry tables (reference file) -> our probe columns, with the factor to our units.
PAPER_PROBE_TABLES: dict[str, tuple[str, float]] = {
    "scale_pca_variance_share": ("var_top{k}", 0.01),
    "scale_topk_pc_probe_r2": ("r2_top{k}", 1.0),
    "scale_full_decodability": ("r2_full_{probe}", 1.0),
    "scale_distance_ratio_dispersion": ("ratio_p90_over_p10", 1.0),
}


def paper_probe_table(task: str) -> pd.DataFrame:
    """SCALE's reported geometry of ``task`` in the columns of :attr:`Geometry.probes`:
    one row per arm of the paper (lewm, scale, aux, dinowm), never our results."""
    values: dict[tuple[str, str], float] = {}
    for table, (column, factor) in PAPER_PROBE_TABLES.items():
        for _, r in reference_numbers(table=table, task=task, allow_empty=True).iterrows():
            values[(r["arm"], column.format(**r.dropna().to_dict()))] = factor * r["value"]
    if not values:  # SCALE reports no geometry for this task
        return pd.DataFrame(columns=list(PROBE_COLUMNS), index=pd.Index([], name="arm"))
    table = pd.Series(values).unstack().reindex(columns=list(PROBE_COLUMNS))
    order = [a for a in ("lewm", "scale", "aux", "dinowm") if a in table.index]
    return table.loc[order + sorted(set(table.index) - set(order))]


def lambda_table(lambda_spectra: dict) -> pd.DataFrame:
    """One row per ΛReg model: coordinates above the mean target variance (AnisoWM's count),
    the embedding width D and the learned condition number ``cond Λ`` (bounded by κ)."""
    rows = [
        {"arm": m, "train_seed": s, "above_mean": sp["above_mean"],
         "D": len(sp["final_sorted"]), "cond": sp["cond"]}
        for (m, s), sp in sorted(lambda_spectra.items())
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["arm", "train_seed", "above_mean", "D", "cond"])


def training_diagnostics(task: str, arms: Sequence[str], profile: Profile) -> pd.DataFrame:
    """Every logged embedding diagnostic of every (arm, training seed) model, long form: one
    row per (arm, train_seed, step, diagnostic) with its ``value``
    (:func:`~jepa_geometry.wm.training.embedding_diagnostics`; ΛReg's only for ΛReg arms).
    Models missing from the cache are trained first."""
    parts = []
    for s in profile.seeds.train:
        logs = [pd.DataFrame(training_log(task, m, s, profile)).assign(arm=m) for m in arms]
        parts.append(diagnostics_long(pd.concat(logs, ignore_index=True), s))
    return pd.concat(parts, ignore_index=True)


def final_diagnostics(diagnostics: pd.DataFrame, last: int = 3) -> pd.DataFrame:
    """Per arm and diagnostic: the mean over seeds of each model's mean over its ``last``
    logged steps, ``± sd`` across seeds, as text (rows in the book's arm order, columns in
    :data:`~jepa_geometry.wm.training.DIAGNOSTICS` order; empty where an arm has none)."""
    per_model = (
        last_logged(diagnostics, last)
        .groupby(["arm", "diagnostic", "train_seed"])["value"]
        .mean()
        .reset_index()
    )
    agg = per_model.groupby(["arm", "diagnostic"])["value"].agg(["mean", "std"])
    text = {
        (m, d): f"{r['mean']:.3f}" + ("" if np.isnan(r["std"]) else f" ± {r['std']:.3f}")
        for (m, d), r in agg.iterrows()
    }
    arms = arm_order(list(per_model["arm"].unique()))
    cols = [d for d in DIAGNOSTICS if d in set(per_model["diagnostic"])]
    return pd.DataFrame(
        [[text.get((m, d), "") for d in cols] for m in arms], index=arms, columns=cols
    )


def _last_rows(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None, last: int
) -> pd.DataFrame:
    """The last ``last`` rows of a model's training log (trained first if missing)."""
    return pd.DataFrame(training_log(task, arm, seed, profile, weights)).tail(last)


PAPER_SIGREG_BATCH = 128  # LeWM's λ_sig = 0.09 was set at batch 128 (1,024 directions)


def sigreg_strength(task: str, profile: Profile, last: int = 3) -> pd.DataFrame:
    """How close SIGReg keeps the baseline to isotropy at this profile, one row per training
    seed of ``lewm`` (issue #13, item 4).

    Columns: the logged SIGReg statistic (mean of the last ``last`` log rows) and its Gaussian
    floor (:func:`~jepa_geometry.wm.losses.sigreg_gaussian_floor`, the expectation for exactly
    N(0, I) embeddings); the top-2 and top-8 variance shares of a training batch divided by
    what an isotropic Gaussian shows on a batch of the same size
    (:func:`~jepa_geometry.wm.training.isotropic_top_share`; 1 = isotropic); and
    ``λ_sig · B`` against LeWM's ``0.09 · 128``: SIGReg's statistic is N times a distance, so
    a deviation from the Gaussian is penalised in proportion to the batch, and halving the
    batch halves the effective strength.
    """
    iso2, iso8 = (batch_isotropic_share(profile, k) for k in (2, 8))
    floor = sigreg_gaussian_floor()
    rows = []
    for s in profile.seeds.train:
        log = _last_rows(task, BASELINE, s, profile, None, last)
        rows.append({
            "train_seed": s,
            "SIGReg": float(log["sigreg"].mean()),
            "Gaussian floor": floor,
            "SIGReg / floor": float(log["sigreg"].mean()) / floor,
            "top-2 share / isotropic": float(log["top2_share"].mean()) / iso2,
            "top-8 share / isotropic": float(log["top8_share"].mean()) / iso8,
            "λ_sig·B / LeWM's": profile.train.sigreg_weight * profile.train.batch_size
            / (0.09 * PAPER_SIGREG_BATCH),
        })  # fmt: skip
    return pd.DataFrame(rows)


RESTORED_SIGREG = 0.18  # LeWM's λ_sig · B = 0.09 · 128 at the laptop batch of 64


def sigreg_strength_decision(
    task: str, profile: Profile, weight: float = RESTORED_SIGREG, last: int = 3
) -> tuple[pd.DataFrame, str]:
    """The rule of the book's section rec-sigreg-strength, applied: ``lewm`` with the first
    training seed at the profile's λ_sig and at ``weight`` (trained first if missing).

    Returns a table (rows: the two λ_sig; columns: the last ``last`` log rows' mean top-8 share,
    SIGReg statistic and prediction loss) and the decision: restore ``weight`` for every arm if
    the top-8 share moves at least a quarter of the way from the default's towards the isotropic
    batch value (:func:`~jepa_geometry.wm.training.isotropic_top_share`) and the prediction loss
    rises by at most 20 %; otherwise keep the profile's λ_sig.
    """
    seed = profile.seeds.train[0]
    iso8 = batch_isotropic_share(profile, 8)
    rows = {}
    for lam, w in ((profile.train.sigreg_weight, None), (weight, {"sigreg": weight})):
        log = _last_rows(task, BASELINE, seed, profile, w, last)
        rows[f"λ_sig = {lam:g}"] = {
            "top8_share": float(log["top8_share"].mean()),
            "SIGReg": float(log["sigreg"].mean()),
            "pred": float(log["pred"].mean()),
        }
    table = pd.DataFrame(rows).T
    (default, restored) = table.to_dict("index").values()
    moved = (default["top8_share"] - restored["top8_share"]) / (default["top8_share"] - iso8)
    rise = restored["pred"] / default["pred"] - 1
    restore = moved >= 0.25 and rise <= 0.2
    decision = (
        f"at λ_sig = {weight:g} the top-8 share moves {moved:.0%} of the way towards the isotropic "
        f"batch value {iso8:.3f} (rule: at least 25 %) and the prediction loss changes by "
        f"{rise:+.0%} (rule: at most +20 %), so the rule "
        + ("restores the paper's effective strength for every arm" if restore
           else f"keeps λ_sig = {profile.train.sigreg_weight:g}")
    )  # fmt: skip
    return table, decision


# --- success and planning tables (chapter 6) ---------------------------------------------


def weight_table(task: str, arms: Sequence[str]) -> pd.DataFrame:
    """The papers' default loss weights of each arm on ``task``
    (:func:`~jepa_geometry.wm.arms.arm_weights`): one row per arm, a column per weight the
    arms use (λ_sig, SCALE's λ, Aux's w, ΛReg's κ), NaN where an arm has no such term."""
    rows = [{"arm": a, **arm_weights(a, task).as_dict()} for a in arms]
    out = pd.DataFrame(rows)
    names = {"sigreg": "λ_sig", "scale": "SCALE λ", "aux": "Aux w", "kappa": "ΛReg κ"}
    return out.reindex(columns=["arm", *[c for c in names if c in out]]).rename(columns=names)


def gate_sentence(gate: pd.DataFrame, chosen: str, main_protocol: str, profile: str) -> str:
    """What the protocol gate (:func:`~jepa_geometry.study.gate.protocol_choice`) decided, and
    whether the study file's main protocol is the one it picks."""
    steps = "; then ".join(f"{r.protocol} on the {r.pairs} pairs: {r.reason}"
                           for r in gate.itertuples())  # fmt: skip
    if chosen == main_protocol:
        tail = f"The study's main protocol, {main_protocol}, is the one the rule picks."
    elif profile == "laptop":
        tail = (
            f"The study file's main protocol, {main_protocol}, is NOT the one the rule picks "
            f"({chosen}) at the laptop profile, where the gate is defined: the study does "
            "not follow its own rule, and its results should be read with that in mind."
        )
    else:
        tail = (
            f"At this profile the rule picks {chosen}, while the study file keeps "
            f"{main_protocol}, decided by the gate at the laptop profile (the gate is "
            "defined there; smaller or larger models may pass or fail it differently)."
        )
    return f"{steps}. {tail}"


def ladder_sentence(gate: pd.DataFrame, rung: str | None, spec_rung: str | None,
                    profile: str, plans: bool = True) -> str:  # fmt: skip
    """What a task's ladder (:func:`~jepa_geometry.study.gate.lever_choice`) found, and
    whether the study file runs at the rung it picks (``None``: no rung passed / the file
    names none for this profile). A study that does not plan (``plans`` false) follows the
    rule when no rung passes; it then trains its arms at the rung it names."""
    steps = "; then ".join(f"{r.lever}: {r.reason}" for r in gate.itertuples())
    if profile == "laptop" and rung is None and not plans:
        tail = ("No rung passes within the budget, and the study file does not plan: it trains "
                f"and measures the arms at {spec_rung or 'the profile as it stands'}, and no arm "
                "is compared by planning on this task at this profile.")  # fmt: skip
    elif profile != "laptop":
        tail = (f"At this profile the rule picks {rung or 'no rung'}; the study file runs "
                f"{spec_rung or 'as profiled'} here (the ladder is defined at the laptop "
                "profile).")  # fmt: skip
    elif rung is not None and rung == spec_rung:
        tail = f"The study runs at the rung the rule picks, {rung}."
    elif rung is None and spec_rung is None:
        tail = ("No rung passes within the budget, yet the study file plans as profiled: the "
                "rule says its arms should not be compared by planning, so read its results "
                "with that in mind.")  # fmt: skip
    else:
        tail = (f"The study file's rung, {spec_rung or 'as profiled'}, is NOT the one the rule "
                f"picks ({rung or 'none passes'}) "
                "at the laptop profile, where the ladder is defined: read its results with "
                "that in mind.")  # fmt: skip
    return f"{steps}. {tail}"


def choice_sentence(spec: Any, profile: str, chosen: str | None, rung: Any,
                    gate: pd.DataFrame) -> str:  # fmt: skip
    """The gate's sentence for a study page: :func:`ladder_sentence` for a task with a
    ladder (a ``rung`` was sought), :func:`gate_sentence` for the others."""
    if "lever" in gate.columns:
        return ladder_sentence(gate, rung.name if rung else None, spec.settings.get(profile),
                               profile, plans=spec.plans)  # fmt: skip
    return gate_sentence(gate, str(chosen), spec.main_protocol, profile)


def gate_style(gate: pd.DataFrame) -> Any:
    """The gate's table as shown on a page (task and sentence dropped, rates in percent)."""
    formats = {"solved at start": "{:.1%}", "lewm hard": "{:.1%}", "random hard": "{:.1%}",
               "train (min)": "{:.1f}", "collect (min)": "{:.1f}"}  # fmt: skip
    shown = gate.drop(columns=["task", "reason", "gap"], errors="ignore")
    return shown.style.format({k: v for k, v in formats.items() if k in shown}).hide(axis="index")


def arm_order(arms: Sequence[str]) -> list[str]:
    """Arms in the book's order (baseline first), then anything else alphabetically."""
    known = [m for m in STUDY_ARMS if m in arms]
    return known + sorted(set(arms) - set(known))


def format_rate(rate: float, low: float, high: float, scale: float = 100.0) -> str:
    """``71.0 [64.4, 76.8]``: a rate and its interval in percent."""
    return f"{scale * rate:.1f} [{scale * low:.1f}, {scale * high:.1f}]"


def success_grid(table: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """Wide view of :func:`success_table` for one protocol: rows solver / budget / training
    seeds pooled, columns arms (the random floor counts as one seed)."""
    t = table[table["protocol"] == protocol].copy()
    if t.empty:
        raise ValueError(f"no rows for protocol {protocol!r}; have: {sorted(set(table.protocol))}")
    t["cell"] = [format_rate(r, lo, hi) for r, lo, hi in zip(t.rate, t.low, t.high, strict=True)]
    t["seeds"] = t.groupby(["solver", "budget"])["seeds"].transform("max")  # the arms' seeds
    wide = t.pivot(index=["solver", "budget", "seeds"], columns="arm", values="cell")
    return wide[arm_order(list(wide.columns))]


def timing_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Planning wall time per protocol x solver x budget: mean and total over models."""
    g = cells.groupby(CELL_KEYS, sort=True)["eval_seconds"]
    return pd.DataFrame({"models": g.size(), "mean_s": g.mean(), "total_s": g.sum()}).reset_index()


# The papers' success tables and the cell of our grid each one is comparable with.
PROTOCOL_SLUGS: dict[str, str] = {"goal25_budget50": "code_protocol",
                                  "goal100_budget150": "lewm_protocol",
                                  "goal50_budget100": "goal50_protocol"}  # fmt: skip
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
    # (reference table, our protocol (None: the LeWM paper's for the task), solver (None: the
    # table's), budget (None: the table's))
    ("scale_success_per_tier", SCALE_PROTOCOL, None, None),
    ("aniso_success", None, "cem", "T1"),
    ("lewm_success", None, "cem", "T1"),
)


def beside_papers(table: pd.DataFrame, task: str, arms: Sequence[str]) -> pd.DataFrame:
    """The papers' success rates (reference file) beside ours at the comparable cell.

    ``table`` is :func:`~jepa_geometry.study.grid.success_table` output. Rows whose cell we did
    not plan, and tables with no number for ``task``, are left out.
    """
    ours = table.set_index(["protocol", "solver", "budget", "arm"])
    rows = []
    for ref_table, protocol, solver, budget in PAPER_SUCCESS_CELLS:
        protocol = protocol or lewm_paper_protocol(task)
        ref = reference_numbers(table=ref_table, task=task, allow_empty=True)
        for _, r in ref[ref["arm"].isin(list(arms))].iterrows():
            key = (protocol, solver or r["solver"], budget or r["tier"], r["arm"])
            if key not in ours.index:
                continue
            o = ours.loc[key]
            rows.append(
                {"paper": r["paper"], "protocol": protocol, "solver": key[1], "budget": key[2],
                 "arm": r["arm"], "paper value (%)": r["value"],
                 "ours (%)": format_rate(o["rate"], o["low"], o["high"])}
            )  # fmt: skip
    columns = ["paper", "protocol", "solver", "budget", "arm", "paper value (%)", "ours (%)"]
    return pd.DataFrame(rows, columns=columns)


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

    ``table`` is :func:`~jepa_geometry.study.grid.success_table` output. Returns the rate,
    its interval, ``inside`` and a one-line ``text`` for the chapter.
    """
    r = _cell(table, protocol, "cem", "T1").loc[baseline]
    inside = bool(window[0] <= r.rate <= window[1])
    text = (
        f"{baseline}, CEM T1: {format_rate(r.rate, r.low, r.high)} % -> "
        f"{'inside' if inside else 'OUTSIDE'} the {100 * window[0]:.0f}-{100 * window[1]:.0f} "
        "% window"
    )
    return {"rate": float(r.rate), "low": float(r.low), "high": float(r.high),
            "inside": inside, "text": text}  # fmt: skip


def tier_spread(
    table: pd.DataFrame, protocol: str, arms: Sequence[str], first: str = "T1", last: str = "T5"
) -> pd.DataFrame:
    """CEM success at the richest and the poorest budget tier per arm, and their difference in
    percentage points: do the tiers spread the arms (the second pre-registered check)?"""
    hi, lo = _cell(table, protocol, "cem", first), _cell(table, protocol, "cem", last)
    keep = [a for a in arms if a in hi.index and a in lo.index]
    out = pd.DataFrame(
        {f"{first} (%)": 100 * hi.loc[keep, "rate"], f"{last} (%)": 100 * lo.loc[keep, "rate"]}
    )
    out[f"{first} - {last} (pp)"] = out[f"{first} (%)"] - out[f"{last} (%)"]
    out.index.name = None
    return out


def paired_display(paired: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """:func:`~jepa_geometry.study.grid.paired_table` rows of one protocol, the difference and
    its interval as text in percentage points."""
    t = paired[paired.protocol == protocol].copy()
    if t.empty:
        raise ValueError(f"no paired rows for protocol {protocol!r}")
    t["diff (pp)"] = [
        format_rate(d, lo, hi) for d, lo, hi in zip(t["diff"], t.low, t.high, strict=True)
    ]
    cols = ["solver", "budget", "arm", "seeds", "diff (pp)", "a_only", "b_only", "p_mcnemar"]
    return t[cols].reset_index(drop=True)


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


# --- geometry tables (chapter 7) ------------------------------------------------------------

PROBE_COLUMNS: tuple[str, ...] = (
    "var_top2", "var_top4", "var_top8", "r2_top2", "r2_top4", "r2_top8",
    "r2_full_ridge", "r2_full_mlp", "ratio_p90_over_p10",
)  # fmt: skip


def probe_summary(probes: pd.DataFrame, columns: Sequence[str] = PROBE_COLUMNS) -> pd.DataFrame:
    """Per arm, each probe measure's mean over training seeds, ``± sd`` across seeds where
    there are several, as text (rows in the book's arm order)."""
    agg = probes.groupby("arm")[list(columns)].agg(["mean", "std"])
    text = {
        c: [f"{m:.3f}" + ("" if np.isnan(s) else f" ± {s:.3f}")
            for m, s in zip(agg[(c, "mean")], agg[(c, "std")], strict=True)]
        for c in columns
    }  # fmt: skip
    return pd.DataFrame(text, index=agg.index).loc[arm_order(list(agg.index))]


_TAU_CHANNEL = {"predictor": "tau_pred", "geometry": "tau_geom", "total": "tau_total"}
_ORDERING_COST = {"J_enc": "agree_enc", "J_pred": "agree_pred"}


def paper_ranking_table(task: str) -> pd.DataFrame:
    """The papers' rank measures of ``task`` in our column names: SCALE's τ channels and
    rollout error, AnisoWM's ordering agreement; rows (paper, arm). Never our results."""
    tau = reference_numbers(table="scale_rollout_ranking", task=task, allow_empty=True)
    err = reference_numbers(table="scale_rollout_error", task=task, allow_empty=True)
    order = reference_numbers(table="aniso_cost_ordering", task=task, allow_empty=True)
    papers = pd.concat([
        tau.assign(metric=tau.channel.map(_TAU_CHANNEL)),
        err.assign(metric="rollout_error"),
        order.assign(metric=order["cost"].map(_ORDERING_COST)),
    ])  # fmt: skip
    return papers.pivot_table(index=["paper", "arm"], columns="metric", values="value")


def landscape_summary(landscape_rows: pd.DataFrame, arms: Sequence[str]) -> pd.DataFrame:
    """Per arm, mean / min / max over training seeds of each model's mean landscape IoU and
    Spearman ρ (each model's mean is over its random goals)."""
    per_model = landscape_rows.groupby(["arm", "train_seed"])[["iou", "spearman"]].mean()
    return per_model.groupby("arm").agg(["mean", "min", "max"]).loc[list(arms)]


# --- the reproducibility dashboard -----------------------------------------------------------


def dashboard(items: Sequence[tuple[str, Any, Any]]) -> pd.DataFrame:
    """Every claim of both papers on the tasks of ``items``: the paper's value and where it is
    published, ours with its 95 % interval, the verdict, and the chapter section that measures
    it; one family (Holm's correction across every row).

    ``items`` are ``(task, claim, evidence)``, the claims of
    :func:`~jepa_geometry.study.verdict.paper_claims` tagged with their task. The paper's
    source is read from the reference file (the table the claim cites), never typed here.
    """
    table = verdict_table([(claim, ev) for _, claim, ev in items])
    sources = []
    for task, claim, _ in items:
        ref = (reference_numbers(table=claim.reference, task=task, allow_empty=True)
               if claim.reference else pd.DataFrame())  # fmt: skip
        if len(ref):
            sources.append(f"{ref['paper'].iloc[0]}: {ref['source'].iloc[0]}")
        elif claim.reference:
            sources.append(f"{claim.paper}: no number for this task")
        else:
            sources.append("no number published (figure only)" if claim.paper_note else "")
    table.insert(0, "task", [task_title(task) for task, _, _ in items])
    table["paper's source"] = sources
    table["computed in"] = [claim.computed_in for _, claim, _ in items]
    cols = ["task", "paper", "claim", "measure", "paper's effect", "paper's source",
            "our effect [95% CI]", "min effect", "p (Holm)", "units", "requires", "verdict",
            "computed in"]  # fmt: skip
    return table[cols]


VERDICT_COLOURS: dict[str, str] = {
    "reproduced": "#c7e9c0", "contradicted": "#fcbba1", "not detected at this scale": "#e0e0e0",
    "not detected": "#e0e0e0", "inconclusive": "#ffffff", "reinforce": "#c7e9c0",
    "add up": "#deebf7", "fight": "#fcbba1", "unclear": "#ffffff",
}  # fmt: skip
"""Cell colours of verdicts and cross-lens readings (colour-blind safe greens, reds, greys)."""


def verdict_style(table: pd.DataFrame, text_columns: Sequence[str] = ("claim",)) -> Any:
    """``table`` as a Styler: verdict and reading cells coloured by :data:`VERDICT_COLOURS`,
    the ``text_columns`` left-aligned and wide enough to read, no index."""

    def colour(v: Any) -> str:
        c = VERDICT_COLOURS.get(v) if isinstance(v, str) else None
        return f"background-color: {c}" if c else ""

    cols = [c for c in text_columns if c in table.columns]
    return (
        table.style.map(colour)
        .hide(axis="index")
        .set_properties(subset=cols, **{"text-align": "left", "min-width": "14em"})
    )


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
    """One row of :func:`~jepa_geometry.study.grid.paired_table` (an arm minus the baseline in
    one cell); a one-line error naming the cell when it was not planned."""
    rows = paired[(paired.protocol == protocol) & (paired.solver == solver)
                  & (paired.budget == budget) & (paired.arm == arm)]  # fmt: skip
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
    text = (f"at CEM T1, {BASELINE} succeeds on {ours[BASELINE]} % of the pairs and the random "
            f"policy on {ours['random']} %")  # fmt: skip
    if "scale" in set(paired.arm):
        d = paired_cell(paired, protocol, "cem", "T1", "scale")
        text += f"; scale − {BASELINE} = {format_rate(d['diff'], d.low, d.high)} percentage points"
    return f"{text}; hard subset: {n_hard} of the {n_pairs} pairs"


def probe_means(probes: pd.DataFrame) -> pd.DataFrame:
    """Per arm, the mean over training seeds of every probe measure."""
    return probes.groupby("arm").mean(numeric_only=True)


HALF_Q_CONTRASTS: tuple[tuple[str, str], ...] = (
    ("scale", "lewm"), ("scale-halfq", "lewm"), ("scale-halfq", "scale"),
)  # fmt: skip
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
    cell = episodes[(episodes["protocol"] == protocol) & (episodes["solver"] == solver)
                    & (episodes["budget"] == budget)]  # fmt: skip
    ref = reference_numbers(allow_empty=True, table="scale_success_20cell_difference", task=task)
    paper = {(r.arm, r.versus): r.value for r in ref.itertuples()}  # its reported contrasts
    name = {"scale-halfq": "scale_half_q"}  # the reference file's spelling
    rows = []
    for a, b in HALF_Q_CONTRASTS:
        if {a, b} - arms:
            continue
        d = paired_table(cell[cell["arm"].isin([a, b])], baseline=b).iloc[0]
        reported = paper.get((name.get(a, a), b))
        rows.append({
            "contrast": f"{a} − {b}",
            "ours (pp)": format_rate(d["diff"], d["low"], d["high"]),
            "McNemar p": float(d["p_mcnemar"]),
            "seeds": int(d["seeds"]),
            "SCALE (pp)": "" if reported is None or reported != reported else f"{reported:+.2f}",
        })  # fmt: skip
    return pd.DataFrame(rows)


def half_q_markdown(table: pd.DataFrame, task: str) -> str:
    """:func:`half_q_table` as a markdown table with its reading, or the sentence saying
    why there is none."""
    if table.empty:
        has_half = task_class(task).half_q is not None
        return f"This study trains no half-q arm: {task_title(task)} has " + (
            "one in SCALE, but its study file does not list `scale-halfq`."
            if has_half
            else "no half of $q$ in SCALE (its state has two coordinates)."
        )
    shown = table.assign(**{"McNemar p": table["McNemar p"].map("{:.3g}".format)})
    return (
        shown.to_markdown(index=False) + "\n\nDifferences in percentage points with their "
        "paired 95 % interval over training seeds and pairs; SCALE's column is the contrast it "
        "reports, averaged over its 20 solver cells (one training seed, 6 episode seeds; "
        "blank where it reports none), not a result of this book."
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
    per["ratio"] = per["s_per_plan"].to_numpy() / base.reindex(
        pd.MultiIndex.from_frame(per[CELL_KEYS])).to_numpy()  # fmt: skip
    return per


DINOWM_CONTRASTS: tuple[str, ...] = ("lewm", "scale")
"""DINO-WM against the baseline and against SCALE, as SCALE contrasts it (Section 5)."""


def dinowm_table(
    episodes: pd.DataFrame, trained: pd.DataFrame, task: str, protocol: str
) -> pd.DataFrame:
    """DINO-WM's row of the study: success contrasts at CEM T1 under ``protocol`` and the
    cost ratios to LeWM, each beside SCALE's number. Empty when the study has no ``dinowm``.

    Rows (``quantity``): ``dinowm − lewm`` and ``dinowm − scale`` (paired difference with its
    95 % interval in points; SCALE: its CEM difference at T1, code protocol, one training
    seed), ``training cost`` (median seconds per model, frozen-token pass included, over
    LeWM's) and ``planning cost`` (seconds per plan over LeWM's at CEM T1 under ``protocol``,
    and the median ratio over every cell). SCALE's cost ratios are approximate figures of its
    GPU runs (reference table ``scale_dinowm_cost``).
    """
    if "dinowm" not in set(episodes["arm"]):
        return pd.DataFrame()
    cell = episodes[(episodes["protocol"] == protocol) & (episodes["solver"] == "cem")
                    & (episodes["budget"] == "T1")]  # fmt: skip
    tier = reference_numbers(allow_empty=True, table="scale_success_per_tier", task=task,
                             solver="cem", tier="T1")  # fmt: skip
    paper = dict(zip(tier["arm"], tier["value"], strict=True))
    rows = []
    for versus in DINOWM_CONTRASTS:
        if versus not in set(cell["arm"]):
            continue
        d = paired_table(cell[cell["arm"].isin(["dinowm", versus])], baseline=versus).iloc[0]
        theirs = (f"{paper['dinowm'] - paper[versus]:+.1f} pp"
                  if {"dinowm", versus} <= set(paper) else "")  # fmt: skip
        rows.append({"quantity": f"dinowm − {versus}, success at CEM T1",
                     "ours": f"{format_rate(d['diff'], d['low'], d['high'])} pp "
                             f"(McNemar p = {d['p_mcnemar']:.3g}, {int(d['seeds'])} seeds)",
                     "SCALE": theirs})  # fmt: skip
    cost = reference_numbers(table="scale_dinowm_cost").set_index("quantity")["value"]
    model_s = trained.assign(s=trained["train_seconds"] + trained["token_seconds"])
    per_model = model_s.groupby("arm")["s"].median()
    rows.append({"quantity": "training cost, seconds per model / LeWM's",
                 "ours": f"{per_model['dinowm'] / per_model[BASELINE]:.2f}x "
                         f"({per_model['dinowm']:.0f} s / {per_model[BASELINE]:.0f} s)",
                 "SCALE": f"about {cost['training']:g}x"})  # fmt: skip
    plans = plan_cost_table(episodes)
    dw = plans[plans["arm"] == "dinowm"]
    t1 = dw[(dw["protocol"] == protocol) & (dw["solver"] == "cem") & (dw["budget"] == "T1")]
    ms = 1e3 * t1["s_per_plan"].iloc[0]
    rows.append({"quantity": "planning cost, seconds per plan / LeWM's",
                 "ours": f"{t1['ratio'].iloc[0]:.1f}x at CEM T1 ({ms:.0f} ms per plan); "
                         f"median over its {len(dw)} cells {dw['ratio'].median():.1f}x",
                 "SCALE": f"about {cost['planning']:g}x"})  # fmt: skip
    return pd.DataFrame(rows)


def dinowm_markdown(table: pd.DataFrame, task: str) -> str:
    """:func:`dinowm_table` as a markdown table with what its columns are, or the sentence
    saying why there is none."""
    if table.empty:
        return (f"This study has no DINO-WM arm: the {task_title(task)} study file does not "
                "list `dinowm` (it runs on Two-Room and Push-T, SCALE's two ends of the "
                "claim).")  # fmt: skip
    return (
        table.to_markdown(index=False) + "\n\nOurs: the stand-in DINO-WM of this profile (a "
        "frozen encoder pretrained by self-distillation on the five tasks' frames, not DINOv2; "
        "see the Reconstructions page). SCALE: its DINO-WM on DINOv2 features at 224 px, from "
        "the reference file, not a result of this book. Times are the wall times recorded by "
        "the jobs that built each artifact, so two arms built in different sessions carry the "
        "machine's load of each; `benchmarks/bench_dinowm.py` measures both ratios in one run."
    )


def dinowm_sentence(episodes: pd.DataFrame, task: str, protocol: str) -> str:
    """The reading of :func:`dinowm_table`: at CEM T1, does the stand-in DINO-WM plan better or
    worse than the baseline (the paired interval decides; overlapping zero: undecided), and
    does that agree with the sign SCALE reports for the task (CEM, T1)."""
    if "dinowm" not in set(episodes["arm"]):
        return "this study has no DINO-WM arm"
    cell = episodes[(episodes["protocol"] == protocol) & (episodes["solver"] == "cem")
                    & (episodes["budget"] == "T1")]  # fmt: skip
    d = paired_table(cell[cell["arm"].isin(["dinowm", BASELINE])]).iloc[0]
    ours = 1 if d["low"] > 0 else -1 if d["high"] < 0 else 0
    word = {1: "better than", -1: "worse than", 0: "not distinguishably from"}[ours]
    text = (f"the stand-in DINO-WM plans {word} {BASELINE} at CEM T1 "
            f"({format_rate(d['diff'], d['low'], d['high'])} pp)")  # fmt: skip
    tier = reference_numbers(allow_empty=True, table="scale_success_per_tier", task=task,
                             solver="cem", tier="T1").set_index("arm")["value"]  # fmt: skip
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


def dinowm_geometry_sentence(probes: pd.DataFrame, ranking: pd.DataFrame) -> str:
    """Where the stand-in DINO-WM stands on the two halves of planning: do its frozen
    features carry q in their leading components (ridge R² of q from the top-2 PCs), and does
    its predictor rank candidates by their imagined outcomes (Kendall τ of the predictor
    channel, rollout error), each beside ``lewm``'s. Empty when the study has no ``dinowm``."""
    if "dinowm" not in set(probes["arm"]):
        return ""
    mean = probe_means(probes)
    rk = ranking[ranking["source"] == "gaussian"].groupby("arm")[["tau_pred", "rollout_error"]]
    r = rk.mean()
    text = (
        f"The stand-in DINO-WM's frozen features carry q in their top-2 components with ridge "
        f"R² {mean.loc['dinowm', 'r2_top2']:.2f} (lewm: {mean.loc[BASELINE, 'r2_top2']:.2f}); "
        f"its predictor channel ranks candidates with Kendall τ "
        f"{r.loc['dinowm', 'tau_pred']:.2f} (lewm: {r.loc[BASELINE, 'tau_pred']:.2f}) and "
        f"a rollout error of {r.loc['dinowm', 'rollout_error']:.2f} "
        f"(lewm: {r.loc[BASELINE, 'rollout_error']:.2f})."
    )
    features = mean.loc["dinowm", "r2_top2"] > mean.loc[BASELINE, "r2_top2"]
    dw, base = r.loc["dinowm"], r.loc[BASELINE]
    predictor = dw.tau_pred < base.tau_pred and dw.rollout_error > base.rollout_error
    if features and predictor:
        text += (" Features that carry the state with a predictor that ranks worse and rolls "
                 "out further off point at the predictor, not the features: it does not follow "
                 "how actions move the frozen tokens.")  # fmt: skip
    return text


def coordinate_table(coords: pd.DataFrame, by: str = "arm") -> pd.DataFrame:
    """Per-coordinate probes of q (:func:`~jepa_geometry.analysis.measurements.
    coordinate_probes`, or :func:`~jepa_geometry.study.gate.ladder_probes` with
    ``by="lever"``) as rows x coordinates (mean R² over training seeds); arms in the book's
    order, rungs in the ladder's, coordinates in q's order."""
    wide = coords.pivot_table(index=by, columns="coordinate", values="r2", aggfunc="mean")
    rows = arm_order(list(wide.index)) if by == "arm" else list(dict.fromkeys(coords[by]))
    return wide.loc[rows, list(dict.fromkeys(coords["coordinate"]))]


def coordinate_sentence(coords: pd.DataFrame) -> str:
    """The baseline's least and best decoded coordinates of q, and the arm that decodes the
    least decoded one best."""
    wide = coordinate_table(coords)
    base = wide.loc[BASELINE]
    worst, best = base.idxmin(), base.idxmax()
    top = wide[worst].idxmax()
    return (
        f"{BASELINE} decodes {best} best (R² {base[best]:.2f}) and {worst} worst "
        f"({base[worst]:.2f}); of all arms, {top} decodes {worst} best "
        f"({wide.loc[top, worst]:.2f})."
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
    return pd.DataFrame([{"quantity": k, "this profile": ours[k], "paper profile": theirs[k],
                          "ratio": theirs[k] / ours[k]} for k in ours])  # fmt: skip
