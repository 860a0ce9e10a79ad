"""The claims read across the tasks: the book's verdict for the whole book, our cross-lens
questions, and the preconditions of every task.

Nothing here trains, plans or reads the cache: it takes the task studies that
:func:`~jepa_geometry.study.load.load_studies` found and evaluates the claim records of
:mod:`~jepa_geometry.verdict.records` on them.

* **The book's verdict** (:func:`book_items`): every claim of both papers on every task with a
  study, and SCALE's claims about all the tasks together, Holm's correction within each of the
  book's families (each paper's primary claims on every task together, its secondary claims,
  our extensions: :func:`~jepa_geometry.verdict.rule.family_of`; a family spans the tasks, so
  a claim can need more evidence here than on its task's page, whose family is that task's
  claims); a claim whose subject is absent on its task (:func:`failed_preconditions`: DINOv2's
  features) is not tested there. :func:`verdict_matrix`, :func:`verdict_counts` and
  :func:`verdict_prose` read the verdict table (claim x task, counts per label, the prose the
  chapter prints), so no word of the chapter is chosen outside the rule.
* **The other paper's lens** (:func:`lens_items`): SCALE measured by AnisoWM's measures and
  ΛReg by SCALE's, and whether ``scale+anisowm`` adds up (an interaction contrast, read by
  :func:`additivity`). These are our questions, not the papers' claims: they are tested with
  the same rule as a family of their own (:func:`lens_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from jepa_geometry.cluster.estimate import cell_hours, train_hours
from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.study.load import Studies, TaskStudy
from jepa_geometry.verdict.claims import (
    ALL_TASKS,
    INTERACTION_ARM,
    Measurements,
    evaluate_all,
    on_task,
)
from jepa_geometry.verdict.preconditions import LAMBDA_SELECTED, LEWM_ISOTROPIC, preconditions
from jepa_geometry.verdict.records import (
    PAPER_CLAIMS,
    across_claims,
    every_claims,
    lens_claims_by_task,
)
from jepa_geometry.verdict.rule import (
    BELOW_RESOLUTION,
    BY_CONSTRUCTION,
    EXTENSION,
    LABELS,
    NOT_TESTED,
    PRIMARY,
    VERDICTS,
    Claim,
    Evidence,
    family_interval,
    judged,
    tested,
    tested_by_task,
    verdict_table,
)
from jepa_geometry.wm.arms import arm_weights

# --------------------------------------------------------------------------------------------
# Each arm under the other paper's lens
# --------------------------------------------------------------------------------------------


def _measurements(task: str, st: TaskStudy) -> Measurements:
    return Measurements(
        task, st.episodes, st.geometry, st.spec.main_protocol, SCALE_PROTOCOL, st.plans.timing
    )


def lens_items(studies: Studies) -> list[tuple[str, Claim, Evidence]]:
    """Our cross-lens questions per task (:data:`~jepa_geometry.verdict.records.LENS_CLAIMS`), each
    as a claim with our evidence and no paper effect: SCALE under AnisoWM's measures, ΛReg under
    SCALE's, and whether ``scale+anisowm`` adds up (read by :func:`additivity`)."""
    return lens_claims_by_task(
        {task: _measurements(task, st) for task, st in studies.studies.items()}
    )


CORES = 2
"""The cores of the laptop machine the book's build costs are stated on."""
ADDITIVITY: tuple[str, ...] = ("reinforce", "add up", "fight", "unclear")


def additivity(ev: Evidence, min_effect: float, m: int) -> str:
    """How an interaction contrast reads, from its family-wise interval over ``m`` questions
    (the rule of :mod:`~jepa_geometry.verdict.rule`, two-sided): **reinforce** when the
    interval lies above zero, **fight** when below, **add up** when it lies within
    ± ``min_effect`` (the effects are additive to within what matters), **unclear** otherwise,
    and always where the evidence cannot judge a training method
    (:func:`~jepa_geometry.verdict.rule.judged`: no interval, or one trained model per arm)."""
    if not judged(ev):
        return "unclear"
    lo, hi = family_interval(ev, m)
    if lo > 0:
        return "reinforce"
    if hi < 0:
        return "fight"
    if -min_effect <= lo and hi <= min_effect:
        return "add up"
    return "unclear"


