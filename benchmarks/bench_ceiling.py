"""The ceiling's cost, measured before any full run: one replan and one whole pair per task.

    MUJOCO_GL=egl .venv/bin/python benchmarks/bench_ceiling.py            # all five tasks
    MUJOCO_GL=egl .venv/bin/python benchmarks/bench_ceiling.py --tasks tworoom,cube

For each task, the ceiling (the simulator as the world model,
:mod:`jepa_geometry.planning.ceiling`) plans one start/goal pair with CEM at ``--tier`` of
``--profile`` under ``--protocol``, on one thread (as every build job runs), and reports

* **per replan**: the solve's wall time (``samples x iterations`` simulated rollouts of
  ``horizon x frameskip`` env steps each, every one from a restored state), and the time
  per simulated rollout;
* **per pair**: the wall time of the whole pair (every replan and the executed steps);
* **projections**: ``pairs x plans per pair x sum over cells of (rollouts per replan x time
  per rollout)``, with the protocol's number of plans per pair (an upper bound: a pair stops
  at success, and one solved at the start plans nothing), for the five CEM tiers and for a
  task study's grid (``study.cells.plan_cells`` under SCALE's protocol: CEM, iCEM, MPPI and MPPI
  at swm's temperature at T1..T5), for ``--pairs`` and for the subset ``--subset``; the
  studies' own rule (``study.cells.ceiling_rule_pairs``) uses the rollout time printed here.

First, per task, **restore exactness**: the largest absolute difference between the states an
environment reaches when stepped without interruption (``--check-steps`` behaviour-policy
steps after a reset) and those the ceiling's restore-then-step (``ceiling.simulate``) reaches
from the same start in an environment that held another scene before (0 means exact).

The pair is the first of the protocol's episode set (drawn from ``--data-profile``'s dataset:
a simulated rollout costs the same whichever pair it starts from) that is not solved at the
start. The datasets are collected first if missing, into the usual cache
(``JEPA_GEOMETRY_DATA`` moves it). Timings on a busy machine are upper bounds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from jepa_geometry.envs import TASKS, make_task
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.jobs import job_threads
from jepa_geometry.planning.ceiling import simulate
from jepa_geometry.planning.evaluator import evaluate_ceiling
from jepa_geometry.planning.protocol import (
    PROTOCOLS,
    SCALE_PROTOCOL,
    draw_episode_set,
    make_protocol,
)
from jepa_geometry.planning.solver import TIERS, budget_tiers, solver_spec
from jepa_geometry.profiles import PROFILES, load_profile
from jepa_geometry.study.cells import plan_cells

STUDY_CELLS = [(c.solver, c.tier) for c in plan_cells([SCALE_PROTOCOL])]
"""A task study's solver cells under SCALE's protocol (``study.cells.plan_cells``), for the
projection of a ceiling over the whole grid (the studies plan it on CEM's five tiers only,
``study.cells.ceiling_cells``)."""


def rollouts_per_replan(profile, cells) -> int:
    """Simulated rollouts of one replan round summed over ``cells`` (samples x iterations)."""
    tiers = budget_tiers(profile)
    return sum(tiers[t][0] * tiers[t][1] for _, t in cells)


def hours(seconds: float) -> str:
    return f"{seconds / 3600:8.1f} h"


def restore_error(task_name: str, steps: int, seed: int = 7) -> float:
    """max |s_t - s'_t| over the first ``steps`` states of one behaviour-policy trajectory,
    stepped without interruption (s) and by restore-then-step from its start after another
    scene (s'), in two environments of the task."""
    recorder, planner = make_task(task_name, 32, seed=seed), make_task(task_name, 32, seed=seed)
    try:
        recorder.reset(seed=seed)
        rng = np.random.default_rng(seed)
        start, actions, states = recorder.get_state(), [], []
        for _ in range(steps):
            actions.append(recorder.behaviour_action(rng))
            recorder.step(actions[-1])
            states.append(recorder.get_state())
        planner.reset(seed=seed + 1)
        for _ in range(10):  # another scene first
            planner.step(planner.behaviour_action(rng))
        worst = 0.0
        for k in range(5, steps + 1, 5):
            reached = simulate(planner, start, np.asarray(actions[:k]))
            worst = max(worst, float(np.max(np.abs(reached - states[k - 1]))))
        return worst
    finally:
        recorder.close()
        planner.close()


def measure(task_name: str, args: argparse.Namespace) -> dict:
    """Plan one moving pair of ``task_name`` with the ceiling; its replan and pair times."""
    data_profile = load_profile(args.data_profile)
    profile = load_profile(args.profile)
    data = load_dataset(task_name, data_profile, workers=1, progress=False)
    task = make_task(task_name, data_profile.data.image_size, seed=data_profile.seeds.eval)
    try:
        proto = make_protocol(profile, args.protocol)
        eps = draw_episode_set(task, data, proto, args.candidates, data_profile.seeds.eval)
        moving = np.flatnonzero(~eps.pairs["solved_at_start"].to_numpy())
        if not len(moving):
            raise SystemExit(f"{task_name}: all {args.candidates} pairs are solved at the start")
        include = np.zeros(len(eps), dtype=bool)
        include[moving[0]] = True
        spec = solver_spec("cem", args.tier, profile)
        t0 = time.perf_counter()
        with job_threads():
            row = evaluate_ceiling(
                task, data, eps, spec, profile.seeds.eval, include, progress=False
            )
        pair_seconds = time.perf_counter() - t0
    finally:
        task.close()
    plans = int(row["plans"].iloc[0])
    replan = float(row["plan_seconds"].iloc[0]) / plans
    return {
        "task": task_name,
        "replan_s": replan,
        "rollout_ms": 1e3 * replan / spec.rollouts,
        "pair_s": pair_seconds,
        "plans": plans,
        "success": bool(row["success"].iloc[0]),
        "max_plans": proto.plans,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", default=",".join(TASKS), help="comma-separated tasks (default: all)")
    p.add_argument("--profile", choices=PROFILES, default="laptop", help="tiers and horizon")
    p.add_argument("--data-profile", choices=PROFILES, default="smoke", help="dataset for pairs")
    p.add_argument("--tier", choices=TIERS, default="T1")
    p.add_argument("--protocol", choices=tuple(PROTOCOLS), default="goal25_budget50")
    p.add_argument("--pairs", type=int, default=200, help="pairs per cell of a full run")
    p.add_argument("--subset", type=int, default=50, help="pairs of the stated subset")
    p.add_argument("--candidates", type=int, default=20, help="pairs drawn to find a moving one")
    p.add_argument("--check-steps", type=int, default=50, help="steps of the restore check")
    p.add_argument("--restore-only", action="store_true", help="the restore check only")
    args = p.parse_args()
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    bad = [t for t in tasks if t not in TASKS]
    if bad or not tasks:
        raise SystemExit(f"unknown task(s) {bad or args.tasks!r}; valid: {', '.join(TASKS)}")
    print(f"restore-then-step against an uninterrupted trajectory ({args.check_steps} steps):")
    for name in tasks:
        print(f"  {name:10s} max |state difference| = {restore_error(name, args.check_steps):.3g}")
    if args.restore_only:
        return
    profile = load_profile(args.profile)
    proto = make_protocol(profile, args.protocol)
    cem = rollouts_per_replan(profile, [("cem", t) for t in TIERS])
    grid = rollouts_per_replan(profile, STUDY_CELLS)
    print(
        f"ceiling, CEM {args.tier} of {args.profile} ({solver_spec('cem', args.tier, profile)}), "
        f"protocol {proto.name} (<= {proto.plans} plans per pair of {proto.plan_steps} steps), "
        f"one thread; rollouts per replan round: {cem} over the five CEM tiers, {grid} over a "
        f"study's grid"
    )
    header = (
        f"{'task':10s} {'replan s':>9s} {'rollout ms':>10s} {'pair s':>8s} {'plans':>5s} "
        f"{'CEM 5 tiers x ' + str(args.pairs):>18s} {'x ' + str(args.subset):>10s} "
        f"{'grid x ' + str(args.pairs):>12s} {'x ' + str(args.subset):>10s}"
    )
    print(header)
    for name in tasks:
        m = measure(name, args)
        per_rollout = m["rollout_ms"] / 1e3
        pair_upper = proto.plans * per_rollout  # seconds per rollout-per-replan, per pair

        def cost(pairs: int, rollouts: int, pair_upper=pair_upper) -> str:
            return hours(pairs * pair_upper * rollouts)

        print(
            f"{name:10s} {m['replan_s']:9.2f} {m['rollout_ms']:10.2f} {m['pair_s']:8.1f} "
            f"{m['plans']:5d} {cost(args.pairs, cem):>18s} {cost(args.subset, cem):>10s} "
            f"{cost(args.pairs, grid):>12s} {cost(args.subset, grid):>10s}"
            f"   (pair {'reached' if m['success'] else 'not reached'})",
            flush=True,
        )


if __name__ == "__main__":
    main()
