"""Collection throughput of the five laptop datasets, and the memory of loading one.

Run under the shared lock, on an otherwise idle machine:

    .venv/bin/python benchmarks/bench_collect.py --profile laptop

It collects every task's dataset of the profile from scratch (``--data-root``: a fresh
temporary cache by default, or the real ``data/`` with ``--data-root data`` to keep them),
prints per task the episodes, frames, file size, wall time and frames/s, then loads each
dataset in a fresh process and reports the peak resident memory (``ru_maxrss``) of
``load_dataset`` and of drawing one training batch. Target (issue 3): all five in <= 10 min on
2 cores.
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

from jepa_geometry.envs import TASKS
from jepa_geometry.envs import dataset as D
from jepa_geometry.envs.collect import collector_processes
from jepa_geometry.profiles import PROFILES, load_profile

_LOAD_PROBE = """
import json, resource, sys, time
from jepa_geometry.envs import dataset as D
from jepa_geometry.envs.collect import collector_processes
from jepa_geometry.profiles import load_profile
t0 = time.perf_counter()
d = D.load_dataset(sys.argv[1], load_profile(sys.argv[2]), progress=False)
load_s = time.perf_counter() - t0
batch = next(clips.ClipSampler(d, batch_size=64))
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
print(json.dumps({"load_s": load_s, "peak_rss_mb": rss, "pixels_mb": d.pixels.nbytes / 2**20}))
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", choices=PROFILES, default="laptop")
    p.add_argument("--tasks", nargs="*", choices=TASKS, default=list(TASKS))
    p.add_argument("--workers", type=int, default=None, help="default: one per core")
    p.add_argument("--data-root", default=None, help="cache to collect into (default: temp)")
    args = p.parse_args()

    root = Path(args.data_root or tempfile.mkdtemp(prefix="bench-collect-")).resolve()
    os.environ["JEPA_GEOMETRY_DATA"] = str(root)
    profile = load_profile(args.profile)
    print(
        f"profile {profile.name}: {profile.data.image_size} px, "
        f"{profile.data.max_episode_steps} steps/episode, cache {root}, "
        f"{os.cpu_count()} CPUs, workers {args.workers or collector_processes()}"
    )
    rows = []
    t_all = time.perf_counter()
    for task in args.tasks:
        art = D.dataset_artifact(task, profile)
        t0 = time.perf_counter()
        D.get_or_build(
            art, lambda d, t=task: D.build_dataset(t, profile, d, args.workers), rebuild=True
        )
        wall = time.perf_counter() - t0
        man = art.manifest()
        mb = art.file(D.FILENAME).stat().st_size / 2**20
        rows.append(
            {
                "task": task,
                "episodes": man["episodes"],
                "frames": man["frames"],
                "MB": round(mb, 1),
                "wall_s": round(wall, 1),
                "frames_per_s": round(man["frames"] / wall, 1),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    total = time.perf_counter() - t_all
    frames = sum(r["frames"] for r in rows)
    print(
        f"TOTAL {len(rows)} tasks: {frames} frames in {total:.1f} s "
        f"({total / 60:.2f} min, {frames / total:.0f} frames/s)"
    )

    for r in rows:
        out = subprocess.run(
            [sys.executable, "-c", _LOAD_PROBE, r["task"], profile.name],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ,
        )
        mem = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"load {r['task']}: {mem['load_s']:.1f} s, pixels {mem['pixels_mb']:.0f} MB, "
            f"peak RSS {mem['peak_rss_mb']:.0f} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
