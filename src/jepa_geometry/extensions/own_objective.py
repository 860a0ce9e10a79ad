"""Chapter 10: a loss term of the reader's own, trained beside LeWM and SCALE on one task and
judged against LeWM by the book's verdict rule, with both papers' measures side by side.

The reader's arm is ``lewm+<file>`` (:mod:`jepa_geometry.wm.user_objective`): LeWM's objective
plus the file's term. Its study is the task's own study file with three arms, ``lewm``,
``scale`` and the new one (:func:`own_spec`), so the models of ``lewm`` and ``scale`` are the
task study's (the same keys: a cache holding that study trains only the new arm). Its units
(:func:`own_units`): the dataset, every (arm, training seed) model, the cells of the study's
main protocol at every budget tier with every training seed for each solver asked
(:data:`PLANNERS`; CEM alone by default: the cells of SCALE's per-solver claim, on the same
pairs for every arm), and every model's geometry; the task study's other protocols are left
out, to keep the page's cost small. A page may name several tasks (:func:`own_studies`): each
is its own study, built and judged as one.

The claims (:func:`own_claim_specs`) ask of the new arm what the book asks of SCALE and ΛReg
in their cross-paper lens: does it plan better than a baseline with each solver planned, and
does it move SCALE's measures (top-2 R², distance-ratio dispersion, the τ channels) and
AnisoWM's (cost-ordering agreement, landscape ρ)? They are asked against each arm it is
trained beside (:data:`BESIDE`): LeWM, whose objective it extends, and SCALE, the papers'
shaping of the same geometry. Each is directional with the smallest effect that matters of
its measure, judged by the verdict rule (:mod:`jepa_geometry.verdict.rule`) in one family per
baseline across the page's tasks and solvers (:func:`own_verdict`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from jepa_geometry.cluster import (
    Unit,
    collect_unit,
    cost_line,
    measure_unit,
    plan_units,
    train_unit,
    unit_table,
)
from jepa_geometry.envs import SIMULATOR_PRELOAD, task_title
from jepa_geometry.jobs import log_line, run_parallel
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.planning.solver import SOLVER_NAMES, STUDY_SOLVERS
from jepa_geometry.profiles import Profile
from jepa_geometry.study.cells import Cell, plan_cells, planning_cell
from jepa_geometry.study.job_calls import run_call
from jepa_geometry.study.spec import BASELINE, SpecError, StudySpec, load_study
from jepa_geometry.verdict.claims import (
    LENS,
    PER_MODEL,
    PER_UNIT,
    SUCCESS,
    ClaimSpec,
    Measurements,
    evaluate,
)
from jepa_geometry.verdict.rule import (
    Claim,
    Evidence,
    directed_effect,
    directed_minimum,
    family_holm,
    judged,
    seeds_to_decide,
    verdict_table,
    what_would_flip,
)
from jepa_geometry.wm.arms import arm_label, arm_name, objective_file
from jepa_geometry.wm.objective import USER_TERM
from jepa_geometry.wm.training import training_log

BESIDE: tuple[str, ...] = (BASELINE, "scale")
"""The arms the reader's arm is trained beside: LeWM (every claim's baseline) and SCALE (a
shaping of the geometry the papers found to help, for scale)."""
BASELINE_NAMES: dict[str, str] = {BASELINE: "LeWM", "scale": "SCALE"}
"""How the claims name the arms of :data:`BESIDE`."""
YOURS = "yours"
"""The ``paper`` of the reader's claims, followed by the baseline (:func:`own_paper`)."""
PLANNERS: tuple[str, ...] = tuple(
    label for label, s in STUDY_SOLVERS.items() if s.temperature is None and s.protocol is None
)
"""The solver labels the page plans (CEM, iCEM): those planned at no temperature under every
protocol. MPPI plans at the study's T*, chosen on LeWM by a sweep of its own that the page does
not run, and MPPI at swm's temperature only under SCALE's protocol."""
DEFAULT_SOLVERS: tuple[str, ...] = ("cem",)
"""The page's solvers by default: CEM, the solver of SCALE's per-solver claim, so the book's own
page plans no more than it did."""
KINDS: tuple[str, ...] = ("collect", "train", "plan", "measure")
"""The order in which :func:`build_own` builds the unit kinds (each needs the ones before)."""
WHERE = "chapter 10 (your own objective), section '{section}'"


