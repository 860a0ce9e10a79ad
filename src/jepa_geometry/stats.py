"""Statistics for success-rate tables: intervals, paired comparisons, pooling over seeds.

Every success rate in the book is a binomial proportion over start/goal pairs, so it is
reported with a 95 % interval; every comparison of two arms is *paired* (both planned the
same pairs with the same solver noise), so it is reported as a paired difference with a paired
bootstrap interval and an exact McNemar test on the discordant pairs, as in SCALE (per cell,
exact paired McNemar on the pooled episodes; SCALE authors' repository,
``eval_results/RESULTS_multiseed_sr.md``).

Success arrays are boolean (or 0/1) arrays of shape ``(n_episodes,)`` for one trained model,
or ``(n_seeds, n_episodes)`` for several training seeds evaluated on **the same** episode set
(the episode set is drawn by the evaluation seed, not the training seed). With two axes the
bootstrap resamples training seeds and episodes independently (a two-stage bootstrap), so
the interval covers both the variation between trained models and between pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri
from scipy.stats import binom

LEVEL = 0.95
N_BOOT = 10_000
CI_METHODS: tuple[str, ...] = ("wilson", "bootstrap")


@dataclass(frozen=True)
class Rate:
    """A success rate ``k / n`` with a confidence interval ``[low, high]``."""

    k: float  # successes (a mean over seeds when pooled, hence float)
    n: int  # pairs per seed
    rate: float
    low: float
    high: float
    interval: str  # how the interval was computed

    def __str__(self) -> str:
        pct = 100.0
        return (
            f"{pct * self.rate:.1f}% [{pct * self.low:.1f}, {pct * self.high:.1f}] "
            f"({self.k:g}/{self.n}, {self.interval} {int(LEVEL * 100)}% CI)"
        )

    def as_dict(self) -> dict[str, float | int | str]:
        return asdict(self)


@dataclass(frozen=True)
class PairedDifference:
    """Paired difference ``rate(a) - rate(b)`` on the same pairs.

    ``a_only``/``b_only`` count the discordant pairs (solved by one arm only); the exact
    McNemar p-value is computed from them alone, because concordant pairs carry no
    information about which arm is better.
    """

    diff: float
    low: float
    high: float
    a_only: int
    b_only: int
    n: int  # pairs compared (seeds x episodes when pooled)
    p_mcnemar: float

    def __str__(self) -> str:
        return (
            f"{100 * self.diff:+.1f} pp [{100 * self.low:+.1f}, {100 * self.high:+.1f}], "
            f"McNemar p = {self.p_mcnemar:.3g} ({self.a_only} vs {self.b_only} discordant "
            f"of {self.n})"
        )

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must lie in (0, 1), got {level!r}")
    return float(ndtri(0.5 + level / 2.0))


def _successes(x: object, name: str = "successes") -> np.ndarray:
    """Validate a 0/1 array of shape (n,) or (seeds, n) and return it as float64."""
    arr = np.asarray(x)
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty array of shape (episodes,) or (seeds, episodes), "
            f"got shape {arr.shape}"
        )
    if arr.dtype != bool and not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must be boolean or 0/1, got values {np.unique(arr)[:5]}")
    return arr.astype(np.float64)


def wilson_interval(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k / n``.

    ``(p̂ + z²/2n ± z sqrt(p̂(1-p̂)/n + z²/4n²)) / (1 + z²/n)`` with ``z = Φ⁻¹((1+level)/2)``.
    Unlike the normal (Wald) interval it stays inside [0, 1] and keeps its coverage near
    0 % and 100 %, where saturated protocols put many of the book's rates.
    """
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    z = _z(level)
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at k = 0 (k = n) the bound is exactly 0 (1): centre and half are equal in exact
    # arithmetic, but not in floating point, where a bound just off 0 would exclude p̂ itself
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def _bootstrap_means(
    x: np.ndarray, n_boot: int, rng: np.random.Generator, chunk: int = 1000
) -> np.ndarray:
    """Bootstrap replicates of the grand mean of ``x`` (1-D: episodes; 2-D: seeds x episodes).

    For 2-D input seeds and episodes are resampled independently, and the resampled episode
    indices are shared by all seeds, because every seed was evaluated on the same pairs.
    """
    if n_boot < 100:
        raise ValueError(f"n_boot must be >= 100 for a percentile interval, got {n_boot}")
    x2 = x[None, :] if x.ndim == 1 else x
    s, n = x2.shape
    out = np.empty(n_boot)
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        ep = rng.integers(0, n, size=(b, n))
        if s == 1:
            out[start : start + b] = x2[0][ep].mean(axis=1)
        else:
            sd = rng.integers(0, s, size=(b, s))
            out[start : start + b] = x2[sd[:, :, None], ep[:, None, :]].mean(axis=(1, 2))
    return out


