"""The trend of each of the scaling study's effects against training compute, and where it
would reach the verdict's minimum effect.

Each point's effect comes with its 95 % interval (:func:`~.results.claim_effects`);
the line is a weighted least-squares fit in log10 FLOPs (:func:`wls_line`, weights 1 / se²),
its interval a parametric bootstrap (:func:`trend`), its reading in the claim's direction one
of :data:`READINGS` (:func:`reading`). Three points make a weak extrapolation: the interval
says how weak, under a straight line in log compute, which is itself an assumption.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.extensions.scaling.spec import ScalingError

N_TREND_BOOT = 2000
TREND_SEED = 0
SE_FLOOR = 1e-6  # guards the weights; trend_table leaves degenerate intervals out of the fit


def wls_line(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted least squares ``y = a + b x``: ``b = Σw(x - x̄)(y - ȳ) / Σw(x - x̄)²`` with
    weighted means; returns ``(a, b)``."""
    xm, ym = np.average(x, weights=w), np.average(y, weights=w)
    sxx = float(np.sum(w * (x - xm) ** 2))
    if sxx == 0:
        raise ScalingError("a trend needs at least two distinct compute points")
    b = float(np.sum(w * (x - xm) * (y - ym)) / sxx)
    return ym - b * xm, b


def trend(
    flops: Sequence[float],
    effect: Sequence[float],
    se: Sequence[float],
    target: float,
    direction: int = 1,
    df: Sequence[float] | None = None,
    seed: int = TREND_SEED,
    n_boot: int = N_TREND_BOOT,
) -> dict[str, Any]:
    """The trend of an effect against log10 training FLOPs, and where it would reach ``target``.

    Each point's standard error ``se`` is its evidence's
    (:meth:`~jepa_geometry.verdict.rule.Evidence.standard_error`: a t-interval's half-width
    over its own t quantile, which at three seeds is 4.3, not 1.96) and ``df`` its degrees of
    freedom (None: normal); the line is the
    weighted least-squares fit with weights 1 / se² (:func:`wls_line`). Its interval is a
    parametric bootstrap: each effect redrawn from ``N(effect, se²)``, the line refitted
    ``n_boot`` times; the 2.5 and 97.5 percentiles of the slope. The crossing is the compute
    beyond the largest one studied at which the line reaches ``target`` in the claim's
    ``direction`` (±1): ``log10 F* = (target - a) / b`` when ``direction · b > 0``; a line that
    is already at or beyond the target at the largest budget has *reached* it (its crossing is
    that budget); one moving away never reaches it (``inf``). The crossing's interval is the
    same percentiles over the redraws (nearest rank), unbounded when more than 2.5 % of the
    redraws never reach the target (then the crossing is *not estimable*). Three points make a
    weak extrapolation: the interval says how weak, under a straight line in log compute, which
    is itself an assumption. Keys: ``slope`` (per decade of FLOPs), ``slope_low``,
    ``slope_high``, ``cross`` (FLOPs, NaN when never), ``cross_low``, ``cross_high``,
    ``reached``, ``estimable``, ``points``.
    """
    if direction not in (1, -1):
        raise ScalingError(f"direction must be +1 or -1, got {direction!r}")
    x = np.log10(np.asarray(flops, dtype=float))
    y, se = (np.asarray(v, dtype=float) for v in (effect, se))
    if not (len(x) == len(y) == len(se)) or len(x) < 2:
        raise ScalingError(f"a trend needs at least two points with intervals, got {len(x)}")
    if not all(np.all(np.isfinite(v)) for v in (x, y, se)):
        raise ScalingError("a trend needs finite FLOPs, effects and standard errors")
    se = np.maximum(se, SE_FLOOR)
    w = 1 / se**2
    a, b = wls_line(x, y, w)
    rng = np.random.default_rng(seed)
    dfs = np.full(len(x), np.inf) if df is None else np.asarray(df, dtype=float)
    noise = np.where(  # each point's own tail: a mean over three seeds is a t with 2 df
        np.isfinite(dfs),
        rng.standard_t(np.where(np.isfinite(dfs), dfs, 1.0), (n_boot, len(x))),
        rng.standard_normal((n_boot, len(x))),
    )
    draws = y + se * noise
    fits = np.array([wls_line(x, d, w) for d in draws])
    slopes = fits[:, 1]
    top = x.max()

    def crossing(a_: np.ndarray, b_: np.ndarray) -> np.ndarray:
        reached = direction * (a_ + b_ * top - target) >= 0
        toward = direction * b_ > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.where(toward, (target - a_) / np.where(toward, b_, 1.0), np.inf)
        return np.where(reached, top, c)

    cs = crossing(fits[:, 0], slopes)
    c0 = float(crossing(np.array([a]), np.array([b]))[0])
    ranked = np.sort(cs)  # nearest-rank percentiles: an unbounded draw stays inf
    lo_c = ranked[math.floor(0.025 * (n_boot - 1))]
    hi_c = ranked[math.ceil(0.975 * (n_boot - 1))]
    estimable = bool(np.isfinite(hi_c) and np.isfinite(c0))
    return {
        "slope": b,
        "slope_low": float(np.percentile(slopes, 2.5)),
        "slope_high": float(np.percentile(slopes, 97.5)),
        "cross": _pow10(c0) if np.isfinite(c0) else np.nan,
        "cross_low": _pow10(float(lo_c)),
        "cross_high": _pow10(float(hi_c)),
        "reached": bool(direction * (a + b * top - target) >= 0),
        "estimable": estimable,
        "points": len(x),
    }


