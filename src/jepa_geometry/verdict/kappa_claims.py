"""AnisoWM's κ claims judged on its κ sweep of trained models: the rules on the sweep's numbers
and one evaluator per kind of evidence (the records: :data:`~.records.KAPPA_CLAIMS`).

The sweep itself (which models, which cells, what it costs) is the κ sweep's extension; what it
measured comes in as data (:class:`SweepResults`), as a task study's measurements do for the
papers' claims (:class:`~.claims.Measurements`). The rules, fixed before any model of the sweep
was trained (book: rec-kappa-sweep):

* *κ constrains*: every model's learned ``cond Λ <= κ (1 +`` :data:`COND_TOLERANCE` ``)``.
  Our clamp makes this true whatever the data, so it is checked (a broken bound would be a
  bug of ours: "contradicted") but never "reproduced": it reads
  :data:`~jepa_geometry.verdict.rule.BY_CONSTRUCTION`, out of every family.
* *κ does not determine (Two-Room)*: at κ = 2 the allocation keeps evolving after cond Λ first
  reaches the bound: the relative change after saturation (the sweep's ``allocation_change``,
  ``||v_end - v_sat|| / ||v_sat - 1||``) exceeds :data:`EVOLVE_MIN`, judged by the book's rule
  on the t-interval of its mean over the study's training seeds at κ = 2 (one seed: no
  interval, inconclusive). A model that never reaches its bound fails the precondition.
* *Spectra differ by environment*: at κ = 2, where the study has every training seed, the
  smallest distance between a Two-Room and a Push-T spectrum (:func:`spectrum_distance`)
  exceeds the largest distance between two seeds of one task; with one seed per task there is
  no within-task spread and the claim is inconclusive.
* *Not monotone*: κ_best is the κ > 1 with the highest success on the validation pairs (ties:
  the smaller κ), never chosen on evaluation pairs; on the evaluation pairs the claim is an
  interior maximum of the whole curve, ``success(κ_best) - success(κ) > 0`` beyond the
  verdict's minimum effect for success at *both* ends, κ = 1 and κ_max (the intersection-union
  test: the weaker comparison decides), each on the paired bootstrap interval over pairs. A
  curve falling from κ = 1 beats κ_max but not κ = 1, so a monotone curve never reads
  "reproduced". If κ_best is κ_max there is nothing to measure there and the row is
  inconclusive. Each κ is one trained model, so by the book's rule on one-model evidence the
  row is inconclusive whatever its interval: the interval over pairs measures those models,
  not the effect of κ.
* *Best κ differs by environment*: κ_best (validation) of each task, shown (marked where a
  task's maximum is shared by several κ); one training run per κ gives no spread between
  models to tell two argmaxes apart, so the row is inconclusive (by the book's rule on
  one-model evidence).

The rows judged by the book's rule (after saturation, not monotone) are one Holm family
(:func:`kappa_verdicts`). Whether the sweep's models selected their Λ (:func:`lambda_selected`)
is a premise read beside the claims about what κ does (spectra differ, not monotone, best κ
differs), never a gate: the paper states them unconditionally. The spectra rule is descriptive
(one training run per κ; its within-task spread is the study's seeds at κ = 2), as in the
paper.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import numpy as np
import pandas as pd

from jepa_geometry import stats
from jepa_geometry.envs import task_title
from jepa_geometry.verdict.claims import (
    AFTER_SATURATION,
    BEST_DIFFERS,
    BOUND,
    NON_MONOTONE,
    TASK_SPECTRA,
    KappaClaimSpec,
)
from jepa_geometry.verdict.preconditions import DEPARTURE_MIN
from jepa_geometry.verdict.records import KAPPA_CLAIMS
from jepa_geometry.verdict.rule import (
    BY_CONSTRUCTION,
    MIN_EFFECTS,
    NOT_TESTED,
    Claim,
    Evidence,
    every_evidence,
    family_holm,
    seed_mean_evidence,
    verdict,
)
from jepa_geometry.wm.arms import DEFAULT_KAPPA


class SweepResults(Protocol):
    """What the κ sweep measured, as its claims read it: ``models`` (task, kappa, cond,
    departure, ... per trained model), ``seed_spectra`` ((task, training seed) -> sorted final
    target variances at the default κ), ``seed_changes`` ((task, training seed) -> allocation
    change after saturation at the default κ), ``success`` ((task, κ, split) -> per-pair
    success). The sweep's own results are this data; the claims need nothing of how it was
    built."""

    models: pd.DataFrame
    seed_spectra: Mapping[tuple[str, int], np.ndarray]
    seed_changes: Mapping[tuple[str, int], float]
    success: Mapping[tuple[str, float, str], np.ndarray]


class SweepTasks(Protocol):
    """The tasks a κ sweep ran (its claims are judged on those the records name)."""

    tasks: tuple[str, ...]


COND_TOLERANCE = 1e-4  # relative: float32 softmax of the clamped α reaches κ within ~1e-6
EVOLVE_MIN = 0.1  # the allocation moves by >= 10 % of its departure from isotropy after saturation


def within_bound(cond: float, kappa: float) -> bool:
    """``cond Λ <= κ (1 + COND_TOLERANCE)``: the bound holds."""
    return cond <= kappa * (1 + COND_TOLERANCE)


def spectrum_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Root-mean-square difference of two sorted spectra, each read at the same quantiles of
    its coordinates (``(i + 0.5) / D``; spectra of different D are interpolated)."""
    a, b = np.sort(np.asarray(a, float))[::-1], np.sort(np.asarray(b, float))[::-1]
    if a.size == 0 or b.size == 0:
        raise ValueError("spectrum_distance needs two non-empty spectra")
    n = max(a.size, b.size)
    grid = (np.arange(n) + 0.5) / n

    def at(x: np.ndarray) -> np.ndarray:
        return np.interp(grid, (np.arange(x.size) + 0.5) / x.size, x)

    return float(np.sqrt(np.mean((at(a) - at(b)) ** 2)))


