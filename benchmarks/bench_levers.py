"""The laptop build's levers in fp32, each as a new/old ratio measured in one run.

    nice -n 10 .venv/bin/python benchmarks/bench_levers.py [--rounds 5] [--steps 20]

Each lever is timed old then new, ``--rounds`` times, on one thread (a build job's), and
printed as the median of the per-round ratios with their range, so the drift of a shared
machine cancels. Synthetic Two-Room-shaped batches, the laptop profile's model:

- ``channels-last``: a training step (the ``lewm`` loss, forward and backward,
  ``bench_limits.train_step``) with the CNN encoder's convolution weights in the default
  NCHW layout (old) against channels-last, as ``wm.model.CNNEncoder`` holds them (new).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from functools import partial

import torch
from bench_limits import seconds, train_step

from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.model import WorldModel, build_world_model


def _step(channels_last: bool) -> Callable[[], None]:
    """A laptop training step on a fixed synthetic batch, the encoder's convs in the asked
    layout."""
    prof = load_profile("laptop")
    gen = torch.Generator().manual_seed(0)
    model: WorldModel = build_world_model(prof, action_dim=2, seed=0).train()
    layout = torch.channels_last if channels_last else torch.contiguous_format
    model.encoder.convs.to(memory_format=layout)
    b, t, size = prof.train.batch_size, prof.data.history + 1, prof.data.image_size
    pixels = torch.randint(0, 256, (b, t, 3, size, size), dtype=torch.uint8, generator=gen)
    actions = torch.randn(b, t, model.action_block_dim, generator=gen)
    return partial(train_step, model, pixels, actions, prof, gen)


def ratio(old: Callable[[], object], new: Callable[[], object], rounds: int, reps: int) -> str:
    """Median and range of new/old speed over ``rounds`` alternated rounds."""
    ratios, olds, news = [], [], []
    for _ in range(rounds):
        o, n = seconds(old, reps, warmup=2), seconds(new, reps, warmup=2)
        ratios.append(o / n)
        olds.append(1 / o)
        news.append(1 / n)
    return (
        f"old {statistics.median(olds):7.2f}/s  new {statistics.median(news):7.2f}/s  "
        f"new/old {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20, help="timed calls per round and side")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"1 thread, {args.rounds} rounds of {args.steps} calls")
    print(
        "channels-last training step: " + ratio(_step(False), _step(True), args.rounds, args.steps)
    )


if __name__ == "__main__":
    main()
