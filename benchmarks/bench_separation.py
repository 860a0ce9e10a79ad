"""Time the 2-D prediction-planning separation sweep (AnisoWM Fig. 1) at a profile.

Runs every (regularizer, noise, seed) of the profile's theory section into a fresh, temporary
artifact cache (so nothing is reused) and prints the wall time and the per-noise summary.
Run under the shared lock:
    .venv/bin/python benchmarks/bench_toy2d.py
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="laptop")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["JEPA_GEOMETRY_DATA"] = tmp
        import pandas as pd

        from jepa_geometry.profiles import load_profile
        from jepa_geometry.theory import toy2d

        prof = load_profile(args.profile)
        th = prof.theory
        base = toy2d.toy_config(prof)
        kappa = float(base.sigma_eigenvalues[0] / base.sigma_eigenvalues[1])
        base = toy2d.ToyConfig(**{**base.spec(), "kappa": kappa})
        t0 = time.perf_counter()
        res = toy2d.toy_sweep(
            base,
            list(th.toy_noise_levels),
            list(range(th.toy_seeds)),
            list(toy2d.REGULARIZERS),
            toy2d.DEFAULT_TASKS,
            workers=args.workers,
            progress=False,
        )
        wall = time.perf_counter() - t0
        x0, goal = toy2d.make_tasks(base.sigma, **toy2d.DEFAULT_TASKS)
        ref = toy2d.reference_regret(base.sigma, x0, goal, base.half_width)
        print(
            f"profile={args.profile} workers={args.workers} runs={len(res)} "
            f"steps={base.steps} hidden={base.hidden} batch={base.batch_size} "
            f"projections={base.projections}"
        )
        print(f"wall time {wall:.1f} s; mean train time per run {res.train_seconds.mean():.2f} s")
        print(
            f"Sigma eigenvalues {base.sigma_eigenvalues} at {base.sigma_angle} deg; "
            f"Sigma^-1 reference regret {ref['normalized_regret']:.4f}"
        )
        cols = ["heldout_error", "cond_mean_error", "normalized_regret", "metric_regret"]
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(toy2d.toy_summary(res, cols).round(4).to_string(index=False))


if __name__ == "__main__":
    main()
