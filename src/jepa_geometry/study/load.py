"""Every task's study read from the artifact cache, never built: what the cross-task pages and
the cross-task verdict read.

:func:`load_studies` reads every task study's plans, geometry and training logs inside
:func:`~jepa_geometry.artifacts.cache_only`, so a study that was never built is reported as
missing (with the artifact it lacks) instead of being built for hours; the cross-task chapter
then shows whatever tasks have studies and says which do not
(:func:`missing_sentence`). The tables of that chapter are in
:mod:`jepa_geometry.book.tables.across`, the claims read across the tasks in
:mod:`jepa_geometry.verdict.across`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from jepa_geometry.analysis.measurements import Geometry, measure_arms
from jepa_geometry.artifacts import NotCached, cache_only
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.profiles import Profile
from jepa_geometry.study.cells import StudyPlans, plan_study
from jepa_geometry.study.diagnostics import training_diagnostics
from jepa_geometry.study.spec import StudySpec, available_studies, load_study


@dataclass(frozen=True)
class TaskStudy:
    """One task's cached study: its spec, the profile it ran at (the spec's rung of ``base``),
    the plans, the geometry of every arm and the training diagnostics."""

    task: str
    spec: StudySpec
    profile: Profile
    plans: StudyPlans
    geometry: Geometry
    diagnostics: pd.DataFrame

    @property
    def episodes(self) -> pd.DataFrame:
        return self.plans.episodes


@dataclass(frozen=True)
class Studies:
    """The task studies found in the cache, in the book's task order, and why the others are
    missing (``{task: reason}``)."""

    profile: str
    studies: dict[str, TaskStudy]
    missing: dict[str, str]

    @property
    def planned(self) -> list[str]:
        """Tasks whose study planned (a failed gate trains and measures only)."""
        return [t for t, s in self.studies.items() if s.spec.plans]

    def coverage(self) -> pd.DataFrame:
        """One row per task: whether its study is in this book at this profile, whether it
        plans, its protocols and arms, or why it is missing."""
        rows = []
        for task in TASKS:
            s = self.studies.get(task)
            rows.append(
                {
                    "task": task_title(task),
                    "study": s is not None,
                    "plans": bool(s and s.spec.plans),
                    "protocols": ", ".join(s.spec.protocols) if s else "",
                    "arms": ", ".join(s.spec.arms) if s else "",
                    "training seeds": s.spec.seeds_label(s.profile) if s else "0",
                    "note": self.missing.get(
                        task,
                        ""
                        if s is None or s.spec.plans
                        else "gate failed at every rung: measured, not planned",
                    ),
                }
            )
        return pd.DataFrame(rows)


def load_task_study(task: str, base: Profile) -> TaskStudy:
    """``task``'s study at ``base`` read from the cache; :class:`NotCached` names the first
    artifact it lacks."""
    spec = load_study(task)
    profile = spec.profile(base)
    with cache_only():
        plans = plan_study(spec, profile, progress=False)
        models = spec.models(profile)  # the headline seeds' models too
        geo = measure_arms(task, list(spec.arms), profile, progress=False, models=models)
        diag = training_diagnostics(task, list(spec.arms), profile, models=models)
    return TaskStudy(task, spec, profile, plans, geo, diag)


def load_studies(
    base: Profile, tasks: Sequence[str] = TASKS, require_planned: bool = False
) -> Studies:
    """Every task study of ``tasks`` that the cache holds at ``base``; the others in
    ``missing`` with the reason (no study file, or the artifact that is not built). With
    ``require_planned``, a cache without any study that plans is a one-line error naming the
    missing tasks (the success tables would be empty)."""
    bad = [t for t in tasks if t not in TASKS]
    if bad or not tasks:
        raise ValueError(f"tasks must be a non-empty list of {', '.join(TASKS)}; got {list(tasks)}")
    have = set(available_studies())
    studies, missing = {}, {}
    for task in [t for t in TASKS if t in tasks]:
        if task not in have:
            missing[task] = "no study file"
            continue
        try:
            studies[task] = load_task_study(task, base)
        except NotCached as e:
            missing[task] = f"not built at this profile ({e}); `jepa-geometry study {task}`"
    out = Studies(base.name, studies, missing)
    if require_planned and not out.planned:
        raise NotCached(
            f"no task study that plans is cached at profile {base.name!r}: {missing_sentence(out)}"
        )
    return out


def missing_sentence(studies: Studies) -> str:
    """The tasks without a study at this profile and why, in one line ("none" if none)."""
    if not studies.missing:
        return "none"
    return "; ".join(f"{task_title(t)}: {why}" for t, why in studies.missing.items())


__all__ = ["Studies", "TaskStudy", "load_studies", "load_task_study", "missing_sentence"]
