"""The gate before a task's arms: does SCALE's protocol discriminate on this task?

Before any arm but the baseline is trained on a new task, the first training seed of ``lewm``
plans one cell (CEM at T1, the profile's evaluation pairs) under SCALE's protocol, goal +25 /
budget 50, with the random policy on the same pairs, the fraction solved at the start and the
hard subset. **The rule, fixed before any task's gate was run** (issue #16): the protocol is
kept when LeWM's success lies between :data:`GATE_LOW` and :data:`GATE_HIGH` and the random
floor is at most half of it; otherwise the protocol (goal distance, budget, hard pairs) or the
data must change for every arm alike before any other arm is trained. Nothing here looks at an
arm other than the baseline.

**When SCALE's protocol fails** (:func:`protocol_choice`, written down before any alternative
was gated): the :data:`ALTERNATIVES` are gated in order, with the same rule, on *separate*
validation pairs (episode seed = evaluation seed + :data:`VALIDATION_SEED_OFFSET`, the seed of
the MPPI sweep's pairs), never on the evaluation pairs. The first that passes becomes the
study's main protocol and SCALE's stays as its secondary one (so SCALE's tables can still be
set beside ours); if none passes, the study keeps SCALE's protocol and its pages say the gate
failed.

**Amended once, and said so.** The rule first listed one alternative, LeWM's goal +100 /
budget 150. On PointMaze both gates failed, on opposite sides (LeWM 87 % under SCALE's
protocol, 14.5 % under LeWM's on the validation pairs), so a study there could not have
separated the arms under either. Before any other PointMaze arm was trained, and looking at
nothing but those two baseline gates, we appended the protocol halfway between them,
goal +50 / budget 100, as a last alternative. Tasks whose gate stops earlier (Two-Room,
Reacher) are unaffected (book: rec-protocol-gate).
"""

from __future__ import annotations

import pandas as pd

from jepa_geometry import stats
from jepa_geometry.planning.protocol import SCALE_PROTOCOL, evaluate_arm
from jepa_geometry.profiles import Profile
from jepa_geometry.study.grid import SWEEP_SEED_OFFSET, with_eval_seed
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.study.tables import format_rate

GATE_LOW, GATE_HIGH = 0.30, 0.85  # LeWM's CEM T1 success must lie in this window
FLOOR_FRACTION = 0.5  # and the random floor at most this fraction of it
ALTERNATIVES: tuple[str, ...] = (  # then these, in order, on validation pairs
    "goal100_budget150",
    "goal50_budget100",  # appended after PointMaze's first two gates (module docstring)
)
VALIDATION_SEED_OFFSET = SWEEP_SEED_OFFSET  # validation pairs: those of the MPPI sweep


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
    ``paired lewm - random`` (paired bootstrap interval), ``discriminates`` (the rule) and
    ``reason`` (one sentence).
    """
    if pairs not in ("evaluation", "validation"):
        raise ValueError(f"pairs must be 'evaluation' or 'validation', got {pairs!r}")
    if pairs == "validation":
        profile = with_eval_seed(profile, profile.seeds.eval + VALIDATION_SEED_OFFSET)
    res = evaluate_arm(task, BASELINE, profile.seeds.train[0], profile, solver="cem",
                       budget="T1", protocol=protocol, progress=progress)  # fmt: skip
    ep, rnd = res.episodes, res.random
    lewm, floor = (
        stats.success_rate(ep["success"].to_numpy()),
        stats.success_rate(rnd["success"].to_numpy()),
    )
    hard = ep["hard"].to_numpy()
    diff = stats.paired_difference(ep["success"].to_numpy(), rnd["success"].to_numpy())
    in_window = GATE_LOW <= lewm.rate <= GATE_HIGH
    low_floor = floor.rate <= FLOOR_FRACTION * lewm.rate
    if in_window and low_floor:
        reason = (f"LeWM {lewm.rate:.0%} lies in [{GATE_LOW:.0%}, {GATE_HIGH:.0%}] and the floor "
                  f"{floor.rate:.0%} is at most half of it: keep {protocol}")  # fmt: skip
    elif not in_window:
        side = "saturates" if lewm.rate > GATE_HIGH else "fails"
        reason = (f"LeWM {lewm.rate:.0%} is outside [{GATE_LOW:.0%}, {GATE_HIGH:.0%}] (the "
                  f"planner {side}): change the protocol or data for every arm")  # fmt: skip
    else:
        reason = (f"the random floor {floor.rate:.0%} is more than half of LeWM's "
                  f"{lewm.rate:.0%}: change the protocol or data for every arm")  # fmt: skip
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
        "reason": reason,
    }


def gate_table(tasks: list[str], profile: Profile, progress: bool = False) -> pd.DataFrame:
    """:func:`protocol_gate` of each task, one row per task."""
    return pd.DataFrame([protocol_gate(t, profile, progress=progress) for t in tasks])


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


__all__ = [
    "ALTERNATIVES",
    "FLOOR_FRACTION",
    "GATE_HIGH",
    "GATE_LOW",
    "SCALE_PROTOCOL",
    "VALIDATION_SEED_OFFSET",
    "gate_table",
    "protocol_choice",
    "protocol_gate",
]
