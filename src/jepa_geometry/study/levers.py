"""The levers of a task's gate: how a study may be scaled up, for every arm alike.

A task whose baseline does not plan at a profile as it stands (Push-T and Cube at the laptop
profile) gets a *ladder*: rungs that each add one lever to the rung before (more pixels,
training steps, episodes, or pairs the object must move in). The ladder is the task's: its
study file lists the rungs (``ladder``) and the rung it uses per profile (``settings``,
:meth:`jepa_geometry.study.spec.StudySpec.profile`); :func:`jepa_geometry.study.decisions.gate.
lever_choice` climbs it. Levers are multipliers of the profile's
own values, so a user's override (``train__steps=500``) is scaled, not silently replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jepa_geometry.envs.collect import episode_counts
from jepa_geometry.planning.protocol import PROTOCOLS, SCALE_PROTOCOL
from jepa_geometry.profiles import Profile, with_overrides


@dataclass(frozen=True)
class Lever:
    """One rung of a task's ladder: multipliers of profile values, and the protocol.

    ``image`` multiplies ``data.image_size``, ``steps`` ``train.steps`` and ``episodes`` the
    task's [training, held-out] episode counts; ``protocol`` is one of
    :data:`~jepa_geometry.planning.protocol.PROTOCOLS`. Rungs are cumulative (each repeats
    the levers of the rung before), so one rung is one configuration.
    """

    name: str
    image: float = 1.0
    steps: float = 1.0
    episodes: float = 1.0
    protocol: str = SCALE_PROTOCOL

    def __post_init__(self) -> None:
        if min(self.image, self.steps, self.episodes) < 1.0:
            raise ValueError(f"lever {self.name!r}: multipliers must be >= 1")
        if self.protocol not in PROTOCOLS:
            raise ValueError(
                f"lever {self.name!r}: unknown protocol {self.protocol!r}; "
                f"valid: {', '.join(PROTOCOLS)}"
            )

    def overrides(self, task: str, profile: Profile) -> dict[str, object]:
        """The dotted profile overrides of this rung, relative to ``profile``; each factor is
        capped at the profile's ``ladder.max_factor``."""
        cap = profile.ladder.max_factor
        image, steps, episodes = (min(f, cap) for f in (self.image, self.steps, self.episodes))
        out: dict[str, object] = {}
        if image != 1.0:
            out["data.image_size"] = round(image * profile.data.image_size)
        if steps != 1.0:
            out["train.steps"] = round(steps * profile.train.steps)
        if episodes != 1.0:
            counts = [round(episodes * c) for c in episode_counts(task, profile)]
            out["data.task_episodes"] = {**profile.data.task_episodes, task: counts}
        return out

    def apply(self, task: str, profile: Profile) -> Profile:
        """``profile`` with this rung's levers."""
        return with_overrides(profile, self.overrides(task, profile))


def ladder_rung(ladder: Sequence[Lever], task: str, name: str) -> Lever:
    """The rung called ``name`` of ``task``'s ``ladder`` (its study file's ``ladder``)."""
    if not ladder:
        raise ValueError(f"task {task!r} has no ladder (its study file names none)")
    names = [lv.name for lv in ladder]
    if name not in names:
        raise ValueError(f"{task} has no lever {name!r}; its ladder: {'; '.join(names)}")
    return ladder[names.index(name)]
