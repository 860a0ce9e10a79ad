"""What chapter 8 shows of AnisoWM's κ sweep: per task and κ its success, cond Λ and
spectrum (:func:`kappa_sweep_table`), the figure's long tables, and the whole view read from
the cache only (:func:`chapter_view`, :class:`KappaView`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from jepa_geometry import stats
from jepa_geometry.envs import task_title
from jepa_geometry.extensions.kappa_build import KappaResults, load_results, missing
from jepa_geometry.extensions.kappa_sweep import (
    ARM,
    DEFAULT_KAPPA,
    KAPPA_SWEEP,
    KappaSweep,
    cost_sentence,
    estimate_artifact,
    measured_cost,
    stated_estimate,
)
from jepa_geometry.profiles import Profile
from jepa_geometry.verdict.kappa_claims import kappa_verdicts
from jepa_geometry.verdict.reference import reference_numbers


def kappa_sweep_table(res: KappaResults, sweep: KappaSweep = KAPPA_SWEEP) -> pd.DataFrame:
    """Per task and κ: evaluation success with its Wilson 95 % interval, validation success,
    cond Λ, whether it reached κ, #{v_i > 1} of D, and AnisoWM's count at κ = 2 where the
    reference file has one (its D = 192)."""
    rows = []
    for _, r in res.models.sort_values(["task", "kappa"], kind="stable").iterrows():
        ev = res.success[(r.task, r.kappa, "evaluation")]
        val = res.success[(r.task, r.kappa, "validation")]
        rate = stats.success_rate(ev)
        paper = reference_numbers(
            allow_empty=True, table="aniso_lambda_above_mean", task=r.task, arm=ARM
        )
        rows.append(
            {
                "task": task_title(r.task),
                "κ": r.kappa,
                "success % [95% CI]": stats.format_rate(rate.rate, rate.low, rate.high),
                "validation success %": 100 * float(val.mean()),
                "cond Λ": r.cond,
                "reached κ": "yes" if r.saturated else ("-" if r.kappa == 1 else "no"),
                "#{v_i > 1} of D": f"{r.above_mean} of {r.D}",
                "AnisoWM #{v_i > 1} of 192": float(paper["value"].iloc[0])
                if r.kappa == DEFAULT_KAPPA and not paper.empty
                else np.nan,
            }
        )
    order = {task_title(t): i for i, t in enumerate(sweep.tasks)}
    out = pd.DataFrame(rows)
    return out.sort_values("task", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def success_by_kappa(res: KappaResults) -> pd.DataFrame:
    """Long table for the figure: task, kappa, split, success, low, high (Wilson 95 %)."""
    rows = []
    for (task, kappa, split), x in res.success.items():
        r = stats.success_rate(x)
        rows.append(
            {
                "task": task_title(task),
                "kappa": kappa,
                "split": split,
                "success": r.rate,
                "low": r.low,
                "high": r.high,
            }
        )
    return pd.DataFrame(rows)  # the sweep's order: task, κ, split


def sorted_spectra(res: KappaResults) -> pd.DataFrame:
    """:attr:`~jepa_geometry.extensions.kappa_build.KappaResults.spectra` with the tasks'
    titles, for the figure."""
    return res.spectra.assign(task=res.spectra["task"].map(task_title))


@dataclass
class KappaView:
    """What chapter 8 shows of the sweep at one profile, read from the cache only; with the
    sweep not built, ``built`` is False, ``missing`` names the first missing pieces and the
    tables are empty."""

    built: bool
    missing: str
    table: pd.DataFrame
    success: pd.DataFrame
    spectra: pd.DataFrame
    verdicts: pd.DataFrame
    estimate: str
    measured: str


def chapter_view(base: Profile, sweep: KappaSweep = KAPPA_SWEEP) -> KappaView:
    """:class:`KappaView` of ``sweep`` at ``base`` (nothing is built)."""
    gone = missing(sweep, base)
    if gone or not estimate_artifact(sweep, base).exists():
        what = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
        note = f"not built at profile {base.name} ({what or 'no stated estimate'}); build it "
        note += f"with `jepa-geometry kappa --profile {base.name}` (`make book` does)"
        empty = pd.DataFrame()
        return KappaView(False, note, empty, empty, empty, empty, note, note)
    res = load_results(base, sweep)
    est = stated_estimate(sweep, base)
    meas = measured_cost(sweep, base)
    measured = (
        f"{meas['measured seconds'].sum() / 60:.1f} min of work for the "
        f"{meas['built'].sum()} models, cells and random floors the sweep added to the studies"
    )
    return KappaView(
        True,
        "nothing",
        kappa_sweep_table(res, sweep),
        success_by_kappa(res),
        sorted_spectra(res),
        kappa_verdicts(res, sweep),
        cost_sentence(est).removeprefix("κ sweep cost estimate: "),
        measured,
    )


__all__ = [
    "KappaView",
    "chapter_view",
    "kappa_sweep_table",
    "sorted_spectra",
    "success_by_kappa",
]
