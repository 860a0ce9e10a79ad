"""AnisoWM's κ claims as data (:data:`KAPPA_CLAIMS`) and one evaluator per kind of evidence
(:data:`EVALUATORS`), judged together by :func:`kappa_verdicts` under the rules of
:mod:`.kappa_rules` on the sweep's results (:class:`~.kappa_build.KappaResults`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jepa_geometry.envs import task_title
from jepa_geometry.extensions.kappa_build import KappaResults
from jepa_geometry.extensions.kappa_rules import (
    COND_TOLERANCE,
    EVOLVE_MIN,
    best_kappa,
    lambda_selected,
    non_monotone_evidence,
    spectra_separation,
    within_bound,
)
from jepa_geometry.extensions.kappa_sweep import DEFAULT_KAPPA, KAPPA_SWEEP, KappaError, KappaSweep
from jepa_geometry.study.verdict import (
    BY_CONSTRUCTION,
    MIN_EFFECTS,
    NOT_TESTED,
    Claim,
    Evidence,
    family_holm,
    seed_mean_evidence,
    verdict,
)

# --------------------------------------------------------------------------------------
# The claims, as data, and one evaluator per kind of evidence
# --------------------------------------------------------------------------------------

BOUND, AFTER_SATURATION, TASK_SPECTRA, NON_MONOTONE, BEST_DIFFERS = (
    "bound",
    "after_saturation",
    "task_spectra",
    "non_monotone",
    "best_differs",
)
DESCRIPTIVE = "descriptive: 1 training run per κ, no interval (as in the paper)"
CLAMP = "by construction: the clamp keeps cond Λ <= κ whatever the data (checks our code)"
ONE_RUN_PER_KAPPA = (
    "1 training run per κ: argmaxes of single models, no spread between models "
    "(inconclusive by the book's rule)"
)


@dataclass(frozen=True)
class KappaClaimSpec:
    """One of AnisoWM's κ claims: its statement, the kind of evidence, the tasks it is judged
    on (``()``: every task of the sweep, each separately for :data:`NON_MONOTONE`)."""

    statement: str
    kind: str
    tasks: tuple[str, ...] = ()
    paper: str = "AnisoWM"


KAPPA_CLAIMS: tuple[KappaClaimSpec, ...] = (
    KappaClaimSpec("κ constrains the learned spectrum: cond Λ <= κ", BOUND),
    KappaClaimSpec(
        "κ does not determine the spectrum: in Two-Room the allocation keeps evolving after "
        "cond Λ reaches κ",
        AFTER_SATURATION,
        ("tworoom",),
    ),
    KappaClaimSpec("The learned spectra differ by environment (at κ = 2)", TASK_SPECTRA),
    KappaClaimSpec(
        "The effect of κ on planning is not monotone: the best κ > 1 (validation) beats both "
        "ends of the curve, κ = 1 and the largest κ",
        NON_MONOTONE,
    ),
    KappaClaimSpec("The best anisotropic κ differs by environment", BEST_DIFFERS),
)
"""AnisoWM's κ claims on its own tasks (§5 and its appendix sweep), judged by this module's
rules."""


def _row(spec: KappaClaimSpec, task: str, measure: str, ours: str, criterion: str) -> dict:
    return {
        "paper": spec.paper,
        "claim": spec.statement,
        "task": task,
        "measure": measure,
        "ours": ours,
        "criterion": criterion,
    }


def _bound(spec: KappaClaimSpec, res: KappaResults, tasks: Sequence[str]) -> list[dict]:
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


def _after_saturation(spec: KappaClaimSpec, res: KappaResults, tasks: Sequence[str]) -> list[dict]:
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


def _task_spectra(spec: KappaClaimSpec, res: KappaResults, tasks: Sequence[str]) -> list[dict]:
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
    if not all(lambda_selected(res.models, t) for t in (a, b)):
        label = NOT_TESTED
    elif np.isnan(within):
        label = "inconclusive"
    else:
        label = "reproduced" if between > within else "contradicted"
    units = f"{len(seeds)} training seed{'s' if len(seeds) > 1 else ''} per task (descriptive)"
    return [{**row, "units": units, "verdict": label}]


def _success(res: KappaResults, task: str, split: str) -> dict[float, np.ndarray]:
    return {k: v for (t, k, s), v in res.success.items() if t == task and s == split}


def _best_differs(spec: KappaClaimSpec, res: KappaResults, tasks: Sequence[str]) -> list[dict]:
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
        ),  # fmt: skip
        "not all equal (no task's maximum tied)",
    )
    selected = all(lambda_selected(res.models, t) for t in tasks)
    label = "inconclusive" if selected else NOT_TESTED  # one model per κ: no spread to judge
    return [{**row, "units": ONE_RUN_PER_KAPPA, "verdict": label}]


def non_monotone_items(
    res: KappaResults, tasks: Sequence[str]
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


def _non_monotone(spec: KappaClaimSpec, res: KappaResults, tasks: Sequence[str]) -> list[dict]:
    rows = []
    for task, claim, ev in non_monotone_items(res, tasks):
        row = _row(
            spec,
            task_title(task),
            claim.measure,
            f"{100 * ev.effect:+.1f} [{100 * ev.low:+.1f}, {100 * ev.high:+.1f}] pp",
            f"> {100 * claim.min_effect:g} pp against each end (Holm over the κ claims)",
        )
        judge = (claim, ev, lambda_selected(res.models, task))
        rows.append({**row, "units": ev.units, JUDGE: judge})
    return rows


JUDGE = "judge"
"""The key of a row judged by the book's verdict rule: ``(claim, evidence, tested)``, judged
with the sweep's other such rows in one Holm family (:func:`kappa_verdicts`)."""
EVALUATORS: dict[str, Callable[[KappaClaimSpec, KappaResults, Sequence[str]], list[dict]]] = {
    BOUND: _bound,
    AFTER_SATURATION: _after_saturation,
    TASK_SPECTRA: _task_spectra,
    NON_MONOTONE: _non_monotone,
    BEST_DIFFERS: _best_differs,
}
"""One evaluator per kind of evidence: (record, results, tasks) -> rows, each with its
``verdict`` or, where the book's verdict rule judges it, its :data:`JUDGE` triple."""


