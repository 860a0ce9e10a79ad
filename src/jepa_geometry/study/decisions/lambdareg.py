"""Was Λ selected? ΛReg's declared variants, compared by a rule fixed before any evaluation.

AnisoWM does not say how its bound on cond Λ is enforced, nor how fast α learns. At laptop
scale the published form (a hard clamp, α at the model's learning rate) ends with Λ near
isotropic. The variants below are ours, each one change where the paper is silent; why the
published form stalls, and how that was measured: the book's section rec-lambdareg-variants.

**The rule** (written before any variant was trained, and never looking at evaluation pairs):
train every variant of the ``anisowm`` arm with the first training seed; read the embedding
diagnostics of the last :data:`LAST_ROWS` training-log rows (training batches only,
:func:`~jepa_geometry.wm.objective.embedding_diagnostics`); among the variants whose mean
``corr_v_rel_err`` is negative (Λ gives more variance where the model predicts well, as the
theory wants), choose the largest mean ``cond_lambda``; ties go to the earlier variant in
:data:`LAMBDAREG_VARIANTS`; if no variant qualifies, keep the published form and say that Λ was
not selected at this scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from jepa_geometry import stats
from jepa_geometry.envs import SIMULATOR_PRELOAD
from jepa_geometry.jobs import run_parallel
from jepa_geometry.planning.evaluator import PlanningCell, evaluate_arm
from jepa_geometry.profiles import Profile
from jepa_geometry.study.job_calls import plan_cell, train_model
from jepa_geometry.study.spec import StudySpec
from jepa_geometry.wm.arms import LAMBDAREG_ARMS, parse_arm
from jepa_geometry.wm.training import model_untrained, training_log

ARM = "anisowm"
MAIN_CELL = ("goal100_budget150", "cem", "T1")  # (protocol, solver, tier): SCALE's CEM T1
LAST_ROWS = 3  # log rows averaged (steps 1200-1300 of the laptop profile's 1300)
LAMBDAREG_VARIANTS: dict[str, dict[str, Any]] = {
    "published": {},
    "alpha lr x30": {"alpha_lr": 30},
    "tanh, alpha lr x30": {"bound": "tanh", "alpha_lr": 30},
    "project, alpha lr x30": {"bound": "project", "alpha_lr": 30},
    "warm-up 200, tanh, alpha lr x30": {"bound": "tanh", "alpha_lr": 30, "alpha_warmup": 200},
}


Model = tuple[str, str, int, Profile, dict | None]
"""A model's training arguments: (task, arm, seed, profile, weights)."""


def variant_models(
    task: str, profile: Profile, variants: Mapping[str, Mapping[str, Any]] = LAMBDAREG_VARIANTS
) -> list[Model]:
    """The models the rule reads: every variant of ``anisowm`` with the first training seed
    (the published form is the study's own model)."""
    seed = profile.seeds.train[0]
    return [(task, ARM, seed, profile, dict(w) or None) for w in variants.values()]


