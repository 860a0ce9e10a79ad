"""Claim by claim: does this book's run reproduce what the papers report?

A :class:`Claim` is a directional statement about the difference between two arms on one
measure ("SCALE's top-2 PCs carry more of q than LeWM's": ``effect = m(scale) - m(lewm) > 0``),
with the smallest effect that would matter (``min_effect``, fixed per measure before any
result: :data:`MIN_EFFECTS`). Its :class:`Evidence` is our measured effect with a 95 % interval.
The verdict is a rule fixed before looking at any result, applied to all the claims of a
chapter together (:func:`verdict_table`), so that testing about twenty claims does not
manufacture "reproduced" rows by chance:

* **reproduced**: the one-sided test of "the effect exceeds ``threshold + min_effect`` in the
  claimed direction" rejects at 5 % after Holm's correction across the claims;
* **contradicted**: the family-wise (Bonferroni-widened) interval lies entirely on the other
  side of the threshold;
* **not detected at this scale**: that interval rules out an effect of ``min_effect`` in the
  claimed direction without showing the opposite (the effect, if any, is too small here);
* **inconclusive**: otherwise (the data cannot tell).

The papers' magnitudes are shown beside ours but decide nothing: they were measured in another
setting (a ViT at 224 px, D = 192), so only the sign of a claim is tested at the laptop scale.
:func:`preconditions` lists, before the claims, what a claim assumes about the trained models
(LeWM's baseline near-isotropic; ΛReg's Λ actually selected).

Intervals come from :mod:`jepa_geometry.stats`: success differences from the paired two-stage
bootstrap over training seeds and pairs; per-start or per-goal measures (rank correlations,
cost landscapes) from the same bootstrap over seeds and units; one-number-per-model measures
(probes, spectra) from a paired t-interval over training seeds, wide with three seeds, as it
should be.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from jepa_geometry import stats
from jepa_geometry.envs import task_title
from jepa_geometry.study.reference import reference_numbers
from jepa_geometry.wm.training import last_logged

VERDICTS: tuple[str, ...] = (
    "reproduced",
    "contradicted",
    "not detected at this scale",
    "inconclusive",
)
ALPHA = 0.05  # family-wise error rate of a chapter's claims
# The smallest effect that would matter, per measure (claim units), fixed before the rerun:
# 3 points of success; 0.02 of variance share; 0.05 of R²; 0.1 of the P90/P10 ratio; 0.02 of
# Kendall τ; 0.01 of rollout error (relative); 0.01 of ordering agreement; 0.05 of Spearman ρ.
MIN_EFFECTS: dict[str, float] = {
    "success": 0.03,
    "var_top2": 0.02,
    "r2_top2": 0.05,
    "r2_full_ridge": 0.0,
    "ratio_p90_over_p10": 0.1,
    "tau_geom": 0.02,
    "tau_pred": 0.02,
    "rollout_error": 0.01,
    "agree_enc": 0.01,
    "agree_pred": 0.01,
    "spearman": 0.05,
}
UNIT_LABELS = {"episode": "pairs", "start": "starts", "goal_index": "goals"}


@dataclass(frozen=True)
class Claim:
    """``direction * (m(a) - m(b)) > threshold``, as one of the papers states it."""

    paper: str
    statement: str
    measure: str  # what m is, in words, with the setting it is measured in
    a: str
    b: str
    direction: int = 1  # +1: a larger is the claim; -1: a smaller
    threshold: float = 0.0
    paper_effect: float | None = None  # m(a) - m(b) as reported, in our units, if comparable
    paper_note: str = ""  # where the paper's number comes from / why it is not comparable
    unit: str = ""  # display unit of effects, e.g. "pp"
    display_scale: float = 1.0  # effects are shown times this (100 for success in pp)
    reference: str = ""  # id of the reference-file table holding the paper's numbers, if any
    computed_in: str = ""  # the chapter and section whose measurements are the evidence
    min_effect: float = 0.0  # the smallest effect that matters, beyond the threshold
    requires: str = ""  # the precondition (see preconditions) the claim assumes, if any

    def __post_init__(self) -> None:
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {self.direction!r}")
        if not self.min_effect >= 0:
            raise ValueError(f"min_effect must be >= 0, got {self.min_effect!r}")


@dataclass(frozen=True)
class Evidence:
    """Our effect ``m(a) - m(b)`` with its 95 % interval and how it was obtained."""

    effect: float
    low: float
    high: float
    p_value: float | None
    units: str  # e.g. "3 seeds x 200 pairs", "3 seeds (t-interval)"

    def __post_init__(self) -> None:
        if not self.low <= self.effect <= self.high:
            raise ValueError(f"effect {self.effect} outside its interval [{self.low}, {self.high}]")


Z95 = float(sps.norm.ppf(0.975))


def one_sided_p(claim: Claim, ev: Evidence) -> float:
    """p-value of H0 "direction * effect <= threshold + min_effect" (no meaningful effect in
    the claimed direction), from the normal approximation that matches the 95 % interval
    (se = interval width / (2 * 1.96)). An interval with no finite bound gives p = 1."""
    if not (np.isfinite(ev.low) and np.isfinite(ev.high)):
        return 1.0
    gap = claim.direction * ev.effect - (claim.threshold + claim.min_effect)
    se = (ev.high - ev.low) / (2 * Z95)
    if se <= 0:
        return 0.0 if gap > 0 else 1.0
    return float(sps.norm.sf(gap / se))


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values: ``max_{j <= i} min(1, (m - j + 1) p_(j))`` in
    increasing order of p, mapped back (controls the family-wise error rate)."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def family_interval(ev: Evidence, m: int) -> tuple[float, float]:
    """The 95 % interval widened to family-wise coverage over ``m`` claims (Bonferroni:
    the same normal approximation at level 1 - 0.05 / m)."""
    if not (np.isfinite(ev.low) and np.isfinite(ev.high)):
        return -np.inf, np.inf
    z = float(sps.norm.ppf(1 - ALPHA / (2 * max(m, 1))))
    half = (ev.high - ev.low) / 2 * z / Z95
    return ev.effect - half, ev.effect + half


def verdict(claim: Claim, ev: Evidence, p_holm: float | None = None, m: int = 1) -> str:
    """The rule of this module's docstring, for one claim among ``m`` (``p_holm``: its Holm-
    adjusted p-value; alone, the unadjusted one)."""
    p = one_sided_p(claim, ev) if p_holm is None else p_holm
    lo, hi = family_interval(ev, m)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive"
    upper = max(claim.direction * lo, claim.direction * hi)  # in the claimed direction
    if p < ALPHA:
        return "reproduced"
    if upper < claim.threshold:
        return "contradicted"
    if upper < claim.threshold + claim.min_effect:
        return "not detected at this scale"
    return "inconclusive"


def verdict_table(items: Sequence[tuple[Claim, Evidence]]) -> pd.DataFrame:
    """One row per claim: statement, measure, the paper's effect, ours with its 95 % interval,
    the smallest effect that matters, the Holm-adjusted p-value across all ``items``, verdict."""

    def num(x: float) -> str:
        return f"{0.0 if abs(x) < 1e-9 else x:+.3g}"

    m = len(items)
    p_holm = holm([one_sided_p(c, e) for c, e in items]) if m else np.array([])
    rows = []
    for (claim, ev), p in zip(items, p_holm, strict=True):
        k, u = claim.display_scale, f" {claim.unit}" if claim.unit else ""
        paper = "" if claim.paper_effect is None else f"{num(k * claim.paper_effect)}{u}"
        rows.append(
            {
                "paper": claim.paper,
                "claim": claim.statement,
                "measure": claim.measure,
                "paper's effect": paper + (f" ({claim.paper_note})" if claim.paper_note else ""),
                "our effect [95% CI]": f"{num(k * ev.effect)} [{num(k * ev.low)}, "
                f"{num(k * ev.high)}]{u}",
                "min effect": f"{num(k * (claim.threshold + claim.min_effect))}{u}",
                "p (Holm)": float(p),
                "units": ev.units,
                "requires": claim.requires,
                "verdict": verdict(claim, ev, float(p), m),
            }
        )
    return pd.DataFrame(rows)


ISOTROPY_RATIO_MAX = 2.0  # LeWM's top-8 variance share at most twice the isotropic 8 / D
SELECTION_FRACTION_MIN = 0.9  # Λ counts as selected when cond Λ reaches 90 % of its bound κ


def preconditions(
    geometry: Any, kappa: float = 2.0, diagnostics: pd.DataFrame | None = None
) -> pd.DataFrame:
    """What the claims assume about the trained models, measured (one row each).

    * "LeWM near-isotropic": the baseline's top-8 PCs hold at most
      :data:`ISOTROPY_RATIO_MAX` times the isotropic share 8 / D of the variance (mean over
      seeds). AnisoWM's argument starts from an isotropic embedding.
    * "Λ selected": the mean learned ``cond Λ`` of the ΛReg arms reaches
      :data:`SELECTION_FRACTION_MIN` of its bound κ; below that Λ stayed near the identity and
      ΛReg cannot differ much from SIGReg, so AnisoWM's claims are not tested as intended.
    * "Λ follows the prediction error" (with ``diagnostics``, the long table of
      :func:`~jepa_geometry.study.tables.geometry.training_diagnostics`): the ΛReg models' mean
      ``corr_v_rel_err`` over their last three logged steps is negative, i.e. Λ gives more
      target variance where the model predicts relatively well, as AnisoWM's theory wants.
      Informative only: no claim requires it (it was added after the claims were fixed).
    """
    rows = []
    spec = geometry.spectra[geometry.spectra["arm"] == "lewm"]
    if not spec.empty:
        dim = int(spec["pc"].max())
        top8 = spec[spec["pc"] <= 8].groupby("train_seed")["share"].sum().mean()
        ratio = float(top8 / (8 / dim))
        rows.append(
            {
                "precondition": "LeWM near-isotropic",
                "measured": f"top-8 variance share {top8:.3f} = {ratio:.2f} x isotropic (8/{dim})",
                "criterion": f"<= {ISOTROPY_RATIO_MAX:g} x isotropic",
                "holds": ratio <= ISOTROPY_RATIO_MAX,
            }
        )
    conds = [sp["cond"] for sp in getattr(geometry, "lambda_spectra", {}).values()]
    if conds:
        mean = float(np.mean(conds))
        rows.append(
            {
                "precondition": "Λ selected",
                "measured": f"mean cond Λ {mean:.2f} of bound κ = {kappa:g}",
                "criterion": f">= {SELECTION_FRACTION_MIN:g} κ",
                "holds": mean >= SELECTION_FRACTION_MIN * kappa,
            }
        )
    if diagnostics is not None:
        d = last_logged(diagnostics[diagnostics["diagnostic"] == "corr_v_rel_err"])
        if not d.empty:
            mean = float(d["value"].mean())
            rows.append(
                {
                    "precondition": "Λ follows the prediction error",
                    "measured": f"mean corr(v, relative prediction error) {mean:+.2f}",
                    "criterion": "< 0",
                    "holds": mean < 0,
                }
            )
    return pd.DataFrame(rows, columns=["precondition", "measured", "criterion", "holds"])


# --------------------------------------------------------------------------------------
# Evidence builders
# --------------------------------------------------------------------------------------


def _matrix(table: pd.DataFrame, value: str, unit: str) -> pd.DataFrame:
    """(training seed x unit) matrix of ``value``; units must be the same for every seed."""
    if table.duplicated(["train_seed", unit]).any():
        raise ValueError(f"several rows per (train_seed, {unit}); filter the table first")
    wide = table.pivot(index="train_seed", columns=unit, values=value).sort_index()
    if wide.isna().any().any():
        raise ValueError(f"training seeds were measured on different {unit}s; cannot pair them")
    return wide


def paired_unit_evidence(
    table: pd.DataFrame, a: str, b: str, value: str, unit: str, seed: int = 0
) -> Evidence:
    """Mean of ``value(a) - value(b)`` over (seed, unit), both arms measured on the same units.

    ``table`` has columns arm, train_seed, ``unit`` and ``value`` (e.g. per-start Kendall τ,
    per-pair success averaged over tiers). Interval: two-stage bootstrap over seeds and units.
    p: the exact McNemar test when the values are binary (success), otherwise None.
    """
    wa = _matrix(table[table["arm"] == a], value, unit)
    wb = _matrix(table[table["arm"] == b], value, unit)
    seeds = wa.index.intersection(wb.index)
    cols = wa.columns.intersection(wb.columns)
    if len(seeds) == 0 or len(cols) == 0:
        raise ValueError(f"no common (seed, {unit}) units between {a!r} and {b!r}")
    xa, xb = wa.loc[seeds, cols].to_numpy(float), wb.loc[seeds, cols].to_numpy(float)
    d = xa - xb
    lo, hi = stats.bootstrap_interval(d if len(seeds) > 1 else d[0], seed=seed)
    binary = np.isin(xa, (0.0, 1.0)).all() and np.isin(xb, (0.0, 1.0)).all()
    p = stats.mcnemar_exact(xa, xb) if binary else None
    eff = float(d.mean())
    label = UNIT_LABELS.get(unit, f"{unit}s")
    seeds_label = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}"
    return Evidence(eff, min(lo, eff), max(hi, eff), p, f"{seeds_label} x {len(cols)} {label}")


def seed_level_evidence(table: pd.DataFrame, a: str, b: str, value: str) -> Evidence:
    """``value(a) - value(b)`` per training seed (one number per model), paired by seed.

    Interval: Student t over the paired seed differences (df = seeds - 1); p: paired t-test.
    One seed gives no interval: (-inf, inf), so such a claim is always "inconclusive".
    """
    va = table[table["arm"] == a].set_index("train_seed")[value]
    vb = table[table["arm"] == b].set_index("train_seed")[value]
    seeds = va.index.intersection(vb.index)
    if len(seeds) == 0:
        raise ValueError(f"no training seed measured for both {a!r} and {b!r}")
    d = (va.loc[seeds] - vb.loc[seeds]).to_numpy(float)
    if len(seeds) == 1:  # no interval from one model: the verdict can only be inconclusive
        return Evidence(float(d[0]), -np.inf, np.inf, None, "1 seed (no interval)")
    eff, se = float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))
    half = float(sps.t.ppf(0.975, len(d) - 1) * se)
    p = float(sps.ttest_1samp(d, 0.0).pvalue) if se > 0 else (0.0 if eff != 0 else 1.0)
    return Evidence(eff, eff - half, eff + half, p, f"{len(seeds)} seeds (t-interval)")


def tier_mean_success(
    episodes: pd.DataFrame, protocol: str, solver: str, budgets: Sequence[str]
) -> pd.DataFrame:
    """Per (arm, seed, pair): success averaged over ``budgets`` (SCALE's per-solver mean)."""
    t = episodes[
        (episodes["protocol"] == protocol)
        & (episodes["solver"] == solver)
        & episodes["budget"].isin(list(budgets))
        & (episodes["arm"] != "random")
    ]
    if t.empty:
        raise ValueError(f"no episodes for {protocol}/{solver} at {list(budgets)}")
    n_b = t.groupby(["arm", "train_seed", "episode"])["budget"].nunique()
    if (n_b != len(budgets)).any():
        raise ValueError(f"not every arm was evaluated at all of {list(budgets)}")
    return t.groupby(["arm", "train_seed", "episode"])["success"].mean().reset_index()


# Where each kind of evidence is measured in the book (chapter, section).
PLANNING = "chapter 6 ({title} planning), section 'Planning every cell'"
PROBES = "chapter 7 ({title} geometry), section 'Where the variance sits, and what it carries'"
RANKING = "chapter 7 ({title} geometry), section 'Do imagined costs rank plans like reality?'"
LANDSCAPE = "chapter 7 ({title} geometry), section 'The shape of the cost around a goal'"


def claim_requires(arm: str) -> str:
    """The precondition a claim about ``arm`` assumes: ΛReg arms need a selected Λ."""
    return "Λ selected" if "anisowm" in arm else ""


def paper_difference(table: str, a: str, b: str, scale: float = 1.0, **filters: str) -> float:
    """``value(a) - value(b)`` of a reference table (mean over matching rows), times ``scale``.

    ``scale=0.01`` turns the papers' percent into our fractions.
    """
    ref = reference_numbers(table=table, **filters)
    va = ref[ref["arm"] == a]["value"]
    vb = ref[ref["arm"] == b]["value"]
    if va.empty or vb.empty:
        raise ValueError(f"reference table {table!r} has no {a!r} or {b!r} rows for {filters}")
    return float(scale * (va.mean() - vb.mean()))


def _paper(table: str, a: str, b: str, scale: float = 1.0, **filters: str) -> float | None:
    """:func:`paper_difference`, or None where the reference file has no such rows."""
    try:
        return paper_difference(table, a, b, scale, **filters)
    except ValueError:
        return None


def _landscape_note(task: str) -> str:
    """AnisoWM's Figure-4 ρ for ``task`` where a summary of the paper quotes it (its goals
    were hand-picked, ours are random: a note, not an effect to compare)."""
    ref = reference_numbers(allow_empty=True, table="anisowm_landscape_spearman", task=task)
    value = dict(zip(ref["arm"], ref["value"], strict=True))
    if not {"lewm", "anisowm"} <= set(value):
        return "figure only, no number"
    return (
        f"AnisoWM (hand-picked goals; quoted by a summary, unverified): ρ "
        f"{value['lewm']:.2f} → {value['anisowm']:.2f}"
    )


def paper_claims(
    task: str,
    episodes: pd.DataFrame,
    geometry: Any,
    main_protocol: str = "goal100_budget150",
    code_protocol: str = "goal25_budget50",
) -> list[tuple[Claim, Evidence]]:
    """The two papers' claims about ``task``, each with our evidence.

    ``episodes`` is :func:`jepa_geometry.study.grid.evaluate_arms` output, ``geometry`` a
    :class:`jepa_geometry.analysis.measurements.Geometry`. A claim whose arms or cells were not
    run is left out. The papers' effects are attached only where the setting is comparable (same
    protocol and measure); otherwise the note says what the paper reported.
    """
    items: list[tuple[Claim, Evidence]] = []
    arms = set(episodes["arm"])
    protocols = set(episodes["protocol"])
    budgets_of = {
        (p, s): sorted(set(g["budget"])) for (p, s), g in episodes.groupby(["protocol", "solver"])
    }

    def success(
        a: str,
        b: str,
        protocol: str,
        solver: str,
        statement: str,
        paper: str,
        paper_effect: float | None = None,
        note: str = "",
        budgets: Sequence[str] | None = None,
        ref: str = "",
        direction: int = 1,
    ) -> None:
        if {a, b} - arms or protocol not in protocols or (protocol, solver) not in budgets_of:
            return
        buds = list(budgets or budgets_of[(protocol, solver)])
        t = tier_mean_success(episodes, protocol, solver, buds)
        ev = paired_unit_evidence(t, a, b, "success", "episode")
        name = {"cem": "CEM", "icem": "iCEM", "mppi": "MPPI"}.get(solver, solver)
        measure = f"success, {protocol} protocol, {name} at {'/'.join(buds)}"
        if len(buds) > 1:
            measure += " (mean over tiers)"
        items.append(
            (
                Claim(
                    paper,
                    statement,
                    measure,
                    a,
                    b,
                    direction,
                    paper_effect=paper_effect,
                    paper_note=note,
                    unit="pp",
                    display_scale=100.0,
                    reference=ref,
                    computed_in=PLANNING,
                    min_effect=MIN_EFFECTS["success"],
                    requires=claim_requires(a),
                ),
                ev,
            )
        )

    def per_model(
        a: str,
        b: str,
        col: str,
        statement: str,
        measure: str,
        paper: str,
        direction: int = 1,
        threshold: float = 0.0,
        paper_effect: float | None = None,
        note: str = "",
        ref: str = "",
    ) -> None:
        tab = geometry.probes
        if {a, b} - set(tab["arm"]):
            return
        ev = seed_level_evidence(tab, a, b, col)
        claim = Claim(
            paper,
            statement,
            measure,
            a,
            b,
            direction,
            threshold,
            paper_effect,
            note,
            reference=ref,
            computed_in=PROBES,
            min_effect=MIN_EFFECTS[col],
            requires=claim_requires(a),
        )
        items.append((claim, ev))

    def per_unit(
        tab: pd.DataFrame,
        unit: str,
        a: str,
        b: str,
        col: str,
        statement: str,
        measure: str,
        paper: str,
        direction: int = 1,
        paper_effect: float | None = None,
        note: str = "",
        ref: str = "",
        where: str = "",
    ) -> None:
        if {a, b} - set(tab["arm"]):
            return
        ev = paired_unit_evidence(tab.dropna(subset=[col]), a, b, col, unit)
        items.append(
            (
                Claim(
                    paper,
                    statement,
                    measure,
                    a,
                    b,
                    direction,
                    paper_effect=paper_effect,
                    paper_note=note,
                    reference=ref,
                    computed_in=where,
                    min_effect=MIN_EFFECTS[col],
                    requires=claim_requires(a),
                ),
                ev,
            )
        )

    ref_cem = _paper("scale_success_per_solver", "scale", "lewm", 0.01, task=task, solver="cem")
    cem_note = "" if ref_cem is None else f"SCALE: {100 * ref_cem:+.1f} pp in the code protocol"
    if main_protocol != code_protocol:  # else the code-protocol claim below is the same one
        success(
            "scale",
            "lewm",
            main_protocol,
            "cem",
            "SCALE plans better than LeWM (CEM)",
            "SCALE",
            note=cem_note,
            ref="scale_success_per_solver",
        )
    success(
        "scale",
        "lewm",
        code_protocol,
        "cem",
        "SCALE plans better than LeWM (CEM)",
        "SCALE",
        paper_effect=ref_cem,
        ref="scale_success_per_solver",
    )
    ref_icem = _paper("scale_success_per_tier", "scale", "lewm", 0.01, task=task, solver="icem")
    success(
        "scale",
        "lewm",
        main_protocol,
        "icem",
        "SCALE plans better than LeWM (iCEM)",
        "SCALE",
        note=""
        if ref_icem is None
        else f"SCALE: {100 * ref_icem:+.1f} pp, code protocol, mean over T1-T5",
        ref="scale_success_per_tier",
    )
    ref_mppi = _paper("scale_success_mppi_tuned", "scale", "lewm", 0.01, task=task)
    success(
        "scale",
        "lewm",
        main_protocol,
        "mppi",
        "SCALE plans better than LeWM (MPPI at T*)",
        "SCALE",
        note="" if ref_mppi is None else f"SCALE: {100 * ref_mppi:+.1f} pp, code protocol",
        ref="scale_success_mppi_tuned",
    )
    ref_aux = _paper("scale_success_per_solver", "scale", "aux", 0.01, task=task, solver="cem")
    success(
        "scale",
        "aux",
        main_protocol,
        "cem",
        "Aux does not plan as well as SCALE (CEM)",
        "SCALE",
        note="" if ref_aux is None else f"SCALE: {100 * ref_aux:+.1f} pp, code protocol",
        ref="scale_success_per_solver",
    )

    ref_half = _paper("scale_success_20cell", "scale_half_q", "lewm", 0.01, task=task)
    success(
        "scale-halfq",
        "lewm",
        main_protocol,
        "cem",
        "SCALE on half of q still plans better than LeWM (CEM)",
        "SCALE",
        note=""
        if ref_half is None
        else f"SCALE: {100 * ref_half:+.1f} pp, mean over its 20 solver cells",
        ref="scale_success_20cell",
    )

    # DINO-WM, SCALE's pretrained-features reference: strong on the navigation tasks, weak on
    # Push-T. The direction of each claim is the sign SCALE reports for the task (CEM, mean over
    # T1-T5, code protocol), so the claim is SCALE's own statement about this task.
    for versus, name in (("lewm", "LeWM"), ("scale", "SCALE")):
        ref_dw = _paper("scale_success_per_solver", "dinowm", versus, 0.01, task=task, solver="cem")
        if ref_dw is None or ref_dw == 0:
            continue
        sign = 1 if ref_dw > 0 else -1
        success(
            "dinowm",
            versus,
            code_protocol,
            "cem",
            f"DINO-WM plans {'better' if sign > 0 else 'worse'} than {name} (CEM)",
            "SCALE",
            paper_effect=ref_dw,
            ref="scale_success_per_solver",
            direction=sign,
        )

    g = geometry
    ref = _paper("scale_full_decodability", "aux", "scale", task=task, probe="ridge")
    per_model(
        "aux",
        "scale",
        "r2_full_ridge",
        "Aux makes q as decodable as SCALE (within 0.01 R²)",
        "held-out ridge R² of q from the full embedding",
        "SCALE",
        threshold=-0.01,
        note="" if ref is None else f"SCALE: {ref:+.4f}",
        ref="scale_full_decodability",
    )
    per_model(
        "scale",
        "lewm",
        "var_top2",
        "SCALE moves variance into the top-2 PCs",
        "variance share of the top-2 PCs",
        "SCALE",
        paper_effect=_paper("scale_pca_variance_share", "scale", "lewm", 0.01, task=task, k="2"),
        ref="scale_pca_variance_share",
    )
    per_model(
        "scale",
        "lewm",
        "r2_top2",
        "SCALE's top-2 PCs carry q (LeWM's do not)",
        "ridge R² of q from the top-2 PCs",
        "SCALE",
        paper_effect=_paper("scale_topk_pc_probe_r2", "scale", "lewm", task=task, k="2"),
        ref="scale_topk_pc_probe_r2",
    )
    per_model(
        "scale",
        "aux",
        "r2_top2",
        "Decodability is not geometry: Aux's top-2 PCs do not carry q as SCALE's do",
        "ridge R² of q from the top-2 PCs",
        "SCALE",
        paper_effect=_paper("scale_topk_pc_probe_r2", "scale", "aux", task=task, k="2"),
        ref="scale_topk_pc_probe_r2",
    )
    per_model(
        "scale",
        "lewm",
        "ratio_p90_over_p10",
        "SCALE makes latent distances closer to isometric in q",
        "distance-ratio dispersion P90/P10 of ||dz||/||dq||",
        "SCALE",
        direction=-1,
        paper_effect=_paper("scale_distance_ratio_dispersion", "scale", "lewm", task=task),
        ref="scale_distance_ratio_dispersion",
    )
    rk = g.ranking[g.ranking["source"] == "gaussian"]
    for col, channel, text in (
        ("tau_geom", "geometry", "the geometry channel"),
        ("tau_pred", "predictor", "the predictor channel"),
    ):
        per_unit(
            rk,
            "start",
            "scale",
            "lewm",
            col,
            f"SCALE improves {text} of the ranking",
            f"Kendall τ ({col}), 20 starts x 64 random candidates",
            "SCALE",
            paper_effect=_paper(
                "scale_rollout_ranking", "scale", "lewm", task=task, channel=channel
            ),
            ref="scale_rollout_ranking",
            where=RANKING,
        )
    per_unit(
        rk,
        "start",
        "scale",
        "lewm",
        "rollout_error",
        "SCALE lowers the rollout error",
        "rollout error / scale, 20 starts x 64 random candidates",
        "SCALE",
        direction=-1,
        paper_effect=_paper("scale_rollout_error", "scale", "lewm", task=task),
        ref="scale_rollout_error",
        where=RANKING,
    )

    ref_an = _paper("aniso_success", "anisowm", "lewm", 0.01, task=task)
    success(
        "anisowm",
        "lewm",
        main_protocol,
        "cem",
        "AnisoWM plans better than LeWM (CEM)",
        "AnisoWM",
        paper_effect=ref_an,
        budgets=["T1"],
        ref="aniso_success",
    )
    rd = g.ranking[g.ranking["source"] == "dataset"]
    for col, cost in (("agree_enc", "J_enc"), ("agree_pred", "J_pred")):
        per_unit(
            rd,
            "start",
            "anisowm",
            "lewm",
            col,
            f"AnisoWM orders outcomes better by {cost}",
            f"cost-ordering agreement of {cost}, recorded action sequences",
            "AnisoWM",
            paper_effect=_paper("aniso_cost_ordering", "anisowm", "lewm", task=task, cost=cost),
            ref="aniso_cost_ordering",
            where=RANKING,
        )
    per_unit(
        g.landscape,
        "goal_index",
        "anisowm",
        "lewm",
        "spearman",
        "AnisoWM's cost follows physical distance more closely (Figure 4)",
        "Spearman ρ(latent cost, distance) over the position grid, random goals",
        "AnisoWM",
        note=_landscape_note(task),
        where=LANDSCAPE,
    )
    title = task_title(task)
    return [(replace(c, computed_in=c.computed_in.format(title=title)), e) for c, e in items]