def own_arm(objective: str) -> str:
    """The reader's arm for an objective file: ``lewm+<file>``, canonically spelled."""
    if not isinstance(objective, str) or not objective.endswith(".py"):
        raise SpecError(f"objective must be the path of a Python file (.py), got {objective!r}")
    return arm_name(f"{BASELINE}+{objective}")


def own_paper(baseline: str) -> str:
    """The ``paper`` of the reader's claims against ``baseline`` (``yours vs lewm``): each
    baseline is its own family of claims (:func:`~jepa_geometry.verdict.rule.family_of`), so
    adding SCALE's comparison spends none of the Holm correction of LeWM's."""
    return f"{YOURS} vs {baseline}"


def own_tasks(task: str | Sequence[str]) -> list[str]:
    """The page's tasks: one task, or a non-empty list of distinct ones (each checked by
    :func:`own_spec`)."""
    tasks = [task] if isinstance(task, str) else list(task)
    if not tasks or not all(isinstance(t, str) for t in tasks) or len(set(tasks)) != len(tasks):
        raise SpecError(f"task must be a task or a non-empty list of distinct tasks, got {task!r}")
    return tasks


def check_solvers(solvers: Sequence[str]) -> tuple[str, ...]:
    """``solvers`` as a tuple of distinct labels of :data:`PLANNERS`, or one line naming them."""
    good = (
        isinstance(solvers, list | tuple)
        and len(solvers) > 0
        and all(s in PLANNERS for s in solvers)
        and len(set(solvers)) == len(solvers)
    )
    if not good:
        raise SpecError(
            f"solvers must be a non-empty list of distinct solvers of {', '.join(PLANNERS)} "
            f"(MPPI needs the study's T*, which the page does not choose), got {solvers!r}"
        )
    return tuple(solvers)


def own_spec(task: str, objective: str) -> StudySpec:
    """The task's study with the arms :data:`BESIDE` and the reader's (:func:`own_arm`), each
    with the profile's training seeds: the reader's arm is compared on the seeds every arm
    has, so the study's headline seeds (which it does not train) are left out."""
    return replace(load_study(task), arms=(*BESIDE, own_arm(objective)), headline_seeds=None)


def user_arm(spec: StudySpec) -> str:
    """The arm of ``spec`` that has an objective file (the reader's)."""
    arms = [a for a in spec.arms if objective_file(a) is not None]
    if len(arms) != 1:
        raise SpecError(f"study {spec.task!r}: one arm with an objective file, got {arms}")
    return arms[0]


def term_name(arm: str) -> str:
    """The reader's term by its file's stem (``variance_match``)."""
    return Path(objective_file(arm)).stem


def with_seeds(profile: Profile, seeds: Sequence[int] | None) -> Profile:
    """``profile`` training the seeds ``seeds`` (None: the profile's own). A bare integer is
    refused, not read as one seed: ``seeds=3`` could as well mean three seeds."""
    if seeds is None:
        return profile
    good = (
        isinstance(seeds, list | tuple)
        and len(seeds) > 0
        and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
        and len(set(seeds)) == len(seeds)
    )
    if not good:
        raise SpecError(
            f"seeds must be null or distinct integers >= 0 in a list, such as [0] or [0, 1, 2], "
            f"got {seeds!r}"
        )
    return replace(profile, seeds=replace(profile.seeds, train=tuple(seeds)))


def own_studies(
    task: str | Sequence[str], objective: str, base: Profile, seeds: Sequence[int] | None
) -> list[tuple[StudySpec, Profile]]:
    """Per task of the page (:func:`own_tasks`), its study (:func:`own_spec`) and the profile
    it is built with: ``base`` with the study's rung for it, training ``seeds``
    (:func:`with_seeds`)."""
    specs = [own_spec(t, objective) for t in own_tasks(task)]
    return [(spec, with_seeds(spec.profile(base), seeds)) for spec in specs]


def own_cells(spec: StudySpec, solvers: Sequence[str] = DEFAULT_SOLVERS) -> list[Cell]:
    """Each of ``solvers`` (:data:`PLANNERS`) at every budget tier under the study's main
    protocol (none when it does not plan)."""
    chosen = check_solvers(solvers)
    return [c for c in plan_cells(spec.protocols[:1]) if c.solver in chosen] if spec.plans else []


