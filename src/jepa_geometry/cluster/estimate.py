"""The cost model: a unit's estimated device-hours, from the profile's ``cluster`` section
and the task's own rates.

Each kind of work is priced by one measured rate, of the profile
(:class:`~jepa_geometry.profiles.ClusterSettings`; ``benchmarks/gpu_check.py`` measures the
training and planning rates on a GPU) or of the task (its simulator's
``collect_frames_per_s`` and ``ceiling_rollout_ms``): a dataset by its simulator's frames per
second, a model
by training steps per second, a planning cell by seconds per plan at tier T1 scaled by the
tier's rollouts (the ceiling by its simulator's time per rollout). The estimates decide nothing
computed; they are what the dry run lists (:mod:`.dry_run`) and what an extension states
before it builds.

:class:`ClusterError` is the grid's error (bad input to the cluster run: an unknown executor
or stage, a study given twice, a profile without a rate), raised in one line before any work.
It lives here, in the package's lowest module, so that every other module can raise it.
"""

from __future__ import annotations

from jepa_geometry.envs import task_class
from jepa_geometry.envs.collect import episode_counts
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.planning.protocol import make_protocol
from jepa_geometry.planning.solver import budget_tiers
from jepa_geometry.profiles import Profile
from jepa_geometry.wm.arms import DINOWM


class ClusterError(ValueError):
    """Bad input to the grid's run on a job engine (an unknown executor or stage, a bad count,
    a study given twice, a missing rate or file): one line, before any work. A bad request to
    one task's study (an arm, cell or protocol) is :class:`~jepa_geometry.study.cells.StudyError`.
    """


def collect_hours(task: str, profile: Profile) -> float:
    """Estimated hours to collect ``task``'s dataset: at most ``max_episode_steps`` frames per
    episode at the task's ``collect_frames_per_s`` of this profile (a collect job's rate)."""
    rates = task_class(task).collect_frames_per_s
    if profile.name not in rates:
        raise ClusterError(
            f"task {task!r} states no collect_frames_per_s for profile {profile.name!r}; "
            f"it has: {', '.join(rates) or 'none'}"
        )
    train, held = episode_counts(task, profile)
    frames = (train + held) * profile.data.max_episode_steps
    return frames / rates[profile.name] / 3600


def pretrain_hours(profile: Profile) -> float:
    """Estimated hours to pretrain the stand-in: its steps at ``pretrain_steps_per_s``."""
    return profile.dinowm.standin_steps / profile.cluster.pretrain_steps_per_s / 3600


def train_hours(profile: Profile) -> float:
    """Estimated hours to train one model: steps at the profile's ``train_steps_per_s``."""
    return profile.train.steps / profile.cluster.train_steps_per_s / 3600


def cell_hours(cell: PlanningCell) -> float:
    """Estimated hours of one planning cell: pairs x plans per pair x seconds per plan, the
    profile's ``plan_seconds`` (at tier T1) scaled by the tier's rollouts (samples x
    iterations) relative to T1, times ``dinowm_plan_factor`` for DINO-WM's arm (a predictor on
    patch tokens, measured 4.6 times as slow per plan at laptop); for the ceiling, its rollouts
    x the simulator's seconds per rollout (``ceiling_rollout_ms``), on its subset of pairs."""
    p = cell.profile
    samples, iterations = budget_tiers(p)["T1"]
    if cell.arm == CEILING:
        per_plan = cell.rollouts() * task_class(cell.task).ceiling_rollout_ms / 1e3
    else:
        per_plan = p.cluster.plan_seconds * cell.rollouts() / (samples * iterations)
        if cell.arm == DINOWM:
            per_plan *= p.cluster.dinowm_plan_factor
    pairs = cell.subset or cell.n_pairs or p.eval.episodes
    return pairs * make_protocol(p, cell.protocol).plans * per_plan / 3600
