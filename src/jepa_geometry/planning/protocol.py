"""The paired goal-reaching protocol of LeWM and SCALE: its protocols and episode sets.

Protocol (LeWM's evaluation code, ``eval.py`` of ``lucas-maes/le-wm``, and SCALE's episode
sets, ``scripts/gen_episodes.py`` of the authors' repository; our choices where these are
silent are explained in the book's *Reconstructions* page, section rec-protocol,
``book/reconstructions.md``):

1. **Pairs.** Draw ``n`` rows without replacement (``default_rng(eval seed)``) among the
   held-out dataset rows that have a frame ``goal_offset`` env steps later in the same
   episode. The start is the row's simulator state; the goal is the state *and the dataset
   frame* ``goal_offset`` steps later, so the goal is reachable within the budget.
2. **Planning and success** (:mod:`jepa_geometry.planning.evaluator`): plan from the start
   towards the goal frame within ``budget`` env steps; success if the task's test fires.

Three protocols are named: ``goal25_budget50`` (goal offset 25, budget 50: every task in the
official code, hence in SCALE), ``goal100_budget150`` (the LeWM paper's Two-Room numbers) and
``goal50_budget100`` (ours: the middle ground a task's protocol gate may need,
:mod:`jepa_geometry.study.decisions.gate`); ``goal25_budget50_moving`` is SCALE's on moving
pairs only (:data:`MOVING_PROTOCOLS`); ``profile`` takes ``profile.eval``.

Because the 25-step protocol nearly saturates on Two-Room and is degenerate on Cube (book's
*Reconstructions* page, section rec-hard-subsets), every evaluation also reports the
fraction of pairs solved at the start, a uniform random policy on the same pairs (the
floor), and success on a **hard subset** (start–goal distance above the task's ``hard_threshold``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.artifacts import stable_spec
from jepa_geometry.envs import Task, task_class
from jepa_geometry.envs.dataset import dataset_artifact
from jepa_geometry.envs.episodes import EpisodeData
from jepa_geometry.profiles import Profile

PROTOCOLS: dict[str, tuple[int, int]] = {
    "goal25_budget50": (25, 50),  # SCALE: every task in the official code
    "goal100_budget150": (100, 150),  # the LeWM paper's Two-Room numbers
    "goal50_budget100": (
        50,
        100,
    ),  # ours: between the two (study.decisions.gate's last alternative)
    "goal25_budget50_moving": (25, 50),  # SCALE's, on moving pairs only (Cube's ladder)
}
MOVING_PROTOCOLS: frozenset[str] = frozenset({"goal25_budget50_moving"})
"""Protocols whose pairs are drawn among the *moving* ones only: start-goal distance above the
task's hard threshold (``Task.hard_threshold``), i.e. SCALE's hard subset made the whole
evaluation set. On Cube most 25-step pairs are solved at the start (the oracle mostly moves the
arm), so a random policy "succeeds" as often as any planner; restricting the pairs is one of
the levers of its gate (:mod:`jepa_geometry.study.decisions.gate`)."""
SCALE_PROTOCOL = "goal25_budget50"  # the protocol of SCALE's tables (the official code's)
# The names these protocols had when the first artifacts were cached; artifact keys keep them,
# so renaming a protocol never invalidates a cache.
KEY_NAMES: dict[str, str] = {"goal25_budget50": "code", "goal100_budget150": "lewm_tworoom"}


class EvaluationError(ValueError):
    """A protocol, episode set or model does not fit the evaluation."""


@dataclass(frozen=True)
class Protocol:
    """Goal offset and budget in env steps; plans of ``horizon`` blocks of ``frameskip``."""

    name: str
    goal_offset: int
    budget: int
    horizon: int = 5
    frameskip: int = 5
    history: int = 1  # real frames given to the planner (official protocol: 1)
    moving: bool = False  # pairs drawn among the moving ones only (MOVING_PROTOCOLS)

    def __post_init__(self) -> None:
        for k in ("goal_offset", "budget", "horizon", "frameskip", "history"):
            if getattr(self, k) < 1:
                raise EvaluationError(f"protocol {self.name!r}: {k} must be >= 1")
        if self.history != 1:
            raise EvaluationError("only history 1 (the official protocol) is implemented")

    @property
    def plan_steps(self) -> int:
        """Env steps executed per plan (the whole plan: receding horizon = horizon)."""
        return self.horizon * self.frameskip

    @property
    def plans(self) -> int:
        return math.ceil(self.budget / self.plan_steps)


def make_protocol(profile: Profile, name: str = "profile") -> Protocol:
    """``profile`` (``profile.eval``) or one of :data:`PROTOCOLS`."""
    if name == "profile":
        offset, budget = profile.eval.goal_offset, profile.eval.budget
    elif name in PROTOCOLS:
        offset, budget = PROTOCOLS[name]
    else:
        valid = ", ".join(("profile", *PROTOCOLS))
        raise EvaluationError(f"unknown protocol {name!r}; valid: {valid}")
    return Protocol(
        name,
        offset,
        budget,
        profile.plan.horizon,
        profile.data.frameskip,
        moving=name in MOVING_PROTOCOLS,
    )


@dataclass(frozen=True)
class EpisodeSet:
    """Start/goal pairs: ``pairs`` (one row per episode) plus the states and goal frames."""

    task: str
    protocol: Protocol
    seed: int
    pairs: pd.DataFrame  # episode, data_episode, start_step, start_row, goal_row, ...
    start_states: np.ndarray  # (n, S) raw simulator states
    goal_states: np.ndarray  # (n, S)
    goal_pixels: np.ndarray  # (n, H, W, 3) uint8 dataset frames

    def __len__(self) -> int:
        return len(self.pairs)


def candidate_rows(data: EpisodeData, goal_offset: int) -> np.ndarray:
    """Held-out rows r whose episode has a row goal_offset steps later (at r + goal_offset)."""
    episode, step = np.asarray(data.episode), np.asarray(data.step)
    held = np.isin(episode, np.asarray(data.heldout_episodes))
    rows = np.flatnonzero(held)
    goal = rows + goal_offset
    inside = goal < len(episode)
    rows, goal = rows[inside], goal[inside]
    ok = (episode[goal] == episode[rows]) & (step[goal] == step[rows] + goal_offset)
    return rows[ok]


def pair_difficulty(task: Task, data: EpisodeData, goal_offset: int) -> dict[str, float]:
    """How hard a protocol is before any model: all held-out (start, goal) pairs of the dataset.

    Returns the number of pairs, the fraction already solved at the start (the task's success
    test between start and goal) and the median start-goal distance in the task's own units
    (``task.goal_distance``). A protocol whose pairs are mostly solved at the start cannot
    discriminate between planners.
    """
    rows = candidate_rows(data, goal_offset)
    solved = [task.is_success(data.state[r], data.state[r + goal_offset]) for r in rows]
    dist = [task.goal_distance(data.state[r], data.state[r + goal_offset]) for r in rows]
    return {
        "pairs": len(rows),
        "solved at start": float(np.mean(solved)) if len(rows) else float("nan"),
        "median start-goal distance": float(np.median(dist)) if len(rows) else float("nan"),
    }


def draw_episode_set(
    task: Task, data: EpisodeData, protocol: Protocol, n: int, seed: int, hard: float | None = None
) -> EpisodeSet:
    """Draw ``n`` pairs from the held-out episodes of ``data`` (see module docstring, step 1).

    ``task`` supplies the success test and ``goal_distance`` for the diagnostic columns;
    ``hard`` is the hard-subset threshold (default: the task's ``hard_threshold``).
    """
    if n < 1:
        raise EvaluationError(f"need at least 1 episode, got {n}")
    rows = candidate_rows(data, protocol.goal_offset)
    if protocol.moving:
        threshold = hard_threshold(data.task) if hard is None else hard
        moved = np.array(
            [task.goal_distance(data.state[r], data.state[r + protocol.goal_offset]) for r in rows]
        )
        rows = rows[moved > threshold]
        if len(rows) < n:
            raise EvaluationError(
                f"asked for {n} episodes but only {len(rows)} held-out {data.task} pairs move "
                f"more than {threshold:g} in {protocol.goal_offset} steps (protocol "
                f"{protocol.name!r}); collect more held-out episodes"
            )
    if len(rows) == 0:
        lengths = np.bincount(
            np.asarray(data.episode)[np.isin(data.episode, data.heldout_episodes)]
        )
        longest = int(lengths.max()) if lengths.size else 0
        raise EvaluationError(
            f"goal offset {protocol.goal_offset} (protocol {protocol.name!r}) is longer than the "
            f"remaining steps of every held-out {data.task} episode (longest: {longest} frames)"
        )
    if n > len(rows):
        raise EvaluationError(
            f"asked for {n} episodes but only {len(rows)} held-out {data.task} rows have a goal "
            f"{protocol.goal_offset} steps later"
        )
    pick = np.sort(np.random.default_rng(seed).choice(rows, size=n, replace=False))
    goal = pick + protocol.goal_offset
    start_states = np.asarray(data.state[pick], dtype=np.float64)
    goal_states = np.asarray(data.state[goal], dtype=np.float64)
    dist = np.array(
        [task.goal_distance(s, g) for s, g in zip(start_states, goal_states, strict=True)]
    )
    solved = np.array(
        [task.is_success(s, g) for s, g in zip(start_states, goal_states, strict=True)]
    )
    pairs = pd.DataFrame(
        {
            "episode": np.arange(n),
            "data_episode": np.asarray(data.episode)[pick],
            "start_step": np.asarray(data.step)[pick],
            "start_row": pick,
            "goal_row": goal,
            "start_distance": dist,
            "solved_at_start": solved,
            "hard": dist > (hard_threshold(data.task) if hard is None else hard),
        }
    )
    return EpisodeSet(
        task=data.task,
        protocol=protocol,
        seed=seed,
        pairs=pairs,
        start_states=start_states,
        goal_states=goal_states,
        goal_pixels=np.asarray(data.pixels[goal]),
    )


SUBSET_LABEL = 1_000_033  # seed label of pair subsets, distinct from plan rounds


def pair_subset(n: int, pairs: int, seed: int) -> np.ndarray:
    """A seeded subset of ``pairs`` of the ``n`` pairs of a set, as an (n,) bool mask.

    The first ``pairs`` entries of one permutation of the pair indices, drawn with
    ``default_rng(SeedSequence([seed, SUBSET_LABEL]))``: independent of the pairs' order in the
    set (which follows the dataset rows), and nested, so a larger subset contains every
    smaller one and extends its results. For an arm too slow to plan every pair (the ceiling
    on a slow simulator).
    """
    if isinstance(pairs, bool) or not isinstance(pairs, int | np.integer) or not 1 <= pairs <= n:
        raise EvaluationError(
            f"pairs must be an integer in 1..{n} (the set's pairs), got {pairs!r}"
        )
    order = np.random.default_rng(np.random.SeedSequence([seed, SUBSET_LABEL])).permutation(n)
    mask = np.zeros(n, dtype=bool)
    mask[order[:pairs]] = True
    return mask


def hard_threshold(task: str) -> float:
    """The task's hard-subset threshold (``Task.hard_threshold``: start–goal distance in the
    task's own units, fixed before any evaluation; book: rec-hard-subsets)."""
    try:
        return task_class(task).hard_threshold
    except ValueError as e:
        raise EvaluationError(str(e)) from None


# --------------------------------------------------------------------------------------
# Running episodes: one simulator, states swapped in and out per episode
# --------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# Cached evaluations of trained models, and their summaries
# --------------------------------------------------------------------------------------


def _protocol_key(protocol: Protocol) -> dict[str, Any]:
    """The protocol's part of an episode-set key; ``moving`` only when set, so the keys of
    every episode set cached before the field existed stay valid."""
    key = {**asdict(protocol), "name": KEY_NAMES.get(protocol.name, protocol.name)}
    return stable_spec(key, added={"moving": False})


def episode_set_spec(task: str, profile: Profile, protocol: Protocol, n: int, seed: int) -> dict:

    return {
        "task": task,
        "dataset": dataset_artifact(task, profile).key,
        "protocol": _protocol_key(protocol),
        "episodes": n,
        "eval_seed": seed,
        "hard_threshold": hard_threshold(task),
        "version": 1,
    }
