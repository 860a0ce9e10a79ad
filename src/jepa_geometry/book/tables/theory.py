"""Chapters 1 to 3: the theory's results as a page shows them, and the papers' theoretical
claims judged as verdict rows (:func:`leverage_claim`, :func:`toy_claims`,
:func:`theory_verdicts`), by the book's rule (:mod:`jepa_geometry.verdict.rule`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jepa_geometry.book.style import shown
from jepa_geometry.theory.leverage import metric_leverage, synthetic_embedding
from jepa_geometry.verdict.rule import (
    MIN_EFFECTS,
    Claim,
    Evidence,
    every_evidence,
    seed_level_evidence,
    seed_mean_evidence,
    verdict_table,
)


def headline_table(
    results: pd.DataFrame,
    summary: pd.DataFrame,
    reference: float,
    columns: tuple[str, ...] = ("heldout_error", "normalized_regret", "metric_regret"),
) -> pd.DataFrame:
    """The chapter's headline table: per (regularizer, noise) each column as
    ``"mean [lo, hi]"`` (the mean over seeds and its 95 % bootstrap interval from
    :func:`~jepa_geometry.theory.toy2d.toy_summary`), the median normalized regret over seeds, and
    the Σ⁻¹ reference; regularizers and measures by their display names.

    Why the median beside the mean: one seed whose encoder folds the plane can move the mean
    a lot; the median shows whether the typical seed follows the reference.
    """
    keys = ["regularizer", "noise"]
    show = summary[[*keys, "seeds"]].copy()
    for c in columns:
        show[c] = [
            f"{m:.4f} [{lo:.4f}, {hi:.4f}]"
            for m, lo, hi in zip(summary[c], summary[f"{c}_lo"], summary[f"{c}_hi"], strict=True)
        ]
    median = results.groupby(keys).normalized_regret.median()
    show["median regret"] = np.array(
        [median[k] for k in zip(summary.regularizer, summary.noise, strict=True)]
    ).round(4)
    show["reference"] = round(reference, 4)
    return shown(show, cells=["regularizer"])


def long_table(results: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """``results`` melted to one row per (regularizer, noise, seed, measure), the ``measure``
    and ``value`` columns that a faceted seaborn plot takes."""
    return results.melt(
        id_vars=["regularizer", "noise", "seed"],
        value_vars=measures,
        var_name="measure",
        value_name="value",
    )


def lambda_budget_sentence(table: pd.DataFrame, kappa: float, reference: float) -> str:
    """:func:`~jepa_geometry.theory.toy2d.lambda_budget_table` in one sentence: each arm's cond Λ
    (against κ) and normalized regret (against the Σ⁻¹ reference), with their intervals."""
    parts = [
        f"{r['arm']}: cond Λ {r['target_cond']:.2f} [{r['target_cond_lo']:.2f}, "
        f"{r['target_cond_hi']:.2f}], regret {r['normalized_regret']:.3f} "
        f"[{r['normalized_regret_lo']:.3f}, {r['normalized_regret_hi']:.3f}]"
        for _, r in table.iterrows()
    ]
    return f"against κ = {kappa:g} and the Σ⁻¹ reference regret {reference:.3f}: " + "; ".join(
        parts
    )


LEVERAGE_TOLERANCE = 0.05
"""How far a direction's measured cost contribution may sit from 2λ_j for the identity to hold
(relative): less than the step between neighbouring variances of the synthetic spectrum
(``nuisance_decay² = 0.72``), so within it the cost's weight still follows the spectrum."""
LEVERAGE_DRAWS = 5
"""Independent draws of the synthetic embedding behind the identity's interval."""
LEVERAGE_STATE_SCALE = 0.25  # the synthetic embedding of chapter 1's identity section