def kappa_verdicts(
    res: KappaResults,
    sweep: KappaSweep = KAPPA_SWEEP,
    specs: Sequence[KappaClaimSpec] = KAPPA_CLAIMS,
) -> pd.DataFrame:
    """One row per (claim, task): measure, ours, criterion, units, verdict (a label of
    :data:`~jepa_geometry.study.verdict.LABELS`, or
    :data:`~jepa_geometry.study.verdict.BY_CONSTRUCTION`). The rows judged by the book's rule
    (after saturation, not monotone) are one family: Holm's correction across all of them that
    are tested, so that no κ claim gets a correction of its own."""
    rows = []
    for spec in specs:
        if spec.kind not in EVALUATORS:
            raise KappaError(f"unknown kind {spec.kind!r}; valid: {', '.join(EVALUATORS)}")
        tasks = [t for t in (spec.tasks or sweep.tasks) if t in sweep.tasks]
        rows += EVALUATORS[spec.kind](spec, res, tasks)
    judged = [r for r in rows if JUDGE in r]
    p, size = family_holm([r[JUDGE][:2] for r in judged], [r[JUDGE][2] for r in judged])
    for r, p_i, m in zip(judged, p, size, strict=True):
        claim, ev, _ = r.pop(JUDGE)
        r["verdict"] = verdict(claim, ev, float(p_i), int(m)) if m else NOT_TESTED
    cols = ["paper", "claim", "task", "measure", "ours", "criterion", "units", "verdict"]
    return pd.DataFrame(rows, columns=cols)


__all__ = [
    "AFTER_SATURATION",
    "BEST_DIFFERS",
    "BOUND",
    "CLAMP",
    "DESCRIPTIVE",
    "EVALUATORS",
    "JUDGE",
    "KAPPA_CLAIMS",
    "KappaClaimSpec",
    "NON_MONOTONE",
    "ONE_RUN_PER_KAPPA",
    "TASK_SPECTRA",
    "kappa_verdicts",
    "non_monotone_items",
]