def spectra_separation(
    spectra: Mapping[tuple[str, int], np.ndarray], a: str, b: str
) -> tuple[float, float]:
    """(smallest distance between a spectrum of task ``a`` and one of ``b``, largest distance
    between two spectra of one task; NaN when no task has two seeds)."""
    sa = [v for (t, _), v in spectra.items() if t == a]
    sb = [v for (t, _), v in spectra.items() if t == b]
    if not sa or not sb:
        raise ValueError(f"no spectra of {a!r} and {b!r} to compare")
    between = min(spectrum_distance(x, y) for x in sa for y in sb)
    within = [
        spectrum_distance(x[i], x[j]) for x in (sa, sb) for i in range(len(x)) for j in range(i)
    ]
    return between, (max(within) if within else float("nan"))


def best_kappa(validation: Mapping[float, float]) -> float:
    """κ_best: the κ > 1 with the highest validation success; ties go to the smaller κ."""
    cands = sorted((k, s) for k, s in validation.items() if k > 1)
    if not cands:
        raise ValueError(f"no κ > 1 among {sorted(validation)}")
    top = max(s for _, s in cands)
    return next(k for k, s in cands if s == top)


def lambda_selected(models: pd.DataFrame, task: str) -> bool:
    """The premise "Λ selected" for the sweep of ``task``: every model with κ > 1
    leaves the identity by at least
    :data:`~jepa_geometry.verdict.preconditions.DEPARTURE_MIN` of its box (``departure``,
    :func:`~jepa_geometry.verdict.preconditions.lambda_departure`), each on its own (one
    training run per κ: no spread between seeds to read). Where Λ stays near the identity κ
    can change little, which is what a reader of the claims about κ needs to know beside them;
    cond Λ alone does not decide, since two coordinates at the clamp reach κ."""
    m = models[(models["task"] == task) & (models["kappa"] > 1)]
    return bool(len(m)) and bool((m["departure"] >= DEPARTURE_MIN).all())