def _pow10(log10: float) -> float:
    """``10 ** log10`` FLOPs; ``inf`` for a crossing never reached and beyond a float's range
    (a line that flat reaches nothing a reader can compare)."""
    with np.errstate(over="ignore"):
        return float(np.power(10.0, log10))


READINGS: tuple[str, ...] = ("grows", "shrinks", "stays", "unclear")


def reading(t: dict[str, Any], direction: int, min_effect: float, decades: float) -> str:
    """How an effect moves with compute, in the claim's direction: **grows** when the slope's
    interval lies above zero, **shrinks** below; **stays** when the change its interval allows
    over the studied ``decades`` of FLOPs is within ± ``min_effect``; else **unclear**."""
    lo, hi = sorted((direction * t["slope_low"], direction * t["slope_high"]))
    if lo > 0:
        return "grows"
    if hi < 0:
        return "shrinks"
    if max(abs(lo), abs(hi)) * decades <= min_effect:
        return "stays"
    return "unclear"


def trend_table(effects: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, claim) measured at two or more step points (the resolution point
    is shown, not fitted): its :func:`trend` toward the verdict's minimum effect in the claim's
    direction (``target = direction (threshold + min_effect)``), its :func:`reading`, and the
    crossing in FLOPs with its interval (``not estimable`` where unbounded). A point whose
    interval is unbounded (a per-model measure of one training seed) or degenerate (every unit
    equal, e.g. both arms at 0 of n: inconclusive under the verdict rule too) carries no
    information on its precision and is left out of the fit; a claim with fewer than two
    points left reads **unclear**, its crossing not estimable."""
    rows = []
    steps_only = effects[effects["image"] == 1.0]
    for (task, claim), grp in steps_only.groupby(["task", "claim"], sort=False):
        grp = grp.sort_values("flops")
        if grp["flops"].nunique() < 2:
            continue
        bounded = grp[
            np.isfinite(grp["low"]) & np.isfinite(grp["high"]) & (grp["high"] > grp["low"])
        ]
        if bounded["flops"].nunique() < 2:
            rows.append(
                {
                    "task": task,
                    "paper": grp["paper"].iloc[0],
                    "claim": claim,
                    "points": bounded["flops"].nunique(),
                    "reading": "unclear",
                    "crossing": "not estimable",
                }
            )
            continue
        grp = bounded
        d = int(grp["direction"].iloc[0])
        target = d * (float(grp["threshold"].iloc[0]) + float(grp["min_effect"].iloc[0]))
        t = trend(grp["flops"], grp["effect"], grp["se"], target, d, df=grp["df"])
        decades = float(np.log10(grp["flops"].max() / grp["flops"].min()))
        rows.append(
            {
                "task": task,
                "paper": grp["paper"].iloc[0],
                "claim": claim,
                "points": t["points"],
                "slope per decade": t["slope"],
                "slope low": t["slope_low"],
                "slope high": t["slope_high"],
                "reading": reading(t, d, float(grp["min_effect"].iloc[0]), decades),
                "target": target,
                "crossing (FLOPs)": t["cross"],
                "crossing low": t["cross_low"],
                "crossing high": t["cross_high"],
                "crossing": crossing_words(t),
            }
        )
    return pd.DataFrame(rows, columns=TREND_COLUMNS)


TREND_COLUMNS: tuple[str, ...] = (
    "task",
    "paper",
    "claim",
    "points",
    "slope per decade",
    "slope low",
    "slope high",
    "reading",
    "target",
    "crossing (FLOPs)",
    "crossing low",
    "crossing high",
    "crossing",
)


def crossing_words(t: dict[str, Any]) -> str:
    """The crossing as a reader reads it: ``1.2e+14 FLOPs [3.0e+13, 8.1e+15]`` or
    ``not estimable`` (the interval is unbounded)."""
    if not t["estimable"]:
        return "not estimable"
    if t["reached"]:
        return "reached within the studied budgets"
    return f"{t['cross']:.1e} FLOPs [{t['cross_low']:.1e}, {t['cross_high']:.1e}]"


__all__ = [
    "N_TREND_BOOT",
    "READINGS",
    "SE_FLOOR",
    "TREND_COLUMNS",
    "TREND_SEED",
    "crossing_words",
    "reading",
    "trend",
    "trend_table",
    "wls_line",
]
