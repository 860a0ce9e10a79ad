"""Offline datasets: collection with the papers' behaviour policies, HDF5 episodes, clips.

One HDF5 file per (task, profile), cached by :mod:`jepa_geometry.artifacts` at
``data/datasets/<task>/<key>/episodes.h5``. Rows are frames, sorted by episode then step:

=================== ===================== ================================================
dataset             dtype, shape          meaning
=================== ===================== ================================================
pixels              uint8 (N, H, W, 3)    rendered frame (Blosc-LZ4 compressed)
action              float32 (N, A)        raw action executed *from* this frame; NaN on
                                          the last frame of each episode
state               float64 (N, S)        raw simulator state (``Task.set_state`` input)
q                   float32 (N, q_dim)    SCALE's raw task state, ``Task.q(state)``
episode, step       int64 (N,)            episode id (0..E-1) and step within it
behaviour_success   bool (N,)             the behaviour policy's current goal is reached
split/train_episodes, split/heldout_episodes  episode ids (held out: the last ones)
stats/q_mean, q_std, action_mean, action_std  float32, over the training split only
=================== ===================== ================================================

plus file attributes: schema version, task, env id, image size, seed, behaviour policy,
success rule, q names and package versions.

Why not ``stable_worldmodel.World.collect``: it renders through each env's default path
(224 px then resize; dm_control's shadowed, multisampled render costs 24 ms per frame
here), records swm's info columns rather than a restorable simulator state (Cube needs
controls and the mocap target too), steps its env pool sequentially in one process, and
appends to existing files. This collector keeps swm's environments and, where swm has
them, its policies, but renders with the fast renderer, records ``Task.get_state``, runs
one process per core and writes each file once, atomically.

Determinism: episode ``i`` of task ``t`` is seeded by ``SeedSequence([seed, t, i])`` alone,
so the dataset does not depend on the number of worker processes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.artifacts import MANIFEST, Artifact, ArtifactError, get_or_build, memo
from jepa_geometry.envs import (
    Q_VARIANTS,
    SIMULATOR_PRELOAD,
    TASKS,
    Task,
    check_task,
    make_task,
    q_indices,
    q_names,
    task_class,
)
from jepa_geometry.jobs import pool_context, progress_bar, start_job_process
from jepa_geometry.profiles import Profile

SCHEMA_VERSION = 1
COLLECTOR_VERSION = 1  # bump when a behaviour policy or the recording changes
FILENAME = "episodes.h5"
SPLITS: tuple[str, ...] = ("train", "heldout")
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
_COLUMNS = ("pixels", "action", "state", "q", "episode", "step", "behaviour_success")


class DatasetError(RuntimeError):
    """A dataset file is missing, corrupt, truncated or of the wrong schema."""


# --------------------------------------------------------------------------------------
# Sizes and cache keys
# --------------------------------------------------------------------------------------
def episode_counts(task: str, profile: Profile) -> tuple[int, int]:
    """(training, held-out) episodes of ``task`` under ``profile`` (per-task override first)."""
    check_task(task)
    per_task = profile.data.task_episodes
    unknown = sorted(set(per_task) - set(TASKS))
    if unknown:
        raise ValueError(
            f"profile {profile.name!r}: data.task_episodes has unknown task(s) "
            f"{', '.join(map(repr, unknown))}; valid: {', '.join(TASKS)}"
        )
    n_train, n_held = per_task.get(task, (profile.data.episodes, profile.data.heldout_episodes))
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


def dataset_artifact(task: str, profile: Profile) -> Artifact:
    """The cache entry ``data/datasets/<task>/<key>/`` holding ``episodes.h5``."""
    return Artifact("datasets", check_task(task), dataset_spec(task, profile))


def episode_seed(seed: int, task: str, episode: int) -> int:
    """The seed of one episode: independent of the order and process it is collected in."""
    ss = np.random.SeedSequence([int(seed), TASKS.index(task), int(episode)])
    return int(ss.generate_state(1)[0])


# --------------------------------------------------------------------------------------
# Collection
# --------------------------------------------------------------------------------------
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
    """Collected episodes in episode order, from ``workers`` processes (1: in this one)."""
    if workers <= 1:
        import torch

        threads = torch.get_num_threads()  # _worker_init pins 1 thread: restore it afterwards
        _worker_init(task, image_size, seed, steps)
        try:
            for i in range(n_episodes):
                yield _worker_episode(i)
        finally:
            _WORKER.pop("task").close()
            torch.set_num_threads(threads)
        return
    # forked from a fresh server process (jepa_geometry.jobs): no inherited GL or torch state
    ctx = pool_context((__name__, *SIMULATOR_PRELOAD))
    init = (dict(os.environ), _worker_init, (task, image_size, seed, steps))
    with ctx.Pool(workers, start_job_process, init) as pool:
        yield from pool.imap(_worker_episode, range(n_episodes), chunksize=1)


def default_workers(frames: int | None = None) -> int:
    """One collector process per CPU core (at most 8); one (this process) for small datasets
    of under 5,000 frames, where starting a process (its imports, a new simulator) costs more
    than it saves."""
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


def _safe_std(x: np.ndarray) -> np.ndarray:
    """Population std per column; constant columns get 1 so z-scoring leaves them at 0."""
    s = x.std(axis=0)
    return np.where(s < 1e-8, 1.0, s)


def _create_columns(f: Any, rows: dict[str, np.ndarray], h5py: Any, hdf5plugin: Any) -> dict:
    dsets = {}
    for name in _COLUMNS:
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
    workers = default_workers(frames) if workers is None else workers
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


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------
@dataclass
class EpisodeData:
    """In-memory view of one dataset file (see the module docstring for the columns)."""

    task: str
    path: Path
    pixels: np.ndarray
    action: np.ndarray
    state: np.ndarray
    q: np.ndarray
    episode: np.ndarray
    step: np.ndarray
    behaviour_success: np.ndarray
    train_episodes: np.ndarray
    heldout_episodes: np.ndarray
    q_mean: np.ndarray
    q_std: np.ndarray
    action_mean: np.ndarray
    action_std: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n_ep = int(self.episode[-1]) + 1 if len(self.episode) else 0
        self.starts = np.searchsorted(self.episode, np.arange(n_ep))  # first row per episode
        self.lengths = np.diff(np.append(self.starts, len(self.episode)))  # frames per episode

    @property
    def num_episodes(self) -> int:
        return len(self.starts)

    @property
    def num_frames(self) -> int:
        return len(self.episode)

    @property
    def q_names(self) -> tuple[str, ...]:
        return tuple(self.meta.get("q_names", ()))

    def episodes(self, split: str) -> np.ndarray:
        if split == "train":
            return self.train_episodes
        if split == "heldout":
            return self.heldout_episodes
        raise ValueError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")

    def rows(self, episode: int) -> slice:
        """Row slice of one episode."""
        s = int(self.starts[episode])
        return slice(s, s + int(self.lengths[episode]))

    def standardize_q(self, q: np.ndarray, variant: str = "full") -> np.ndarray:
        """(q - mean) / std with the training split's statistics (restricted for ``half``)."""
        idx = list(q_indices(self.task, variant))
        q = np.asarray(q, dtype=np.float32)
        if q.shape[-1] != len(idx):
            raise ValueError(
                f"{self.task} q variant {variant!r} has {len(idx)} dims, got shape {q.shape}"
            )
        return (q - self.q_mean[idx]) / self.q_std[idx]

    def zscore_action(self, a: np.ndarray) -> np.ndarray:
        """Per-dimension z-score of raw actions ``(..., A)``, or of action blocks
        ``(..., k * A)`` (k actions concatenated, as a planner's blocks are)."""
        a = np.asarray(a, dtype=np.float32)
        mean, std = self._tiled(a.shape[-1])
        return (a - mean) / std

    def unzscore_action(self, a: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`zscore_action`: the raw env actions of z-scored (blocks of)
        actions."""
        a = np.asarray(a, dtype=np.float32)
        mean, std = self._tiled(a.shape[-1])
        return a * std + mean

    def _tiled(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        dim = len(self.action_mean)
        if width % dim:
            raise ValueError(
                f"{self.task}: action width {width} is not a multiple of the action dim {dim}"
            )
        k = width // dim
        return np.tile(self.action_mean, k), np.tile(self.action_std, k)

    def frame_strip(self, episode: int, stride: int, count: int) -> np.ndarray:
        """Frames ``0, stride, 2 stride, ...`` (at most ``count``) of one episode, side by side.

        The result is ``(H, n W, 3)`` uint8 with frame ``i`` in columns ``[i W, (i + 1) W)`` and
        ``n = min(count, ceil(length / stride))``: one image that shows an episode's motion at
        a glance, as the tasks chapter draws it.
        """
        if stride < 1 or count < 1:
            raise ValueError(f"stride and count must be >= 1, got {stride}, {count}")
        frames = self.pixels[self.rows(episode)][::stride][:count]
        return np.concatenate(list(frames), axis=1)

    def summary(self) -> dict[str, Any]:
        """Episodes, frames, behaviour success rate and size, for tables."""
        ep_success = np.logical_or.reduceat(self.behaviour_success, self.starts)
        return {
            "task": self.task,
            "train episodes": len(self.train_episodes),
            "held-out episodes": len(self.heldout_episodes),
            "frames": self.num_frames,
            "steps per episode": float(np.mean(self.lengths - 1)),
            "behaviour success rate": float(np.mean(ep_success)),
            "file MB": round(self.path.stat().st_size / 2**20, 1),
            "collect s": round(self.collect_seconds, 1),
        }

    @property
    def collect_seconds(self) -> float:
        """The collection's wall time, from the artifact's manifest beside the file (the file
        itself holds no wall time, so its bytes depend on the inputs alone); NaN for a file
        outside the cache."""
        try:
            return float(json.loads((self.path.parent / MANIFEST).read_text())["collect_seconds"])
        except (OSError, KeyError, ValueError):
            return float("nan")


def read_episodes(path: str | Path, task: str | None = None) -> EpisodeData:
    """Open and validate a dataset file; any problem raises :class:`DatasetError` naming the
    file and the problem (never a crash deep in numpy)."""
    import h5py
    import hdf5plugin  # noqa: F401 - registers the Blosc filter for reading

    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise DatasetError(
            f"{path} is not a readable HDF5 file (corrupt or truncated?): {e}"
        ) from e
    try:
        with f:
            return _read_validated(f, path, task)
    except DatasetError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise DatasetError(f"{path}: cannot read dataset ({type(e).__name__}: {e})") from e


def _read_validated(f: Any, path: Path, task: str | None) -> EpisodeData:
    def bad(problem: str) -> DatasetError:
        return DatasetError(f"{path}: {problem}")

    version = _attr(f.attrs.get("schema_version"))
    if version != SCHEMA_VERSION:
        raise bad(f"schema version {version!r}, expected {SCHEMA_VERSION} (re-collect it)")
    ftask = str(f.attrs.get("task", ""))
    if ftask not in TASKS:
        raise bad(f"unknown task attribute {ftask!r}; valid: {', '.join(TASKS)}")
    if task is not None and ftask != task:
        raise bad(f"holds task {ftask!r}, expected {task!r}")
    required = [*_COLUMNS, *(f"split/{s}_episodes" for s in SPLITS)] + [
        f"stats/{n}_{m}" for n in ("q", "action") for m in ("mean", "std")
    ]
    missing = [k for k in required if k not in f]
    if missing:
        raise bad(f"missing dataset(s) {', '.join(missing)}")
    cols = {k: f[k][()] for k in _COLUMNS}
    n = len(cols["episode"])
    for k, x in cols.items():
        if len(x) != n:
            raise bad(f"column {k!r} has {len(x)} rows, 'episode' has {n}")
    q_dim = len(_q_names(ftask))
    px = cols["pixels"]
    if px.dtype != np.uint8 or px.ndim != 4 or px.shape[-1] != 3 or px.shape[1] != px.shape[2]:
        raise bad(f"pixels must be uint8 (N, H, H, 3), got {px.dtype} {px.shape}")
    if cols["q"].ndim != 2 or cols["q"].shape[1] != q_dim:
        raise bad(f"q must be (N, {q_dim}) for {ftask}, got {cols['q'].shape}")
    if cols["action"].ndim != 2 or cols["state"].ndim != 2:
        raise bad("action and state must be 2-d (N, dim)")
    ep, st = cols["episode"].astype(np.int64), cols["step"].astype(np.int64)
    if n == 0:
        raise bad("holds no frames")
    starts = np.flatnonzero(np.diff(ep, prepend=-1))
    if ep[0] != 0 or np.any(np.diff(ep) < 0) or np.any(np.diff(ep[starts]) != 1):
        raise bad("episode ids must be 0..E-1 in order")
    expected_step = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    if not np.array_equal(st, expected_step):
        raise bad("steps must count 0, 1, ... within each episode")
    split = {s: f[f"split/{s}_episodes"][()].astype(np.int64) for s in SPLITS}
    all_ids = np.sort(np.concatenate(list(split.values())))
    if not np.array_equal(all_ids, np.arange(len(starts))):
        raise bad("split/train_episodes and split/heldout_episodes must partition the episodes")
    stats = {k: f[f"stats/{k}"][()].astype(np.float32) for k in _STAT_KEYS}
    a_dim, q_ok = cols["action"].shape[1], stats["q_mean"].shape == (q_dim,)
    if not q_ok or stats["action_mean"].shape != (a_dim,) or np.any(stats["q_std"] <= 0):
        raise bad("stats/* do not match the q and action dimensions")
    meta = {k: _attr(v) for k, v in f.attrs.items()}
    return EpisodeData(
        task=ftask,
        path=path,
        pixels=px,
        action=cols["action"].astype(np.float32),
        state=cols["state"].astype(np.float64),
        q=cols["q"].astype(np.float32),
        episode=ep,
        step=st,
        behaviour_success=cols["behaviour_success"].astype(bool),
        train_episodes=split["train"],
        heldout_episodes=split["heldout"],
        meta=meta,
        **stats,
    )


_STAT_KEYS = ("q_mean", "q_std", "action_mean", "action_std")


def _q_names(task: str) -> tuple[str, ...]:

    return q_names(task)


def _attr(v: Any) -> Any:
    if isinstance(v, bytes):
        v = v.decode()
    if isinstance(v, str) and v[:1] in "[{":
        try:
            return json.loads(v)
        except json.JSONDecodeError:
            return v
    return v.item() if hasattr(v, "item") else v


def load_dataset(
    task: str, profile: Profile, workers: int | None = None, progress: bool = True
) -> EpisodeData:
    """The dataset of ``task`` under ``profile``, collected first if it is not cached.

    A cached file that fails its manifest check (changed, truncated) is reported, not
    silently re-collected: delete it or run ``jepa-geometry collect --force``.
    """
    art = dataset_artifact(task, profile)
    how = f"jepa-geometry collect --task {task} --profile {profile.name}"
    if art.exists():
        try:
            art.verify()
        except ArtifactError as e:
            raise DatasetError(
                f"cached {task} dataset is damaged: {e}. Re-collect it with `{how} --force`"
            ) from e
    if not art.exists() or art.heavy_missing():  # checked above, frames included: hash once
        # a manifest without its frames (the evidence tree) collects them, bit-identical
        get_or_build(
            art, lambda d: build_dataset(task, profile, d, workers, progress), heavy=True, how=how
        )
    return read_episodes(art.file(FILENAME), task)


def dataset_summaries(tasks: Sequence[str], profile: Profile) -> dict[str, dict[str, Any]]:
    """:meth:`EpisodeData.summary` of each task's dataset, kept as a small cached result
    (:func:`~jepa_geometry.artifacts.memo`), so the table renders without the frames."""
    out = {}
    for task in tasks:
        spec = {"dataset": dataset_artifact(task, profile).key}
        summary = lambda t=task: load_dataset(t, profile, progress=False).summary()  # noqa: E731
        out[task] = memo(f"dataset-summary-{task}", spec, summary)
    return out


def action_dim(task: str, profile: Profile) -> int:
    """The width of ``task``'s recorded actions (a small cached result: no frames needed)."""
    spec = {"dataset": dataset_artifact(task, profile).key}
    dim = lambda: int(load_dataset(task, profile, progress=False).action.shape[1])  # noqa: E731
    return int(memo(f"action-dim-{task}", spec, dim))


def episode_strip(task: str, profile: Profile, stride: int, count: int) -> dict[str, np.ndarray]:
    """The first held-out episode of ``task``'s dataset as the tasks chapter draws it, kept as
    a small cached result: ``frames`` (:meth:`EpisodeData.frame_strip`), ``step`` and ``q``
    (standardized with the training split's statistics, as SCALE's loss sees it) of every
    frame, ``q_names`` and ``episode``."""

    def compute() -> dict[str, np.ndarray]:
        data = load_dataset(task, profile, progress=False)
        ep = int(data.heldout_episodes[0])
        rows = data.rows(ep)
        return {
            "frames": data.frame_strip(ep, stride, count),
            "step": np.asarray(data.step[rows]),
            "q": data.standardize_q(data.q[rows]),
            "q_names": np.array(data.q_names),
            "episode": np.array(ep),
        }

    spec = {"dataset": dataset_artifact(task, profile).key, "stride": stride, "count": count}
    return memo(f"episode-strip-{task}", spec, compute)


def tabulate_tasks(
    datasets: Mapping[str, EpisodeData],
    image_size: int,
    measure: Callable[[Task, EpisodeData], Mapping[str, Any]],
) -> pd.DataFrame:
    """``measure(task, data)`` for each (task name, dataset), one row per task.

    Each task's environment is built at ``image_size`` px, measured and closed again (also
    when ``measure`` raises), so a table over all five tasks never holds five simulators at
    once. Columns keep their own dtypes (an integer count stays an integer), in the order
    ``measure``'s first row gives them.
    """
    rows: dict[str, Mapping[str, Any]] = {}
    for name, data in datasets.items():
        task = make_task(name, image_size)
        try:
            rows[name] = measure(task, data)
        finally:
            task.close()
    return pd.DataFrame.from_dict(rows, orient="index")


# --------------------------------------------------------------------------------------
# Training clips
# --------------------------------------------------------------------------------------
class ClipSampler:
    """Random training clips: ``history + 1`` frames ``frameskip`` env steps apart.

    A clip starting at row ``s`` holds frames ``s, s + k, ..., s + T*k`` minus the last
    (T = history + 1, k = frameskip) and the T action blocks ``a[s + j*k : s + (j+1)*k]``
    flattened to ``k * A`` (block ``j`` leads frame ``j`` to ``j + 1``, LeWM's layout),
    z-scored with the dataset's training statistics. q is standardized the same way and
    ``episode`` gives SCALE's ``sample_pairs`` the episode of each clip. Starts are uniform
    over all valid (episode, step) pairs of the split.
    """

    def __init__(
        self,
        data: EpisodeData,
        split: str = "train",
        history: int = 3,
        frameskip: int = 5,
        batch_size: int = 64,
        seed: int = 0,
        q_variant: str = "full",
    ) -> None:
        if history < 1 or frameskip < 1 or batch_size < 1:
            raise ValueError(
                f"history, frameskip and batch_size must be >= 1, got "
                f"{history}, {frameskip}, {batch_size}"
            )
        if q_variant not in Q_VARIANTS:
            raise ValueError(f"unknown q variant {q_variant!r}; valid: {', '.join(Q_VARIANTS)}")
        self.data, self.split = data, split
        self.T, self.k, self.batch_size = history + 1, frameskip, batch_size
        self.q_cols = list(q_indices(data.task, q_variant))
        span = self.T * frameskip  # actions s .. s + span - 1 must exist (not NaN)
        eps = data.episodes(split)
        starts = [
            np.arange(data.starts[e], data.starts[e] + data.lengths[e] - span)
            for e in eps
            if data.lengths[e] - 1 >= span
        ]
        if not starts:
            raise ValueError(
                f"{data.task} {split} split: no episode has the {span} steps a clip of "
                f"{self.T} frames at frameskip {frameskip} needs (longest: "
                f"{int(data.lengths[eps].max()) - 1 if len(eps) else 0} steps)"
            )
        self.starts = np.concatenate(starts)
        self._rng = np.random.default_rng(seed)
        self._action_z = data.zscore_action(np.nan_to_num(data.action))
        self._q_z = data.standardize_q(data.q[:, self.q_cols], q_variant)

    def __len__(self) -> int:
        """Number of distinct clips (start rows) in the split."""
        return len(self.starts)

    def __iter__(self) -> ClipSampler:
        return self

    def __next__(self) -> dict[str, Any]:
        return self.sample(self._rng.choice(self.starts, size=self.batch_size))

    def sample(self, starts: np.ndarray) -> dict[str, Any]:
        """The clips starting at the given rows (a deterministic batch)."""
        import torch

        starts = np.asarray(starts, dtype=np.int64)
        frames = starts[:, None] + self.k * np.arange(self.T)  # (B, T)
        acts = starts[:, None] + np.arange(self.T * self.k)  # (B, T*k)
        b = len(starts)
        pixels = torch.from_numpy(self.data.pixels[frames]).permute(0, 1, 4, 2, 3)
        actions = self._action_z[acts].reshape(b, self.T, -1)
        return {
            "pixels": pixels.contiguous(),
            "actions": torch.from_numpy(np.ascontiguousarray(actions, dtype=np.float32)),
            "q": torch.from_numpy(np.ascontiguousarray(self._q_z[frames], dtype=np.float32)),
            "episode": torch.from_numpy(self.data.episode[starts].copy()),
        }
