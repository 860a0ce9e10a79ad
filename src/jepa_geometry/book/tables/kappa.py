"""What chapter 8 shows of AnisoWM's κ sweep: per task and κ its success, cond Λ and
spectrum (:func:`kappa_sweep_table`), which κ never bound Λ (:func:`unbound_sentence`), the
figure's long tables, and the whole view read from the cache only (:func:`chapter_view`,
:class:`KappaView`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import takewhile

import numpy as np
import pandas as pd

from jepa_geometry import stats
from jepa_geometry.envs import task_title
from jepa_geometry.extensions.kappa.build import KappaResults, load_results, missing
from jepa_geometry.extensions.kappa.sweep import (
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


def _kappa_list(kappas: list[float]) -> str:
    head = ", ".join(f"{k:g}" for k in kappas[:-1])
    return f"{head} and {kappas[-1]:g}" if head else f"{kappas[-1]:g}"


def unbound_sentence(res: KappaResults, sweep: KappaSweep = KAPPA_SWEEP) -> str:
    """Which κ of the sweep never bound Λ, in words, per task. Each κ trains its own model
    (κ is in its cache key), but a bound Λ never reaches may leave training as it would be
    without one, and then every larger κ does too. Per task, the candidates are the largest
    set of κ > 1 from some ``x`` up whose models never reached their bound (cond Λ <
    κ (1 - tolerance) at every logged step,
    :func:`~jepa_geometry.extensions.kappa.saturation.saturation_step` None; the table's "reached
    κ" reads the last step only). That is necessary for the clamp never to have acted, not
    sufficient (it bounds each α_i to ±½ log κ, while cond Λ = e^(b_max - b_min)), so the
    identity is read from the results: when those models end with the same learned spectrum
    and the same outcome on every evaluation and validation pair, they behave as one model,
    and the task's sweep compares ``len(kappas) - len(set) + 1`` distinct models (κ = 1,
    which pins Λ = I, among them); otherwise the sentence says by how much they differ."""
    parts = []
    for task in sweep.tasks:
        m = res.models[res.models["task"] == task].sort_values("kappa")
        above = m[m["kappa"] > 1]
        never = above["first_saturated"].isna().to_numpy()
        group = above.iloc[len(above) - len(list(takewhile(bool, never[::-1]))) :]
        kappas = [float(x) for x in group["kappa"]]
        title = task_title(task)
        if len(group) < 2:
            which = f"every κ > 1 but κ = {kappas[0]:g}" if kappas else "every κ > 1"
            parts.append(
                f"on {title}, Λ reached its bound at {which}, so its {len(m)} models are distinct"
            )
            continue
        spectra = [
            res.spectra[(res.spectra["task"] == task) & (res.spectra["kappa"] == x)]["variance"]
            for x in kappas
        ]
        gap = max(float(np.max(np.abs(s.to_numpy() - spectra[0].to_numpy()))) for s in spectra)
        pairs = [
            (res.success[(task, x, split)], res.success[(task, kappas[0], split)])
            for x in kappas[1:]
            for split in ("evaluation", "validation")
        ]
        differ = sum(int(np.sum(a != b)) for a, b in pairs)
        head = (
            f"on {title}, cond Λ stayed below κ at every logged step for every κ ≥ "
            f"{kappas[0]:g} (its largest final value: {group['cond'].max():.2f}), and the "
            f"{len(group)} models at κ = {_kappa_list(kappas)}"
        )
        if gap == 0 and differ == 0:
            parts.append(
                f"{head} end with the same learned spectrum and the same outcome on every "
                f"evaluation and validation pair: they behave as one model, so {title}'s sweep "
                f"compares {len(m) - len(group) + 1} distinct models"
            )
        else:
            parts.append(
                f"{head} end with learned spectra up to {gap:.2g} apart and outcomes that "
                f"differ on {differ} of their {sum(len(a) for a, _ in pairs)} pair evaluations "
                f"beside κ = {kappas[0]:g}'s: training did not repeat exactly"
            )
    return "One model is trained per κ, but not every κ constrains Λ: " + "; ".join(parts) + "."


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
    """:attr:`~jepa_geometry.extensions.kappa.build.KappaResults.spectra` with the tasks'
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
    unbound: str


def chapter_view(base: Profile, sweep: KappaSweep = KAPPA_SWEEP) -> KappaView:
    """:class:`KappaView` of ``sweep`` at ``base`` (nothing is built)."""
    gone = missing(sweep, base)
    if gone or not estimate_artifact(sweep, base).exists():
        what = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
        note = f"not built at profile {base.name} ({what or 'no stated estimate'}); build it "
        note += f"with `jepa-geometry kappa --profile {base.name}` (`make book` does)"
        empty = pd.DataFrame()
        return KappaView(False, note, empty, empty, empty, empty, note, note, note)
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
        unbound_sentence(res, sweep),
    )


__all__ = [
    "KappaView",
    "chapter_view",
    "kappa_sweep_table",
    "sorted_spectra",
    "success_by_kappa",
    "unbound_sentence",
]
