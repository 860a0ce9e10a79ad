"""The protocol gate and the ladder: are a task's arms compared by planning, and under what?

**The gate** (:func:`protocol_gate`) looks at the baseline only: the first training seed of
``lewm`` plans one cell (CEM at T1) under a protocol, beside the random policy on the same
pairs. The protocol passes when LeWM's success lies between :func:`gate_low` and
:data:`GATE_HIGH` and the random floor is at most :data:`FLOOR_FRACTION` of it.

**The protocol** (:func:`protocol_choice`): SCALE's (goal +25, budget 50) first, then the
:data:`ALTERNATIVES` in order, each gated on validation pairs (evaluation seed +
:data:`VALIDATION_SEED_OFFSET`), never on the evaluation pairs. The first that passes is the
study's main protocol, and SCALE's stays as its secondary one; if none passes, the study keeps
SCALE's and its pages say that the gate failed.

**The ladder** (:func:`lever_choice`, Push-T and Cube): rungs of levers (the study file's
``ladder``, :mod:`jepa_geometry.study.levers`), each adding one lever for every arm alike, are
gated in turn within a compute :data:`BUDGET`, with a lower bound from power (an arm succeeding
:data:`POWER_RATIO` times as often as LeWM detected with 80 % power,
:func:`~jepa_geometry.stats.min_rate_for_power`) in place of :data:`GATE_LOW`. The first rung
that passes fixes the study's settings; if none does, the study does not plan, and its pages
report the ladder, the best rung and the geometry, which needs no planner.

When each rule was fixed, and the one amendment (the last alternative, appended after
PointMaze's first two gates): the book's sections rec-protocol-gate and rec-manipulation-gate.
"""

from __future__ import annotations

import pandas as pd

from jepa_geometry import stats
from jepa_geometry.analysis.measurements import coordinate_probes
from jepa_geometry.envs.collect import episode_counts
from jepa_geometry.envs.dataset import dataset_artifact
from jepa_geometry.planning.evaluator import PlanningCell, evaluate_cell
from jepa_geometry.planning.protocol import SCALE_PROTOCOL
from jepa_geometry.profiles import Profile, with_overrides
from jepa_geometry.stats import format_rate
from jepa_geometry.study.cells import SWEEP_SEED_OFFSET, with_eval_seed
from jepa_geometry.study.levers import Lever, ladder_rung
from jepa_geometry.study.spec import BASELINE, task_ladder
from jepa_geometry.wm.training import world_model_artifact

GATE_LOW, GATE_HIGH = 0.30, 0.85  # LeWM's CEM T1 success must lie in this window
FLOOR_FRACTION = 0.5  # and the random floor at most this fraction of it
ALTERNATIVES: tuple[str, ...] = (  # then these, in order, on validation pairs
    "goal100_budget150",
    "goal50_budget100",  # appended after PointMaze's first two gates (book: rec-protocol-gate)
)
VALIDATION_SEED_OFFSET = SWEEP_SEED_OFFSET  # validation pairs: those of the MPPI sweep

POWER_RATIO = 1.5  # the manipulation gate detects an arm succeeding 1.5x as often as LeWM
POWER, POWER_ALPHA = 0.8, 0.05
BUDGET = {"train_minutes_per_model": 15, "collect_minutes": 15, "study_hours": 2.5}
"""The laptop compute budget of the manipulation studies, fixed before their gates ran."""
MANIPULATION_ARMS: tuple[str, ...] = ("lewm", "scale", "aux", "anisowm", "scale-halfq")


def gate_low(task: str, profile: Profile) -> float:
    """The gate's lower bound on LeWM's success: :data:`GATE_LOW`, or for a task with a
    ladder the power threshold of the study's ``seeds x pairs`` outcomes per arm (``nan``
    when no rate reaches the power: then nothing passes)."""
    if not task_ladder(task):
        return GATE_LOW
    n = len(profile.seeds.train) * profile.eval.episodes
    return stats.min_rate_for_power(n, POWER_RATIO, POWER, POWER_ALPHA)


def gate_cell(
    task: str, profile: Profile, protocol: str = SCALE_PROTOCOL, pairs: str = "evaluation"
) -> PlanningCell:
    """The one planning cell the gate reads: LeWM's first training seed, CEM at T1 under
    ``protocol``, on the ``evaluation`` pairs or on separate ``validation`` pairs (the
    evaluation seed offset by :data:`VALIDATION_SEED_OFFSET`)."""
    if pairs not in ("evaluation", "validation"):
        raise ValueError(f"pairs must be 'evaluation' or 'validation', got {pairs!r}")
    if pairs == "validation":
        profile = with_eval_seed(profile, profile.seeds.eval + VALIDATION_SEED_OFFSET)
    return PlanningCell(task, BASELINE, profile.seeds.train[0], profile, "cem", "T1", protocol)


