"""Training clips: windows of history + 1 frames cut from a dataset's training episodes."""

from __future__ import annotations

from typing import Any

import numpy as np

from jepa_geometry.envs import Q_VARIANTS, q_indices
from jepa_geometry.envs.episodes import EpisodeData


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
