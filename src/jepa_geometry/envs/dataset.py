"""A task's dataset in the artifact cache: its key, collected when missing, and small read-outs.

:func:`load_dataset` returns the :class:`~jepa_geometry.envs.episodes.EpisodeData` of (task,
profile), collecting it first (:mod:`jepa_geometry.envs.collect`) if the cache lacks it; the
file's layout is in :mod:`jepa_geometry.envs.episodes`, and training clips are cut by
:class:`~jepa_geometry.envs.clips.ClipSampler`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.artifacts import Artifact, ArtifactError, get_or_build, memo
from jepa_geometry.envs import Task, check_task, make_task
from jepa_geometry.envs.collect import build_dataset, dataset_spec
from jepa_geometry.envs.episodes import FILENAME, DatasetError, EpisodeData, read_episodes
from jepa_geometry.profiles import Profile


def dataset_artifact(task: str, profile: Profile) -> Artifact:
    """The cache entry ``data/datasets/<task>/<key>/`` holding ``episodes.h5``."""
    return Artifact("datasets", check_task(task), dataset_spec(task, profile))


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
