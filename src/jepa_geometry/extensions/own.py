"""Chapter 10: a loss term of the reader's own, trained beside LeWM and SCALE on one task and
judged against LeWM by the book's verdict rule, with both papers' measures side by side.

The reader's arm is ``lewm+<file>`` (:mod:`jepa_geometry.wm.user_objective`): LeWM's objective
plus the file's term. Its study is the task's own study file with three arms, ``lewm``,
``scale`` and the new one (:func:`own_spec`), so the models of ``lewm`` and ``scale`` are the
task study's (the same keys: a cache holding that study trains only the new arm). Its units
(:func:`own_units`): the dataset, every (arm, training seed) model, the CEM cells of the
study's main protocol at every budget tier with every training seed (the cells of SCALE's
per-solver claim, on the same pairs for every arm), and every model's geometry; the other
solvers and protocols of the task study are left out, to keep the page's cost small.

The claims (:func:`own_claim_specs`) ask of the new arm what the book asks of SCALE and ΛReg
in their cross-paper lens: does it plan better than LeWM, and does it move SCALE's measures
(top-2 R², distance-ratio dispersion, the τ channels) and AnisoWM's (cost-ordering agreement,
landscape ρ)? Each is directional (better than LeWM) with the smallest effect that matters of
its measure, judged together by the verdict rule (:mod:`jepa_geometry.verdict.rule`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

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
from jepa_geometry.envs import SIMULATOR_PRELOAD
from jepa_geometry.jobs import log_line, run_parallel
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
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
    evaluate_all,
)
from jepa_geometry.verdict.rule import Claim, Evidence
from jepa_geometry.wm.arms import arm_label, arm_name, objective_file
from jepa_geometry.wm.objective import USER_TERM
from jepa_geometry.wm.training import training_log

BESIDE: tuple[str, ...] = (BASELINE, "scale")
"""The arms the reader's arm is trained beside: LeWM (every claim's baseline) and SCALE (a
shaping of the geometry the papers found to help, for scale)."""
YOURS = "yours"
"""The ``paper`` of the reader's claims in the verdict table."""
KINDS: tuple[str, ...] = ("collect", "train", "plan", "measure")
"""The order in which :func:`build_own` builds the unit kinds (each needs the ones before)."""
WHERE = "chapter 10 (your own objective), section '{section}'"


def own_arm(objective: str) -> str:
    """The reader's arm for an objective file: ``lewm+<file>``, canonically spelled."""
    if not isinstance(objective, str) or not objective.endswith(".py"):
        raise SpecError(f"objective must be the path of a Python file (.py), got {objective!r}")
    return arm_name(f"{BASELINE}+{objective}")


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


def own_cells(spec: StudySpec) -> list[Cell]:
    """CEM at every budget tier under the study's main protocol (none when it does not plan)."""
    return [c for c in plan_cells(spec.protocols[:1]) if c.solver == "cem"] if spec.plans else []


def own_units(spec: StudySpec, profile: Profile) -> list[Unit]:
    """The jobs of the page (:mod:`jepa_geometry.cluster`'s units, with their cost
    estimates): the dataset, every (arm, seed) model, each model's CEM cells
    (:func:`own_cells`) and its geometry."""
    task, seeds = spec.task, profile.seeds.train
    models = [(a, s) for s in seeds for a in spec.arms]
    units = [collect_unit(task, profile)]
    units += [train_unit(task, a, s, profile) for a, s in models]
    for a, s in models:
        cells = [planning_cell(task, a, s, profile, c, None) for c in own_cells(spec)]
        units += plan_units("plan", task, cells) if cells else []
    units += [measure_unit(task, a, s, profile) for a, s in models]
    return units


def cost_sentence(spec: StudySpec, profile: Profile) -> str:
    """What the page's units cost at ``profile`` whatever the cache holds (the grid's
    estimates, ``profile.cluster``), and the new arm's share: the page states it first, and
    it reads the same in every build of the page and in a render from its evidence."""
    units = own_units(spec, profile)
    arm = user_arm(spec)
    new = [u for u in units if arm in u.label]
    return (
        f"its {len(units)} units (the dataset, {len(spec.arms)} arms × "
        f"{len(profile.seeds.train)} training seed(s) trained, planned and measured) take "
        f"about {sum(u.hours for u in units):.2f} h of work at profile {profile.name}, "
        f"{sum(u.hours for u in new):.2f} h of it the {len(new)} units of the new arm "
        f"{term_name(arm)}; lewm's and scale's are the {spec.task} study's own (the same "
        f"keys), so with that study in the cache only the new arm's are built"
    )


