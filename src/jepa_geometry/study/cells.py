"""One task, both papers: train every arm, plan every solver cell, tabulate with paired CIs.

The grid of every task's study (chapters 6 and 7, executed once per task):

* **Arms** (:data:`STUDY_ARMS`): ``lewm`` (the baseline), ``scale``, ``aux``, ``anisowm``
  (κ = 2) and ``scale+anisowm``, each trained with every seed of ``profile.seeds.train``; the
  arms a study's headline claims compare also with its headline seeds
  (:class:`~jepa_geometry.study.spec.HeadlineSeeds`), planned with CEM under its main protocol.
* **Cells** (:func:`plan_cells`): CEM, iCEM and MPPI at the five budget tiers (SCALE's grid),
  under each protocol named (``goal100_budget150``: goal 100 steps ahead, budget 150;
  ``goal25_budget50``: 25 / 50); under SCALE's protocol also MPPI at stable-worldmodel's
  shipped temperature (``MPPI_SWM``; the solver labels are
  :data:`~jepa_geometry.planning.solver.STUDY_SOLVERS`), the temperature of SCALE's main grid.
* **MPPI temperature** (:func:`select_mppi_temperature`): chosen on the baseline arm with a
  *separate* episode seed, as SCALE's pre-registered fix does (SCALE authors' repository,
  ``eval_results/RESULTS_mppi_temp.md``; book: ``book/reconstructions.md``, section
  rec-mppi-temperature), then used for every arm; the evaluation pairs never see the sweep.

Every cell is one cached :class:`~jepa_geometry.planning.evaluator.PlanningCell`, so the
whole grid resumes where an interrupted run stopped, and every arm plans the same pairs with
the same solver noise: differences against the baseline are paired (:func:`paired_table`),
pooled over training seeds with the two-stage bootstrap of :mod:`jepa_geometry.stats`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jepa_geometry import stats
from jepa_geometry.envs import q_names, task_class
from jepa_geometry.jobs import progress_bar
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.protocol import PROTOCOLS, make_protocol
from jepa_geometry.planning.solver import (
    MPPI_SWEEP_192,
    MPPI_T_STAR_DIM,
    STUDY_SOLVERS,
    SWM_MPPI_TEMPERATURE,
    TIERS,
    budget_tiers,
)
from jepa_geometry.profiles import Profile
from jepa_geometry.study.spec import BASELINE, StudySpec
from jepa_geometry.wm.arms import DINOWM, arm_name, check_arms
from jepa_geometry.wm.dinowm import latent_dim, mppi_temperature
from jepa_geometry.wm.training import train_world_model

STUDY_ARMS: tuple[str, ...] = ("lewm", "scale", "aux", "anisowm", "scale+anisowm", "dinowm")
SWEEP_SEED_OFFSET = 1  # the sweep's episode seed is profile.seeds.eval + this


class StudyError(ValueError):
    """Bad input to one task's study: an unknown or missing arm, solver cell, protocol, budget
    or count, a profile without the study's rate, or results that cannot be paired; one line.
    Bad input to the grid's run on a job engine (an executor, a list of studies, its folder)
    is :class:`~jepa_geometry.cluster.estimate.ClusterError`."""


@dataclass(frozen=True, order=True)
class Cell:
    """One planning configuration: protocol x solver x budget tier."""

    protocol: str
    solver: str  # a label of planning.solver.STUDY_SOLVERS
    tier: str  # the budget tier (T1 … T5)

    def __str__(self) -> str:
        return f"{self.protocol}/{self.solver}/{self.tier}"


def plan_cells(
    protocols: Sequence[str] = ("goal100_budget150", "goal25_budget50"),
    solvers: Sequence[str] | None = None,
) -> list[Cell]:
    """Each solver label of ``solvers`` (None: every one of
    :data:`~jepa_geometry.planning.solver.STUDY_SOLVERS`) at T1..T5 for each protocol (a label
    bound to one protocol only under it): CEM, iCEM and MPPI, SCALE's solver grid, so that a
    per-solver mean is over the same five tiers as SCALE's, and under SCALE's protocol also
    MPPI at swm's shipped temperature (``MPPI_SWM``), the footing of SCALE's main grid."""
    bad = [p for p in protocols if p not in PROTOCOLS]
    if bad:
        raise StudyError(f"unknown protocol(s) {bad}; valid: {', '.join(PROTOCOLS)}")
    unknown = [s for s in solvers or () if s not in STUDY_SOLVERS]
    if unknown:
        raise StudyError(f"unknown solver(s) {unknown}; valid: {', '.join(STUDY_SOLVERS)}")
    return [
        Cell(p, label, t)
        for p in protocols
        for label, s in STUDY_SOLVERS.items()
        if s.protocol in (None, p) and (solvers is None or label in solvers)
        for t in TIERS
    ]


def arm_temperature(arm: str, temperature: float | None, profile: Profile) -> float | None:
    """The MPPI temperature an arm plans with: the study's T* (chosen on the baseline), except
    for DINO-WM, which keeps its own 0.5 on the mean cost, as SCALE does (Section 5), i.e.
    0.5 D on the summed cost of its D-dim latent (``wm.dinowm.mppi_temperature``)."""
    if temperature is None or arm_name(arm) != DINOWM:
        return temperature
    return mppi_temperature(latent_dim(profile))


def swm_temperature(profile: Profile) -> float:
    """swm's shipped MPPI temperature for the profile's ``D``-dim summed cost: ``0.5 D / 192``
    (:data:`~jepa_geometry.planning.solver.MPPI_SWM`)."""
    return SWM_MPPI_TEMPERATURE * profile.model.embed_dim / MPPI_T_STAR_DIM


def ceiling_temperature(task: str, temperature: float | None, profile: Profile) -> float | None:
    """An MPPI temperature set for the learned arms' ``D``-dim latent cost (the study's ``T*``
    or swm's), for the ceiling's cost, summed over the ``q_dim`` coordinates of standardized
    q: rescaled by ``q_dim / D``, as ``solver.mppi_temperature`` rescales ``T*`` by
    ``D / 192``."""
    if temperature is None:
        return None
    return temperature * len(q_names(task)) / profile.model.embed_dim


CEILING_BUDGET_S = 15 * 60
"""The ceiling's cost per task, at most, in seconds of one core (upper bound of
:func:`ceiling_seconds_per_pair` times its pairs), at the laptop profile."""
CEILING_MIN_PAIRS = 20
"""The fewest pairs the ceiling plans per cell, whatever the cost (Cube's simulator is about
ten times slower than the others'): below this its Wilson interval is wider than ±20 points."""


def ceiling_cells(spec: StudySpec) -> list[Cell]:
    """The cells the ceiling plans: CEM at the five tiers under the study's main protocol (the
    headline solver of both papers; every cell of the grid would cost about four times as
    much, :func:`ceiling_seconds_per_pair`)."""
    return [Cell(spec.main_protocol, "cem", t) for t in TIERS]


def ceiling_seconds_per_pair(spec: StudySpec, profile: Profile) -> float:
    """Upper bound of the ceiling's one-core seconds per pair over :func:`ceiling_cells`:
    ``Σ_cells plans per pair × samples × iterations × t_rollout``, with the simulator's measured
    seconds per rollout ``t_rollout`` (the task's ``ceiling_rollout_ms``; a pair that succeeds
    early plans less)."""
    tiers = budget_tiers(profile)
    rollouts = sum(
        make_protocol(profile, c.protocol).plans * tiers[c.tier][0] * tiers[c.tier][1]
        for c in ceiling_cells(spec)
    )
    return rollouts * task_class(spec.task).ceiling_rollout_ms / 1e3


def ceiling_rule_pairs(spec: StudySpec, profile: Profile) -> int:
    """The ceiling's pairs per cell by the rule fixed before it ran: the most pairs whose upper
    bound of cost stays within :data:`CEILING_BUDGET_S`, but at least :data:`CEILING_MIN_PAIRS`
    and at most the profile's pairs. Study files give this number at the laptop profile
    (``tests/study/test_spec.py`` checks it)."""
    fit = int(CEILING_BUDGET_S // ceiling_seconds_per_pair(spec, profile))
    return min(max(fit, CEILING_MIN_PAIRS), profile.eval.episodes)


def ceiling_pairs(spec: StudySpec, profile: Profile) -> int | None:
    """The ceiling's pairs per cell under ``profile``: ``spec.ceiling``, or every pair when the
    profile draws fewer; None when the study has no ceiling."""
    return None if spec.ceiling is None else min(spec.ceiling, profile.eval.episodes)


def planning_cell(
    task: str,
    arm: str,
    seed: int,
    profile: Profile,
    cell: Cell,
    t_star: float | None,
    subset: int | None = None,
) -> PlanningCell:
    """The :class:`PlanningCell` of study cell ``cell`` for ``arm`` (the ceiling included, with
    its ``subset`` of pairs) and training ``seed``: its label's solver (``STUDY_SOLVERS``) at the
    temperature the label names, the study's ``t_star`` (which must then be known) or swm's;
    DINO-WM keeps its own (:func:`arm_temperature`), the
    ceiling rescales to q (:func:`ceiling_temperature`)."""
    if cell.solver not in STUDY_SOLVERS:
        raise StudyError(f"unknown solver {cell.solver!r}; valid: {', '.join(STUDY_SOLVERS)}")
    entry = STUDY_SOLVERS[cell.solver]
    base = {"t_star": t_star, "swm": swm_temperature(profile)}.get(entry.temperature)
    if entry.temperature == "t_star" and t_star is None:
        raise StudyError(f"cell {cell} needs the study's MPPI temperature T*, got None")
    if arm == CEILING:
        temperature = ceiling_temperature(task, base, profile)
    else:
        temperature = arm_temperature(arm, base, profile)
    return PlanningCell(
        task,
        arm,
        seed,
        profile,
        solver=entry.solver,
        tier=cell.tier,
        protocol=cell.protocol,
        temperature=temperature,
        subset=subset,
    )


def check_study_arms(arms: Sequence[str]) -> list[str]:
    """Canonical arm names (:func:`~jepa_geometry.wm.arms.check_arms`); the baseline must be
    among them, since every difference is against it."""
    try:
        names = check_arms(arms)
    except ValueError as e:
        raise StudyError(str(e)) from e
    if BASELINE not in names:
        raise StudyError(f"the arms {names} must include the baseline {BASELINE!r}")
    return names


def with_eval_seed(profile: Profile, seed: int) -> Profile:
    """``profile`` drawing its episode sets with evaluation seed ``seed`` (separate pairs)."""
    return dataclasses.replace(profile, seeds=dataclasses.replace(profile.seeds, eval=seed))


# --------------------------------------------------------------------------------------
# Training every arm
# --------------------------------------------------------------------------------------


def train_arms(
    task: str,
    arms: Sequence[str],
    profile: Profile,
    progress: bool = True,
    models: Sequence[tuple[str, int]] | None = None,
) -> pd.DataFrame:
    """Train (or find cached) every arm x training seed; one row per model.

    ``models``: the (arm, training seed) models, in order, when they are not every arm with
    every training seed (a study's :meth:`~jepa_geometry.study.spec.StudySpec.models`, with
    its headline seeds). Columns: arm, train_seed, train_seconds (wall time of the run that
    built it), token_seconds (DINO-WM's frozen-token pass before it, 0 for the other arms),
    steps_per_s, pred (final prediction loss), parameters.
    """

    rows = []
    names = check_study_arms(arms)
    jobs = [(m, s) for s in profile.seeds.train for m in names] if models is None else models
    for m, s in progress_bar(list(jobs), desc=f"train {task}", progress=progress):
        summ = train_world_model(task, m, s, profile, progress=False).manifest()["summary"]
        rows.append(
            {
                "arm": m,
                "train_seed": s,
                "train_seconds": summ["train_wall_s"],
                # DINO-WM's one pass encoding every training frame (none for the other arms)
                "token_seconds": summ.get("tokens_wall_s", 0.0),
                "steps_per_s": summ["steps_per_s"],
                "pred": summ["final"]["pred"],
                "parameters": summ["parameters"],
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# MPPI temperature, chosen off the evaluation pairs
# --------------------------------------------------------------------------------------


def mppi_sweep_temperatures(profile: Profile) -> list[float]:
    """SCALE's sweep {2, 8, ..., 512} (D = 192) scaled to ``profile.model.embed_dim``: the cost
    is a sum over D coordinates, so its spread, and the temperature, scale with D."""
    return [t * profile.model.embed_dim / MPPI_T_STAR_DIM for t in MPPI_SWEEP_192]


def mppi_sweep_jobs(
    task: str,
    profile: Profile,
    protocol: str = "goal100_budget150",
    budgets: Sequence[str] = ("T1", "T3"),
    episodes: int | None = None,
    temperatures: Sequence[float] | None = None,
) -> list[PlanningCell]:
    """The planning cells of the MPPI sweep (one per temperature x budget), in the order
    :func:`select_mppi_temperature` tabulates them; ``build_study`` plans the same cells in
    parallel."""
    sweep = with_eval_seed(profile, profile.seeds.eval + SWEEP_SEED_OFFSET)
    temps = list(temperatures or mppi_sweep_temperatures(profile))
    n = max(profile.eval.episodes // 2, 1) if episodes is None else episodes
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise StudyError(f"episodes must be an integer >= 1 (or None), got {n!r}")
    tiers = budget_tiers(profile)
    bad = [b for b in budgets if b not in tiers]
    if bad:
        raise StudyError(f"unknown budget(s) {bad}; valid: {', '.join(tiers)}")
    return [
        PlanningCell(
            task,
            BASELINE,
            profile.seeds.train[0],
            sweep,
            solver="mppi",
            tier=b,
            protocol=protocol,
            temperature=float(t),
            n_pairs=n,
        )
        for t in temps
        for b in budgets
    ]


def select_mppi_temperature(
    task: str,
    profile: Profile,
    *,
    protocol: str = "goal100_budget150",
    budgets: Sequence[str] = ("T1", "T3"),
    episodes: int | None = None,
    temperatures: Sequence[float] | None = None,
    progress: bool = True,
) -> tuple[float, pd.DataFrame]:
    """SCALE's pre-registered MPPI temperature fix, on the baseline arm and separate pairs.

    The baseline (first training seed) plans an episode set drawn with seed
    ``profile.seeds.eval + 1`` (never the evaluation set) at each temperature and tier;
    ``T*`` maximises the success summed over ``budgets`` (ties: the lower temperature).
    Returns ``(T*, table)`` with one row per (temperature, budget): success, pairs, and the
    wall time of the evaluation that built it.
    """
    rows = []
    jobs = mppi_sweep_jobs(task, profile, protocol, budgets, episodes, temperatures)
    for job in progress_bar(jobs, desc="MPPI temperature sweep", progress=progress):
        res = job.evaluate(progress=False)
        succ = res.episodes["success"].to_numpy()
        rows.append(
            {
                "temperature": job.temperature,
                "budget": job.tier,
                "success": float(succ.mean()),
                "n": len(succ),
                "eval_seconds": res.eval_seconds,
            }
        )
    table = pd.DataFrame(rows)
    total = table.groupby("temperature", sort=True)["success"].sum()
    best = float(total.index[int(np.argmax(total.to_numpy()))])  # argmax: first (lowest) max
    return best, table


# --------------------------------------------------------------------------------------
# Planning every cell
# --------------------------------------------------------------------------------------


def evaluate_arms(
    task: str,
    arms: Sequence[str],
    profile: Profile,
    cells: Sequence[Cell],
    *,
    temperature: float,
    seeds: Sequence[int] | None = None,
    progress: bool = True,
    floor: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Plan every (arm, training seed, cell); cached per cell, so an interrupted grid resumes.

    Returns ``(episodes, cells)``: the tidy per-episode table of all arms plus the random floor
    (``arm == "random"``, once per protocol, repeated for every solver cell so it lines up
    with the arms; left out with ``floor=False``, where another call's table has it for the
    same cells), and one row per evaluated cell with its wall time (``eval_seconds``).
    """
    names = check_study_arms(arms)
    seeds = list(profile.seeds.train if seeds is None else seeds)
    tables, timing, floors = [], [], {}
    jobs = [(s, m, c) for s in seeds for m in names for c in cells]
    for s, m, c in progress_bar(jobs, desc=f"plan {task}", progress=progress):
        res = planning_cell(task, m, s, profile, c, temperature).evaluate(progress=False)
        res.episodes["solver"] = c.solver  # the grid's label (MPPI at T* or at swm's T)
        tables.append(res.episodes)
        floors.setdefault(c, res.random)
        timing.append(
            {
                "arm": m,
                "train_seed": s,
                "protocol": c.protocol,
                "solver": c.solver,
                "budget": c.tier,
                "eval_seconds": res.eval_seconds,
                "plans": int(res.episodes["plans"].sum()),
            }
        )
    for c, rnd in floors.items() if floor else ():
        rnd = rnd.copy()
        rnd.insert(0, "train_seed", -1)
        rnd.insert(0, "arm", "random")
        rnd.insert(0, "task", task)
        rnd["solver"], rnd["budget"], rnd["protocol"] = c.solver, c.tier, c.protocol
        tables.append(rnd)
    return pd.concat(tables, ignore_index=True), pd.DataFrame(timing)


def evaluate_ceiling_cells(
    task: str,
    profile: Profile,
    cells: Sequence[Cell],
    *,
    temperature: float | None,
    subset: int,
    progress: bool = True,
) -> pd.DataFrame:
    """Plan every cell with the simulator as the world model (the ceiling) on a seeded
    ``subset`` of that many of its pairs (all of them when the profile draws fewer); cached per
    cell and chunk. One table with the arms' columns: ``arm == "ceiling"``, and ``"random"`` for the
    random policy on the same pairs (its floor, shared with the arms' cells), both with
    ``train_seed == -1`` (neither has a training seed); its episodes are those of the arms'
    cells, so a page can pair each row with the arms' rows of the same ``episode``."""
    n = profile.eval.episodes
    tables = []
    for c in progress_bar(list(cells), desc=f"{task} {CEILING}", progress=progress):
        cell = planning_cell(task, CEILING, -1, profile, c, temperature, min(subset, n))
        res = cell.evaluate(progress=False)
        rnd = res.random.copy()
        rnd.insert(0, "train_seed", -1)
        rnd.insert(0, "arm", "random")
        rnd.insert(0, "task", task)
        for table in (res.episodes, rnd):
            table["solver"], table["budget"], table["protocol"] = c.solver, c.tier, c.protocol
            tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------

CELL_KEYS = ["protocol", "solver", "budget"]


def success_table(episodes: pd.DataFrame, hard: bool = False) -> pd.DataFrame:
    """Success per protocol x solver x budget x arm with 95 % intervals.

    One training seed: Wilson; several: the two-stage bootstrap over seeds and pairs
    (:func:`jepa_geometry.stats.rate_table`). ``hard=True`` keeps the hard subset only.
    """
    tab = episodes[episodes["hard"]] if hard else episodes
    return stats.rate_table(tab, [*CELL_KEYS, "arm"])


def paired_table(
    episodes: pd.DataFrame, baseline: str = BASELINE, hard: bool = False
) -> pd.DataFrame:
    """Each arm minus the baseline, per cell, on the same (training seed, pair) units.

    ``diff`` is the success-rate difference; ``low``/``high`` its paired bootstrap 95 % interval
    (seeds and pairs resampled); ``p_mcnemar`` the exact McNemar test on the discordant
    (seed, pair) units; ``a_only``/``b_only`` those counts (arm only / baseline only). Seeds are
    paired by number: arm seed s against baseline seed s, the same pairs and solver noise.
    """
    tab = episodes[(episodes["arm"] != "random") & (episodes["hard"] if hard else True)]
    rows = []
    for keys, grp in tab.groupby(CELL_KEYS, sort=True):
        base = grp[grp["arm"] == baseline]
        if base.empty:
            continue
        for m, arm in grp[grp["arm"] != baseline].groupby("arm", sort=False):
            seeds = sorted(set(arm["train_seed"]) & set(base["train_seed"]))
            a = stats.success_matrix(arm[arm["train_seed"].isin(seeds)])
            b = stats.success_matrix(base[base["train_seed"].isin(seeds)])
            d = stats.paired_difference(
                a if len(seeds) > 1 else a[0], b if len(seeds) > 1 else b[0]
            )
            rows.append(
                {
                    **dict(zip(CELL_KEYS, keys, strict=True)),
                    "arm": m,
                    "seeds": len(seeds),
                    **dataclasses.asdict(d),
                }
            )
    return pd.DataFrame(rows)


def floor_check(
    episodes: pd.DataFrame,
    protocol: str,
    solver: str = "cem",
    tier: str = "T1",
    baseline: str = BASELINE,
) -> stats.PairedDifference:
    """The baseline minus the random policy in one cell, paired on the same pairs: is the
    planner working at all?

    The floor is one random-policy run per pair, shared by every training seed, so each
    (seed, pair) outcome of the baseline is paired with that pair's floor outcome; the
    bootstrap resamples seeds and pairs (:func:`jepa_geometry.stats.paired_difference`).
    """
    cell = episodes[
        (episodes["protocol"] == protocol)
        & (episodes["solver"] == solver)
        & (episodes["budget"] == tier)  # the tables' column keeps its first name
    ]
    base, rnd = cell[cell["arm"] == baseline], cell[cell["arm"] == "random"]
    if base.empty or rnd.empty:
        raise StudyError(f"no {baseline} or random-policy episodes in {protocol}/{solver}/{tier}")
    a = stats.success_matrix(base)
    b = np.tile(stats.success_matrix(rnd), (len(a), 1))
    if a.shape != b.shape:
        raise StudyError(f"{baseline} and the random policy planned different pairs")
    return stats.paired_difference(a if len(a) > 1 else a[0], b if len(a) > 1 else b[0])


EPISODE_COLUMNS: tuple[str, ...] = (
    *CELL_KEYS,
    "arm",
    "train_seed",
    "episode",
    "success",
    "hard",
    "solved_at_start",
)
"""The per-episode columns every consumer of a planning grid reads (an empty grid has them)."""


@dataclass(frozen=True)
class StudyPlans:
    """Everything the grid produced: the chosen MPPI temperature and its sweep, the tidy
    per-episode table (arms and random floor) and the per-cell timing table."""

    temperature: float
    sweep: pd.DataFrame
    episodes: pd.DataFrame
    timing: pd.DataFrame
    ceiling: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    """The ceiling's per-episode table and the random policy's on its pairs
    (:func:`evaluate_ceiling_cells`) when the study lists it (``StudySpec.ceiling``); empty
    otherwise. Kept apart from ``episodes``, whose arms are paired by training seed against
    the baseline over every pair."""


def cell_groups(spec: StudySpec, profile: Profile) -> list[tuple[list[Cell], list[int], list[str]]]:
    """The study's cells, each group with the training seeds and the arms it is planned with.

    Under the main protocol CEM plans with every training seed at every tier, iCEM and MPPI
    with ``spec.solver_seeds``; the other protocols plan every cell with
    ``spec.secondary_seeds``; every arm plans each group. Last, the headline seeds
    (:meth:`~jepa_geometry.study.spec.StudySpec.added_seeds`) plan CEM at every tier of the
    main protocol for the headline arms only: the cells the headline success claims read
    (SCALE's mean over T1-T5, AnisoWM's T1), and no other.
    """
    arms = list(spec.arms)
    first = plan_cells(spec.protocols[:1], spec.solvers)
    cem = [c for c in first if c.solver == "cem"]
    parts = [(cem, list(profile.seeds.train), arms)]
    parts.append(
        ([c for c in first if c.solver != "cem"], spec.seeds("solver_seeds", profile), arms)
    )
    if len(spec.protocols) > 1:
        later = plan_cells(spec.protocols[1:], spec.solvers)
        parts.append((later, spec.seeds("secondary_seeds", profile), arms))
    added = spec.added_seeds(profile)
    if added:
        parts.append((cem, added, list(spec.headline_seeds.arms)))
    return parts


def plan_study(spec: StudySpec, profile: Profile, progress: bool = True) -> StudyPlans:
    """The whole planning study of ``spec``: MPPI temperature on its main protocol, then every
    cell.

    Under the main protocol CEM plans with every training seed at every tier, iCEM and MPPI
    with ``spec.solver_seeds``; the other protocols (e.g. SCALE's goal +25 / budget 50, which
    saturates on Two-Room) plan every cell with ``spec.secondary_seeds``. Both bound the cost
    on a laptop; SCALE's own per-solver tables use one training seed. The headline seeds add
    CEM under the main protocol for the headline arms (:func:`cell_groups`). A study that does not
    plan (``spec.plans`` false) gives empty tables and a NaN temperature. The ceiling
    (``spec.ceiling``) plans :func:`ceiling_cells` either way: on a task whose models do not
    plan, it says whether the task can be planned at the study's budget at all.
    """
    ceiling = (
        pd.DataFrame()
        if spec.ceiling is None
        else evaluate_ceiling_cells(
            spec.task,
            profile,
            ceiling_cells(spec),
            temperature=None,
            subset=ceiling_pairs(spec, profile),
            progress=progress,
        )
    )
    if not spec.plans:  # the task's gate failed at every rung: only the ceiling is planned
        return StudyPlans(
            temperature=float("nan"),
            sweep=pd.DataFrame(),
            episodes=pd.DataFrame(columns=list(EPISODE_COLUMNS)),
            timing=pd.DataFrame(),
            ceiling=ceiling,
        )
    jobs = cell_groups(spec, profile)
    temperature, sweep = select_mppi_temperature(
        spec.task, profile, protocol=spec.main_protocol, progress=progress
    )
    parts, floored = [], set()  # a cell's random floor once, though two parts plan it
    for cells, seeds, arms in jobs:
        parts.append(
            evaluate_arms(
                spec.task,
                arms,
                profile,
                cells,
                temperature=temperature,
                seeds=seeds,
                progress=progress,
                floor=not floored.issuperset(cells),
            )
        )
        floored.update(cells)
    return StudyPlans(
        temperature=temperature,
        sweep=sweep,
        episodes=pd.concat([p[0] for p in parts], ignore_index=True),
        timing=pd.concat([p[1] for p in parts], ignore_index=True),
        ceiling=ceiling,
    )