def bootstrap_replicates(x: object, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """``n_boot`` bootstrap replicates of the mean of ``x`` (episodes, or seeds x episodes:
    the two-stage resampling of :func:`_bootstrap_means`), from the generator seeded ``seed``."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise ValueError(f"x must have shape (episodes,) or (seeds, episodes), got {arr.shape}")
    return _bootstrap_means(arr, n_boot, np.random.default_rng(seed))


def bootstrap_interval(
    x: object, level: float = LEVEL, n_boot: int = N_BOOT, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``x`` (episodes, or seeds x episodes)."""
    _z(level)
    reps = bootstrap_replicates(x, n_boot, seed)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def success_rate(
    successes: object,
    method: str = "wilson",
    level: float = LEVEL,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Rate:
    """Success rate with a ``level`` interval.

    One model (1-D input): ``method="wilson"`` (default) or ``"bootstrap"``. Several
    training seeds (2-D input, same episode set): the rate is the mean over seeds and the
    interval is always the two-stage bootstrap (a Wilson interval would ignore the variation
    between trained models and be too narrow).
    """
    if method not in CI_METHODS:
        raise ValueError(f"unknown interval method {method!r}; valid: {', '.join(CI_METHODS)}")
    x = _successes(successes)
    n = x.shape[-1]
    k = float(x.sum(axis=-1).mean())
    if x.ndim == 1 and method == "wilson":
        lo, hi = wilson_interval(int(k), n, level)
    else:
        lo, hi = bootstrap_interval(x, level, n_boot, seed)
        method = "bootstrap" if x.ndim == 1 else f"bootstrap over {x.shape[0]} seeds"
    return Rate(k=k, n=n, rate=float(x.mean()), low=lo, high=hi, interval=method)


def _mcnemar_p(a_only: int, b_only: int) -> float:
    m = a_only + b_only
    if m == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(a_only, b_only), m, 0.5)))


def _paired(a: object, b: object) -> tuple[np.ndarray, np.ndarray]:
    xa, xb = _successes(a, "a"), _successes(b, "b")
    if xa.shape != xb.shape:
        raise ValueError(
            f"paired outcomes need the same pairs: shapes {xa.shape} and {xb.shape} differ"
        )
    return xa, xb


def paired_difference(
    a: object, b: object, level: float = LEVEL, n_boot: int = N_BOOT, seed: int = 0
) -> PairedDifference:
    """``rate(a) - rate(b)`` on the same pairs, with a paired bootstrap interval and McNemar.

    The bootstrap resamples *pairs* (and, for 2-D input, training seeds), keeping each
    pair's two outcomes together, so the interval reflects only the per-pair differences
    ``d_i = a_i - b_i``: it is much narrower than the difference of two independent
    intervals whenever the arms succeed on largely the same pairs.
    """
    xa, xb = _paired(a, b)
    lo, hi = bootstrap_interval(xa - xb, level, n_boot, seed)
    a_only = int(((xa == 1) & (xb == 0)).sum())
    b_only = int(((xa == 0) & (xb == 1)).sum())
    return PairedDifference(
        diff=float((xa - xb).mean()),
        low=lo,
        high=hi,
        a_only=a_only,
        b_only=b_only,
        n=int(xa.size),
        p_mcnemar=_mcnemar_p(a_only, b_only),
    )


def success_matrix(
    table: pd.DataFrame, value: str = "success", seed_col: str = "train_seed"
) -> np.ndarray:
    """Pivot a tidy per-episode table into a ``(seeds, episodes)`` outcome matrix.

    Rows are training seeds (sorted), columns the episode ids (sorted). Every seed must have
    been evaluated on the same episodes, otherwise pooling would not be paired.
    """
    for col in (value, seed_col, "episode"):
        if col not in table.columns:
            raise ValueError(f"table has no column {col!r}; columns: {', '.join(table.columns)}")
    if table.duplicated([seed_col, "episode"]).any():
        raise ValueError(f"table has several rows per ({seed_col}, episode); filter it first")
    wide = table.pivot(index=seed_col, columns="episode", values=value).sort_index()
    if wide.isna().any().any():
        raise ValueError("training seeds were evaluated on different episodes; cannot pool")
    return wide.to_numpy(dtype=np.float64)


