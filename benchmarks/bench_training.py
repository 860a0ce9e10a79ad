"""Training speed of the world model on this machine (run under the heavy lock).

    .venv/bin/python benchmarks/bench_training.py [--profile laptop]

Measures, on the profile's Two-Room dataset (collected first if missing):

1. throughput (clips/s, steps/s) of a training step for each arm;
2. the cost of the regularizers -- SIGReg, ΛReg and SCALE forward + backward on the batch's
   embeddings, which is their marginal cost since the encoder's backward is shared with the
   prediction loss -- as a share of a full ``scale+anisowm`` step (target: <= 10 %);
3. full training runs through the CLI (``jepa-geometry train``) in a subprocess: wall time,
   peak resident memory, the loss curve and a held-out linear probe R² of q from z.

Trained models go to a scratch artifact cache (``--cache``, datasets linked from the real one),
so benchmarking never writes models into ``data/``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from jepa_geometry.analysis.probes import latent_probe_r2
from jepa_geometry.artifacts import data_root
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.checkpoint import load_model_file
from jepa_geometry.wm.losses import LambdaReg, sample_pairs, scale_loss, sigreg
from jepa_geometry.wm.model import build_world_model
from jepa_geometry.wm.objective import Objective
from jepa_geometry.wm.training import clip_batches, train

METHODS = ("lewm", "scale", "aux", "anisowm", "scale+anisowm")


def step_times(profile, data, arm: str, steps: int, warmup: int = 5) -> float:
    """Mean seconds per optimizer step (after ``warmup`` steps), batches included."""
    prof = load_profile(profile.name, {"train.steps": warmup + steps, "train.log_every": 10**6})
    model = build_world_model(prof, data.action.shape[1])
    w = arm_weights(arm, "tworoom", prof.train.sigreg_weight)
    obj = Objective(
        arm,
        w,
        model.embed_dim,
        data.q.shape[1],
        prof.train.sigreg_projections,
        prof.train.pairs_per_batch,
    )
    src = clip_batches(data, prof, seed=0)
    warm = load_profile(profile.name, {"train.steps": warmup, "train.log_every": 10**6})
    train(model, obj, src, warm.train, seed=0, progress=False)  # dynamo import, allocator
    t0 = time.perf_counter()
    train(model, obj, src, prof.train, seed=1, progress=False)
    return (time.perf_counter() - t0) / (warmup + steps)


def regularizer_times(profile, q_dim: int, reps: int = 30) -> dict[str, float]:
    """Seconds for forward + backward of each regularizer on (B, T, D) embeddings."""
    b, t, d = profile.train.batch_size, profile.data.history + 1, profile.model.embed_dim
    gen = torch.Generator().manual_seed(0)
    z = torch.randn(b, t, d, requires_grad=True)
    q = torch.randn(b, t, q_dim)
    ep = torch.randint(0, 50, (b,))
    lreg = LambdaReg(d, 2.0)
    m = profile.train.sigreg_projections

    def run_scale():
        i, j = sample_pairs(ep, t, profile.train.pairs_per_batch, gen)
        zf, qf = z.reshape(b * t, d), q.reshape(b * t, q_dim)
        return scale_loss(zf[i], zf[j], qf[i], qf[j])

    fns = {
        "sigreg": lambda: sigreg(z.transpose(0, 1), m, generator=gen),
        "lambda_reg": lambda: lreg(z.transpose(0, 1), m, generator=gen),
        "scale": run_scale,
    }
    out = {}
    for name, fn in fns.items():
        fn().backward()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn().backward()
        out[name] = (time.perf_counter() - t0) / reps
    return out


def full_run(profile_name: str, arm: str, cache: Path) -> dict:
    """``jepa-geometry train`` in a subprocess: wall time and peak RSS of that process."""
    env = dict(os.environ, JEPA_GEOMETRY_DATA=str(cache))
    cmd = [
        str(Path(sys.executable).parent / "jepa-geometry"),
        "train",
        "--task",
        "tworoom",
        "--arm",
        arm,
        "--seed",
        "0",
        "--profile",
        profile_name,
    ]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS (KiB on Linux)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0), err.seek(0)
        text = out.read()
        if proc.returncode != 0:
            raise RuntimeError(err.read()[-2000:])
    summary = json.loads(text[: text.rindex("}") + 1])
    model_path = Path(text.strip().splitlines()[-1].split("model: ", 1)[1])
    log = json.loads((model_path.parent / "log.json").read_text())
    return {
        "summary": summary,
        "wall_s": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "model": model_path,
        "log": log,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="laptop")
    ap.add_argument("--steps", type=int, default=60, help="timed steps per arm")
    ap.add_argument("--full", nargs="*", default=["lewm", "scale+anisowm"], help="full runs")
    ap.add_argument("--cache", default=None, help="scratch artifact cache for trained models")
    ap.add_argument("--full-only", action="store_true", help="skip the throughput measurements")
    args = ap.parse_args()
    profile = load_profile(args.profile)
    torch.set_num_threads(os.cpu_count() or 1)
    print(f"profile {profile.name}: torch threads {torch.get_num_threads()}, cpus {os.cpu_count()}")

    t0 = time.perf_counter()
    data = load_dataset("tworoom", profile)
    print(
        f"dataset: {data.num_frames} frames, {data.num_episodes} episodes, "
        f"load/collect {time.perf_counter() - t0:.1f} s"
    )
    model = build_world_model(profile, data.action.shape[1])
    b = profile.train.batch_size
    print(
        f"model: {model.num_parameters():,} parameters, batch {b} clips x "
        f"{profile.data.history + 1} frames at {profile.data.image_size} px"
    )

    if args.full_only:
        return run_full(args, profile, data)
    print("\n== throughput ==")
    per_method = {}
    for arm in METHODS:
        s = step_times(profile, data, arm, args.steps)
        per_method[arm] = s
        print(f"{arm:>15}: {1 / s:6.2f} steps/s  {b / s:7.1f} clips/s  ({1000 * s:.0f} ms/step)")

    print("\n== regularizer cost (forward + backward on z) ==")
    reg = regularizer_times(profile, data.q.shape[1])
    full = per_method["scale+anisowm"]
    for name, s in reg.items():
        print(f"{name:>15}: {1000 * s:6.2f} ms = {100 * s / full:5.1f} % of a scale+anisowm step")
    share = (reg["sigreg"] + reg["lambda_reg"] + reg["scale"]) / full
    print(f"SIGReg + ΛReg + SCALE: {100 * share:.1f} % of a scale+anisowm step (target <= 10 %)")
    lewm_share = reg["sigreg"] / per_method["lewm"]
    print(f"SIGReg alone in a lewm step: {100 * lewm_share:.1f} %")

    run_full(args, profile, data)


def run_full(args: argparse.Namespace, profile, data) -> None:
    if not args.full:
        return
    cache = Path(args.cache or tempfile.mkdtemp(prefix="jg-bench-"))
    (cache / "datasets").parent.mkdir(parents=True, exist_ok=True)
    if not (cache / "datasets").exists():
        (cache / "datasets").symlink_to(data_root() / "datasets")
    print(f"\n== full training runs (CLI subprocess, cache {cache}) ==")
    for arm in args.full:
        r = full_run(profile.name, arm, cache)
        s = r["summary"]
        m = load_model_file(r["model"])
        r2 = latent_probe_r2(m, data)
        rows = r["log"][:: max(1, len(r["log"]) // 6)] + r["log"][-1:]
        curve = ", ".join(f"{row['step']}:{row['pred']:.4f}" for row in rows)
        print(
            f"{arm}: {s['final']['step']} steps in {s['train_wall_s']:.1f} s of training "
            f"({s['steps_per_s']:.2f} steps/s), process wall {r['wall_s']:.1f} s, "
            f"peak RSS {r['peak_rss_mb']:.0f} MB"
        )
        print(f"   final terms: { {k: round(v, 4) for k, v in s['final'].items()} }")
        print(f"   L_pred curve (step:value): {curve}")
        print(f"   linear probe R² of q from z (held-out episodes): {r2:.3f}")


if __name__ == "__main__":
    main()