def non_monotone_evidence(
    claim: Claim, evaluation: Mapping[float, np.ndarray], kappa_best: float
) -> Evidence:
    """Evidence that κ_best beats *both* ends of the curve on the evaluation pairs:
    ``success(κ_best) - success(κ_min)`` and ``success(κ_best) - success(κ_max)``, each with its
    paired bootstrap 95 % interval over pairs
    (:meth:`~jepa_geometry.verdict.rule.Evidence.from_replicates`), combined by the
    intersection-union test (:func:`~jepa_geometry.verdict.rule.every_evidence`: the weaker
    comparison decides and is shown). An interior maximum is what "not monotone" means; a
    curve falling from κ = 1, which beats the largest κ, is monotone, and so is one rising to
    κ_max. With κ_best at an end, that comparison is 0 with no width (inconclusive). One
    training run per κ: the evidence rests on one model per arm, so the verdict is
    "inconclusive" whatever the interval (:func:`~jepa_geometry.verdict.rule.judged`)."""
    if kappa_best not in evaluation:
        raise ValueError(f"κ_best {kappa_best:g} was not evaluated; κ: {sorted(evaluation)}")
    ends = (min(evaluation), max(evaluation))
    parts = []
    for k in ends:
        d = np.asarray(evaluation[kappa_best], float) - np.asarray(evaluation[k], float)
        reps = stats.bootstrap_replicates(d)
        parts.append(Evidence.from_replicates(float(d.mean()), reps, f"1 seed x {len(d)} pairs", 1))
    names = [f"κ = {kappa_best:g} vs κ = {k:g}" for k in ends]
    return every_evidence(claim, parts, names, "comparisons")


CLAMP = "by construction: the clamp keeps cond Λ <= κ whatever the data (checks our code)"
ONE_RUN_PER_KAPPA = (
    "1 training run per κ: argmaxes of single models, no spread between models "
    "(inconclusive by the book's rule)"
)


def _row(spec: KappaClaimSpec, task: str, measure: str, ours: str, criterion: str) -> dict:
    return {
        "paper": spec.paper,
        "claim": spec.statement,
        "task": task,
        "measure": measure,
        "ours": ours,
        "criterion": criterion,
    }


def premise_reading(models: pd.DataFrame, tasks: Sequence[str]) -> str:
    """The premise "Λ selected" (:func:`lambda_selected`) on each of ``tasks``, in words: read
    beside the claims about what κ does, never a gate."""
    return "; ".join(
        f"{task_title(t)}: {'yes' if lambda_selected(models, t) else 'no'}" for t in tasks
    )


def _bound(spec: KappaClaimSpec, res: SweepResults, tasks: Sequence[str]) -> list[dict]:
    m = res.models[res.models["task"].isin(tasks)]
    ok = [within_bound(c, k) for c, k in zip(m["cond"], m["kappa"], strict=True)]
    worst = float((m["cond"] / m["kappa"]).max())
    row = _row(
        spec,
        ", ".join(task_title(t) for t in tasks),
        "learned cond Λ / κ, every model",
        f"{sum(ok)} of {len(ok)} within; largest cond Λ / κ = {worst:.6f}",
        f"all <= 1 + {COND_TOLERANCE:g}",
    )
    label = BY_CONSTRUCTION if all(ok) else "contradicted"  # broken: our clamp is wrong
    return [{**row, "units": CLAMP, "verdict": label}]