def own_units(
    spec: StudySpec, profile: Profile, solvers: Sequence[str] = DEFAULT_SOLVERS
) -> list[Unit]:
    """The jobs of the page (:mod:`jepa_geometry.cluster`'s units, with their cost
    estimates): the dataset, every (arm, seed) model, each model's cells of ``solvers``
    (:func:`own_cells`) and its geometry."""
    task, seeds = spec.task, profile.seeds.train
    models = [(a, s) for s in seeds for a in spec.arms]
    units = [collect_unit(task, profile)]
    units += [train_unit(task, a, s, profile) for a, s in models]
    for a, s in models:
        cells = [planning_cell(task, a, s, profile, c, None) for c in own_cells(spec, solvers)]
        units += plan_units("plan", task, cells) if cells else []
    units += [measure_unit(task, a, s, profile) for a, s in models]
    return units


def _per_task(texts: Sequence[tuple[str, str]]) -> str:
    """One task's text as it is; several, each after its task's title, apart by semicolons."""
    if len(texts) == 1:
        return texts[0][1]
    return "; ".join(f"{task_title(t)}: {text}" for t, text in texts)


def cost_sentence(
    studies: Sequence[tuple[StudySpec, Profile]], solvers: Sequence[str] = DEFAULT_SOLVERS
) -> str:
    """What the page's units cost at each study's profile whatever the cache holds (the grid's
    estimates, ``profile.cluster``), and the new arm's share, per task of ``studies``
    (:func:`own_studies`): the page states it first, and it reads the same in every build of
    the page and in a render from its evidence."""
    texts = []
    for spec, profile in studies:
        units = own_units(spec, profile, solvers)
        arm = user_arm(spec)
        new = [u for u in units if arm in u.label]
        texts.append(
            (
                spec.task,
                f"its {len(units)} units (the dataset, {len(spec.arms)} arms × "
                f"{len(profile.seeds.train)} training seed(s) trained, planned and measured) "
                f"take about {sum(u.hours for u in units):.2f} h of work at profile "
                f"{profile.name}, {sum(u.hours for u in new):.2f} h of it the {len(new)} units "
                f"of the new arm {term_name(arm)}; lewm's and scale's are the {spec.task} "
                "study's own (the same keys), so with that study in the cache only the new "
                "arm's are built",
            )
        )
    return _per_task(texts)


def cost_statement(
    studies: Sequence[tuple[StudySpec, Profile]],
    workers: int,
    solvers: Sequence[str] = DEFAULT_SOLVERS,
) -> str:
    """What the page still has to build, stated before it builds anything: its units not in
    the cache (any command's build counts: ``train``, ``study``, ``grid`` and the page write
    the same keys to the same cache), in core-hours and in wall time with ``workers`` jobs at
    once (:func:`~jepa_geometry.cluster.cost_line`, as ``study`` says it), and how many are
    the new arm's; or that the cache holds every unit. Several tasks: every task's units in
    one count, the new arm's counted over them all."""
    table = pd.concat(
        [unit_table(own_units(spec, profile, solvers), profile) for spec, profile in studies],
        ignore_index=True,
    )
    arm = user_arm(studies[0][0])
    text = cost_line(table, workers)
    new = int((~table["cached"] & table["unit"].str.contains(arm, regex=False)).sum())
    if not new and table["cached"].all():
        return text
    tasks = ", ".join(spec.task for spec, _ in studies)
    whose, that = ("study's", "that study") if len(studies) == 1 else ("studies'", "them")
    return (
        f"{text} ({new} of them the new arm {arm_label(arm)}'s); lewm's and scale's are the "
        f"{tasks} {whose} own (the same keys), so a cache holding {that} builds only "
        "the new arm's"
    )


def build_own(
    spec: StudySpec,
    profile: Profile,
    workers: int,
    solvers: Sequence[str] = DEFAULT_SOLVERS,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
) -> None:
    """Build every unit of :func:`own_units` not in the cache, ``workers`` jobs at a time, kind
    by kind (:data:`KINDS`); every job is the grid's own cached build, so the
    numbers are those any other route to the same keys produces. The dataset is read only
    when a model, cell or measurement is missing. ``say`` (a page's log, ``page_log``) gets
    one line per built unit and per kind, as :func:`~jepa_geometry.study.build.build_study`
    says them."""
    units = own_units(spec, profile, solvers)
    todo = {k: [(u.call, u.args) for u in units if u.kind == k and not u.cached] for k in KINDS}
    if not any(todo[k] for k in KINDS[1:]):  # the frames only for work that needs them (an
        todo[KINDS[0]] = []  # evidence tree has none, and every model, cell and measurement)
    for kind in KINDS:
        t0 = time.perf_counter()
        run_parallel(
            run_call,
            todo[kind],
            workers,
            f"{kind} {spec.task}",
            progress,
            preload=SIMULATOR_PRELOAD,
            say=say,
        )
        if say is not None and todo[kind]:
            say(log_line(f"{spec.task}, your objective: {kind} done", time.perf_counter() - t0))


