"""The gate before a task's arms: does SCALE's protocol discriminate on this task?

Before any arm but the baseline is trained on a new task, the first training seed of ``lewm``
plans one cell (CEM at T1, the profile's evaluation pairs) under SCALE's protocol, goal +25 /
budget 50, with the random policy on the same pairs, the fraction solved at the start and the
hard subset. **The rule, fixed before any task's gate was run** (issue #16): the protocol is
kept when LeWM's success lies between :data:`GATE_LOW` and :data:`GATE_HIGH` and the random
floor is at most half of it; otherwise the protocol (goal distance, budget, hard pairs) or the
data must change for every arm alike before any other arm is trained. Nothing here looks at an
arm other than the baseline.
"""

from __future__ import annotations

import pandas as pd

from jepa_geometry import stats
from jepa_geometry.planning.protocol import evaluate_arm
from jepa_geometry.profiles import Profile
from jepa_geometry.study.spec import BASELINE

GATE_LOW, GATE_HIGH = 0.30, 0.85  # LeWM's CEM T1 success must lie in this window
FLOOR_FRACTION = 0.5  # and the random floor at most this fraction of it


def protocol_gate(
    task: str, profile: Profile, protocol: str = "goal25_budget50", progress: bool = False
) -> dict[str, object]:
    """The gate's measurements and verdict for ``task`` (the baseline is trained if missing).

    Keys: ``task``, ``protocol``, ``lewm`` and ``random`` (success with Wilson 95 % intervals,
    as text), ``solved at start``, ``hard pairs``, ``lewm hard``, ``random hard``,
    ``paired lewm - random`` (paired bootstrap interval), ``discriminates`` (the rule) and
    ``reason`` (one sentence).
    """
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
        "lewm": str(lewm),
        "random": str(floor),
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


__all__ = ["FLOOR_FRACTION", "GATE_HIGH", "GATE_LOW", "gate_table", "protocol_gate"]
