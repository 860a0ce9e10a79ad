"""DINO-WM against LeWM at one profile: training speed and planning cost, measured back to back.

    .venv/bin/python benchmarks/bench_dinowm.py --task tworoom --profile laptop

The issue's targets: one ``dinowm`` model costs at most 2x a LeWM model to train, and its
planning cost is measured, not assumed (SCALE reports about 2.2x LeWM's training cost and 80x
its planning cost at the paper's scale). Both arms train ``--steps`` steps from the task's
cached dataset (the stand-in encoder is pretrained first if it is not cached; that one-off is
not counted), each on one thread, into a temporary cache; then each plans one CEM T1 cell of
``--pairs`` pairs. A model's training cost is its cost at the profile's full step count: the
measured steps/s over those steps plus, for DINO-WM, its one pass encoding every training
frame with the frozen encoder. Printed: steps/s and seconds per plan of each arm, and the
ratios, which are what the targets are about (the machine is shared, so only ratios measured
in one run count).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="tworoom")
    ap.add_argument("--profile", default="laptop")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--pairs", type=int, default=25)
    args = ap.parse_args(argv)

    from jepa_geometry.artifacts import data_root
    from jepa_geometry.envs.dataset import dataset_artifact
    from jepa_geometry.planning.evaluator import evaluate_arm
    from jepa_geometry.profiles import load_profile, with_overrides
    from jepa_geometry.wm.dinowm import patch_encoder
    from jepa_geometry.wm.training import train_world_model

    base = load_profile(args.profile)
    patch_encoder(base)  # the one-off stand-in, into the book's cache, outside the timing
    profile = with_overrides(
        base, {"train.steps": args.steps, "train.checkpoint_every": args.steps}
    )
    source = data_root()
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-dinowm-") as tmp:
        for kind, name in (("datasets", args.task), ("checkpoints", "dino-standin")):
            shutil.copytree(source / kind / name, Path(tmp) / kind / name)  # built ones only
        before = os.environ.get("JEPA_GEOMETRY_DATA")
        os.environ["JEPA_GEOMETRY_DATA"] = tmp
        try:
            assert dataset_artifact(args.task, profile).exists(), "collect the dataset first"
            for arm in ("lewm", "dinowm"):
                art = train_world_model(args.task, arm, 0, profile, progress=False)
                summary = art.manifest()["summary"]
                out[f"{arm} steps/s"] = float(summary["steps_per_s"])
                # one model at the profile's step count: the one-off token pass + its steps
                out[f"{arm} model s"] = (
                    float(summary.get("tokens_wall_s", 0.0))
                    + base.train.steps / out[f"{arm} steps/s"]
                )
                t0 = time.perf_counter()
                res = evaluate_arm(
                    args.task,
                    arm,
                    0,
                    profile,
                    solver="cem",
                    tier="T1",
                    protocol="goal25_budget50",
                    episodes=args.pairs,
                    progress=False,
                )
                ep = res.episodes
                out[f"{arm} s/plan"] = float(ep["plan_seconds"].sum() / ep["plans"].sum())
                out[f"{arm} cell s"] = time.perf_counter() - t0
        finally:
            if before is None:
                os.environ.pop("JEPA_GEOMETRY_DATA", None)
            else:
                os.environ["JEPA_GEOMETRY_DATA"] = before
    out["training cost ratio (dinowm / lewm)"] = out["dinowm model s"] / out["lewm model s"]
    out["planning cost ratio (dinowm / lewm)"] = out["dinowm s/plan"] / out["lewm s/plan"]
    for k, v in out.items():
        print(f"{k:>40}: {v:.3f}")
    return out


if __name__ == "__main__":
    main()
