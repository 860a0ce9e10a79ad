"""AnisoWM's κ sweep on trained models: the bound κ on cond Λ swept on two of its tasks.

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
episode seed ``seeds.eval +`` :data:`~jepa_geometry.study.grid.SWEEP_SEED_OFFSET` (half as
many, as the MPPI temperature sweep draws them).

**The rules** (fixed before any model of the sweep was trained; book: rec-kappa-sweep):

* *Cost, stated first* (:func:`estimate_cost`): models to train times the measured training
  time of the task's cached ``anisowm`` model (else the profile's cost model,
  :func:`~jepa_geometry.study.cluster.train_hours`),
  plus cells to plan times the measured time of the study's own cell per pair (else
  :func:`~jepa_geometry.study.cluster.cell_hours`). :func:`build_sweep` prints it before it
  trains.
* *κ constrains*: every model's learned ``cond Λ <= κ (1 +`` :data:`COND_TOLERANCE` ``)``.
  Our clamp makes this true whatever the data, so it is checked (a broken bound would be a
  bug of ours: "contradicted") but never "reproduced": it reads
  :data:`~jepa_geometry.study.verdict.BY_CONSTRUCTION`, out of every family.
* *κ does not determine (Two-Room)*: at κ = 2 the allocation keeps evolving after cond Λ first
  reaches the bound (``cond Λ >= κ (1 -`` :data:`SATURATION_TOLERANCE` ``)``): the relative
  change :func:`allocation_change` ``= ||v_end - v_sat|| / ||v_sat - 1||`` exceeds
  :data:`EVOLVE_MIN`, judged by the book's rule on the t-interval of its mean over the
  study's training seeds at κ = 2 (one seed: no interval, inconclusive). A model that never
  reaches its bound fails the precondition.
* *Spectra differ by environment*: at κ = 2, where the study has every training seed, the
  smallest distance between a Two-Room and a Push-T spectrum (:func:`spectrum_distance`) exceeds
  the largest distance between two seeds of one task; with one seed per task there is no
  within-task spread and the claim is inconclusive.
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
(:func:`kappa_verdicts`).

The claims about what κ does (spectra differ, not monotone, best κ differs) assume the book's
precondition "Λ selected" on the sweep's models (:func:`lambda_selected`); where it fails they
read "not tested (precondition failed)". The spectra rule is descriptive (one training run
per κ; its within-task spread is the study's seeds at κ = 2), as in the paper.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from jepa_geometry import cluster, stats
from jepa_geometry.analysis.probes import lambda_spectrum
from jepa_geometry.artifacts import Artifact, get_or_build, load
from jepa_geometry.envs import SIMULATOR_PRELOAD, TASKS, task_title
from jepa_geometry.jobs import check_workers, run_parallel
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import Profile
from jepa_geometry.study.grid import SWEEP_SEED_OFFSET, with_eval_seed
from jepa_geometry.study.reference import reference_numbers
from jepa_geometry.study.spec import load_study
from jepa_geometry.study.verdict import (
    BY_CONSTRUCTION,
    DEPARTURE_MIN,
    MIN_EFFECTS,
    NOT_TESTED,
    Claim,
    Evidence,
    every_evidence,
    family_holm,
    lambda_departure,
    seed_mean_evidence,
    verdict,
)
from jepa_geometry.wm.checkpoint import LOG_FILE
from jepa_geometry.wm.training import model_untrained, train_world_model, world_model_artifact

ARM = "anisowm"
SOLVER, BUDGET = "cem", "T1"
DEFAULT_KAPPA = 2.0
"""AnisoWM's κ (every study trains ``anisowm`` at it, ``arm_weights``'s default)."""
COND_TOLERANCE = 1e-4  # relative: float32 softmax of the clamped α reaches κ within ~1e-6
SATURATION_TOLERANCE = 1e-3  # cond Λ >= κ (1 - this) counts as having reached the bound
EVOLVE_MIN = 0.1  # the allocation moves by >= 10 % of its departure from isotropy after saturation
ABOVE_MEAN_MARGIN = 1e-6  # v_i > 1 + this counts as above the mean (analysis.probes)


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
            budget=BUDGET,
            protocol=self.protocol(task),
            episodes=episodes,
            weights=self.weights(kappa),
        )

    def cells(self, base: Profile) -> list[PlanningCell]:
        return [self.cell(t, k, base, s) for t in self.tasks for k in self.kappas for s in SPLITS]


SPLITS: tuple[str, ...] = ("evaluation", "validation")
KAPPA_SWEEP = KappaSweep()
"""AnisoWM's κ sweep as this book runs it (its claims on trained models)."""


# --------------------------------------------------------------------------------------
# Cost: stated before anything trains, measured after
# --------------------------------------------------------------------------------------