def protocol_gate(
    task: str,
    profile: Profile,
    protocol: str = SCALE_PROTOCOL,
    pairs: str = "evaluation",
    progress: bool = False,
) -> dict[str, object]:
    """The gate's measurements and verdict for ``task`` (the baseline is trained if missing),
    on the ``evaluation`` pairs or on separate ``validation`` pairs.

    Keys: ``task``, ``protocol``, ``pairs``, ``lewm (%)`` and ``random (%)`` (success with its
    Wilson 95 % interval, as text), ``solved at start``, ``hard pairs``, ``lewm hard``,
    ``random hard``,
    ``paired lewm - random`` (paired bootstrap interval), ``discriminates`` (the rule),
    ``outcome`` (``keep``, ``fails``, ``saturates`` or ``floor``: the floor is too high) and
    ``reason`` (one sentence).
    """
    cell = gate_cell(task, profile, protocol, pairs)
    profile = cell.profile
    res = evaluate_cell(cell, progress)
    ep, rnd = res.episodes, res.random
    lewm, floor = (
        stats.success_rate(ep["success"].to_numpy()),
        stats.success_rate(rnd["success"].to_numpy()),
    )
    hard = ep["hard"].to_numpy()
    diff = stats.paired_difference(ep["success"].to_numpy(), rnd["success"].to_numpy())
    low = gate_low(task, profile)
    window = f"[{low:.1%}, {GATE_HIGH:.0%}]" if low == low else "(no rate has the power)"
    in_window = low <= lewm.rate <= GATE_HIGH  # False when low is nan
    low_floor = floor.rate <= FLOOR_FRACTION * lewm.rate
    outcome = (
        "keep"
        if in_window and low_floor
        else "floor"
        if in_window
        else "saturates"
        if lewm.rate > GATE_HIGH
        else "fails"
    )
    if in_window and low_floor:
        reason = (
            f"LeWM {lewm.rate:.1%} lies in {window} and the floor "
            f"{floor.rate:.1%} is at most half of it: keep {protocol}"
        )
    elif low != low:  # nan: no rate gives the study's outcomes the power (gate_low)
        reason = f"LeWM {lewm.rate:.1%}; no success rate has the power at this profile"
    elif not in_window:
        reason = (
            f"LeWM {lewm.rate:.1%} is outside {window} (the "
            f"planner {outcome}): change the protocol or data for every arm"
        )
    else:
        reason = (
            f"the random floor {floor.rate:.1%} is more than half of LeWM's "
            f"{lewm.rate:.1%}: change the protocol or data for every arm"
        )
    return {
        "task": task,
        "protocol": protocol,
        "pairs": pairs,
        "lewm (%)": format_rate(lewm.rate, lewm.low, lewm.high),
        "random (%)": format_rate(floor.rate, floor.low, floor.high),
        "solved at start": float(ep["solved_at_start"].mean()),
        "hard pairs": int(hard.sum()),
        "lewm hard": float(ep["success"].to_numpy()[hard].mean()) if hard.any() else float("nan"),
        "random hard": float(rnd["success"].to_numpy()[hard].mean())
        if hard.any()
        else float("nan"),
        "paired lewm - random": f"{diff.diff:+.3f} [{diff.low:+.3f}, {diff.high:+.3f}]",
        "discriminates": bool(in_window and low_floor),
        "powered": bool(low == low),  # some success rate would give the study the power
        "outcome": outcome,
        "gap": float(diff.diff),  # lewm - random, a fraction (for :func:`best_rung`)
        "reason": reason,
    }


def protocol_choice(
    task: str, profile: Profile, progress: bool = False
) -> tuple[str, pd.DataFrame]:
    """The main protocol the rule of this module picks for ``task``, and every gate it ran.

    SCALE's protocol on the evaluation pairs first; if it fails, each of :data:`ALTERNATIVES`
    on the validation pairs, stopping at the first that passes. Returns (the chosen protocol,
    one row per gate run); SCALE's protocol when none passes.
    """
    rows = [protocol_gate(task, profile, SCALE_PROTOCOL, "evaluation", progress)]
    for alternative in ALTERNATIVES:
        if rows[-1]["discriminates"]:
            break
        rows.append(protocol_gate(task, profile, alternative, "validation", progress))
    passed = [r["protocol"] for r in rows if r["discriminates"]]
    return (passed[0] if passed else SCALE_PROTOCOL), pd.DataFrame(rows)