def leverage_claim(
    samples: int, dim: int, seed: int = 0, draws: int = LEVERAGE_DRAWS
) -> tuple[Claim, Evidence]:
    """SCALE's metric leverage, ``E[(u_jᵀ(z_a - z_b))²] = 2λ_j`` for every principal direction
    j, judged on ``draws`` independent synthetic embeddings of ``samples`` rows in ``dim``
    dimensions (:func:`~jepa_geometry.theory.leverage.synthetic_embedding`, each with its own
    Monte-Carlo pairs: :func:`~jepa_geometry.theory.leverage.metric_leverage`).

    Per direction the relative error ``r_j = measured / (2λ_j) - 1`` has a t-interval over the
    draws; the identity holds within :data:`LEVERAGE_TOLERANCE` when ``-tol < r_j < tol`` for
    every j: two one-sided claims per direction (``r_j > -tol`` and ``-r_j > -tol``), all by the
    intersection-union test (:func:`~jepa_geometry.verdict.rule.every_evidence`), so the row
    shows the weakest of the ``2 dim`` sides. The draws stand where the trained models stand in
    an empirical claim (fewer than two: inconclusive)."""
    rng = np.random.default_rng(seed)
    errs = []
    for _ in range(draws):
        z, _ = synthetic_embedding(samples, dim, LEVERAGE_STATE_SCALE, rng)
        lev = metric_leverage(z, n_pairs=samples, rng=rng)
        errs.append(lev.measured_contribution / lev.predicted_contribution - 1)
    r = np.asarray(errs, dtype=float)  # (draws, directions)
    claim = Claim(
        "SCALE",
        "Each principal direction's expected planning cost is 2λ_j (metric leverage; within "
        f"± {100 * LEVERAGE_TOLERANCE:g} %)",
        "Monte-Carlo mean of (u_jᵀ(z_a − z_b))² over random pairs / 2λ_j − 1, every direction j "
        "of a synthetic embedding, both sides",
        "measured",
        "2λ_j",
        threshold=-LEVERAGE_TOLERANCE,
        computed_in="sec-ch01-monte-carlo",
    )
    parts, names = [], []
    tol = f"{100 * LEVERAGE_TOLERANCE:g} %"
    for j in range(r.shape[1]):
        for sign, side in ((1.0, f"above -{tol}"), (-1.0, f"below +{tol}")):
            ev = seed_mean_evidence(sign * r[:, j])
            parts.append(
                Evidence(ev.effect, ev.low, ev.high, f"{draws} draws (t-interval)", draws, df=ev.df)
            )
            names.append(f"PC {j + 1}, {side}")
    return claim, every_evidence(claim, parts, names, "sides of the directions")


def toy_claims(
    results: pd.DataFrame, reference: float, paper_regret: float
) -> list[tuple[Claim, Evidence]]:
    """AnisoWM's Figure 1(b) as two claims about the SIGReg runs of the 2-D toy
    (:func:`~jepa_geometry.theory.toy2d.toy_sweep` ``results``), between its largest and its
    smallest process noise, one trained model per seed:

    * prediction improves: the held-out prediction error at the smallest noise is below the
      error at the largest, paired by seed (t-interval over the seeds);
    * planning does not: with that near-exact prediction, the normalized regret stays above
      zero (its mean over seeds, t-interval), the paper's "near 0.16" being its own Σ's value,
      shown beside our Σ⁻¹ ``reference``, not compared.
    """
    sig = results[results["regularizer"] == "sigreg"]
    lo, hi = float(sig["noise"].min()), float(sig["noise"].max())
    if lo == hi:
        raise ValueError(f"the toy's claims need two noise levels; the runs have only {lo:g}")
    ends = pd.concat(
        [
            sig[sig["noise"] == hi].assign(arm="largest noise"),
            sig[sig["noise"] == lo].assign(arm="smallest noise"),
        ]
    ).rename(columns={"seed": "train_seed"})
    where = "sec-ch03-panel-b"
    prediction = Claim(
        "AnisoWM",
        f"As the process noise falls {hi / lo:g}x, the held-out prediction error falls "
        "(Figure 1(b), SIGReg)",
        f"held-out prediction error at σ_w = {lo:g} minus at σ_w = {hi:g}",
        "smallest noise",
        "largest noise",
        direction=-1,
        paper_note="AnisoWM: 'decreases substantially' (no number)",
        computed_in=where,
        min_effect=MIN_EFFECTS["prediction_error"],
    )
    regret = Claim(
        "AnisoWM",
        "With near-exact prediction, the planning regret stays positive (Figure 1(b), SIGReg)",
        f"normalized planning regret at σ_w = {lo:g}",
        "smallest noise",
        "0",
        paper_note=f"AnisoWM: near {paper_regret:g} for its own Σ; ours Σ⁻¹ reference "
        f"{reference:.3f}",
        computed_in=where,
        min_effect=MIN_EFFECTS["normalized_regret"],
    )
    at_lo = sig[sig["noise"] == lo].sort_values("seed")["normalized_regret"]
    return [
        (prediction, seed_level_evidence(ends, "smallest noise", "largest noise", "heldout_error")),
        (regret, seed_mean_evidence(at_lo.to_numpy(float))),
    ]


def theory_verdicts(items: list[tuple[Claim, Evidence]]) -> pd.DataFrame:
    """A theory chapter's claims with their verdicts, one family (Holm across the chapter's
    rows), as the page shows them: the claim, what was measured, the paper's note, our effect
    with its interval, the margin, Holm's p, the units and the verdict."""
    table = verdict_table(items)
    return table.drop(columns=["requires", "family"])
