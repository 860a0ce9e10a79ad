"""Coverage of the verdict rule's 95 % intervals on synthetic studies whose true effect is known.

    nice -n 10 .venv/bin/python benchmarks/bench_coverage.py [--draws 2000] [--n-boot 2000]

A claim "arm a does better than arm b" is judged from the paired differences of ``S`` trained
models per arm (training seed ``s`` of both arms paired), each evaluated on the same units. This
script draws many synthetic studies from a model with a known effect and reports, per scenario,
the share of draws whose 95 % interval contains the true effect (the empirical coverage) and the
mean interval width, for

* **the rule**: :func:`~jepa_geometry.verdict.rule.paired_unit_evidence` (the crossed seeds x
  units t-interval, seeds - 1 df) on a success table, and
  :func:`~jepa_geometry.verdict.rule.seed_level_evidence` (paired t over seeds, df = S - 1) on
  one number per model;
* **the bootstrap**: :func:`jepa_geometry.stats.bootstrap_interval` on the same differences
  (seeds x pairs: the two-stage percentile bootstrap the rule replaced, seeds and pairs resampled
  independently; one number per model: the percentile bootstrap over seeds, which the book never
  used for such measures: they had the t-interval before and after), at ``--n-boot`` replicates
  (2,000 by default, not the book's 10,000, for speed: a 2.5 % quantile of 2,000 replicates
  moves each bound at random by about 0.2 points, against half-widths of 6-8) and the
  bootstrap's own seed 0 in every draw, as the book calls it.

**Success** (:class:`SuccessStudy`): the binary outcome of arm ``x``'s seed-``s`` model on pair
``p`` is Bernoulli with ``logit P = η_x + u_xs + v_p + w_xp``: ``u_xs ~ N(0, σ_seed²)`` the
trained model's shift (independent between arms, so seeds really differ: with σ_seed = 0 they do
not), ``v_p ~ N(0, σ_pair²)`` the pair's difficulty shared by the arms, ``w_xp ~ N(0, σ_arm²)``
the arm's own ease on that pair (what makes some pairs solved by one arm only). Every draw is a
new study: new seeds and new pairs. The estimand is the expected paired difference over the
populations of training seeds and of pairs, ``δ = m(η_a) - m(η_b)`` with
``m(η) = E[expit(η + τ Z)]``, ``Z ~ N(0, 1)``, ``τ² = σ_seed² + σ_pair² + σ_arm²`` (the three
effects add to one normal): computed exactly, by adaptive quadrature of that one-dimensional
integral to 1e-12, not by Monte Carlo. The levels were read off the book's laptop studies
(95 cells of (task, solver, tier) x arm against LeWM, 3 seeds x 200 pairs each; quartiles):
success rates 0.09-0.56, discordant (seed, pair) cells 0.03-0.21 (up to 0.58), the crossed
layout's residual mean square 0.03-0.15 (up to 0.46) and pair component 0-0.015 (up to 0.13),
between-seed SDs of the per-seed difference estimated at 0-1.4 points (5 cells above 5, the
largest 7.8), and the seed part of the mean's variance ``σ_a²/S`` at least the residual part
``σ_e²/(S P)`` in 18 cells, three times it in 9 (the largest 8 times). Here η_a = 1.5,
η_b = 1.0, σ_pair = 3, σ_arm = 1 give rates 0.66 and 0.61, δ ≈ 5 points, about 25 %
discordant cells (the book's upper quartile: where seeds differ, pairs are not all solved or
all failed), a residual mean square of 0.21 and a pair component of 0.03; the seed spreads of
:data:`SEED_SDS` give a between-seed SD of the per-seed expected difference (``seed SD``,
computed by quadrature) of 0, ~3.7, ~6.6 and ~10 points and a seed-to-residual ratio of 0,
about 1.3 (the book's upper fifth), 4 (its top tenth) and 10 (beyond its largest estimate);
the very large spread is run at 3 seeds only.

**One number per model** (:class:`ModelStudy`): ``value_xs = μ_x + c_s + e_xs``, ``c_s`` shared
by the two arms' seed-``s`` models (same data, same initialisation) and ``e_xs ~ N(0, σ²)``:
normal, so the paired t-interval is exact; the estimand is ``μ_a - μ_b``.

Columns: the true effect, the seed SD, the median range (max - min) over seeds of the observed
per-seed differences (to set beside the book's), then coverage, mean and median width of each
interval (the median too, because a few draws can dominate the mean: an interval whose degrees
of freedom were estimated from the data, as Satterthwaite's are, can be hundreds of points wide
where they fall below 1).
Effects and widths are in points (x 100). A coverage from ``N`` draws has Monte Carlo standard
error ``sqrt(c (1 - c) / N)``, about 0.005 at c = 0.95 and N = 2,000 (printed under the table).
It prints one line per scenario as it ends, then the table as text and as markdown. The default
took 4 minutes on the 2-core machine (6 beside another job). ``tests/verdict/test_coverage.py``
runs the very large spread and one number per model at 3 seeds and 500 draws.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import integrate
from scipy.special import expit
from scipy.stats import norm

from jepa_geometry import stats
from jepa_geometry.verdict.rule import Evidence, paired_unit_evidence, seed_level_evidence

PAIRS = 200  # start/goal pairs per planning cell, as in the book
N_BOOT = 2_000  # bootstrap replicates per draw (the book's stats.N_BOOT is 10,000)
CHUNK = 250  # draws generated at once (bounds the memory of a --draws in the tens of thousands)
LEVEL = 0.95


def logistic_normal_mean(eta: float, sd: float) -> float:
    """``E[expit(eta + sd Z)]``, ``Z ~ N(0, 1)``: the success rate of a logit ``eta`` shifted by
    a normal effect, by adaptive quadrature (absolute error below 1e-12)."""
    if sd == 0:
        return float(expit(eta))
    val, _ = integrate.quad(
        lambda z: expit(eta + sd * z) * norm.pdf(z), -np.inf, np.inf, epsabs=1e-13, epsrel=1e-12
    )
    return float(val)


def _variance_over_seeds(eta: float, seed_sd: float, pair_sd: float) -> float:
    """``Var_u g(u)`` with ``g(u) = E[expit(eta + u + pair_sd Z)]`` and ``u ~ N(0, seed_sd²)``:
    the spread over one arm's trained models of a model's expected success over pairs. ``g`` by
    quadrature; the outer expectation by 20-node Gauss-Hermite, since ``g`` is smooth and
    ``u`` narrow (it agrees with nested adaptive quadrature to 1e-15 for σ_seed <= 1, several
    times faster)."""
    if seed_sd == 0:
        return 0.0
    nodes, weights = np.polynomial.hermite_e.hermegauss(20)
    weights = weights / math.sqrt(2 * math.pi)
    g = np.array([logistic_normal_mean(eta + seed_sd * z, pair_sd) for z in nodes])
    return float(weights @ (g - weights @ g) ** 2)


@dataclass(frozen=True)
class SuccessStudy:
    """Paired binary outcomes: ``seeds`` trained models per arm, all planning the same ``pairs``
    start/goal pairs, ``logit P(success) = η_x + u_xs + v_p + w_xp`` (module docstring)."""

    name: str
    seeds: int
    seed_sd: float  # σ_seed, logit scale, per arm
    logit_a: float = 1.5
    logit_b: float = 1.0
    pair_sd: float = 3.0  # σ_pair: the pair's difficulty, shared by the arms
    arm_pair_sd: float = 1.0  # σ_arm: the arm's own ease on a pair
    pairs: int = PAIRS

    def true_effect(self) -> float:
        """``δ = m(η_a) - m(η_b)``, ``m(η) = E[expit(η + τ Z)]``, ``τ² = σ_seed² + σ_pair² +
        σ_arm²``: the expected paired difference over new seeds and new pairs (exact)."""
        tau = math.hypot(self.seed_sd, self.pair_sd, self.arm_pair_sd)
        return logistic_normal_mean(self.logit_a, tau) - logistic_normal_mean(self.logit_b, tau)

    def seed_spread(self) -> float:
        """SD over training seeds of a seed's expected difference over pairs,
        ``sqrt(Var g_a(u_a) + Var g_b(u_b))`` (the arms' seed effects are independent)."""
        inner = math.hypot(self.pair_sd, self.arm_pair_sd)
        return math.sqrt(sum(_variance_over_seeds(eta, self.seed_sd, inner) for eta in self.etas()))

    def etas(self) -> np.ndarray:
        """``(η_a, η_b)``: the arms' logits before the seed and pair effects."""
        return np.array([self.logit_a, self.logit_b])

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` studies' outcomes, shape ``(n, 2 arms, seeds, pairs)``, boolean."""
        shape = (n, 2, self.seeds, self.pairs)
        logit = (
            self.etas()[None, :, None, None]
            + rng.normal(0.0, self.seed_sd, (n, 2, self.seeds, 1))
            + rng.normal(0.0, self.pair_sd, (n, 1, 1, self.pairs))
            + rng.normal(0.0, self.arm_pair_sd, (n, 2, 1, self.pairs))
        )
        return rng.random(shape) < expit(logit)

    def differences(self, y: np.ndarray) -> np.ndarray:
        """One study's (seeds x pairs) matrix ``success_a - success_b``."""
        return y[0].astype(float) - y[1]

    def evidence(self, y: np.ndarray) -> Evidence:
        """The rule's evidence from one study's long table (arm, train_seed, episode,
        success), as the book builds it."""
        s, p = self.seeds, self.pairs
        table = pd.DataFrame(
            {
                "arm": np.repeat(["a", "b"], s * p),
                "train_seed": np.tile(np.repeat(np.arange(s), p), 2),
                "episode": np.tile(np.arange(p), 2 * s),
                "success": y.reshape(-1).astype(float),
            }
        )
        return paired_unit_evidence(table, "a", "b", "success", "episode")


@dataclass(frozen=True)
class ModelStudy:
    """One number per trained model: ``value_xs = μ_x + c_s + e_xs``, ``c_s ~ N(0,
    shared_sd²)`` shared by the arms' seed-``s`` models, ``e_xs ~ N(0, seed_sd²)``; a share
    such as the variance of the top-2 PCs (module docstring)."""

    name: str
    seeds: int
    seed_sd: float = 0.03
    shared_sd: float = 0.03
    mean_a: float = 0.60
    mean_b: float = 0.55
    pairs: None = None  # no evaluation units: the table's "pairs" column reads "-"

    def true_effect(self) -> float:
        """``μ_a - μ_b`` (exact)."""
        return self.mean_a - self.mean_b

    def seed_spread(self) -> float:
        """SD of a seed's paired difference ``e_as - e_bs``: ``sqrt(2) σ``."""
        return math.sqrt(2.0) * self.seed_sd

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` studies' values, shape ``(n, 2 arms, seeds)``."""
        return (
            np.array([self.mean_a, self.mean_b])[None, :, None]
            + rng.normal(0.0, self.shared_sd, (n, 1, self.seeds))
            + rng.normal(0.0, self.seed_sd, (n, 2, self.seeds))
        )

    def differences(self, y: np.ndarray) -> np.ndarray:
        """One study's per-seed differences ``value_a - value_b``."""
        return y[0] - y[1]

    def evidence(self, y: np.ndarray) -> Evidence:
        """The rule's evidence from one study's table (arm, train_seed, value)."""
        s = self.seeds
        table = pd.DataFrame(
            {
                "arm": np.repeat(["a", "b"], s),
                "train_seed": np.tile(np.arange(s), 2),
                "value": y.reshape(-1),
            }
        )
        return seed_level_evidence(table, "a", "b", "value")


Study = SuccessStudy | ModelStudy


SEED_SDS = {"no": 0.0, "moderate": 0.25, "large": 0.45, "very large": 0.7}
"""σ_seed of the success scenarios (logit scale): a between-seed SD of the per-seed difference
of 0, ~3.7, ~6.6 and ~10 points (module docstring)."""


def success_study(spread: str, seeds: int) -> SuccessStudy:
    """The success scenario with :data:`SEED_SDS`'s ``spread`` at ``seeds`` training seeds."""
    return SuccessStudy(f"success, {spread} seed spread", seeds, SEED_SDS[spread])


def scenarios() -> list[Study]:
    """The default table's rows: success at each seed spread of :data:`SEED_SDS` (the very
    large one at 3 seeds only, where the bootstrap fails most), then one number per model; at 3
    and 5 training seeds."""
    rows: list[Study] = [
        success_study(spread, seeds)
        for spread in SEED_SDS
        for seeds in (3, 5)
        if spread != "very large" or seeds == 3
    ]
    return rows + [ModelStudy("one number per model", seeds) for seeds in (3, 5)]


def _draws(study: Study, rng: np.random.Generator, n: int) -> Iterator[np.ndarray]:
    """One study's data at a time, generated ``CHUNK`` draws at once."""
    for start in range(0, n, CHUNK):
        yield from study.draw(rng, min(CHUNK, n - start))


def coverage(
    study: Study, draws: int, seed: int | Sequence[int] = 0, n_boot: int = N_BOOT
) -> dict[str, float]:
    """Empirical coverage, mean and median width of the rule's and the bootstrap's 95 %
    intervals over ``draws`` studies from the generator seeded ``seed``, with the true effect,
    the seed SD and the median observed range of the per-seed differences."""
    truth = study.true_effect()
    rule = np.empty((draws, 2))
    boot = np.empty((draws, 2))
    ranges = np.empty(draws)
    for i, y in enumerate(_draws(study, np.random.default_rng(seed), draws)):
        ev = study.evidence(y)
        rule[i] = ev.low, ev.high
        d = study.differences(y)
        boot[i] = stats.bootstrap_interval(d, LEVEL, n_boot)
        per_seed = d.mean(axis=1) if d.ndim == 2 else d
        ranges[i] = per_seed.max() - per_seed.min()
    out = {"true effect": truth, "seed SD": study.seed_spread()}
    out["per-seed range (median)"] = float(np.median(ranges))
    for name, iv in (("rule", rule), ("bootstrap", boot)):
        out[f"{name} coverage"] = float(np.mean((iv[:, 0] <= truth) & (truth <= iv[:, 1])))
        out[f"{name} mean width"] = float(np.mean(iv[:, 1] - iv[:, 0]))
        out[f"{name} median width"] = float(np.median(iv[:, 1] - iv[:, 0]))
    return out


def table(rows: list[tuple[Study, dict[str, float]]]) -> pd.DataFrame:
    """The printed table: one row per scenario, effects and widths in points."""
    pts = {"true effect", "seed SD", "per-seed range (median)"}
    pts |= {f"{name} {stat} width" for name in ("rule", "bootstrap") for stat in ("mean", "median")}
    out = []
    for study, res in rows:
        row: dict[str, object] = {
            "scenario": study.name,
            "seeds": study.seeds,
            "pairs": study.pairs or "-",
        }
        row.update({k: round(100 * v, 1) if k in pts else round(v, 3) for k, v in res.items()})
        out.append(row)
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", type=int, default=2_000, help="studies drawn per scenario")
    ap.add_argument("--n-boot", type=int, default=N_BOOT, help="bootstrap replicates per draw")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draws (scenario k: [seed, k])")
    args = ap.parse_args(argv)
    print(f"draws={args.draws} per scenario, n_boot={args.n_boot}, seed={args.seed}")
    t0 = time.perf_counter()
    rows = []
    for k, study in enumerate(scenarios()):
        t = time.perf_counter()
        rows.append((study, coverage(study, args.draws, [args.seed, k], args.n_boot)))
        print(f"  {study.name}, {study.seeds} seeds: {time.perf_counter() - t:.0f} s", flush=True)
    out = table(rows)
    se = math.sqrt(LEVEL * (1 - LEVEL) / args.draws)
    print(f"\nwall time {time.perf_counter() - t0:.0f} s\n")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(out.to_string(index=False))
    print()
    print(out.to_markdown(index=False))
    print(
        f"\nEffects and widths in points (x 100). Monte Carlo SE of a coverage near {LEVEL} "
        f"with {args.draws} draws: {se:.3f}. Bootstrap at {args.n_boot} replicates."
    )
    return out


if __name__ == "__main__":
    main()
