"""Planning speed: time per plan at T1 per solver, the arms side by side, a full evaluation.

Run under the shared lock, on an otherwise idle machine:

    .venv/bin/python benchmarks/bench_planning.py --profile laptop

1. **Time per plan at T1** for CEM, iCEM and MPPI with the profile's world model: one batched
   solve over ``--episodes`` start/goal pairs divided by the number of pairs (how evaluation
   plans), and one pair alone. Start and goal embeddings come from held-out dataset frames.
2. **Zero planning-time overhead** (a claim of both papers): the lewm, scale, aux and anisowm
   models share one architecture, so their plans should cost the same. Their CEM T1 solves
   are timed interleaved in one run, in a shuffled order per repetition.
3. **A full evaluation** (``--full-eval``): the profile's whole episode set with CEM T1 for
   lewm; the wall time comes from the cached result's manifest (recorded when it was built).

Trained checkpoints are used when they are in the cache; with ``--train`` missing ones are
trained first; otherwise a freshly initialised model of the same architecture is timed (the
cost of a plan depends on the architecture and shapes only), and the output says so.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch

from jepa_geometry.envs.dataset import dataset_artifact, load_dataset
from jepa_geometry.planning.evaluator import EPISODE_BATCH, evaluate_arm
from jepa_geometry.planning.protocol import make_protocol
from jepa_geometry.planning.solver import SOLVERS, Planner, solver_spec
from jepa_geometry.profiles import PROFILES, load_profile
from jepa_geometry.wm.arms import ARMS
from jepa_geometry.wm.model import build_world_model, encode_frames
from jepa_geometry.wm.training import load_world_model, world_model_artifact


def get_model(task: str, arm: str, profile, action_dim: int, train: bool):
    art = world_model_artifact(task, arm, 0, profile)
    if art.exists() or train:
        return load_world_model(task, arm, 0, profile), "trained"
    return build_world_model(profile, action_dim, seed=0).eval(), "untrained (same architecture)"


def embeddings(model, data, n: int, offset: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Context (n, 1, D) and goal (n, D) embeddings of held-out frames ``offset`` apart."""
    rows = np.flatnonzero(np.isin(data.episode, data.heldout_episodes))
    rows = rows[(rows + offset < len(data.episode))]
    rows = rows[data.episode[rows + offset] == data.episode[rows]]
    pick = np.random.default_rng(seed).choice(rows, size=n, replace=False)
    z0 = encode_frames(model, data.pixels[pick])[:, None]
    return z0, encode_frames(model, data.pixels[pick + offset])


def time_plan(planner: Planner, z0, zg, repeats: int) -> list[float]:
    planner.plan(z0[:2], zg[:2], seed=0)  # warm-up (allocator, lazy imports)
    return [planner.plan(z0, zg, seed=r).seconds for r in range(repeats)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="laptop", choices=PROFILES)
    p.add_argument("--task", default="tworoom")
    p.add_argument("--episodes", type=int, default=EPISODE_BATCH, help="pairs in one batch")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--train", action="store_true", help="train missing checkpoints first")
    p.add_argument("--full-eval", action="store_true", help="also run the full episode set")
    args = p.parse_args()

    profile = load_profile(args.profile)
    proto = make_protocol(profile)
    data = load_dataset(args.task, profile)
    a_dim = data.action.shape[1]
    results: dict = {
        "profile": args.profile,
        "task": args.task,
        "torch_threads": torch.get_num_threads(),
        "dataset": dataset_artifact(args.task, profile).key,
    }
    print(f"{args.task}, profile {args.profile}, torch threads {torch.get_num_threads()}")

    # 1. time per plan at T1, per solver
    lewm, status = get_model(args.task, "lewm", profile, a_dim, args.train)
    print(f"\n1. time per plan at T1 (lewm model: {status})")
    z0, zg = embeddings(lewm, data, args.episodes, proto.goal_offset, profile.seeds.eval)
    results["per_solver"] = {}
    for solver in SOLVERS:
        spec = solver_spec(solver, "T1", profile, task=args.task)
        planner = Planner(lewm, spec, a_dim, proto.frameskip)
        batched = time_plan(planner, z0, zg, args.repeats)
        single = time_plan(planner, z0[:1], zg[:1], args.repeats)
        per_plan = statistics.median(batched) / args.episodes
        one = statistics.median(single)
        results["per_solver"][solver] = {
            "spec": str(spec),
            "batched_s_per_plan": per_plan,
            "single_s_per_plan": one,
        }
        print(
            f"  {str(spec):<45} {1e3 * per_plan:7.1f} ms/plan batched over {args.episodes}, "
            f"{1e3 * one:7.1f} ms alone"
        )

    # 2. zero planning-time overhead: the four arms side by side
    models = {m: get_model(args.task, m, profile, a_dim, args.train) for m in ARMS}
    kinds = ", ".join(f"{m}: {s}" for m, (_, s) in models.items())
    print(f"\n2. CEM T1 plan time per arm, interleaved ({kinds})")
    spec = solver_spec("cem", "T1", profile)
    planners = {m: Planner(mdl, spec, a_dim, proto.frameskip) for m, (mdl, _) in models.items()}
    ctx = {
        m: embeddings(mdl, data, args.episodes, proto.goal_offset, 0)
        for m, (mdl, _) in models.items()
    }
    for m, pl in planners.items():
        pl.plan(ctx[m][0][:2], ctx[m][1][:2], seed=0)
    times: dict[str, list[float]] = {m: [] for m in ARMS}
    order = list(ARMS)
    rng = np.random.default_rng(0)
    for r in range(args.repeats):
        rng.shuffle(order)
        for m in order:
            times[m].append(planners[m].plan(*ctx[m], seed=r).seconds / args.episodes)
    base = statistics.median(times["lewm"])
    results["per_method"] = {}
    for m in ARMS:
        med = statistics.median(times[m])
        status = models[m][1]
        results["per_method"][m] = {"median_s_per_plan": med, "all": times[m], "status": status}
        print(
            f"  {m:<8} {1e3 * med:7.2f} ms/plan (min {1e3 * min(times[m]):.2f}, max "
            f"{1e3 * max(times[m]):.2f}), ratio to lewm {med / base:.3f}"
        )

    # 3. a full evaluation of the profile's episode set
    if args.full_eval:
        t0 = time.perf_counter()
        res = evaluate_arm(args.task, "lewm", 0, profile, solver="cem", tier="T1")
        took = time.perf_counter() - t0
        ep = res.episodes
        plan_s = float(ep["plan_seconds"].sum())
        results["full_eval"] = {
            "episodes": len(ep),
            "success": float(ep["success"].mean()),
            "random_success": float(res.random["success"].mean()),
            "eval_seconds_at_build": res.eval_seconds,
            "planning_seconds": plan_s,
            "this_call_seconds": took,
        }
        print(
            f"\n3. full evaluation, {len(ep)} pairs, CEM T1: episode loop {res.eval_seconds:.1f} s "
            f"when built (planning {plan_s:.1f} s of it); success "
            f"{100 * ep['success'].mean():.1f}% (random {100 * res.random['success'].mean():.1f}%)"
        )
    print("\n" + json.dumps(results, default=float))


if __name__ == "__main__":
    main()