def lens_table(
    items: Sequence[tuple[str, Claim, Evidence]],
    failed: dict[str, set[str]] | None = None,
) -> pd.DataFrame:
    """The cross-lens questions with our effect and interval, read as one family: the
    directional questions by the verdict rule (Holm across them), the interaction contrasts by
    :func:`additivity` (Bonferroni across all questions). A question about a ΛReg arm on a
    task where Λ was not selected (``failed``, :func:`failed_preconditions`) is not tested
    there, and out of the family."""
    if not items:
        return pd.DataFrame()
    mask = tested_by_task(items, failed)
    table = verdict_table([(c, e) for _, c, e in items], mask)
    m = sum(mask)
    table["verdict"] = [
        additivity(e, c.min_effect, m) if c.a == INTERACTION_ARM and ok else v
        for (_, c, e), v, ok in zip(items, table["verdict"], mask, strict=True)
    ]
    table.insert(0, "task", [task_title(t) for t, _, _ in items])
    return table.drop(columns=["paper", "paper's effect", "family"]).rename(
        columns={"verdict": "reading"}
    )


# --------------------------------------------------------------------------------------------
# The book's verdict
# --------------------------------------------------------------------------------------------


SCALE_SUFFIX = ", SCALE's protocol"
"""What the book adds to a claim planned under SCALE's protocol on a task whose main protocol
is another (:func:`book_items`)."""


def book_items(studies: Studies) -> list[tuple[str, Claim, Evidence]]:
    """Every claim of both papers on every task with a study
    (:func:`~jepa_geometry.verdict.records.paper_claims` with the study's main protocol and
    SCALE's), tagged with its task. Where a task's main protocol is not SCALE's, the claims
    planned under SCALE's protocol say so in their statement, so each statement names one
    claim across the tasks. SCALE's claims about the tasks together
    (:data:`~jepa_geometry.verdict.records.ACROSS_CLAIMS`) and AnisoWM's claims about all four
    of its environments (:data:`~jepa_geometry.verdict.records.EVERY_CLAIMS`) follow, under the
    task :data:`~jepa_geometry.verdict.records.ALL_TASKS`."""
    items = []
    measured = {task: _measurements(task, st) for task, st in studies.studies.items()}
    for task, st in studies.studies.items():
        main = st.spec.main_protocol
        for c, e in evaluate_all(PAPER_CLAIMS, measured[task]):
            if main != SCALE_PROTOCOL and f"{SCALE_PROTOCOL} protocol" in c.measure:
                c = replace(c, statement=f"{c.statement}{SCALE_SUFFIX}")
            items.append((task, c, e))
    planned = {t: m for t, m in measured.items() if t in studies.planned}
    items += [(ALL_TASKS, c, e) for c, e in across_claims(planned)]
    items += [(ALL_TASKS, c, e) for c, e in every_claims(measured)]
    return items


SHORT_VERDICTS = {
    "not detected at this scale": "not detected",
    BELOW_RESOLUTION: "below resolution",
    BY_CONSTRUCTION: "by construction",
    NOT_TESTED: "not tested",
}
"""Shorter labels for the cells of the claim x task matrices."""


def verdict_matrix(board: pd.DataFrame, value: str = "verdict") -> pd.DataFrame:
    """Claim x task: ``value`` (the verdict, or a cross-lens reading) of each claim on each
    task ("" where not tested), claims in the order they are first listed, tasks in the book's
    order. ``board`` is :func:`tables.geometry.dashboard` or :func:`lens_table` output."""
    paper = board["paper"] + ": " if "paper" in board else ""
    b = board.assign(claim=paper + board["claim"])
    twice = b[b.duplicated(["claim", "task"])]
    if len(twice):
        raise ValueError(
            f"claim tested twice on one task: {twice.iloc[0]['claim']!r} ({twice.iloc[0]['task']})"
        )
    claims = list(dict.fromkeys(b["claim"]))
    order = [*(task_title(t) for t in TASKS), ALL_TASKS]
    tasks = [t for t in order if t in set(b["task"])]
    wide = b.pivot(index="claim", columns="task", values=value)
    wide = wide.reindex(index=claims, columns=tasks).fillna("")
    return wide.replace(SHORT_VERDICTS).reset_index()


