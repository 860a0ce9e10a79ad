"""The paper profile's GPU check: is a cluster's GPU fast enough, and what will the grid cost?

Run on a CUDA machine whenever one is available (under 10 minutes, into a temporary cache):

    .venv/bin/python benchmarks/gpu_check.py                      # Two-Room, 300 steps, cuda
    .venv/bin/python benchmarks/gpu_check.py --task pusht --steps 500

1. Collects a small dataset of the task at the paper profile's 224 px (``--episodes``; the
   timing of collection is reported, its size is not the paper's).
2. Trains one paper-profile ``lewm`` model (ViT-tiny/14, D = 192, batch 128, bf16) for
   ``--steps`` steps on the device and reports steps/s, peak GPU memory, and the projected
   hours per model at the profile's full length and for the whole grid (``jepa_geometry.cluster``'s
   cost model with the measured rate in place of the profile's estimate).
3. Plans one CEM T1 cell (300 samples x 30 iterations, SCALE's protocol) with that model on
   ``--pairs`` pairs and reports seconds per plan against LeWM's published 0.98 s.
4. Times the laptop profile's model (the small CNN at 64 px, fp32) for ``--laptop-steps``
   training steps on the same device, on a synthetic batch (``bench_limits.train_step``, the
   step ``bench_throughput.py`` times on a CPU), to set a GPU beside the 2-core CPU.
5. Projects the grid with the measured rates, the task studies alone and with the κ sweep and
   the scaling study (``grid --with kappa scaling``).

The numbers it prints are what ``cluster.train_steps_per_s`` and ``cluster.plan_seconds`` of
``presets/paper.yaml`` should become for that GPU. ``--device cpu`` with ``--set`` overrides
runs the same path on a CPU (``tests/test_gpu_check.py``), to check the script, not a GPU.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time
from typing import Any

LEWM_PLAN_SECONDS = 0.98  # LeWM's full plan, CEM 300 x 30 (LeWM, Fig. 3; a secondary summary)


def _assign(text: str) -> tuple[str, Any]:
    name, _, raw = text.partition("=")
    try:
        return name, ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return name, raw


def check(
    task: str,
    steps: int,
    episodes: int,
    pairs: int,
    device: str,
    overrides: dict[str, Any],
    laptop_steps: int = 0,
) -> dict[str, Any]:
    """Collect, train and plan as the module docstring says; the measured numbers."""
    import torch

    from jepa_geometry import cluster
    from jepa_geometry.envs.dataset import load_dataset
    from jepa_geometry.extensions import kappa, scaling
    from jepa_geometry.planning.evaluator import evaluate_arm
    from jepa_geometry.planning.protocol import SCALE_PROTOCOL
    from jepa_geometry.profiles import load_profile, with_overrides
    from jepa_geometry.study.spec import available_studies, load_study
    from jepa_geometry.wm.training import train_world_model

    if device == "cuda" and not torch.cuda.is_available():
        raise SystemExit(
            "gpu_check: no CUDA device here (torch.cuda.is_available() is False); "
            "run it on a GPU machine, or pass --device cpu to test the script"
        )
    paper = load_profile("paper")
    short = with_overrides(
        paper,
        {
            "data.task_episodes": {task: [episodes, max(episodes // 4, 2)]},
            "train.steps": steps,
            "train.checkpoint_every": steps,
            "train.log_every": max(steps // 5, 1),
            "cluster.device": device,
            **overrides,
        },
    )
    out: dict[str, Any] = {"task": task, "device": device, "steps": steps}
    if device == "cuda":
        out["gpu"] = torch.cuda.get_device_name(0)
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    data = load_dataset(task, short, progress=False)
    out["collect_frames_per_s"] = len(data.pixels) / (time.perf_counter() - t0)
    art = train_world_model(task, "lewm", 0, short, progress=False)
    summary = art.manifest()["summary"]
    out["train_steps_per_s"] = float(summary["steps_per_s"])
    out["peak_memory_gb"] = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else 0.0
    out["hours_per_model"] = paper.train.steps / out["train_steps_per_s"] / 3600
    res = evaluate_arm(
        task,
        "lewm",
        0,
        short,
        solver="cem",
        tier="T1",
        protocol=SCALE_PROTOCOL,
        n_pairs=pairs,
        progress=False,
    )
    ep = res.episodes
    out["plan_seconds"] = float(ep["plan_seconds"].sum() / max(int(ep["plans"].sum()), 1))
    out["plan_vs_lewm"] = out["plan_seconds"] / LEWM_PLAN_SECONDS
    measured = with_overrides(
        paper,
        {
            "cluster.train_steps_per_s": out["train_steps_per_s"],
            "cluster.plan_seconds": out["plan_seconds"],
        },
    )
    specs = [load_study(t) for t in available_studies()]
    for suffix, extensions in (
        ("", ()),
        ("_with_kappa_scaling", (kappa.GRID, scaling.GRID)),
    ):
        units = cluster.dry_run(specs, measured, extensions)
        summary_rows = cluster.dry_run_summary(units)
        total = summary_rows[summary_rows.stage == "total"].set_index("device")["all (h)"]
        out[f"grid_gpu_hours{suffix}"] = float(total.get("GPU", 0.0))
        out[f"grid_cpu_hours{suffix}"] = float(total.get("CPU", 0.0))
    out["grid_without_dinowm"] = ", ".join(units.attrs["left_out"]) or "none"  # no DINOv2 file
    if laptop_steps:
        out["laptop_train_steps_per_s"] = laptop_rate(device, laptop_steps)
    return out


def laptop_rate(device: str, steps: int) -> float:
    """Training steps/s of the laptop profile's model on ``device`` (after three warm-up
    steps): forward, SIGReg and backward on one synthetic batch of the profile's shape."""
    import torch
    from bench_limits import train_step

    from jepa_geometry.profiles import load_profile
    from jepa_geometry.wm.model import build_world_model

    prof = load_profile("laptop")
    gen = torch.Generator().manual_seed(0)  # SIGReg draws its directions on the CPU
    model = build_world_model(prof, action_dim=2, seed=0).to(device).train()
    b, t, size = prof.train.batch_size, prof.data.history + 1, prof.data.image_size
    pixels = torch.randint(0, 256, (b, t, 3, size, size), dtype=torch.uint8, device=device)
    actions = torch.randn(b, t, model.action_block_dim, device=device)
    for _ in range(3):
        train_step(model, pixels, actions, prof, gen)
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        train_step(model, pixels, actions, prof, gen)
    if device == "cuda":
        torch.cuda.synchronize()
    return steps / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="tworoom")
    ap.add_argument("--steps", type=int, default=300, help="training steps to time")
    ap.add_argument("--episodes", type=int, default=24, help="episodes of the timing dataset")
    ap.add_argument("--pairs", type=int, default=10, help="start/goal pairs of the T1 cell")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument(
        "--laptop-steps", type=int, default=200, help="laptop-model steps to time (0: none)"
    )
    ap.add_argument(
        "--set",
        type=_assign,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a paper-profile override (to test the script on a CPU)",
    )
    args = ap.parse_args(argv)
    before = os.environ.get("JEPA_GEOMETRY_DATA")
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        os.environ["JEPA_GEOMETRY_DATA"] = tmp  # never the book's cache
        try:
            t0 = time.perf_counter()
            out = check(
                args.task,
                args.steps,
                args.episodes,
                args.pairs,
                args.device,
                dict(args.set),
                args.laptop_steps,
            )
            out["wall_s"] = time.perf_counter() - t0
        finally:
            if before is None:
                os.environ.pop("JEPA_GEOMETRY_DATA", None)
            else:
                os.environ["JEPA_GEOMETRY_DATA"] = before
    for key, value in out.items():
        print(f"{key:>22}: {value:.3f}" if isinstance(value, float) else f"{key:>22}: {value}")
    print(
        f"LeWM plans in {LEWM_PLAN_SECONDS} s (CEM 300 x 30): this device takes "
        f"{out['plan_vs_lewm']:.2f} x that; a paper model trains in "
        f"{out['hours_per_model']:.1f} h; the grid needs {out['grid_gpu_hours']:.0f} GPU-h "
        f"and {out['grid_cpu_hours']:.0f} CPU-h ({out['grid_gpu_hours_with_kappa_scaling']:.0f} "
        f"GPU-h with the κ sweep and the scaling study)"
    )
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