def matrix_rate(m: np.ndarray) -> dict[str, float | int]:
    """The pooled mean of a ``(seeds, pairs)`` matrix of per-(seed, pair) values (successes or
    their tier means) with its :func:`bootstrap_interval` (seeds and pairs resampled; pairs only
    for one seed): ``rate``, ``low``, ``high``, ``seeds``, ``pairs``."""
    arr = np.asarray(m, dtype=np.float64)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"m must have shape (seeds, pairs), got {arr.shape}")
    lo, hi = bootstrap_interval(arr if len(arr) > 1 else arr[0])
    return {
        "rate": float(arr.mean()),
        "low": lo,
        "high": hi,
        "seeds": arr.shape[0],
        "pairs": arr.shape[1],
    }


def rate_table(
    table: pd.DataFrame,
    by: Sequence[str],
    value: str = "success",
    seed_col: str = "train_seed",
    level: float = LEVEL,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per group of ``by``: pooled success rate with its interval.

    Groups with one training seed get a Wilson interval; groups with several get the
    two-stage bootstrap of :func:`success_rate` (via :func:`success_matrix`).
    """
    rows = []
    for keys, grp in table.groupby(list(by), sort=True):
        m = success_matrix(grp, value, seed_col)
        r = success_rate(m[0] if m.shape[0] == 1 else m, "wilson", level, n_boot, seed)
        keys = keys if isinstance(keys, tuple) else (keys,)
        rows.append({**dict(zip(by, keys, strict=True)), "seeds": m.shape[0], **r.as_dict()})
    return pd.DataFrame(rows)


def two_proportion_power(p1: float, p2: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided two-proportion z-test (pooled variance) with ``n`` pairs per arm.

    ``Φ((|p2 - p1| sqrt(n) - z_{1-α/2} sqrt(2 p̄ q̄)) / sqrt(p1 q1 + p2 q2))`` with
    ``p̄ = (p1 + p2) / 2`` (the far tail is ignored). It treats the two arms as independent;
    the book's comparisons are paired, and pairing can only add power when the arms' outcomes
    on a pair are positively correlated, so this is a conservative planning figure.
    """
    for name, p in (("p1", p1), ("p2", p2)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must lie in [0, 1], got {p!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    spread = math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    if spread == 0.0:
        return 1.0 if p1 != p2 else 0.0
    pbar = (p1 + p2) / 2
    z = _z(1.0 - alpha)
    gap = abs(p2 - p1) * math.sqrt(n) - z * math.sqrt(2 * pbar * (1 - pbar))
    return float(ndtr(gap / spread))


def min_rate_for_power(
    n: int, ratio: float, power: float = 0.8, alpha: float = 0.05, tol: float = 1e-6
) -> float:
    """The smallest baseline success rate ``p`` at which an arm succeeding ``ratio`` times as
    often (``p -> ratio * p``) is detected with at least ``power`` by
    :func:`two_proportion_power` over ``n`` pairs per arm; ``nan`` when no ``p`` with
    ``ratio * p <= 1`` reaches it.

    Power grows with ``p`` on ``(0, 1 / ratio]`` here (a larger absolute gap), so the threshold
    is found by bisection. The protocol gate of the manipulation tasks uses it as its lower
    bound (:mod:`jepa_geometry.study.decisions.gate`).
    """
    if not ratio > 1.0:
        raise ValueError(f"ratio must be > 1, got {ratio!r}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must lie in (0, 1), got {power!r}")
    top = 1.0 / ratio
    if two_proportion_power(top, 1.0, n, alpha) < power:
        return float("nan")
    low, high = 0.0, top
    while high - low > tol:
        mid = (low + high) / 2
        if two_proportion_power(mid, ratio * mid, n, alpha) >= power:
            high = mid
        else:
            low = mid
    return high


def format_rate(rate: float, low: float, high: float, scale: float = 100.0) -> str:
    """``71.0 [64.4, 76.8]``: a rate and its interval in percent."""
    return f"{scale * rate:.1f} [{scale * low:.1f}, {scale * high:.1f}]"
