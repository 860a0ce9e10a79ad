"""The episode file: its schema, and reading it back validated.

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
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from jepa_geometry.artifacts import MANIFEST
from jepa_geometry.envs import TASKS, q_indices, q_names

SCHEMA_VERSION = 1


FILENAME = "episodes.h5"


SPLITS: tuple[str, ...] = ("train", "heldout")


COLUMNS = ("pixels", "action", "state", "q", "episode", "step", "behaviour_success")


class DatasetError(RuntimeError):
    """A dataset file is missing, corrupt, truncated or of the wrong schema."""


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
    required = [*COLUMNS, *(f"split/{s}_episodes" for s in SPLITS)] + [
        f"stats/{n}_{m}" for n in ("q", "action") for m in ("mean", "std")
    ]
    missing = [k for k in required if k not in f]
    if missing:
        raise bad(f"missing dataset(s) {', '.join(missing)}")
    cols = {k: f[k][()] for k in COLUMNS}
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
