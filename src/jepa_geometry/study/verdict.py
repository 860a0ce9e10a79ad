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
* **inconclusive**: otherwise (the data cannot tell), and always when the interval has no
  width: a bootstrap that sees every (seed, unit) difference equal (both arms at 0 of n pairs,
  or both at n of n) has measured no spread, not an exact effect;
* **not tested (precondition failed)**: the claim assumes something of the trained models
  (:func:`preconditions`) that does not hold here, so its measurement does not test what the
  paper means. Such a claim is kept in the table with its numbers but is not judged: it is
  out of Holm's family and out of the counts of tested claims.

A paper's claim on a task the paper never evaluated is our extension (``Claim.extension``): it
is judged by the same rule in a family of its own, so it neither spends nor borrows the
correction of the paper's own claims.

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

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from jepa_geometry import stats
from jepa_geometry.wm.training import last_logged

VERDICTS: tuple[str, ...] = (
    "reproduced",
    "contradicted",
    "not detected at this scale",
    "inconclusive",
)
"""The labels of a tested claim, in the rule's order."""
NOT_TESTED = "not tested (precondition failed)"
LABELS: tuple[str, ...] = (*VERDICTS, NOT_TESTED)
"""Every label a claim's row can carry: the four verdicts, and :data:`NOT_TESTED`."""
ALPHA = 0.05  # family-wise error rate of a chapter's claims
# The smallest effect that would matter, per measure (claim units), fixed before the rerun:
# 3 points of success; 0.02 of variance share; 0.05 of R²; 0.1 of the P90/P10 ratio; 0.02 of
# Kendall τ; 0.01 of rollout error (relative); 0.01 of ordering agreement; 0.05 of Spearman ρ;
# none beyond the stated tolerance for the log planning time (a claim of no overhead).
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
    "log_plan_seconds": 0.0,
}
MEASURE_WORDS: dict[str, str] = {
    "success": "planning success (fraction of pairs reached)",
    "var_top2": "variance share of the top-2 PCs",
    "r2_top2": "ridge R² of q from the top-2 PCs",
    "r2_full_ridge": "ridge R² of q from the full embedding",
    "ratio_p90_over_p10": "distance-ratio dispersion P90/P10",
    "tau_geom": "Kendall τ, geometry channel",
    "tau_pred": "Kendall τ, predictor channel",
    "rollout_error": "rollout error (relative)",
    "agree_enc": "cost-ordering agreement of J_enc",
    "agree_pred": "cost-ordering agreement of J_pred",
    "spearman": "landscape Spearman ρ",
    "log_plan_seconds": "log wall time of planning a cell",
}
"""Each measure of :data:`MIN_EFFECTS` in words, as the book's rule table names it."""
UNIT_LABELS = {"episode": "pairs", "start": "starts", "goal_index": "goals"}


def min_effects_table() -> pd.DataFrame:
    """The smallest effect that matters per measure (:data:`MIN_EFFECTS`), as the book shows
    the rule: one row per measure, its key and its words."""
    return pd.DataFrame(
        [
            {"measure": MEASURE_WORDS[k], "key": k, "smallest effect that matters": v}
            for k, v in MIN_EFFECTS.items()
        ]
    )


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
    extension: bool = False  # a paper's claim on a task the paper did not evaluate (ours)

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
    (se = interval width / (2 * 1.96)). An interval with no finite bound, or with no width
    (:func:`degenerate`), measures no uncertainty and gives p = 1."""
    if degenerate(ev):
        return 1.0
    gap = claim.direction * ev.effect - (claim.threshold + claim.min_effect)
    se = (ev.high - ev.low) / (2 * Z95)
    return float(sps.norm.sf(gap / se))


def degenerate(ev: Evidence) -> bool:
    """Whether ``ev``'s interval says nothing about uncertainty: a bound is infinite (one
    model, no interval) or the interval has no width (every resampled difference equal, as
    when both arms succeed on all pairs or on none)."""
    return not (np.isfinite(ev.low) and np.isfinite(ev.high)) or ev.high <= ev.low


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
    if degenerate(ev):
        return "inconclusive"
    p = one_sided_p(claim, ev) if p_holm is None else p_holm
    lo, hi = family_interval(ev, m)
    upper = max(claim.direction * lo, claim.direction * hi)  # in the claimed direction
    if p < ALPHA:
        return "reproduced"
    if upper < claim.threshold:
        return "contradicted"
    if upper < claim.threshold + claim.min_effect:
        return "not detected at this scale"
    return "inconclusive"


def tested(claims: Sequence[Claim], failed: Collection[str]) -> list[bool]:
    """Per claim, whether it is tested: its ``requires`` names no precondition in ``failed``
    (the preconditions that do not hold on its task)."""
    return [not (c.requires and c.requires in failed) for c in claims]


def tested_by_task(
    items: Sequence[tuple[str, Claim, Any]], failed: Mapping[str, Collection[str]] | None
) -> list[bool]:
    """:func:`tested` for ``(task, claim, ...)`` items, each against the preconditions that
    fail on its own task (``failed``: task -> names; None or a missing task: none failed)."""
    failed = failed or {}
    return [tested([item[1]], failed.get(item[0], ()))[0] for item in items]


def family_holm(
    items: Sequence[tuple[Claim, Evidence]], tested_mask: Sequence[bool]
) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted one-sided p-values and family sizes of ``items``: one family for the
    papers' claims, one for our extensions (``Claim.extension``), untested claims in neither
    (their p and family size are NaN and 0)."""
    p = np.full(len(items), np.nan)
    size = np.zeros(len(items), dtype=int)
    for ext in (False, True):
        idx = [
            i
            for i, ((c, _), t) in enumerate(zip(items, tested_mask, strict=True))
            if t and c.extension == ext
        ]
        if idx:
            p[idx] = holm([one_sided_p(*items[i]) for i in idx])
            size[idx] = len(idx)
    return p, size


