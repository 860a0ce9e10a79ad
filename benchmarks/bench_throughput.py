"""The throughput levers of a study, each as a new/old ratio measured in one run.

    .venv/bin/python benchmarks/bench_throughput.py [--profile laptop] [--quick]

Run on an otherwise idle machine. "Old" is the study's path before the throughput work (fp32
training, one process with two intra-op threads, one job at a time, every episode of a chunk
rolled out); "new" is the path the study uses now (bf16 autocast training, one thread per job
and one job per core, finished episodes skipped). Every ratio compares work done per second
of wall time on the whole machine, measured back to back in this run: the machine is shared
and its speed drifts by tens of percent between runs, so only ratios within one run count.

1. Training steps (the profile's batch, the LeWM loss): fp32 / bf16, 1 or 2 threads, and two
   1-thread jobs side by side.
2. The trainer's overhead: the full training loop (batch sampling from the real dataset, every
   loss term, logging) against the bare forward + backward of the same model, one thread.
3. Planning rollouts (one T1 iteration of a 25-episode chunk): 1 or 2 threads, two 1-thread
   jobs side by side. bf16 is not used in planning (bench_limits.py: slower, and it reorders
   candidates).
4. One CEM T1 cell, 200 pairs, goal +100 / budget 150, with the cached `lewm` model of
   training seed 0 (``jepa-geometry study tworoom`` builds it): old (two threads, every
   episode rolled out) against new (one thread, finished episodes skipped), alone and two
   cells side by side.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from functools import partial

import torch
from bench_limits import seconds, train_step

from jepa_geometry.envs import make_task
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.jobs import JOB_THREADS, run_parallel
from jepa_geometry.planning.evaluator import EPISODE_BATCH, evaluate_planner
from jepa_geometry.planning.protocol import draw_episode_set, make_protocol
from jepa_geometry.planning.solver import budget_tiers, solver_spec
from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.model import build_world_model
from jepa_geometry.wm.objective import Objective
from jepa_geometry.wm.training import clip_batches, load_world_model, train

TASK = "tworoom"


def per_second(fn: Callable[[], object], reps: int) -> float:
    """Calls of ``fn`` per second (after two warm-up calls)."""
    return 1.0 / seconds(fn, reps, warmup=2)


def _step_rate(profile_name: str, precision: str, threads: int, reps: int) -> float:
    """Training steps per second of one process (a job: runs in a worker too)."""
    torch.set_num_threads(threads)
    prof = load_profile(profile_name)
    gen = torch.Generator().manual_seed(0)
    model = build_world_model(prof, action_dim=2, seed=0).train()
    b, t, size = prof.train.batch_size, prof.data.history + 1, prof.data.image_size
    pixels = torch.randint(0, 256, (b, t, 3, size, size), dtype=torch.uint8, generator=gen)
    actions = torch.randn(b, t, model.action_block_dim, generator=gen)

    step = partial(train_step, model, pixels, actions, prof, gen, precision == "bf16")
    return per_second(step, reps)


def _trainer_rate(profile_name: str, steps: int) -> float:
    """Steps per second of the real training loop (lewm, 1 thread, no checkpoints)."""
    torch.set_num_threads(1)
    prof = load_profile(profile_name, {"train.steps": steps})
    ds = load_dataset(TASK, prof, progress=False)
    model = build_world_model(prof, ds.action.shape[1], seed=0)
    w = arm_weights("lewm", TASK, prof.train.sigreg_weight)
    obj = Objective(
        "lewm",
        w,
        model.embed_dim,
        ds.q.shape[1],
        prof.train.sigreg_projections,
        prof.train.pairs_per_batch,
        0,
    )
    res = train(model, obj, clip_batches(ds, prof, 0), prof.train, 0, progress=False)
    return steps / res.wall_s


def _rollout_rate(profile_name: str, threads: int, reps: int) -> float:
    """T1 chunk rollouts per second of one process."""
    torch.set_num_threads(threads)
    prof = load_profile(profile_name)
    gen = torch.Generator().manual_seed(0)
    model = build_world_model(prof, action_dim=2, seed=0).eval()
    n = EPISODE_BATCH * budget_tiers(prof)["T1"][0]
    z0 = torch.randn(n, 1, model.embed_dim, generator=gen)
    blocks = torch.randn(n, prof.plan.horizon, model.action_block_dim, generator=gen)
    with torch.no_grad():
        return per_second(lambda: model.rollout(z0, blocks), reps)


def _cell_seconds(profile_name: str, threads: int, skip_finished: bool) -> tuple[float, float]:
    """(wall seconds, success) of one CEM T1 cell of 200 pairs with lewm seed 0."""
    torch.set_num_threads(threads)
    prof = load_profile(profile_name)
    data = load_dataset(TASK, prof, progress=False)
    env = make_task(TASK, prof.data.image_size, seed=prof.seeds.eval)
    proto = make_protocol(prof, "goal100_budget150")
    eps = draw_episode_set(env, data, proto, prof.eval.episodes, prof.seeds.eval)
    model = load_world_model(TASK, "lewm", prof.seeds.train[0], prof)
    spec = solver_spec("cem", "T1", prof)
    t0 = time.perf_counter()
    tab = evaluate_planner(
        env, model, data, eps, spec, prof.seeds.eval, progress=False, skip_finished=skip_finished
    )
    env.close()
    return time.perf_counter() - t0, float(tab.success.mean())


def _pair_rate(fn: Callable[..., float], args: tuple) -> float:
    """Aggregate rate of two copies of a rate job run side by side (two 1-thread workers)."""
    return sum(run_parallel(fn, [args, args], workers=2, progress=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="laptop")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, no T1 cell")
    args = ap.parse_args()
    p, reps = args.profile, 8 if args.quick else 20
    rows: list[tuple[str, float, float, str]] = []

    old = _step_rate(p, "fp32", 2, reps)
    bf16_2 = _step_rate(p, "bf16", 2, reps)
    bf16_1 = _step_rate(p, "bf16", 1, reps)
    fp32_1 = _step_rate(p, "fp32", 1, reps)
    pair = _pair_rate(_step_rate, (p, "bf16", 1, reps))
    rows += [
        ("train step: bf16 / fp32, 2 threads", bf16_2, old, "steps/s"),
        ("train step: bf16 / fp32, 1 thread", bf16_1, fp32_1, "steps/s"),
        ("train step bf16: 2 threads / 1 thread", bf16_2, bf16_1, "steps/s"),
        ("train bf16: 2 jobs x 1 thread / 1 job x 2 threads", pair, bf16_2, "steps/s"),
        ("train: new (bf16, 2 jobs x 1 thread) / old (fp32, 2 threads)", pair, old, "steps/s"),
    ]
    trainer = _trainer_rate(p, 60 if args.quick else 200)
    rows.append(("trainer loop / bare step (bf16, 1 thread)", trainer, bf16_1, "steps/s"))

    r2, r1 = _rollout_rate(p, 2, reps), _rollout_rate(p, 1, reps)
    rpair = _pair_rate(_rollout_rate, (p, 1, reps))
    rows += [
        ("rollout: 2 threads / 1 thread", r2, r1, "rollouts/s"),
        ("rollout: 2 jobs x 1 thread / 1 job x 2 threads", rpair, r2, "rollouts/s"),
    ]
    if not args.quick:
        old_s, old_succ = _cell_seconds(p, 2, False)
        new_s, new_succ = _cell_seconds(p, 1, True)
        skip_s, _ = _cell_seconds(p, 2, True)
        both = run_parallel(_cell_seconds, [(p, 1, True)] * 2, workers=2, progress=False)
        pair_s = max(s for s, _ in both)
        rows += [
            ("CEM T1 cell: skip finished / all, 2 threads", 60 / skip_s, 60 / old_s, "cells/min"),
            ("CEM T1 cell: new alone (1 thread) / old", 60 / new_s, 60 / old_s, "cells/min"),
            ("CEM T1 cell: new, 2 at once / old", 120 / pair_s, 60 / old_s, "cells/min"),
        ]
        print(
            f"CEM T1 cell, 200 pairs: old {old_s:.1f} s (success {old_succ:.3f}); skipping "
            f"finished episodes on 2 threads {skip_s:.1f} s; new alone {new_s:.1f} s "
            f"(success {new_succ:.3f}); two new cells side by side {pair_s:.1f} s"
        )

    print(f"profile {p}, {len(os.sched_getaffinity(0))} cores, {JOB_THREADS} threads per job")
    print(f"{'lever':<56}{'new':>10}{'old':>10}  {'unit':<11}{'new/old':>8}")
    for name, new, base, unit in rows:
        print(f"{name:<56}{new:10.2f}{base:10.2f}  {unit:<11}{new / base:8.2f}x")


if __name__ == "__main__":
    main()