def _after_saturation(spec: KappaClaimSpec, res: SweepResults, tasks: Sequence[str]) -> list[dict]:
    rows = []
    for task in tasks:
        changes = [c for (t, _), c in sorted(res.seed_changes.items()) if t == task]
        if not changes:
            continue
        row = _row(
            spec,
            task_title(task),
            f"||v_end - v_sat|| / ||v_sat - 1|| at κ = {DEFAULT_KAPPA:g}, every training seed",
            "a model never reached κ"
            if np.isnan(changes).any()
            else "; ".join(f"{c:.3f}" for c in changes),
            f"mean > {EVOLVE_MIN:g} (t-interval over seeds)",
        )
        if np.isnan(changes).any():  # the claim is about what happens after the bound
            rows.append({**row, "units": "", "verdict": NOT_TESTED})
            continue
        ev = seed_mean_evidence(changes)
        claim = Claim(
            spec.paper,
            spec.statement,
            row["measure"],
            f"κ={DEFAULT_KAPPA:g}",
            "at saturation",
            threshold=EVOLVE_MIN,
        )
        ours = f"{row['ours']}: mean {ev.effect:.3f} [{ev.low:.3f}, {ev.high:.3f}]"
        rows.append({**row, "ours": ours, "units": ev.units, JUDGE: (claim, ev, True)})
    return rows


def _task_spectra(spec: KappaClaimSpec, res: SweepResults, tasks: Sequence[str]) -> list[dict]:
    if len(tasks) < 2 or not {t for t, _ in res.seed_spectra} >= set(tasks[:2]):
        return []  # two tasks with a spectrum at the default κ are needed
    a, b = tasks[0], tasks[1]
    between, within = spectra_separation(res.seed_spectra, a, b)
    seeds = sorted({s for (t, s) in res.seed_spectra if t == a})
    row = _row(
        spec,
        f"{task_title(a)} vs {task_title(b)}",
        f"RMS distance of sorted spectra at κ = {DEFAULT_KAPPA:g}",
        f"between tasks (smallest) {between:.4f}; within a task (largest) "
        + ("none: one seed" if np.isnan(within) else f"{within:.4f}"),
        "between > within",
    )
    if np.isnan(within):
        label = "inconclusive"
    else:
        label = "reproduced" if between > within else "contradicted"
    units = f"{len(seeds)} training seed{'s' if len(seeds) > 1 else ''} per task (descriptive)"
    premise = premise_reading(res.models, (a, b))
    return [{**row, "units": units, LAMBDA_PREMISE: premise, "verdict": label}]


def _success(res: SweepResults, task: str, split: str) -> dict[float, np.ndarray]:
    return {k: v for (t, k, s), v in res.success.items() if t == task and s == split}


def _best_differs(spec: KappaClaimSpec, res: SweepResults, tasks: Sequence[str]) -> list[dict]:
    val = {
        t: {k: float(v.mean()) for k, v in _success(res, t, "validation").items()} for t in tasks
    }
    best = {t: best_kappa(s) for t, s in val.items()}
    tied = [t for t, s in val.items() if sum(x == s[best[t]] for k, x in s.items() if k > 1) > 1]
    row = _row(
        spec,
        ", ".join(task_title(t) for t in tasks),
        "κ_best on validation pairs",
        "; ".join(
            f"{task_title(t)} κ = {k:g}" + (" (tied)" if t in tied else "") for t, k in best.items()
        ),
        "not all equal (no task's maximum tied)",
    )
    premise = premise_reading(res.models, tasks)
    # one model per κ: no spread between models to tell two argmaxes apart
    return [{**row, "units": ONE_RUN_PER_KAPPA, LAMBDA_PREMISE: premise, "verdict": "inconclusive"}]