def verdict_counts(board: pd.DataFrame) -> pd.DataFrame:
    """Claim-task pairs per paper and family x label: the tested ones by verdict (columns in
    the rule's order) and their total ``tested``, then those true by construction and those
    not tested (their subject absent), with totals; rows ``<paper>, primary``, ``<paper>,
    secondary`` and ``<paper>, ours (extension)``."""
    group = board["paper"] + ", " + board["family"]
    t = pd.crosstab(group.rename("paper"), board["verdict"]).reindex(
        columns=list(LABELS), fill_value=0
    )
    t.insert(len(VERDICTS), "tested", t[list(VERDICTS)].sum(axis=1))
    t.loc["all"] = t.sum()
    return t.reset_index()


def verdict_prose(board: pd.DataFrame, missing: dict[str, str]) -> str:
    """A short reading of the book's verdict, generated from ``board`` (markdown): the counts
    of tested claims, those not tested, the claims reproduced and contradicted with their
    tasks, our extensions apart, and the tasks without a study."""
    tested = board[board["verdict"].isin(VERDICTS)]
    own = tested[tested["family"] != EXTENSION]
    counts = own["verdict"].value_counts()
    untested = board[board["verdict"] == NOT_TESTED]
    built = board[board["verdict"] == BY_CONSTRUCTION]
    parts = [
        f"Across {len(set(board['task']) - {ALL_TASKS})} tasks the book tests {len(own)} "
        "claim-task pairs "
        "of the papers on tasks they evaluated: "
        + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS)
        + "."
    ]
    if len(built):
        parts.append(f"{len(built)} more hold by construction (our code makes them true).")
    if len(untested):
        by_pre = untested.groupby("requires", sort=False).size()
        parts.append(
            f"{len(untested)} are not tested because their subject is absent ("
            + ", ".join(f"{n} about *{pre}*" for pre, n in by_pre.items())
            + ")."
        )
    for label in ("reproduced", "contradicted"):
        sel = own[own["verdict"] == label]
        if sel.empty:
            parts.append(f"No claim is {label} on any task.")
            continue
        by_claim = sel.groupby(["paper", "claim"], sort=False)["task"].apply(lambda s: ", ".join(s))
        listed = "; ".join(f"{p}: *{c}* ({tasks})" for (p, c), tasks in by_claim.items())
        parts.append(f"{label.capitalize()}: {listed}.")
    for paper, g in own.groupby("paper", sort=False):
        rep = int((g["verdict"] == "reproduced").sum())
        parts.append(f"{paper}: {rep} of its {len(g)} tested claim-task pairs reproduced.")
    ext = tested[tested["family"] == EXTENSION]
    if len(ext):
        rep = int((ext["verdict"] == "reproduced").sum())
        tasks = ", ".join(dict.fromkeys(ext["task"]))
        parts.append(
            f"Our extensions (papers' claims on tasks they did not evaluate: {tasks}), a family "
            f"of their own: {rep} of {len(ext)} reproduced."
        )
    if missing:
        parts.append(
            "Tasks without a study at this profile: "
            + ", ".join(f"{task_title(t)} ({why})" for t, why in missing.items())
            + "."
        )
    return " ".join(parts)