def cost_statement(spec: StudySpec, profile: Profile, workers: int) -> str:
    """What the page still has to build, stated before it builds anything: its units not in
    the cache (any command's build counts: ``train``, ``study``, ``grid`` and the page write
    the same keys to the same cache), in core-hours and in wall time with ``workers`` jobs at
    once (:func:`~jepa_geometry.cluster.cost_line`, as ``study`` says it), and how many are
    the new arm's; or that the cache holds every unit."""
    table = unit_table(own_units(spec, profile), profile)
    arm = user_arm(spec)
    text = cost_line(table, workers)
    new = int((~table["cached"] & table["unit"].str.contains(arm, regex=False)).sum())
    if not new and table["cached"].all():
        return text
    return (
        f"{text} ({new} of them the new arm {arm_label(arm)}'s); lewm's and scale's are the "
        f"{spec.task} study's own (the same keys), so a cache holding that study builds only "
        "the new arm's"
    )


def build_own(
    spec: StudySpec,
    profile: Profile,
    workers: int,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
) -> None:
    """Build every unit of :func:`own_units` not in the cache, ``workers`` jobs at a time, kind
    by kind (:data:`KINDS`); every job is the grid's own cached build, so the
    numbers are those any other route to the same keys produces. The dataset is read only
    when a model, cell or measurement is missing. ``say`` (a page's log, ``page_log``) gets
    one line per built unit and per kind, as :func:`~jepa_geometry.study.build.build_study`
    says them."""
    units = own_units(spec, profile)
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


def own_claim_specs(arm: str) -> tuple[ClaimSpec, ...]:
    """The reader's claims: ``arm`` better than LeWM on planning success (CEM, the main
    protocol, mean over tiers), on SCALE's measures and on AnisoWM's. The arm is named as
    its models' artifact names and the tables name it (:func:`~jepa_geometry.wm.arms.arm_label`:
    the file's stem, ``scale+<stem>`` for SCALE plus the term)."""
    name = arm_label(arm)
    probes = WHERE.format(section="Both papers' measures")
    plans = WHERE.format(section="Planning beside LeWM and SCALE")

    def per_model(statement: str, column: str, direction: int = 1) -> ClaimSpec:
        return ClaimSpec(
            LENS,
            statement,
            PER_MODEL,
            arm,
            BASELINE,
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
            BASELINE,
            column=column,
            measure=column,
            source=source,
            unit=unit,
            where=probes,
        )

    return (
        ClaimSpec(
            LENS, f"{name} plans better than LeWM (CEM)", SUCCESS, arm, BASELINE, where=plans
        ),
        per_model(f"{name} puts more of q in the top-2 PCs (SCALE's measure)", "r2_top2"),
        per_model(
            f"{name} makes latent distances track q's more uniformly (SCALE's dispersion)",
            "ratio_p90_over_p10",
            -1,
        ),
        per_unit(f"{name} raises SCALE's τ geom channel", "tau_geom", "ranking:gaussian", "start"),
        per_unit(f"{name} raises SCALE's τ pred channel", "tau_pred", "ranking:gaussian", "start"),
        per_unit(
            f"{name} orders outcomes better by J_enc (AnisoWM's measure)",
            "agree_enc",
            "ranking:dataset",
            "start",
        ),
        per_unit(
            f"{name} orders outcomes better by J_pred (AnisoWM's measure)",
            "agree_pred",
            "ranking:dataset",
            "start",
        ),
        per_unit(
            f"{name}'s cost follows physical distance more closely (AnisoWM Fig. 4)",
            "spearman",
            "landscape",
            "goal_index",
        ),
    )


def own_claims(
    spec: StudySpec, episodes: pd.DataFrame, geometry: object
) -> list[tuple[Claim, Evidence]]:
    """:func:`own_claim_specs` of the study's reader arm with our evidence (the planning
    ``episodes`` of :func:`own_cells`, the ``geometry`` of every model), labelled
    :data:`YOURS`; a claim whose measure was not run is left out."""
    m = Measurements(spec.task, episodes, geometry, spec.main_protocol, SCALE_PROTOCOL)
    found = evaluate_all(own_claim_specs(user_arm(spec)), m)
    return [(replace(c, paper=YOURS, requires=()), e) for c, e in found]


__all__ = [
    "BESIDE",
    "YOURS",
    "build_own",
    "cost_sentence",
    "cost_statement",
    "own_arm",
    "own_cells",
    "own_claim_specs",
    "own_claims",
    "own_spec",
    "own_units",
    "term_log",
    "term_name",
    "user_arm",
    "with_seeds",
]
