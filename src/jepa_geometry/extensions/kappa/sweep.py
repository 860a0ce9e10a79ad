"""AnisoWM's κ sweep on trained models, as data, and its cost: the bound κ on cond Λ swept
on two of its tasks.

AnisoWM (§5 and its appendix sweep) states, for trained world models: the learned target
spectra differ by environment, κ constrains the spectrum but does not determine it (in
Two-Room the allocation keeps evolving after cond Λ reaches the bound), and the effect of κ
on planning is not monotone, the best anisotropic setting differing by environment. Each of
its κ > 1 points is a single training run, so it reads the sweep as a sensitivity diagnostic.

**The sweep** (:data:`KAPPA_SWEEP`, data): the ``anisowm`` arm on Two-Room and Push-T at
κ ∈ {1, 1.5, 2, 4, 8} (the weight override ``kappa``, :func:`~jepa_geometry.wm.arms.arm_weights`),
the first training seed of the profile, each task at its study's profile
(``load_study(task).profile(base)``: Push-T at its ladder rung). κ = 2 is the papers' default,
so its model and its evaluation cell are the study's own (no override, the same artifact
keys). Every model plans with CEM at T1 under the study's main protocol on the same pairs
(paired across κ): the evaluation pairs of the study, and validation pairs drawn with the
episode seed ``seeds.eval +`` :data:`~jepa_geometry.study.cells.SWEEP_SEED_OFFSET` (half as
many, as the MPPI temperature sweep draws them).

**Cost, stated first** (:func:`estimate_cost`): models to train times the measured training
time of the task's cached ``anisowm`` model (else the profile's cost model,
:func:`~jepa_geometry.cluster.train_hours`), plus cells to plan times the measured time
of the study's own cell per pair (else :func:`~jepa_geometry.cluster.cell_hours`).
Every build states it (:func:`state_estimate`, :data:`~.build.GRID`'s statement) before
it trains, and the first statement is kept so the book shows what was stated before anything
trained.

The sweep in modules: this one (the sweep and its cost); :mod:`.build` (building and
reading it); :mod:`.saturation` (what is read off a training log);
:mod:`jepa_geometry.verdict.kappa_claims` (its claims judged);
:mod:`jepa_geometry.book.tables.kappa` (what chapter 8 shows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jepa_geometry import cluster
from jepa_geometry.artifacts import Artifact, get_or_build, load
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import Profile
from jepa_geometry.study.cells import SWEEP_SEED_OFFSET, with_eval_seed
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.arms import DEFAULT_KAPPA
from jepa_geometry.wm.training import model_untrained, world_model_artifact

ARM = "anisowm"
SOLVER, TIER = "cem", "T1"


class KappaError(ValueError):
    """A κ sweep names an unknown task, a κ below 1, or nothing to sweep."""


@dataclass(frozen=True)
class KappaSweep:
    """The sweep as data: tasks, bounds κ, the arm; one training seed (the profile's first)."""

    tasks: tuple[str, ...] = ("tworoom", "pusht")
    kappas: tuple[float, ...] = (1.0, 1.5, 2.0, 4.0, 8.0)
    arm: str = ARM

    def __post_init__(self) -> None:
        if isinstance(self.tasks, str) or not self.tasks:
            raise KappaError(f"tasks must be a non-empty list of tasks ({', '.join(TASKS)})")
        bad = [t for t in self.tasks if t not in TASKS]
        if bad or len(set(self.tasks)) != len(self.tasks):
            raise KappaError(
                f"κ sweep tasks {list(self.tasks)}: valid: distinct tasks of {', '.join(TASKS)}"
            )
        if isinstance(self.kappas, str) or not self.kappas:
            raise KappaError(
                f"kappas must be a non-empty list of numbers >= 1, got {self.kappas!r}"
            )
        for k in self.kappas:
            if isinstance(k, bool) or not isinstance(k, int | float) or not np.isfinite(k) or k < 1:
                raise KappaError(f"κ must be a finite number >= 1 (1 = isotropic), got {k!r}")
        if len(set(self.kappas)) != len(self.kappas) or list(self.kappas) != sorted(self.kappas):
            raise KappaError(f"kappas must be distinct and increasing, got {list(self.kappas)}")
        if not any(k > 1 for k in self.kappas):
            raise KappaError(f"kappas {list(self.kappas)} have no anisotropic κ > 1 to compare")
        if "anisowm" not in self.arm:
            raise KappaError(f"arm {self.arm!r} has no ΛReg; the sweep needs an anisowm arm")
        object.__setattr__(self, "kappas", tuple(float(k) for k in self.kappas))

    def weights(self, kappa: float) -> dict[str, float] | None:
        """The weight override of ``kappa``: none at the default κ, so the study's own model
        and cells are reused (their keys carry no override)."""
        return None if kappa == DEFAULT_KAPPA else {"kappa": float(kappa)}

    def profile(self, task: str, base: Profile) -> Profile:
        """The task study's profile (its ladder rung applied to ``base``)."""
        return load_study(task).profile(base)

    def protocol(self, task: str) -> str:
        return load_study(task).main_protocol

    def models(self, base: Profile) -> list[tuple]:
        """``train_world_model`` arguments of every model: each (task, κ) at the first training
        seed, and the study's other seeds at the default κ (the within-task spread)."""
        jobs = []
        for task in self.tasks:
            p = self.profile(task, base)
            for k in self.kappas:
                jobs.append((task, self.arm, p.seeds.train[0], p, self.weights(k)))
            if DEFAULT_KAPPA in self.kappas:
                jobs += [(task, self.arm, s, p, None) for s in p.seeds.train[1:]]
        return jobs

    def cell(self, task: str, kappa: float, base: Profile, split: str) -> PlanningCell:
        """The CEM T1 cell of (task, κ) on the ``"evaluation"`` or ``"validation"`` pairs."""
        if split not in SPLITS:
            raise KappaError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
        p = self.profile(task, base)
        episodes = None
        if split == "validation":
            p = with_eval_seed(p, p.seeds.eval + SWEEP_SEED_OFFSET)
            episodes = max(p.eval.episodes // 2, 1)
        return PlanningCell(
            task,
            self.arm,
            p.seeds.train[0],
            p,
            solver=SOLVER,
            tier=TIER,
            protocol=self.protocol(task),
            n_pairs=episodes,
            weights=self.weights(kappa),
        )

    def cells(self, base: Profile) -> list[PlanningCell]:
        return [self.cell(t, k, base, s) for t in self.tasks for k in self.kappas for s in SPLITS]


SPLITS: tuple[str, ...] = ("evaluation", "validation")
KAPPA_SWEEP = KappaSweep()
"""AnisoWM's κ sweep as this book runs it (its claims on trained models)."""


def _reference_model(sweep: KappaSweep, task: str, base: Profile):
    p = sweep.profile(task, base)
    return world_model_artifact(task, sweep.arm, p.seeds.train[0], p)


def estimate_cost(sweep: KappaSweep, base: Profile) -> pd.DataFrame:
    """Per task: the models and cells still to build, the time each takes and the total.

    A model costs the measured training time of the task's cached ``anisowm`` model (its
    manifest's build time) or, when none is cached, the profile's cost model
    (:func:`~jepa_geometry.cluster.train_hours`); a cell costs the measured time per pair
    of the study's own evaluation cell times its pairs, or the cost model's time per pair of
    that cell (:func:`~jepa_geometry.cluster.cell_hours`). ``basis`` says which.
    """
    rows = []
    models = sweep.models(base)
    for task in sweep.tasks:
        p = sweep.profile(task, base)
        ref = _reference_model(sweep, task, base)
        if ref.exists():
            per_model, basis = float(ref.manifest()["wall_time_s"]), "measured"
        else:
            per_model, basis = 3600 * cluster.train_hours(p), "profile's cost model"
        own = sweep.cell(task, DEFAULT_KAPPA, base, "evaluation")
        plan = own.artifacts()[0]
        pairs = p.eval.episodes
        if plan.exists():
            per_pair, cell_basis = float(plan.manifest()["wall_time_s"]) / pairs, "measured"
        else:
            per_pair, cell_basis = 3600 * cluster.cell_hours(own) / pairs, "profile's cost model"
        todo_models = [m for m in models if m[0] == task and model_untrained(*m)]
        todo_cells = [c for c in sweep.cells(base) if c.task == task and c.unbuilt()]
        n_pairs = sum(c.plan()[1] for c in todo_cells)
        rows.append(
            {
                "task": task,
                "models to train": len(todo_models),
                "seconds per model": per_model,
                "model basis": basis,
                "cells to plan": len(todo_cells),
                "pairs to plan": n_pairs,
                "seconds per pair": per_pair,
                "cell basis": cell_basis,
                "estimated seconds": len(todo_models) * per_model + n_pairs * per_pair,
            }
        )
    return pd.DataFrame(rows)


def cost_sentence(estimate: pd.DataFrame) -> str:
    """One line: what the sweep still costs, per task and in all."""
    parts = [
        f"{task_title(r.task)}: {r['models to train']} models x {r['seconds per model']:.0f} s "
        f"({r['model basis']}) + {r['pairs to plan']} pairs x {r['seconds per pair']:.2f} s "
        f"({r['cell basis']})"
        for _, r in estimate.iterrows()
    ]
    total = estimate["estimated seconds"].sum() / 60
    return f"κ sweep cost estimate: {total:.1f} min of work ({'; '.join(parts)})"


ESTIMATE_FILE = "estimate.json"


def estimate_artifact(sweep: KappaSweep, base: Profile) -> Artifact:
    """``results/kappa-estimate/<key>``: the cost estimate as first stated, before the first
    build of the sweep trained anything (a resumed build keeps it)."""
    keys = [world_model_artifact(*m).key for m in sweep.models(base)]
    keys += [c.artifacts()[0].key for c in sweep.cells(base)]
    return Artifact("results", "kappa-estimate", {"artifacts": keys})


def stated_estimate(sweep: KappaSweep, base: Profile) -> pd.DataFrame:
    """The estimate a build stated before it first trained (:func:`state_estimate`; cache
    only)."""
    return pd.DataFrame(
        json.loads((load(estimate_artifact(sweep, base)) / ESTIMATE_FILE).read_text())
    )


def measured_cost(sweep: KappaSweep, base: Profile) -> pd.DataFrame:
    """Per task, the build time the sweep's own artifacts took (their manifests): the models
    and cells it adds to the study, with the random floor of the validation pairs (the study's
    κ = 2 models and evaluation cell excluded)."""
    rows = []
    for task in sweep.tasks:
        arts = [
            world_model_artifact(*m)
            for m in sweep.models(base)
            if m[0] == task and m[4] is not None
        ]
        cells = [
            c
            for c in sweep.cells(base)
            if c.task == task and not (c.weights is None and c.n_pairs is None)
        ]
        arts += [a for c in cells for a in c.artifacts()]  # with the validation pairs' floor
        arts = list({f"{a.name}/{a.key}": a for a in arts}.values())
        built = [a for a in arts if a.exists()]
        rows.append(
            {
                "task": task,
                "artifacts": len(arts),
                "built": len(built),
                "measured seconds": sum(float(a.manifest()["wall_time_s"]) for a in built),
            }
        )
    return pd.DataFrame(rows)


def state_estimate(
    base: Profile, sweep: KappaSweep = KAPPA_SWEEP, estimate: pd.DataFrame | None = None
) -> str:
    """The sweep's cost now (``estimate``, default :func:`estimate_cost`) in one line
    (:func:`cost_sentence`), keeping the first statement (:func:`estimate_artifact`): a
    resumed build says what is left, the book shows what was stated before anything
    trained."""
    estimate = estimate_cost(sweep, base) if estimate is None else estimate

    def keep(tmp) -> None:
        (tmp / ESTIMATE_FILE).write_text(estimate.to_json(orient="records"))

    get_or_build(estimate_artifact(sweep, base), keep)
    return cost_sentence(estimate)


__all__ = [
    "ARM",
    "TIER",
    "DEFAULT_KAPPA",
    "ESTIMATE_FILE",
    "KAPPA_SWEEP",
    "KappaError",
    "KappaSweep",
    "SOLVER",
    "SPLITS",
    "cost_sentence",
    "estimate_artifact",
    "estimate_cost",
    "measured_cost",
    "state_estimate",
    "stated_estimate",
]