def preconditions_by_task(studies: Studies) -> pd.DataFrame:
    """:func:`~jepa_geometry.verdict.preconditions.preconditions` of every task, one row per
    task x precondition."""
    parts = []
    for task, st in studies.studies.items():
        kappa = arm_weights("anisowm", task).kappa
        pre = preconditions(
            st.geometry, kappa=kappa, diagnostics=st.diagnostics, profile=st.profile
        )
        parts.append(pre.assign(task=task_title(task)))
    if not parts:
        return pd.DataFrame(columns=["task", "precondition", "measured", "criterion", "holds"])
    out = pd.concat(parts, ignore_index=True)
    return out[["task", "precondition", "measured", "criterion", "holds"]]


def failed_preconditions(studies: Studies) -> dict[str, set[str]]:
    """Per task (its code), the preconditions that do not hold on it: a claim is not tested
    there only where one of them is what it requires (``Claim.requires``: its subject, DINOv2's
    features; the premises it is informed by are read, never gates:
    :func:`~jepa_geometry.book.tables.geometry.dashboard`). Under
    :data:`~jepa_geometry.verdict.records.ALL_TASKS`, each of them named with its task
    (:func:`~jepa_geometry.study.on_task`), as a claim about several tasks requires
    them."""
    pre = preconditions_by_task(studies)
    titles = {task_title(t): t for t in studies.studies}
    out: dict[str, set[str]] = {t: set() for t in studies.studies}
    for r in pre[~pre["holds"].astype(bool)].itertuples():
        out[titles[r.task]].add(r.precondition)
    out[ALL_TASKS] = {on_task(p, t) for t, ps in list(out.items()) for p in ps}
    return out


# --------------------------------------------------------------------------------------------
# The papers' headline claims, first
# --------------------------------------------------------------------------------------------


def added_seed_hours(st: TaskStudy, arms: Sequence[str], per_model: bool) -> float:
    """Core-hours of one more training seed of each of ``arms`` on a study's task, from the cost
    model (:mod:`~jepa_geometry.cluster.estimate`): each model's training and, for a success
    claim (``per_model`` False), its CEM cells at every tier of the study's main protocol, as
    every training seed is planned (:func:`~jepa_geometry.study.cells.cell_groups`)."""
    p = st.profile
    hours = len(arms) * train_hours(p)
    if not per_model:
        for arm in arms:
            for tier in budget_tiers(p):
                cell = PlanningCell(st.task, arm, 0, p, "cem", tier, st.spec.main_protocol)
                hours += cell_hours(cell)
    return hours


def primary_table(board: pd.DataFrame, items: Sequence, studies: Studies) -> pd.DataFrame:
    """The papers' headline claims (the primary families, :data:`~jepa_geometry.verdict.rule.
    PRIMARY`) as the book answers them, one row per claim and task: the label and its reason,
    ours beside the paper's effect, the claim's bound and this run's resolution, and what
    would decide an undecided one (decided: a label that settles it, or an interval already on
    one side of the claim's bound): the training seeds at its measured effect and spread
    (:func:`~jepa_geometry.verdict.rule.seeds_to_decide`) and their cost at this profile in
    hours of a 2-core machine (:func:`added_seed_hours` for both arms, each unit on one core).
    ``board`` is :func:`~jepa_geometry.book.tables.geometry.dashboard` output over ``items``
    (:func:`book_items`)."""
    rows = []
    for (task, claim, ev), (_, r) in zip(items, board.iterrows(), strict=True):
        if r["family"] != PRIMARY or r["verdict"] not in VERDICTS:
            continue
        need = r["seeds to decide"]
        # decided: a verdict that settles it, or an interval already clear of the claim's bound
        # (a paper's effect below the resolution stays so, but more seeds would not move it)
        decided = r["verdict"] in ("reproduced", "contradicted", "not detected at this scale") or (
            need != "" and int(need) <= ev.models
        )
        st = studies.studies.get(task)
        seeds, cost, hours = "decided" if decided else "> 50", "", float("nan")
        if not decided and need != "":
            seeds = int(need)
        if not decided and need != "" and st is not None:
            more = max(int(need) - ev.models, 0)
            per_model = not claim.measure.startswith("success")
            core_h = more * added_seed_hours(st, (claim.a, claim.b), per_model)
            hours = core_h / CORES
            cost = f"{more} more: {hours:.1f} h"
        rows.append(
            {
                "paper": r["paper"],
                "claim": r["claim"],
                "task": r["task"],
                "verdict": r["verdict"],
                "reason": r["reason"],
                "ours [95% CI]": r["our effect [95% CI]"],
                "paper's effect": r["paper's effect"],
                "min effect": r["min effect"],
                "resolution": r["resolution"],
                "seeds": ev.models,
                "seeds to decide": seeds,
                "their cost": cost,
                "hours to decide": hours,
                **_primary_numbers(claim, ev),
            }
        )
    return pd.DataFrame(rows)