def non_monotone_items(
    res: SweepResults, tasks: Sequence[str]
) -> list[tuple[str, Claim, Evidence]]:
    """Per task, the :data:`NON_MONOTONE` claim as a verdict :class:`Claim` with its evidence
    (:func:`non_monotone_evidence`: κ_best against both ends of the curve)."""
    items = []
    for task in tasks:
        ev_succ = _success(res, task, "evaluation")
        kb = best_kappa({k: v.mean() for k, v in _success(res, task, "validation").items()})
        kmin, kmax = min(ev_succ), max(ev_succ)
        claim = Claim(
            "AnisoWM",
            KAPPA_CLAIMS[3].statement,
            f"CEM T1 success, κ_best = {kb:g} (validation) - each end, κ = {kmin:g} and "
            f"κ = {kmax:g} (the weaker shown)",
            f"κ={kb:g}",
            f"κ={kmin:g} and κ={kmax:g}",
            unit="pp",
            display_scale=100.0,
            min_effect=MIN_EFFECTS["success"],
        )
        items.append((task, claim, non_monotone_evidence(claim, ev_succ, kb)))
    return items


def _non_monotone(spec: KappaClaimSpec, res: SweepResults, tasks: Sequence[str]) -> list[dict]:
    rows = []
    for task, claim, ev in non_monotone_items(res, tasks):
        row = _row(
            spec,
            task_title(task),
            claim.measure,
            f"{100 * ev.effect:+.1f} [{100 * ev.low:+.1f}, {100 * ev.high:+.1f}] pp",
            f"> {100 * claim.min_effect:g} pp against each end (Holm over the κ claims)",
        )
        premise = premise_reading(res.models, (task,))
        rows.append({**row, "units": ev.units, LAMBDA_PREMISE: premise, JUDGE: (claim, ev, True)})
    return rows


LAMBDA_PREMISE = "Λ selected (premise, read)"
"""The column of a κ claim's row reading the premise "Λ selected" on its tasks."""
JUDGE = "judge"
"""The key of a row judged by the book's verdict rule: ``(claim, evidence, tested)``, judged
with the sweep's other such rows in one Holm family (:func:`kappa_verdicts`)."""
EVALUATORS: dict[str, Callable[[KappaClaimSpec, SweepResults, Sequence[str]], list[dict]]] = {
    BOUND: _bound,
    AFTER_SATURATION: _after_saturation,
    TASK_SPECTRA: _task_spectra,
    NON_MONOTONE: _non_monotone,
    BEST_DIFFERS: _best_differs,
}
"""One evaluator per kind of evidence: (record, results, tasks) -> rows, each with its
``verdict`` or, where the book's verdict rule judges it, its :data:`JUDGE` triple."""


def kappa_verdicts(
    res: SweepResults,
    sweep: SweepTasks,
    specs: Sequence[KappaClaimSpec] = KAPPA_CLAIMS,
) -> pd.DataFrame:
    """One row per (claim, task): measure, ours, criterion, units, verdict (a label of
    :data:`~jepa_geometry.verdict.rule.LABELS`, or
    :data:`~jepa_geometry.verdict.rule.BY_CONSTRUCTION`). The rows judged by the book's rule
    (after saturation, not monotone) are one family: Holm's correction across all of them that
    are tested, so that no κ claim gets a correction of its own."""
    rows = []
    for spec in specs:
        if spec.kind not in EVALUATORS:
            raise ValueError(f"unknown kind {spec.kind!r}; valid: {', '.join(EVALUATORS)}")
        tasks = [t for t in (spec.tasks or sweep.tasks) if t in sweep.tasks]
        rows += EVALUATORS[spec.kind](spec, res, tasks)
    judged = [r for r in rows if JUDGE in r]
    p, size = family_holm([r[JUDGE][:2] for r in judged], [r[JUDGE][2] for r in judged])
    for r, p_i, m in zip(judged, p, size, strict=True):
        claim, ev, _ = r.pop(JUDGE)
        r["verdict"] = verdict(claim, ev, float(p_i), int(m)) if m else NOT_TESTED
    cols = ["paper", "claim", "task", "measure", "ours", "criterion", "units", LAMBDA_PREMISE]
    rows = [{LAMBDA_PREMISE: "", **r} for r in rows]
    return pd.DataFrame(rows, columns=[*cols, "verdict"])