def verdict_table(
    items: Sequence[tuple[Claim, Evidence]], tested_mask: Sequence[bool] | None = None
) -> pd.DataFrame:
    """One row per claim: statement, measure, the paper's effect, ours with its 95 % interval,
    the smallest effect that matters, the Holm-adjusted p-value within its family
    (:func:`family_holm`), verdict. A claim marked untested in ``tested_mask`` (default: all
    tested; see :func:`tested`) keeps its numbers and reads :data:`NOT_TESTED`."""

    def num(x: float) -> str:
        return f"{0.0 if abs(x) < 1e-9 else x:+.3g}"

    mask = [True] * len(items) if tested_mask is None else list(tested_mask)
    if len(mask) != len(items):
        raise ValueError(f"tested_mask has {len(mask)} entries for {len(items)} claims")
    p_holm, size = family_holm(items, mask)
    rows = []
    for (claim, ev), p, m in zip(items, p_holm, size, strict=True):
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
                "family": "ours (extension)" if claim.extension else "paper",
                "verdict": verdict(claim, ev, float(p), int(m)) if m else NOT_TESTED,
            }
        )
    return pd.DataFrame(rows)


ISOTROPY_RATIO_MAX = 2.0  # LeWM's top-8 variance share at most twice the isotropic 8 / D
SELECTION_FRACTION_MIN = 0.9  # Λ counts as selected when cond Λ reaches 90 % of its bound κ
LAMBDA_SELECTED = "Λ selected"
DINOV2_FEATURES = "DINOv2's own features"


def preconditions(
    geometry: Any,
    kappa: float = 2.0,
    diagnostics: pd.DataFrame | None = None,
    profile: Any = None,
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
    * "DINOv2's own features" (with ``profile``, where the study has a ``dinowm`` arm): its
      frozen encoder is DINOv2 (``profile.dinowm.encoder``). SCALE's DINO-WM claims are about
      DINOv2's pretrained features; an offline stand-in cannot confirm or contradict them.
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
                "precondition": LAMBDA_SELECTED,
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
    if profile is not None and "dinowm" in set(geometry.probes["arm"]):
        enc = profile.dinowm.encoder
        rows.append(
            {
                "precondition": DINOV2_FEATURES,
                "measured": f"DINO-WM's frozen encoder: {enc}, token grid "
                f"{profile.dinowm.token_grid} x {profile.dinowm.token_grid}",
                "criterion": "encoder = dinov2",
                "holds": enc == "dinov2",
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


def pooled_evidence(parts: Sequence[Evidence], label: str = "tasks") -> Evidence:
    """The mean of independent effects (one per task: separately trained models, separate
    pairs): effect ``mean(e_t)``, standard error ``sqrt(sum se_t^2) / k`` with each ``se_t``
    read off its 95 % interval as in :func:`one_sided_p`, and the normal 95 % interval. A part
    without a finite interval leaves the mean without one."""
    if not parts:
        raise ValueError("pooled_evidence needs at least one part")
    eff = float(np.mean([e.effect for e in parts]))
    units = f"{len(parts)} {label}: " + "; ".join(dict.fromkeys(e.units for e in parts))
    if any(not (np.isfinite(e.low) and np.isfinite(e.high)) for e in parts):
        return Evidence(eff, -np.inf, np.inf, None, units)
    se = float(np.sqrt(sum(((e.high - e.low) / (2 * Z95)) ** 2 for e in parts)) / len(parts))
    return Evidence(eff, eff - Z95 * se, eff + Z95 * se, None, units)


def every_evidence(parts: Sequence[Evidence], label: str = "cells") -> Evidence:
    """Evidence that *every* one of ``k`` effects is positive, through the smallest of them:
    effect ``min(e_i)``, interval ``[min(lo_i), min(hi_i)]`` of the intervals widened to
    family-wise coverage over the ``k`` parts (:func:`family_interval`), which covers the
    smallest true effect whenever every widened interval covers its own. "Every cell is
    better" is then tested as "the smallest is better" (the intersection-union test)."""
    if not parts:
        raise ValueError("every_evidence needs at least one part")
    wide = [family_interval(e, len(parts)) for e in parts]
    eff = min(e.effect for e in parts)
    units = f"smallest of {len(parts)} {label}"
    return Evidence(eff, min(lo for lo, _ in wide), min(hi for _, hi in wide), None, units)


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


def claim_requires(arm: str) -> str:
    """The precondition a claim about ``arm`` assumes: ΛReg arms need a selected Λ, DINO-WM
    needs DINOv2's own features (SCALE's claims are about that pretrained encoder)."""
    if "anisowm" in arm:
        return LAMBDA_SELECTED
    return DINOV2_FEATURES if arm == "dinowm" else ""