def _primary_numbers(claim: Claim, ev: Evidence) -> dict[str, object]:
    """A primary row's numbers as figures read them, in the claim's display unit (pp for
    success): ours and its 95 % interval, the paper's difference (NaN where it publishes none)
    and whether its setting is ours (``comparable``), and the bound the claim must clear
    (``threshold + direction · min_effect``)."""
    k = claim.display_scale
    paper = claim.paper_value if claim.paper_value is not None else float("nan")
    return {
        "effect": k * ev.effect,
        "low": k * ev.low,
        "high": k * ev.high,
        "paper value": k * paper,
        "comparable": claim.paper_effect is not None,
        "bound": k * (claim.threshold + claim.direction * claim.min_effect),
        "unit": claim.unit,
    }


def primary_sentence(primary: pd.DataFrame) -> str:
    """The primary table (:func:`primary_table`) in one sentence: per paper, how many headline
    claim-task pairs read each label, how many are undecided and how many of those more
    training seeds would decide at their measured effect and spread."""
    if primary.empty:
        return "No headline claim of either paper is tested at this profile."
    parts = []
    for paper, g in primary.groupby("paper", sort=False):
        counts = g["verdict"].value_counts()
        labels = ", ".join(f"{int(counts[v])} {v}" for v in VERDICTS if v in counts)
        open_ = g[g["seeds to decide"] != "decided"]
        within = open_[open_["seeds to decide"].map(lambda x: isinstance(x, int))]
        parts.append(
            f"{paper}: {len(g)} headline claim-task pairs tested, {labels}; of the "
            f"{len(open_)} undecided, {len(within)} would be decided by at most "
            f"{max(within['seeds to decide'], default=0)} training seeds at their measured "
            "effect and spread"
        )
    return "; ".join(parts) + "."