def lever_choice(
    task: str, profile: Profile, progress: bool = False
) -> tuple[Lever | None, pd.DataFrame]:
    """Climb ``task``'s ladder (its study file's ``ladder``): gate each rung on the validation
    pairs and stop at the first that passes, or at one whose planner saturates (more compute
    would not bring it back into the window).

    Returns (the passing rung or ``None``, one row per rung gated: ``lever``, the rung's
    image size, training steps and [training, held-out] episodes, the columns of
    :func:`protocol_gate`, the minutes and worker processes of the rung's dataset collection
    and the baseline's training minutes, from their manifests).
    """
    ladder = task_ladder(task)
    if not ladder:
        raise ValueError(f"task {task!r} has no ladder (its study file names none)")
    rows: list[dict[str, object]] = []
    chosen = None
    for lever in ladder:
        cfg = lever.apply(task, profile)
        gate = protocol_gate(task, cfg, lever.protocol, "validation", progress)
        model = world_model_artifact(task, BASELINE, cfg.seeds.train[0], cfg)
        data = dataset_artifact(task, cfg).manifest()
        rows.append(
            {
                "lever": lever.name,
                "image (px)": cfg.data.image_size,
                "steps": cfg.train.steps,
                "episodes": "/".join(map(str, episode_counts(task, cfg))),
                **gate,
                "collect (min)": data["collect_seconds"] / 60,
                "collect workers": data.get("workers"),
                "train (min)": model.manifest()["summary"]["train_wall_s"] / 60,
            }
        )
        if gate["discriminates"]:
            chosen = lever
            break
        if gate["outcome"] == "saturates":
            break
    return chosen, pd.DataFrame(rows)


def best_rung(rows: pd.DataFrame) -> int:
    """The row of :func:`lever_choice`'s table whose baseline beats the random policy by the
    most (paired difference on the validation pairs; the earlier, cheaper rung on a tie): the
    configuration a failed ladder reports, and whose models its study measures."""
    if rows.empty:
        raise ValueError("the ladder ran no rung")
    return int(rows["gap"].to_numpy().argmax())


def ladder_probes(task: str, profile: Profile, rows: pd.DataFrame) -> pd.DataFrame:
    """Held-out ridge R² of each coordinate of q from the first training seed's ``lewm`` at
    every rung of :func:`lever_choice`'s table ``rows`` (the models its gates trained; rungs
    the climb never reached are not trained). Columns: ``lever``, ``coordinate``, ``r2``."""
    out = []
    for name in rows["lever"]:
        lever = ladder_rung(task_ladder(task), task, name)
        cfg = lever.apply(task, profile)
        one = with_overrides(cfg, {"seeds.train": [cfg.seeds.train[0]]})
        df = coordinate_probes(task, [BASELINE], one)
        out.append(df.assign(lever=lever.name)[["lever", "coordinate", "r2"]])
    return pd.concat(out, ignore_index=True)


def study_choice(
    task: str, profile: Profile, progress: bool = False
) -> tuple[str | None, Lever | None, pd.DataFrame]:
    """The gate of ``task``'s study under ``profile`` (the profile *before* any study
    settings): (main protocol, rung, one row per gate run).

    A task with a ladder climbs it (:func:`lever_choice`; protocol ``None`` when no rung
    passes); any other task runs :func:`protocol_choice` (rung ``None``: as profiled).
    """
    if task_ladder(task):
        lever, rows = lever_choice(task, profile, progress)
        return (lever.protocol if lever else None), lever, rows
    chosen, rows = protocol_choice(task, profile, progress)
    return chosen, None, rows


__all__ = [
    "ALTERNATIVES",
    "BUDGET",
    "MANIPULATION_ARMS",
    "POWER_RATIO",
    "best_rung",
    "ladder_probes",
    "gate_cell",
    "gate_low",
    "lever_choice",
    "FLOOR_FRACTION",
    "GATE_HIGH",
    "GATE_LOW",
    "SCALE_PROTOCOL",
    "VALIDATION_SEED_OFFSET",
    "protocol_choice",
    "protocol_gate",
    "study_choice",
]
