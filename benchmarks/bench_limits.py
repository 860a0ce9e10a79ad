"""How far the laptop study is from this CPU's arithmetic limit, and what bf16 would change.

    .venv/bin/python benchmarks/bench_limits.py [--profile laptop]

Run on an otherwise idle machine (it measures speed). For one training step (the profile's
batch of clips, forward + backward of the model and the LeWM loss) and for the rollouts of one
T1 plan (samples x iterations candidates of ``horizon`` blocks, for one episode chunk), it
counts the floating-point operations with ``torch.utils.flop_counter`` and times them, then
compares the achieved FLOP/s with the machine's measured matmul peaks (a 2048 x 2048 matmul,
all threads) in fp32 and bf16. Ratios are measured in one run; absolute times drift with the
machine's other load. It also prints bf16 autocast against fp32 for both workloads (a change
of numeric precision is a change of protocol: the throughput issue decides whether to adopt it).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from functools import partial

import torch
from torch.utils.flop_counter import FlopCounterMode

from jepa_geometry.planning.evaluator import EPISODE_BATCH
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.losses import sigreg
from jepa_geometry.wm.model import build_world_model


def seconds(fn: Callable[[], object], reps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def flops(fn: Callable[[], object]) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


def train_step(model, pixels, actions, prof, gen, bf16: bool = False) -> None:
    """One forward + backward of the LeWM loss (prediction + SIGReg) on a fixed batch, with the
    model's forward under bf16 autocast if asked (the trainer's ``precision``)."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        z = model.encode(pixels)
        z_hat = model.predict(z[:, :-1], actions[:, :-1])
    z, z_hat = z.float(), z_hat.float()
    loss = ((z_hat - z[:, 1:]) ** 2).mean() + prof.train.sigreg_weight * sigreg(
        z.transpose(0, 1), prof.train.sigreg_projections, generator=gen
    )
    model.zero_grad(set_to_none=True)
    loss.backward()


def matmul_peak(dtype: torch.dtype, n: int = 2048, reps: int = 10) -> float:
    a = torch.randn(n, n).to(dtype)
    b = torch.randn(n, n).to(dtype)
    return 2 * n**3 / seconds(lambda: a @ b, reps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="laptop")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    prof = load_profile(args.profile)
    gen = torch.Generator().manual_seed(0)
    model = build_world_model(prof, action_dim=2, seed=0)
    b, t, size = prof.train.batch_size, prof.data.history + 1, prof.data.image_size
    pixels = torch.randint(0, 256, (b, t, 3, size, size), dtype=torch.uint8, generator=gen)
    actions = torch.randn(b, t, model.action_block_dim, generator=gen)

    samples, iterations = budget_tiers(prof)["T1"]
    n = EPISODE_BATCH * samples  # candidates of one solver iteration for one episode chunk
    z0 = torch.randn(n, 1, model.embed_dim, generator=gen)
    blocks = torch.randn(n, prof.plan.horizon, model.action_block_dim, generator=gen)

    @torch.no_grad()
    def rollout(bf16: bool = False) -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            model.rollout(z0, blocks)

    model.train()
    step = partial(train_step, model, pixels, actions, prof, gen)
    step_flops, step_s = flops(step), seconds(step, args.reps)
    step_bf16_s = seconds(lambda: step(bf16=True), args.reps)
    model.eval()
    roll_flops, roll_s = flops(rollout), seconds(rollout, args.reps)
    roll_bf16_s = seconds(lambda: rollout(True), args.reps)
    fp32, bf16 = matmul_peak(torch.float32), matmul_peak(torch.bfloat16)

    print(
        f"profile {prof.name}, {torch.get_num_threads()} threads, "
        f"{model.num_parameters():,} parameters"
    )
    print(
        f"matmul peak (2048^2): fp32 {fp32 / 1e9:.1f} GFLOP/s, bf16 {bf16 / 1e9:.1f} GFLOP/s "
        f"(bf16/fp32 {bf16 / fp32:.2f}x)"
    )
    print(
        f"{'workload':<44}{'GFLOP':>8}{'ms':>9}{'GFLOP/s':>9}{'% fp32 peak':>13}"
        f"{'bf16 speed-up':>15}"
    )
    plans = iterations  # one T1 plan of a chunk = `iterations` rollouts of n candidates
    for name, f, s, s16 in (
        (f"training step ({b} clips x {t} frames, {size} px)", step_flops, step_s, step_bf16_s),
        (f"rollout ({n} candidates x {prof.plan.horizon} blocks)", roll_flops, roll_s, roll_bf16_s),
        (
            f"one T1 plan of {EPISODE_BATCH} episodes ({plans} rollouts)",
            plans * roll_flops,
            plans * roll_s,
            plans * roll_bf16_s,
        ),
    ):
        rate = f / s
        print(
            f"{name:<44}{f / 1e9:8.2f}{1e3 * s:9.1f}{rate / 1e9:9.1f}{100 * rate / fp32:12.1f}%"
            f"{s / s16:14.2f}x"
        )


if __name__ == "__main__":
    main()