def _and_join(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _short(x: float) -> str:
    """A number at a glance: two significant digits, signed, no ``-0``."""
    return f"{0.0 if abs(x) < 1e-9 else x:+.2g}"


def claim_finding(rows: pd.DataFrame) -> str:
    """One headline claim over its tasks (its rows of :func:`primary_table`) in a sentence: which
    label it reads on which tasks, then per task ours with its 95 % interval beside the paper's
    difference (marked where it comes from another setting; "none published" where there is
    none), at two significant digits: the table beside it gives three."""
    labels = "; ".join(
        f"{label} on {_and_join(rows.loc[rows['verdict'] == label, 'task'])}"
        for label in VERDICTS
        if (rows["verdict"] == label).any()
    )
    shown = []
    for r in rows.to_dict("records"):
        unit = f" {r['unit']}" if r["unit"] else ""
        if pd.isna(r["paper value"]):
            theirs = "none published"
        else:
            other = "" if r["comparable"] else ", another setting"
            theirs = f"{_short(r['paper value'])}{other}"
        ours = f"{_short(r['effect'])} [{_short(r['low'])}, {_short(r['high'])}]{unit}"
        shown.append(f"{r['task']} {ours} ({theirs})")
    return f"{labels}. Ours [95 % CI] (the paper's): {'; '.join(shown)}."


def premises_finding(pre: pd.DataFrame) -> str:
    """What the geometry says of AnisoWM's premises (:func:`preconditions_by_task` rows): on how
    many tasks LeWM is near-isotropic and on how many models' tasks ΛReg's Λ departs from I
    enough to count as selected, each with its criterion."""
    parts = []
    for name in (LEWM_ISOTROPIC, LAMBDA_SELECTED):
        rows = pre[pre["precondition"].str.startswith(name)]
        if rows.empty:
            continue
        holds = int(rows["holds"].astype(bool).sum())
        criterion = rows["criterion"].iloc[0].split(" (")[0]
        pairs = "tasks" if name == LEWM_ISOTROPIC else "task-arm pairs"
        parts.append(f"{name} on {holds} of {len(rows)} {pairs} ({criterion})")
    if not parts:
        return "No task's geometry is measured at this profile."
    return "AnisoWM's premises, measured: " + "; ".join(parts) + "."


def reach_finding(primary: pd.DataFrame) -> str:
    """What more training seeds would decide (:func:`primary_table`'s "seeds to decide"): how
    many undecided headline claim-task pairs the seeds needed at their measured effect and spread
    would settle, the most seeds and hours any one of them needs, and how many lie beyond 50
    seeds (out of reach at this scale)."""
    open_ = primary[primary["seeds to decide"] != "decided"]
    if open_.empty:
        return "Every headline claim-task pair is decided at this profile."
    within = open_[open_["seeds to decide"].map(lambda x: isinstance(x, int))]
    beyond = len(open_) - len(within)
    text = f"{len(open_)} of {len(primary)} headline claim-task pairs are undecided"
    if len(within):
        worst = within.loc[within["hours to decide"].idxmax()]
        text += (
            f"; {len(within)} would be decided by at most {int(within['seeds to decide'].max())} "
            f"training seeds (the costliest, {worst['claim']} on {worst['task']}, "
            f"{worst['hours to decide']:.1f} h of this {CORES}-core machine)"
        )
    if beyond:
        text += f"; {beyond} would need more than 50 seeds"
    return text + "."


def findings(primary: pd.DataFrame, pre: pd.DataFrame) -> list[tuple[str, str]]:
    """The book's answer as the landing page opens with it: ``(lead, sentence)`` per headline
    claim (:func:`claim_finding`), then AnisoWM's premises (:func:`premises_finding`) and what
    more seeds would decide (:func:`reach_finding`)."""
    out = [
        (f"{claim}:", claim_finding(rows)) for claim, rows in primary.groupby("claim", sort=False)
    ]
    out.append(("Geometry:", premises_finding(pre)))
    out.append(("More seeds:", reach_finding(primary)))
    return out


def page_labels(studies: Studies) -> pd.DataFrame:
    """Each task page's own verdict on the papers' claims (chapter 7: the family is that task's
    claims, Holm within each of its families), one row per (task, paper, claim): ``task`` (its
    title), ``paper``, ``claim``, ``verdict``."""
    failed = failed_preconditions(studies)
    parts = []
    for task, st in studies.studies.items():
        items = evaluate_all(PAPER_CLAIMS, _measurements(task, st))
        mask = tested([c for c, _ in items], failed.get(task, set()))
        page = verdict_table(items, mask).assign(task=task_title(task))
        parts.append(page[["task", "paper", "claim", "verdict"]])
    return pd.concat(parts, ignore_index=True)


PAGE_LABEL = "label on its task's page"


def with_page_labels(board: pd.DataFrame, pages: pd.DataFrame) -> pd.DataFrame:
    """``board`` (the book's verdict) with :data:`PAGE_LABEL`: the task page's label where it
    differs from the book's, and why ("" where they agree). They differ only by the family:
    a page corrects a task's claims among themselves, the book each family over every task."""
    keyed = pages.set_index(["task", "paper", "claim"])["verdict"]
    on_page = [
        keyed.get((r.task, r.paper, r.claim), "")
        for r in board[["task", "paper", "claim"]].itertuples()
    ]
    shown = [
        "" if not p or p == v else f"{p} (its family there: this task's claims)"
        for p, v in zip(on_page, board["verdict"], strict=True)
    ]
    return board.assign(**{PAGE_LABEL: shown})
