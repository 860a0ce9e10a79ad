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
import pickle
import re
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
    """Stream ``episodes`` into a new HDF5 file at ``path``, then add the split and the
    training statistics. A process of its own writes the file (:func:`_writer_main`).

    Why a process: HDF5 that meets a full disk in the middle of a write leaves its library in a
    state that crashes the process later, while its objects are freed (a segmentation fault
    after a multi-line error, in three runs of three, when another process took the room
    :func:`check_room` had just seen). The writer reports what failed and ends without freeing
    them; this process raises it, a full disk as ``OSError(ENOSPC)`` naming the file, which a
    command states in one line. A writer that ends without a word is reported too."""
    ctx = pool_context((__name__, *SIMULATOR_PRELOAD))
    conn, writer_end = ctx.Pipe()
    writer = ctx.Process(
        target=_writer_main,
        args=(writer_end, dict(os.environ), path, n_train, n_heldout, attrs),
        name=f"write {path.name}",
    )
    t0 = time.perf_counter()
    bar = progress_bar(
        total=n_train + n_heldout, desc=f"collect {task}", unit="ep", progress=progress
    )
    writer.start()
    writer_end.close()
    try:
        n = 0
        try:
            for rows in episodes:
                conn.send(rows)
                n += len(rows["pixels"])
                bar.update(1)
                bar.set_postfix(frames=n, fps=f"{n / (time.perf_counter() - t0):.0f}")
            conn.send(None)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the writer ended early: its reply says why
        frames = _writer_reply(conn, writer, path)
    finally:
        bar.close()
        conn.close()
        if writer.is_alive():  # an interruption or an error here: the file is not kept
            writer.kill()
        writer.join()
        close = getattr(episodes, "close", None)
        if close is not None:  # the collecting processes end now, not when collected
            close()
    seconds = time.perf_counter() - t0
    return {"episodes": n_train + n_heldout, "frames": frames, "collect_seconds": round(seconds, 2)}


def _writer_reply(conn: Any, writer: Any, path: Path) -> int:
    """The frames the writer wrote, or its error raised here (:func:`write_dataset`)."""
    try:
        what, value = conn.recv()
    except EOFError:
        writer.join()
        code = writer.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        raise RuntimeError(
            f"the process writing {path} ended ({how}) before it finished; nothing was kept, "
            "and the same command collects the dataset again"
        ) from None
    if what == "failed":
        raise value
    return int(value)


def _writer_main(
    conn: Any,
    environ: dict[str, str],
    path: Path,
    n_train: int,
    n_heldout: int,
    attrs: dict[str, Any],
) -> None:
    """The writing process of :func:`write_dataset`: episodes from ``conn`` until ``None``,
    then ``("wrote", frames)`` or ``("failed", error)`` back.

    A failure is sent from inside its ``except`` block and the process ends there with
    ``os._exit``: the error's traceback holds :func:`_write_h5`'s frame, and with it HDF5's
    file and datasets; freeing them after a failed write is what crashes (signal 11 as the
    block ended, when the reply was sent after it)."""
    start_job_process(environ)  # as every build job: Ctrl-C ignored, ends with its parent
    try:
        frames = _write_h5(conn, path, n_train, n_heldout, attrs)
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent
        _reply_and_end(conn, ("failed", sendable_error(e, path)))
    _reply_and_end(conn, ("wrote", frames))


def _reply_and_end(conn: Any, reply: tuple[str, Any]) -> None:
    """Send ``reply`` and end this process at once, freeing nothing (:func:`_writer_main`)."""
    try:
        conn.send(reply)
    finally:
        os._exit(0)


def sendable_error(e: BaseException, path: Path) -> BaseException:
    """``e`` as the collecting process should raise it: HDF5's report of a failed write (its
    text carries the operating system's ``errno = 28, error message = 'No space left on
    device'``) becomes that ``OSError`` naming ``path``; an error that cannot be pickled becomes
    a RuntimeError with its text."""
    if not (isinstance(e, OSError) and e.errno is not None):
        found = re.search(r"errno = (\d+)", str(e))
        if found:
            code = int(found.group(1))
            return OSError(code, os.strerror(code), str(path))
    try:
        pickle.dumps(e)
    except Exception:  # noqa: BLE001 - any pickling failure: send its text instead
        return RuntimeError(f"writing {path}: {type(e).__name__}: {e}")
    return e


def _write_h5(conn: Any, path: Path, n_train: int, n_heldout: int, attrs: dict[str, Any]) -> int:
    """Write the episodes ``conn`` sends (until ``None``) into ``path``; the frames written."""
    import h5py
    import hdf5plugin

    with h5py.File(path, "w") as f:
        dsets: dict[str, Any] = {}
        n = 0
        ep = 0
        while (rows := conn.recv()) is not None:
            length = len(rows["pixels"])
            rows = {**rows, "episode": np.full(length, ep), "step": np.arange(length)}
            if not dsets:
                dsets = _create_columns(f, rows, h5py, hdf5plugin)
            check_room(path, rows, n)
            for name, ds in dsets.items():
                ds.resize(n + length, axis=0)
                ds[n : n + length] = rows[name]
            n += length
            ep += 1
        f.create_dataset("split/train_episodes", data=np.arange(n_train))
        f.create_dataset("split/heldout_episodes", data=np.arange(n_train, n_train + n_heldout))
        in_train = f["episode"][:] < n_train
        q = f["q"][:][in_train].astype(np.float64)
        act = f["action"][:][in_train].astype(np.float64)
        act = act[~np.isnan(act).any(axis=1)]
        for name, x in (("q", q), ("action", act)):
            f.create_dataset(f"stats/{name}_mean", data=x.mean(axis=0).astype(np.float32))
            f.create_dataset(f"stats/{name}_std", data=_safe_std(x).astype(np.float32))
        for k, v in attrs.items():
            f.attrs[k] = v if isinstance(v, str | int | float) else json.dumps(v)
    return n


CHUNK_CACHE_BYTES = 1 << 20
"""HDF5's chunk cache per open dataset (h5py's default ``rdcc_nbytes``): data it may still
have to write when the file is closed."""


def check_room(path: Path, rows: dict[str, np.ndarray], rows_before: int) -> None:
    """Raise ``OSError(ENOSPC)`` naming ``path`` unless its filesystem has room for the episode
    ``rows`` uncompressed, twice, and for what each column's chunk cache may hold unwritten: at
    most :data:`CHUNK_CACHE_BYTES`, and never more than the column's data so far
    (``rows_before`` rows written, and these).

    HDF5 should not meet a full disk itself (:func:`write_dataset`): this check stops the
    collection between two episodes, the file still closable. The margin is a few MB at the
    laptop profile, so a disk with room for the dataset is never refused, and under 1 MB for a
    small dataset (a flat 1 MB per column refused a 0.4 MB smoke dataset with 7 MB free).
    """
    rows_after = rows_before + len(rows["pixels"])
    cached = sum(min(CHUNK_CACHE_BYTES, rows_after * x[0].nbytes) for x in rows.values())
    need = 2 * sum(x.nbytes for x in rows.values()) + cached
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