def variant_table(
    task: str,
    profile: Profile,
    variants: Mapping[str, Mapping[str, Any]] = LAMBDAREG_VARIANTS,
    workers: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Train (or find cached) :func:`variant_models` and return one row per variant: its
    settings, the mean of each ΛReg diagnostic over the last :data:`LAST_ROWS` log rows, and
    the final prediction loss."""
    jobs = variant_models(task, profile, variants)
    run_parallel(
        train_model,
        jobs,
        workers,
        f"ΛReg variants {task}",
        progress,
        pending=model_untrained,
        preload=SIMULATOR_PRELOAD,
    )
    rows = []
    for (name, w), job in zip(variants.items(), jobs, strict=True):
        tail = pd.DataFrame(training_log(*job)).tail(LAST_ROWS)
        rows.append(
            {
                "variant": name,
                "settings": ", ".join(f"{k}={v}" for k, v in w.items()) or "clamp, x1",
                "cond_lambda": float(tail["cond_lambda"].mean()),
                "corr_v_var_z": float(tail["corr_v_var_z"].mean()),
                "corr_v_rel_err": float(tail["corr_v_rel_err"].mean()),
                "top8_share": float(tail["top8_share"].mean()),
                "pred": float(tail["pred"].mean()),
            }
        )
    return pd.DataFrame(rows)


def decided_variant(task: str, profile: Profile) -> str | None:
    """The variant :func:`choose_variant` picks on ``task`` at ``profile``, read from the
    cache; ``None`` while any of :func:`variant_models` is untrained (nothing is built)."""
    if any(model_untrained(*m) for m in variant_models(task, profile)):
        return None
    return choose_variant(variant_table(task, profile, progress=False))[0]


def choose_variant(table: pd.DataFrame) -> tuple[str, str]:
    """The rule of this module's docstring on :func:`variant_table`'s output:
    ``(variant name, one-sentence reason)``."""
    if table.empty:
        raise ValueError("no variants to choose from")
    ok = table[table["corr_v_rel_err"] < 0]
    if ok.empty:
        first = table.iloc[0]["variant"]
        return first, (
            "no variant ends with corr(v, relative error) < 0, so Λ was not selected at this "
            f"scale; the rule keeps {first!r}"
        )
    best = ok.loc[ok["cond_lambda"].idxmax()]  # idxmax: the first of equal maxima
    return best["variant"], (
        f"{len(ok)} of {len(table)} variants end with corr(v, relative error) < 0; of those "
        f"{best['variant']!r} has the largest cond Λ ({best['cond_lambda']:.2f})"
    )


def lambdareg_arms(arms: Sequence[str]) -> list[str]:
    """The arms of ``arms`` whose objective has ΛReg (a study's ``anisowm`` arms), in order."""
    return [a for a in arms if "anisowm" in parse_arm(a)]


def _variant_runs(variant: str, arms: Sequence[str]) -> dict[str, tuple[str, dict | None]]:
    """The runs :func:`variant_planning` compares, by name: ``lewm``, and each ΛReg arm of
    ``arms`` published and (unless ``variant`` is the published form) as ``variant``."""
    if variant not in LAMBDAREG_VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; valid: {', '.join(LAMBDAREG_VARIANTS)}")
    runs: dict[str, tuple[str, dict | None]] = {"lewm": ("lewm", None)}
    for arm in lambdareg_arms(arms):
        runs[f"{arm} published"] = (arm, None)
        if variant != "published":
            runs[f"{arm} {variant}"] = (arm, dict(LAMBDAREG_VARIANTS[variant]))
    return runs


def _cells(
    task: str,
    profile: Profile,
    cell: tuple[str, str, str],
    runs: Mapping[str, tuple[str, dict | None]],
) -> list[PlanningCell]:
    protocol, solver, tier = cell
    return [
        PlanningCell(task, arm, s, profile, solver=solver, tier=tier, protocol=protocol, weights=w)
        for arm, w in runs.values()
        for s in profile.seeds.train
    ]


def variant_jobs(
    task: str,
    profile: Profile,
    variant: str,
    cell: tuple[str, str, str] = MAIN_CELL,
    arms: Sequence[str] = LAMBDAREG_ARMS,
) -> tuple[list[Model], list[PlanningCell]]:
    """What :func:`variant_planning` adds to a study's own work: the ``variant`` model of each
    ΛReg arm among ``arms`` and each training seed, and its planning cell (the published forms'
    and ``lewm``'s are the study's). Empty for the published form."""
    runs = {k: v for k, v in _variant_runs(variant, arms).items() if v[1]}
    models = [(task, arm, s, profile, w) for arm, w in runs.values() for s in profile.seeds.train]
    return models, _cells(task, profile, cell, runs)


def variant_planning(
    task: str,
    profile: Profile,
    variant: str,
    cell: tuple[str, str, str] = MAIN_CELL,
    arms: Sequence[str] = LAMBDAREG_ARMS,
    workers: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Planning success of the chosen ΛReg variant of each ΛReg arm among ``arms`` (by default
    ``anisowm`` and ``scale+anisowm``; pass a study's arms) beside its published form and
    ``lewm``, in one cell (default: the main protocol's CEM T1), every training seed.

    Per arm, rows ``<arm> <variant> - lewm``, ``<arm> published - lewm`` and ``<arm> <variant>
    - published``, each a paired difference over (seed, pair) units with its bootstrap 95 %
    interval and McNemar p-value (:func:`jepa_geometry.stats.paired_difference`); the
    variant's models are trained first if missing. With ``variant == "published"`` only the
    published rows are returned.
    """
    runs = _variant_runs(variant, arms)
    models, _ = variant_jobs(task, profile, variant, cell, arms)
    protocol, solver, tier = cell
    seeds = list(profile.seeds.train)
    run_parallel(
        train_model,
        models,
        workers,
        "ΛReg variant models",
        progress,
        pending=model_untrained,
        preload=SIMULATOR_PRELOAD,
    )
    jobs = [(c,) for c in _cells(task, profile, cell, runs)]
    run_parallel(
        plan_cell,
        jobs,
        workers,
        f"plan {task} {solver} {tier}",
        progress,
        pending=PlanningCell.unbuilt,
        preload=SIMULATOR_PRELOAD,
    )
    success = {}
    for name, (arm, w) in runs.items():
        tabs = [
            evaluate_arm(
                task,
                arm,
                s,
                profile,
                solver=solver,
                tier=tier,
                protocol=protocol,
                weights=w,
                progress=False,
            ).episodes
            for s in seeds
        ]
        success[name] = stats.success_matrix(pd.concat(tabs, ignore_index=True))
    rows = []
    for arm in lambdareg_arms(arms):
        pairs = dict.fromkeys(  # one row each: the published form's are the variant's
            [
                (f"{arm} {variant}", "lewm"),
                (f"{arm} published", "lewm"),
                (f"{arm} {variant}", f"{arm} published"),
            ]
        )
        for a, b in pairs:
            if a == b:
                continue
            m_a, m_b = success[a], success[b]
            d = stats.paired_difference(
                m_a if len(m_a) > 1 else m_a[0], m_b if len(m_b) > 1 else m_b[0]
            )
            rows.append(
                {
                    "comparison": f"{a} - {b.removeprefix(arm + ' ')}",
                    "rate": float(m_a.mean()),
                    "baseline rate": float(m_b.mean()),
                    "diff": d.diff,
                    "low": d.low,
                    "high": d.high,
                    "p_mcnemar": d.p_mcnemar,
                }
            )
    return pd.DataFrame(rows)


def _main_cell(spec: StudySpec) -> tuple[str, str, str]:
    return (spec.main_protocol, MAIN_CELL[1], MAIN_CELL[2])


def study_variant_jobs(
    spec: StudySpec, profile: Profile, variant: str
) -> tuple[list[Model], list[PlanningCell]]:
    """:func:`variant_jobs` of a study's own ΛReg arms in its main cell (CEM T1 under the
    main protocol); nothing for a study that does not plan."""
    if not spec.plans:
        return [], []
    return variant_jobs(spec.task, profile, variant, _main_cell(spec), spec.arms)


def study_variant_planning(
    spec: StudySpec, profile: Profile, variant: str, workers: int = 1, progress: bool = True
) -> pd.DataFrame:
    """:func:`variant_planning` of a study's own ΛReg arms in its main cell (CEM T1 under the
    main protocol); empty, with nothing trained, for a study that does not plan."""
    if not spec.plans:
        return pd.DataFrame(
            columns=["comparison", "rate", "baseline rate", "diff", "low", "high", "p_mcnemar"]
        )
    return variant_planning(
        spec.task, profile, variant, _main_cell(spec), spec.arms, workers, progress
    )


__all__ = [
    "LAMBDAREG_VARIANTS",
    "LAST_ROWS",
    "MAIN_CELL",
    "choose_variant",
    "decided_variant",
    "study_variant_jobs",
    "study_variant_planning",
    "variant_jobs",
    "variant_models",
    "variant_planning",
    "variant_table",
]