def term_log(task: str, arm: str, profile: Profile) -> pd.DataFrame:
    """What the reader's term logged at the end of each model's training: per training seed,
    the last logged row's prediction loss, total loss, the term's value and its diagnostics
    (``objective.<name>``), each a mean over that row's ``log_every`` steps."""
    rows = []
    for s in profile.seeds.train:
        last = training_log(task, arm, s, profile)[-1]
        keep = ["step", "pred", "loss"] + [k for k in last if k.split(".")[0] == USER_TERM]
        rows.append({"train_seed": s, **{k: last[k] for k in keep}})
    return pd.DataFrame(rows).set_index("train_seed").rename_axis("train seed")  # as shown


def own_claim_specs(
    arm: str, baseline: str = BASELINE, solvers: Sequence[str] = DEFAULT_SOLVERS
) -> tuple[ClaimSpec, ...]:
    """The reader's claims against ``baseline`` (an arm of :data:`BESIDE`): ``arm`` plans better
    with each of ``solvers`` (the main protocol, mean over tiers), and it moves SCALE's
    measures and AnisoWM's the way each paper counts as better. Each statement says the
    direction it claims ("lower dispersion than LeWM"), as the table reads its numbers
    (:func:`~jepa_geometry.verdict.rule.directed_effect`). The arm is named as its models'
    artifact names and the tables name it (:func:`~jepa_geometry.wm.arms.arm_label`: the
    file's stem, ``scale+<stem>`` for SCALE plus the term)."""
    name, b = arm_label(arm), BASELINE_NAMES.get(baseline, baseline)
    probes = WHERE.format(section="Both papers' measures")
    plans = WHERE.format(section="Planning beside LeWM and SCALE")

    def per_model(statement: str, column: str, direction: int = 1) -> ClaimSpec:
        return ClaimSpec(
            LENS,
            statement,
            PER_MODEL,
            arm,
            baseline,
            column=column,
            measure=column,
            direction=direction,
            source="probes",
            where=probes,
        )

    def per_unit(statement: str, column: str, source: str, unit: str) -> ClaimSpec:
        return ClaimSpec(
            LENS,
            statement,
            PER_UNIT,
            arm,
            baseline,
            column=column,
            measure=column,
            source=source,
            unit=unit,
            where=probes,
        )

    success = tuple(
        ClaimSpec(
            LENS,
            f"{name} plans better than {b} ({SOLVER_NAMES[s]})",
            SUCCESS,
            arm,
            baseline,
            solver=s,
            where=plans,
        )
        for s in solvers
    )
    return (
        *success,
        per_model(f"{name} puts more of q in the top-2 PCs than {b} (SCALE's R²)", "r2_top2"),
        per_model(
            f"{name} has a lower distance-ratio dispersion P90/P10 than {b} (SCALE's)",
            "ratio_p90_over_p10",
            -1,
        ),
        per_unit(
            f"{name} has a higher SCALE τ geom channel than {b}",
            "tau_geom",
            "ranking:gaussian",
            "start",
        ),
        per_unit(
            f"{name} has a higher SCALE τ pred channel than {b}",
            "tau_pred",
            "ranking:gaussian",
            "start",
        ),
        per_unit(
            f"{name} orders outcomes by J_enc better than {b} (AnisoWM's agreement)",
            "agree_enc",
            "ranking:dataset",
            "start",
        ),
        per_unit(
            f"{name} orders outcomes by J_pred better than {b} (AnisoWM's agreement)",
            "agree_pred",
            "ranking:dataset",
            "start",
        ),
        per_unit(
            f"{name}'s cost follows physical distance more closely than {b}'s (AnisoWM's ρ)",
            "spearman",
            "landscape",
            "goal_index",
        ),
    )


class Judged(NamedTuple):
    """One claim of the reader's arm with our evidence: its task, the solver a success claim
    plans with ("" for a geometry claim, which no planner touches), the claim and evidence."""

    task: str
    solver: str
    claim: Claim
    evidence: Evidence