def _reference_model(sweep: KappaSweep, task: str, base: Profile):
    p = sweep.profile(task, base)
    return world_model_artifact(task, sweep.arm, p.seeds.train[0], p)


def estimate_cost(sweep: KappaSweep, base: Profile) -> pd.DataFrame:
    """Per task: the models and cells still to build, the time each takes and the total.

    A model costs the measured training time of the task's cached ``anisowm`` model (its
    manifest's build time) or, when none is cached, the profile's cost model
    (:func:`~jepa_geometry.study.cluster.train_hours`); a cell costs the measured time per pair
    of the study's own evaluation cell times its pairs, or the cost model's time per pair of
    that cell (:func:`~jepa_geometry.study.cluster.cell_hours`). ``basis`` says which.
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
    """The estimate :func:`build_sweep` stated before it first trained (cache only)."""
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
            if c.task == task and not (c.weights is None and c.episodes is None)
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


# --------------------------------------------------------------------------------------
# Building (cached, resumable) and reading (cache only)
# --------------------------------------------------------------------------------------


def _train(task: str, arm: str, seed: int, profile: Profile, weights: dict | None) -> None:
    train_world_model(task, arm, seed, profile, weights, progress=False)


def _plan(cell: PlanningCell) -> None:
    cell.evaluate(progress=False)


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


def grid_units(stage: str, base: Profile, sweep: KappaSweep = KAPPA_SWEEP) -> list[cluster.Unit]:
    """The sweep's units of one stage of the study grid (:mod:`~jepa_geometry.study.cluster`):
    its tasks' datasets, its models, and one planning job per model (its evaluation and
    validation cells); the κ = 2 models and cells are the task studies' own, which the grid
    runs once."""
    if stage == "collect":
        return [cluster.collect_unit(t, sweep.profile(t, base)) for t in sweep.tasks]
    if stage == "train":
        return [cluster.train_unit(*m) for m in sweep.models(base)]
    if stage != "plan":
        return []
    cells = sweep.cells(base)
    return [
        u
        for t in sweep.tasks
        for u in cluster.plan_units(stage, t, [c for c in cells if c.task == t], " (κ sweep)")
    ]


def build_sweep(
    base: Profile,
    sweep: KappaSweep = KAPPA_SWEEP,
    workers: int = 1,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> pd.DataFrame:
    """Print the cost estimate, then train every model and plan every cell of ``sweep``
    (cached ones are reused; an interrupted build resumes). Returns :func:`estimate_cost`'s
    table as it stood before the build."""
    workers = check_workers(workers)
    estimate = estimate_cost(sweep, base)
    say(state_estimate(base, sweep, estimate))
    run_parallel(
        _train,
        sweep.models(base),
        workers,
        "κ sweep models",
        progress,
        pending=model_untrained,
        preload=SIMULATOR_PRELOAD,
    )
    run_parallel(
        _plan,
        [(c,) for c in sweep.cells(base)],
        workers,
        "κ sweep cells",
        progress,
        pending=PlanningCell.unbuilt,
        preload=SIMULATOR_PRELOAD,
    )
    return estimate


def missing(sweep: KappaSweep, base: Profile) -> list[str]:
    """What the cache lacks of the sweep, one name per model or cell (empty: built)."""
    out = [
        f"model {m[0]} κ={(m[4] or {}).get('kappa', DEFAULT_KAPPA):g} seed {m[2]}"
        for m in sweep.models(base)
        if model_untrained(*m)
    ]
    out += [
        f"cell {c.task} κ={(c.weights or {}).get('kappa', DEFAULT_KAPPA):g} "
        f"{'validation' if c.episodes else 'evaluation'}"
        for c in sweep.cells(base)
        if c.unbuilt()
    ]
    return out


@dataclass
class KappaResults:
    """What the rules read, per task and κ (first training seed).

    ``models``: task, kappa, D, cond (learned cond Λ), departure (of Λ from the identity,
    :func:`~jepa_geometry.study.verdict.lambda_departure`), saturated, above_mean (#{v_i > 1}),
    first_saturated (the first logged step with cond Λ at its bound, NaN if never),
    allocation_change. ``spectra``: task, kappa, rank (largest first, as a fraction of D),
    variance. ``success``: (task, κ, split) -> per-pair outcomes, pairs in episode order.
    ``seed_spectra``: (task, training seed) -> the final sorted v at the default κ;
    ``seed_changes``: (task, training seed) -> its :func:`allocation_change` at the default κ
    (NaN: that model never reached its bound).
    """

    models: pd.DataFrame
    spectra: pd.DataFrame
    success: dict[tuple[str, float, str], np.ndarray]
    seed_spectra: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    seed_changes: dict[tuple[str, int], float] = field(default_factory=dict)


def _log(args: tuple) -> list[dict]:
    return json.loads((load(world_model_artifact(*args)) / LOG_FILE).read_text())


def load_results(base: Profile, sweep: KappaSweep = KAPPA_SWEEP) -> KappaResults:
    """The sweep's measurements from the cache (nothing is built); a missing piece is an
    error naming it (build with :func:`build_sweep` or ``jepa-geometry kappa``)."""
    gone = missing(sweep, base)
    if gone:
        raise KappaError(
            f"the κ sweep is not built ({len(gone)} missing, e.g. {gone[0]}); "
            f"run: jepa-geometry kappa --profile {base.name}"
        )
    rows, spectra, seed_spectra, seed_changes = [], [], {}, {}
    for m in sweep.models(base):
        task, _, seed, _, w = m
        kappa = float((w or {}).get("kappa", DEFAULT_KAPPA))
        log = _log(m)
        sp = lambda_spectrum(log)
        if kappa == DEFAULT_KAPPA:  # every training seed: the spread between models
            seed_spectra[(task, seed)] = sp["final_sorted"]
            seed_changes[(task, seed)] = allocation_change(sp["steps"], sp["v"], kappa)
        if seed != sweep.profile(task, base).seeds.train[0]:
            continue
        first = saturation_step(sp["steps"], sp["v"], kappa)
        rows.append(
            {
                "task": task,
                "kappa": kappa,
                "D": int(sp["v"].shape[1]),
                "cond": sp["cond"],
                "departure": lambda_departure(sp["v"][-1], kappa),
                "saturated": bool(saturated(sp["cond"], kappa)),
                "above_mean": sp["above_mean"],
                "first_saturated": np.nan if first is None else float(first),
                "allocation_change": allocation_change(sp["steps"], sp["v"], kappa),
            }
        )
        d = len(sp["final_sorted"])
        spectra += [
            {"task": task, "kappa": kappa, "rank": (i + 0.5) / d, "variance": float(v)}
            for i, v in enumerate(sp["final_sorted"])
        ]
    success = {}
    for c in sweep.cells(base):
        eps = c.evaluate(progress=False).episodes.sort_values("episode")
        split = "validation" if c.episodes else "evaluation"
        kappa = float((c.weights or {}).get("kappa", DEFAULT_KAPPA))
        success[(c.task, kappa, split)] = eps["success"].to_numpy(dtype=float)
    return KappaResults(
        pd.DataFrame(rows), pd.DataFrame(spectra), success, seed_spectra, seed_changes
    )


# --------------------------------------------------------------------------------------
# The rules, on numbers
# --------------------------------------------------------------------------------------


def within_bound(cond: float, kappa: float) -> bool:
    """``cond Λ <= κ (1 + COND_TOLERANCE)``: the bound holds."""
    return cond <= kappa * (1 + COND_TOLERANCE)


def saturated(cond: float, kappa: float) -> bool:
    """``cond Λ >= κ (1 - SATURATION_TOLERANCE)``, for κ > 1: Λ has reached its bound
    (at κ = 1 the bound pins Λ = I, so there is nothing to reach)."""
    return kappa > 1 and cond >= kappa * (1 - SATURATION_TOLERANCE)


def _conds(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.ndim != 2 or (v <= 0).any():
        raise KappaError(f"v must be a (steps, D) array of positive variances, got {v.shape}")
    return v.max(axis=1) / v.min(axis=1)


def saturation_step(steps: Sequence[int], v: np.ndarray, kappa: float) -> int | None:
    """The first logged step at which cond Λ reaches κ (:func:`saturated`), or None."""
    hit = [saturated(c, kappa) for c in _conds(v)]
    return int(steps[hit.index(True)]) if any(hit) else None


def allocation_change(steps: Sequence[int], v: np.ndarray, kappa: float) -> float:
    """How far the target allocation moves after cond Λ first reaches κ, relative to how far
    it had left isotropy then:

        ||v_end - v_sat||_2 / ||v_sat - 1||_2

    (v unsorted: *which* coordinates get the variance is the allocation). NaN if the bound is
    never reached."""
    v = np.asarray(v, dtype=float)
    first = saturation_step(steps, v, kappa)
    if first is None:
        return float("nan")
    v_sat = v[list(steps).index(first)]
    return float(np.linalg.norm(v[-1] - v_sat) / np.linalg.norm(v_sat - 1.0))


def spectrum_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Root-mean-square difference of two sorted spectra, each read at the same quantiles of
    its coordinates (``(i + 0.5) / D``; spectra of different D are interpolated)."""
    a, b = np.sort(np.asarray(a, float))[::-1], np.sort(np.asarray(b, float))[::-1]
    if a.size == 0 or b.size == 0:
        raise KappaError("spectrum_distance needs two non-empty spectra")
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
        raise KappaError(f"no spectra of {a!r} and {b!r} to compare")
    between = min(spectrum_distance(x, y) for x in sa for y in sb)
    within = [
        spectrum_distance(x[i], x[j]) for x in (sa, sb) for i in range(len(x)) for j in range(i)
    ]
    return between, (max(within) if within else float("nan"))


def best_kappa(validation: Mapping[float, float]) -> float:
    """κ_best: the κ > 1 with the highest validation success; ties go to the smaller κ."""
    cands = sorted((k, s) for k, s in validation.items() if k > 1)
    if not cands:
        raise KappaError(f"no κ > 1 among {sorted(validation)}")
    top = max(s for _, s in cands)
    return next(k for k, s in cands if s == top)


def lambda_selected(models: pd.DataFrame, task: str) -> bool:
    """The book's precondition "Λ selected" for the sweep of ``task``: every model with κ > 1
    leaves the identity by at least :data:`~jepa_geometry.study.verdict.DEPARTURE_MIN` of its
    box (``departure``, :func:`~jepa_geometry.study.verdict.lambda_departure`), each on its
    own (one training run per κ: no spread between seeds to read). Where Λ stays near the
    identity κ changes nothing, and the claims about κ are not tested; cond Λ alone does not
    decide, since two coordinates at the clamp reach κ."""
    m = models[(models["task"] == task) & (models["kappa"] > 1)]
    return bool(len(m)) and bool((m["departure"] >= DEPARTURE_MIN).all())


def non_monotone_evidence(
    claim: Claim, evaluation: Mapping[float, np.ndarray], kappa_best: float
) -> Evidence:
    """Evidence that κ_best beats *both* ends of the curve on the evaluation pairs:
    ``success(κ_best) - success(κ_min)`` and ``success(κ_best) - success(κ_max)``, each with its
    paired bootstrap 95 % interval over pairs
    (:meth:`~jepa_geometry.study.verdict.Evidence.from_replicates`), combined by the
    intersection-union test (:func:`~jepa_geometry.study.verdict.every_evidence`: the weaker
    comparison decides and is shown). An interior maximum is what "not monotone" means; a
    curve falling from κ = 1, which beats the largest κ, is monotone, and so is one rising to
    κ_max. With κ_best at an end, that comparison is 0 with no width (inconclusive). One
    training run per κ: the evidence rests on one model per arm, so the verdict is
    "inconclusive" whatever the interval (:func:`~jepa_geometry.study.verdict.judged`)."""
    if kappa_best not in evaluation:
        raise KappaError(f"κ_best {kappa_best:g} was not evaluated; κ: {sorted(evaluation)}")
    ends = (min(evaluation), max(evaluation))
    parts = []
    for k in ends:
        d = np.asarray(evaluation[kappa_best], float) - np.asarray(evaluation[k], float)
        reps = stats.bootstrap_replicates(d)
        parts.append(Evidence.from_replicates(float(d.mean()), reps, f"1 seed x {len(d)} pairs", 1))
    names = [f"κ = {kappa_best:g} vs κ = {k:g}" for k in ends]
    return every_evidence(claim, parts, names, "comparisons")


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


# --------------------------------------------------------------------------------------
# Display tables
# --------------------------------------------------------------------------------------


def sweep_table(res: KappaResults, sweep: KappaSweep = KAPPA_SWEEP) -> pd.DataFrame:
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
    """:attr:`KappaResults.spectra` with the tasks' titles, for the figure."""
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
        sweep_table(res, sweep),
        success_by_kappa(res),
        sorted_spectra(res),
        kappa_verdicts(res, sweep),
        cost_sentence(est).removeprefix("κ sweep cost estimate: "),
        measured,
    )


GRID = cluster.Extension("kappa", grid_units, state_estimate)
"""The sweep as an extension of the study grid (``jepa-geometry grid --with kappa``)."""


__all__ = [
    "COND_TOLERANCE",
    "DEFAULT_KAPPA",
    "EVALUATORS",
    "EVOLVE_MIN",
    "KAPPA_CLAIMS",
    "KAPPA_SWEEP",
    "SATURATION_TOLERANCE",
    "KappaClaimSpec",
    "KappaError",
    "KappaResults",
    "KappaSweep",
    "KappaView",
    "chapter_view",
    "stated_estimate",
    "allocation_change",
    "best_kappa",
    "build_sweep",
    "GRID",
    "grid_units",
    "state_estimate",
    "cost_sentence",
    "estimate_cost",
    "kappa_verdicts",
    "lambda_selected",
    "load_results",
    "measured_cost",
    "missing",
    "non_monotone_evidence",
    "non_monotone_items",
    "saturation_step",
    "sorted_spectra",
    "spectra_separation",
    "spectrum_distance",
    "success_by_kappa",
    "sweep_table",
]
