"""Collecting a task's dataset with the papers' behaviour policies, one process per core.

Why not ``stable_worldmodel.World.collect``: it renders through each env's default path
(224 px then resize; dm_control's shadowed, multisampled render costs 24 ms per frame
here), records swm's info columns rather than a restorable simulator state (Cube needs
controls and the mocap target too), steps its env pool sequentially in one process, and
appends to existing files. This collector keeps swm's environments and, where swm has
them, its policies, but renders with the fast renderer, records ``Task.get_state``, runs
one process per core and writes each file once, atomically.

Determinism: episode ``i`` of task ``t`` is seeded by ``SeedSequence([seed, t, i])`` alone,
so the dataset does not depend on the number of worker processes; and the collecting processes
run Intel MKL in its CPU-independent mode (:data:`COLLECT_ENVIRON`), so its bytes do not depend
on the CPU either.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from jepa_geometry.envs import SIMULATOR_PRELOAD, TASKS, make_task, task_class
from jepa_geometry.envs.episodes import COLUMNS, FILENAME, SCHEMA_VERSION, DatasetError
from jepa_geometry.jobs import pool_context, progress_bar, start_job_process
from jepa_geometry.profiles import Profile

COLLECTOR_VERSION = 1  # bump when a behaviour policy or the recording changes

COLLECT_ENVIRON = {"MKL_CBWR": "COMPATIBLE"}
"""Set in every collecting process before its first MKL call (MKL reads it then, once).
Two-Room's renderer draws with ``torch.exp``, which PyTorch computes with MKL's vector math,
and MKL picks its code by CPU: on an Intel Xeon with AVX-512, 338 of the laptop dataset's
493,977,600 pixel values came out 1 higher or lower than on the AMD EPYC that built the
committed dataset, in 332 of its 40,200 frames. ``MKL_CBWR=COMPATIBLE`` (MKL's "conditional
numerical reproducibility") makes MKL take one code path on every x86 CPU, and reproduced the
committed bytes on that Xeon bit for bit. Collection only: training and planning keep MKL's
default, which the committed models and plans were built with. So a dataset is always
collected by worker processes, one at least, which get it: MKL reads it once per process, and
collecting in the build's own process would switch its later training and planning too."""


_PACKAGES = (
    "jepa-geometry",
    "stable-worldmodel",
    "mujoco",
    "dm-control",
    "ogbench",
    "pymunk",
    "pygame",
    "gymnasium",
    "numpy",
    "h5py",
)


def check_task_episodes(profile: Profile) -> dict[str, tuple[int, int]]:
    """``profile.data.task_episodes``, or a one-line ValueError naming its unknown tasks and
    the valid ones (the profile's own check cannot: the tasks are defined above its layer).

    The command line checks it on loading a profile, before any work: a misspelt task's
    counts would otherwise be carried along unused while the real task took the defaults."""
    per_task = profile.data.task_episodes
    unknown = sorted(set(per_task) - set(TASKS))
    if unknown:
        raise ValueError(
            f"profile {profile.name!r}: data.task_episodes has unknown task(s) "
            f"{', '.join(map(repr, unknown))}; valid: {', '.join(TASKS)}"
        )
    return per_task


def episode_counts(task: str, profile: Profile) -> tuple[int, int]:
    """(training, held-out) episodes of ``task`` under ``profile``: the profile's per-task
    override (``data.task_episodes``, a ladder's rung) first, then the task's own counts for
    this profile (``Task.episodes``), then the profile's ``data.episodes`` and
    ``data.heldout_episodes``."""
    own = task_class(task).episodes.get(profile.name)
    default = own or (profile.data.episodes, profile.data.heldout_episodes)
    n_train, n_held = check_task_episodes(profile).get(task, default)
    if n_train < 1 or n_held < 1:
        raise ValueError(
            f"profile {profile.name!r}: {task} needs >= 1 training and >= 1 held-out "
            f"episode, got {n_train} and {n_held}"
        )
    return n_train, n_held


def dataset_spec(task: str, profile: Profile) -> dict[str, Any]:
    """Everything the dataset's content depends on (and nothing else: e.g. not frameskip)."""
    n_train, n_held = episode_counts(task, profile)
    return {
        "task": task,
        "schema": SCHEMA_VERSION,
        "collector": COLLECTOR_VERSION,
        "image_size": profile.data.image_size,
        "max_episode_steps": profile.data.max_episode_steps,
        "train_episodes": n_train,
        "heldout_episodes": n_held,
        "seed": profile.seeds.data,
    }


def episode_seed(seed: int, task: str, episode: int) -> int:
    """The seed of one episode: independent of the order and process it is collected in."""
    ss = np.random.SeedSequence([int(seed), TASKS.index(task), int(episode)])
    return int(ss.generate_state(1)[0])


def collect_episode(task_obj: Any, seed: int, steps: int) -> dict[str, np.ndarray]:
    """Run the behaviour policy for ``steps`` steps from ``reset(seed)``.

    Returns ``steps + 1`` rows (the reset frame included); ``action[t]`` leads from frame
    ``t`` to ``t + 1`` and the last row's action is NaN.
    """
    task_obj.reset(seed)
    rng = np.random.default_rng(seed)
    frames = [task_obj.render()]
    states = [task_obj.get_state()]
    success = [task_obj.behaviour_success()]
    actions = []
    for _ in range(steps):
        a = task_obj.behaviour_action(rng)
        task_obj.step(a)
        actions.append(a)
        frames.append(task_obj.render())
        states.append(task_obj.get_state())
        success.append(task_obj.behaviour_success())
    actions.append(np.full(task_obj.action_dim, np.nan, dtype=np.float32))
    state = np.asarray(states, dtype=np.float64)
    return {
        "pixels": np.asarray(frames, dtype=np.uint8),
        "action": np.asarray(actions, dtype=np.float32),
        "state": state,
        "q": task_obj.q_batch(state),
        "behaviour_success": np.asarray(success, dtype=bool),
    }


_WORKER: dict[str, Any] = {}


def collecting_environ() -> dict[str, str]:
    """The environment of a collecting worker process: this one's, with
    :data:`COLLECT_ENVIRON`."""
    return {**os.environ, **COLLECT_ENVIRON}


def _worker_init(task: str, image_size: int, seed: int, steps: int) -> None:
    import torch

    torch.set_num_threads(1)  # one process per core; Two-Room renders with torch

    _WORKER.update(task=make_task(task, image_size, seed), name=task, seed=seed, steps=steps)


def _worker_episode(episode: int) -> dict[str, np.ndarray]:
    s = episode_seed(_WORKER["seed"], _WORKER["name"], episode)
    return collect_episode(_WORKER["task"], s, _WORKER["steps"])


def _episodes(
    task: str, image_size: int, seed: int, steps: int, n_episodes: int, workers: int
) -> Iterator[dict[str, np.ndarray]]:
    """Collected episodes in episode order, from ``workers`` worker processes (at least one,
    even for a small dataset: only a worker's MKL can be set to :data:`COLLECT_ENVIRON`'s
    mode, which makes the bytes the same whatever the CPU and the number of workers)."""
    # forked from a fresh server process (jepa_geometry.jobs): no inherited GL or torch state
    ctx = pool_context((__name__, *SIMULATOR_PRELOAD))
    init = (collecting_environ(), _worker_init, (task, image_size, seed, steps))
    with ctx.Pool(max(workers, 1), start_job_process, init) as pool:
        yield from pool.imap(_worker_episode, range(n_episodes), chunksize=1)


def collector_processes(frames: int | None = None) -> int:
    """The simulator processes that collect a dataset of ``frames`` frames when none are
    given: one per CPU core (at most 8); one for small datasets of under 5,000 frames, where
    starting more processes (their imports, a simulator each) costs more than it saves.
    Not :func:`jepa_geometry.jobs.default_workers`, the build jobs run side by side."""
    if frames is not None and frames < 5000:
        return 1
    return max(1, min(8, len(os.sched_getaffinity(0))))


def write_dataset(
    path: Path,
    task: str,
    episodes: Iterator[dict[str, np.ndarray]],
    n_train: int,
    n_heldout: int,
    attrs: dict[str, Any],
    progress: bool = True,
) -> dict[str, Any]:
    """Stream episodes into a new HDF5 file, then add the split and training statistics."""
    import h5py
    import hdf5plugin

    n_total = n_train + n_heldout
    t0 = time.perf_counter()
    with h5py.File(path, "w") as f:
        dsets: dict[str, Any] = {}
        n = 0
        bar = progress_bar(total=n_total, desc=f"collect {task}", unit="ep", progress=progress)
        for ep, rows in enumerate(episodes):
            length = len(rows["pixels"])
            rows = {**rows, "episode": np.full(length, ep), "step": np.arange(length)}
            if not dsets:
                dsets = _create_columns(f, rows, h5py, hdf5plugin)
            check_room(path, rows, len(dsets))
            for name, ds in dsets.items():
                ds.resize(n + length, axis=0)
                ds[n : n + length] = rows[name]
            n += length
            bar.update(1)
            bar.set_postfix(frames=n, fps=f"{n / (time.perf_counter() - t0):.0f}")
        bar.close()
        seconds = time.perf_counter() - t0
        train = np.arange(n_train)
        held = np.arange(n_train, n_total)
        f.create_dataset("split/train_episodes", data=train)
        f.create_dataset("split/heldout_episodes", data=held)
        in_train = f["episode"][:] < n_train
        q = f["q"][:][in_train].astype(np.float64)
        act = f["action"][:][in_train].astype(np.float64)
        act = act[~np.isnan(act).any(axis=1)]
        for name, x in (("q", q), ("action", act)):
            f.create_dataset(f"stats/{name}_mean", data=x.mean(axis=0).astype(np.float32))
            f.create_dataset(f"stats/{name}_std", data=_safe_std(x).astype(np.float32))
        for k, v in attrs.items():
            f.attrs[k] = v if isinstance(v, str | int | float) else json.dumps(v)
    return {"episodes": n_total, "frames": n, "collect_seconds": round(seconds, 2)}


CHUNK_CACHE_BYTES = 1 << 20
"""HDF5's chunk cache per open dataset (h5py's default ``rdcc_nbytes``): data it may still
have to write when the file is closed."""


def check_room(path: Path, rows: dict[str, np.ndarray], columns: int) -> None:
    """Raise ``OSError(ENOSPC)`` naming ``path`` unless its filesystem has room for the episode
    ``rows`` uncompressed, twice, and for every column's chunk cache.

    HDF5 must never meet a full disk itself: after a failed write it crashes the process
    (a segmentation fault while its objects are freed, in three runs of three), where this check
    stops the collection between two episodes, the file still closable. The margin is a few MB
    at the laptop profile, so a disk with room for the dataset is never refused.
    """
    need = 2 * sum(x.nbytes for x in rows.values()) + columns * CHUNK_CACHE_BYTES
    free = shutil.disk_usage(path.parent).free
    if free < need:
        raise OSError(
            errno.ENOSPC,
            f"{free / 2**20:.1f} MB free, the next episode may need {need / 2**20:.1f} MB",
            str(path),
        )


def _safe_std(x: np.ndarray) -> np.ndarray:
    """Population std per column; constant columns get 1 so z-scoring leaves them at 0."""
    s = x.std(axis=0)
    return np.where(s < 1e-8, 1.0, s)


def _create_columns(f: Any, rows: dict[str, np.ndarray], h5py: Any, hdf5plugin: Any) -> dict:
    dsets = {}
    for name in COLUMNS:
        x = rows[name]
        row_bytes = max(1, x[0].nbytes)
        chunk = (max(1, min(1024, (1 << 22) // row_bytes)), *x.shape[1:])
        comp = (
            hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)
            if name == "pixels"
            else {"compression": "gzip", "compression_opts": 4}
        )
        dtype = np.int64 if name in ("episode", "step") else x.dtype
        dsets[name] = f.create_dataset(
            name,
            shape=(0, *x.shape[1:]),
            maxshape=(None, *x.shape[1:]),
            dtype=dtype,
            chunks=chunk,
            **comp,
        )
    return dsets


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for p in _PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def build_dataset(
    task: str, profile: Profile, out_dir: Path, workers: int | None = None, progress: bool = True
) -> dict[str, Any]:
    """Collect ``task``'s dataset for ``profile`` into ``out_dir/episodes.h5``."""

    spec = dataset_spec(task, profile)
    cls = task_class(task)
    n_train, n_held = spec["train_episodes"], spec["heldout_episodes"]
    n_total = n_train + n_held
    frames = n_total * (profile.data.max_episode_steps + 1)
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise DatasetError(
            f"workers must be an integer >= 1 (or None: one per core), got {workers!r}"
        )
    workers = collector_processes(frames) if workers is None else workers
    workers = max(1, min(workers, n_total))
    attrs = {
        "schema_version": SCHEMA_VERSION,
        "task": task,
        "env_id": cls.env_id,
        "profile": profile.name,
        "image_size": profile.data.image_size,
        "max_episode_steps": profile.data.max_episode_steps,
        "seed": profile.seeds.data,
        "behaviour_policy": cls.behaviour_policy,
        "success_rule": cls.success_rule,
        "q_names": list(cls.q_names),
        "packages": package_versions(),
    }  # wall time and worker count go to the manifest: the file's bytes depend on inputs only
    episodes = _episodes(
        task,
        profile.data.image_size,
        profile.seeds.data,
        profile.data.max_episode_steps,
        n_total,
        workers,
    )
    info = write_dataset(out_dir / FILENAME, task, episodes, n_train, n_held, attrs, progress)
    info["frames_per_second"] = round(info["frames"] / max(info["collect_seconds"], 1e-9), 1)
    info["workers"] = workers
    return info