def planned_solvers(spec: StudySpec, episodes: pd.DataFrame) -> list[str]:
    """The solver labels ``episodes`` planned under the study's main protocol, in the order of
    :data:`~jepa_geometry.planning.solver.STUDY_SOLVERS`."""
    if episodes.empty or "solver" not in episodes:
        return []
    found = set(episodes.loc[episodes["protocol"] == spec.main_protocol, "solver"])
    return [s for s in STUDY_SOLVERS if s in found]


def own_claims(spec: StudySpec, episodes: pd.DataFrame, geometry: object) -> list[Judged]:
    """:func:`own_claim_specs` of the study's reader arm against each arm of :data:`BESIDE`,
    success with each solver the planning ``episodes`` hold (:func:`planned_solvers`), with our
    evidence (those episodes, the ``geometry`` of every model), labelled :func:`own_paper` of
    the baseline; a claim whose measure was not run is left out."""
    m = Measurements(spec.task, episodes, geometry, spec.main_protocol, SCALE_PROTOCOL)
    arm, solvers = user_arm(spec), planned_solvers(spec, episodes)
    out = []
    for b in BESIDE:
        for cs in own_claim_specs(arm, b, solvers):
            found = evaluate(cs, m)
            if found is not None:
                claim = replace(found[0], paper=own_paper(b), requires=())
                out.append(
                    Judged(spec.task, cs.solver if cs.kind == SUCCESS else "", claim, found[1])
                )
    return out


GEOMETRY_SOLVER = "none (geometry)"
"""The solver cell of a geometry claim: its measures are read off the models, no planner runs."""
MOST_SEEDS = 50
"""The most training seeds :func:`own_verdict` looks for a decision at."""


def _seeds_words(claim: Claim, ev: Evidence, m: int) -> str:
    """:func:`~jepa_geometry.verdict.rule.seeds_to_decide` in words: the seeds, or why none."""
    n = seeds_to_decide(claim, ev, m, MOST_SEEDS)
    if n is not None:
        return str(n)
    if judged(ev):
        return f"more than {MOST_SEEDS} (the effect sits at the minimum)"
    return "not estimable: no spread between models measured"


def own_verdict(judged_claims: Sequence[Judged]) -> pd.DataFrame:
    """Every claim of the reader's arm on the page's tasks and solvers, judged by the verdict
    rule in one family per baseline (:func:`own_paper`, Holm across tasks and solvers), one row
    each: task, solver, the baseline it is judged against, the claim, its label and the label's
    reason, ours with its 95 % interval and the claim's minimum in the claimed direction (a
    positive effect supports the claim: :func:`~jepa_geometry.verdict.rule.directed_effect`),
    what would flip the label (:func:`~jepa_geometry.verdict.rule.what_would_flip`), the
    training seeds that would decide it, the Holm-adjusted p and the units the interval
    resamples. No paper's column: the claims are the reader's, so no paper reports them."""
    items = [(j.claim, j.evidence) for j in judged_claims]
    table = verdict_table(items)
    p_holm, size = family_holm(items, [True] * len(items))
    rows = []
    for j, row, p, m in zip(judged_claims, table.itertuples(), p_holm, size, strict=True):
        c, ev, label = j.claim, j.evidence, row.verdict
        rows.append(
            {
                "task": task_title(j.task),
                "solver": SOLVER_NAMES[j.solver] if j.solver else GEOMETRY_SOLVER,
                "against": BASELINE_NAMES.get(c.b, c.b),
                "claim": c.statement,
                "verdict": label,
                "why this label": row.reason,
                "ours [95% CI]": directed_effect(c, ev),
                "minimum effect": directed_minimum(c),
                "what would flip it": what_would_flip(c, ev, float(p), int(m), label),
                "seeds to decide": _seeds_words(c, ev, int(m)),
                "p (Holm)": float(p),
                "units": ev.units,
            }
        )
    return pd.DataFrame(rows)


__all__ = [
    "BASELINE_NAMES",
    "BESIDE",
    "DEFAULT_SOLVERS",
    "PLANNERS",
    "YOURS",
    "Judged",
    "build_own",
    "check_solvers",
    "cost_sentence",
    "cost_statement",
    "own_arm",
    "own_cells",
    "own_claim_specs",
    "own_claims",
    "own_paper",
    "own_spec",
    "own_studies",
    "own_tasks",
    "own_units",
    "own_verdict",
    "planned_solvers",
    "term_log",
    "term_name",
    "user_arm",
    "with_seeds",
]
