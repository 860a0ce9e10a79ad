"""The claims read across the tasks: the book's verdict for the whole book, our cross-lens
questions, and the preconditions of every task.

Nothing here trains, plans or reads the cache: it takes the task studies that
:func:`~jepa_geometry.study.load.load_studies` found and evaluates the claim records of
:mod:`~jepa_geometry.verdict.records` on them.

* **The book's verdict** (:func:`book_items`): every claim of both papers on every task with a
  study, and SCALE's claims about all the tasks together, Holm's correction across all of them
  at once (the family is the whole book, so a claim can need more evidence here than on its
  task's page); a claim whose precondition fails on its task (:func:`failed_preconditions`) is
  not tested there. :func:`verdict_matrix`, :func:`verdict_counts` and :func:`verdict_prose`
  read the verdict table (claim x task, counts per label, the prose the chapter prints), so
  no word of the chapter is chosen outside the rule.
* **The other paper's lens** (:func:`lens_items`): SCALE measured by AnisoWM's measures and
  ΛReg by SCALE's, and whether ``scale+anisowm`` adds up (an interaction contrast, read by
  :func:`additivity`). These are our questions, not the papers' claims: they are tested with
  the same rule as a family of their own (:func:`lens_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from jepa_geometry.envs import TASKS, task_title
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.study.load import Studies, TaskStudy
from jepa_geometry.verdict.claims import (
    ALL_TASKS,
    INTERACTION_ARM,
    Measurements,
    evaluate_all,
    on_task,
)
from jepa_geometry.verdict.preconditions import preconditions
from jepa_geometry.verdict.records import (
    PAPER_CLAIMS,
    across_claims,
    every_claims,
    lens_claims_by_task,
)
from jepa_geometry.verdict.rule import (
    LABELS,
    NOT_TESTED,
    VERDICTS,
    Claim,
    Evidence,
    family_interval,
    judged,
    tested_by_task,
    verdict_table,
)
from jepa_geometry.wm.arms import arm_weights

# --------------------------------------------------------------------------------------------
# Each arm under the other paper's lens
# --------------------------------------------------------------------------------------------


def _measurements(task: str, st: TaskStudy) -> Measurements:
    return Measurements(
        task, st.episodes, st.geometry, st.spec.main_protocol, SCALE_PROTOCOL, st.grid.timing
    )


def lens_items(studies: Studies) -> list[tuple[str, Claim, Evidence]]:
    """Our cross-lens questions per task (:data:`~jepa_geometry.verdict.records.LENS_CLAIMS`), each
    as a claim with our evidence and no paper effect: SCALE under AnisoWM's measures, ΛReg under
    SCALE's, and whether ``scale+anisowm`` adds up (read by :func:`additivity`)."""
    return lens_claims_by_task(
        {task: _measurements(task, st) for task, st in studies.studies.items()}
    )


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
                c = replace(c, statement=f"{c.statement}, SCALE's protocol")
            items.append((task, c, e))
    planned = {t: m for t, m in measured.items() if t in studies.planned}
    items += [(ALL_TASKS, c, e) for c, e in across_claims(planned)]
    items += [(ALL_TASKS, c, e) for c, e in every_claims(measured)]
    return items


SHORT_VERDICTS = {"not detected at this scale": "not detected", NOT_TESTED: "not tested"}
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
    """Claim-task pairs per paper x label: the tested ones by verdict (columns in the rule's
    order) and their total ``tested``, then those not tested (a precondition failed), with
    totals. Our extensions count under ``<paper> (extension)``."""
    group = board["paper"] + np.where(board["family"] == "paper", "", " (extension)")
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
    tested = board[board["verdict"] != NOT_TESTED]
    own = tested[tested["family"] == "paper"]
    counts = own["verdict"].value_counts()
    untested = board[board["verdict"] == NOT_TESTED]
    parts = [
        f"Across {len(set(board['task']) - {ALL_TASKS})} tasks the book tests {len(own)} "
        "claim-task pairs "
        "of the papers on tasks they evaluated: "
        + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS)
        + "."
    ]
    if len(untested):
        by_pre = untested.groupby("requires", sort=False).size()
        parts.append(
            f"{len(untested)} more are not tested because a precondition failed ("
            + ", ".join(f"{n} needing *{pre}*" for pre, n in by_pre.items())
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
    ext = tested[tested["family"] != "paper"]
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
    """Per task (its code), the preconditions that do not hold on it: the claims requiring
    them are not tested there (:func:`~jepa_geometry.book.tables.geometry.dashboard`). Under
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
