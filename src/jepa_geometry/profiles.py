"""Run profiles: every size knob of the book, stored as YAML and validated on load.

Three profiles ship with the package (``presets/*.yaml``):

* ``smoke``  -- CI: every chapter end to end in minutes; numbers are meaningless.
* ``laptop`` -- the default: the whole book on a 2-core CPU without a GPU.
* ``paper``  -- the papers' own settings (ViT-tiny, 224 px, D = 192), for a GPU.

A profile is a tree of frozen dataclasses whose field types carry their ranges (``Count`` is an
integer >= 1, ``Positive`` a finite number > 0, ...). Pydantic validates a loaded tree against
them, so a typo or an out-of-range value fails before any work, in one line naming the key,
the value and what is valid. Chapters override single knobs with dotted keys, e.g.
``{"train.steps": 200}``.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from importlib import resources
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
)

PROFILES: tuple[str, ...] = ("smoke", "laptop", "paper")
DEFAULT_PROFILE = "laptop"


class ProfileError(ValueError):
    """A profile name, key or value is invalid."""


MAX_SEED = 2**32 - 1
"""The largest seed: NumPy's legacy generator and every seeding API the book uses take 32-bit
seeds, so a larger one would fail inside a run instead of before it."""


def _distinct(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A list whose elements are independent units (one model per seed, one toy run per noise
    level) holds each once: a repeated element would pass one unit off as two in every table
    that pools them."""
    if len(set(values)) != len(values):
        raise ValueError("names independent units, each once")
    return values


MAX_BATCH = 1024
"""The most clips a training step may take: 8 times the papers' 128. The input of one step of
1024 clips of the paper profile (4 frames of 224 px, fp32) is 2.5 GB before any activation, and
an unbounded value (``--set train.batch_size=1000000``) filled a machine's memory within
seconds, without a word, instead of stopping before the run."""


# The types of the profile's values: each carries its range, so the command line, ``--set``
# overrides, chapter overrides and the presets are held to the same limits. Numbers are finite
# unless the type says otherwise; a bool is not a number and a string never becomes one.
Count = Annotated[StrictInt, Field(ge=1)]
"""An integer >= 1 (a size, a count, a number of steps)."""
NonNegativeInt = Annotated[StrictInt, Field(ge=0)]
Seed = Annotated[StrictInt, Field(ge=0, le=MAX_SEED)]
Positive = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
Probability = Annotated[float, Field(strict=True, ge=0, le=1)]
OpenProbability = Annotated[float, Field(strict=True, gt=0, le=1)]
"""A fraction in (0, 1]."""
TrainSeeds = Annotated[tuple[Seed, ...], Field(min_length=1), AfterValidator(_distinct)]
Pair = tuple[Count, Count]


@dataclass(frozen=True)
class Seeds:
    """Seeds fixed before any result is seen (never picked afterwards)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    train: TrainSeeds  # training seeds, one model per seed
    data: Seed  # dataset collection
    eval: Seed  # evaluation episode sets and solver noise


@dataclass(frozen=True)
class DataSettings:
    __pydantic_config__ = ConfigDict(extra="forbid")

    image_size: Annotated[StrictInt, Field(ge=8)]  # rendered frames are image_size^2 RGB
    episodes: Count  # training episodes collected per task
    heldout_episodes: Count  # held-out episodes (evaluation pairs, probes)
    max_episode_steps: Count
    frameskip: Count  # env steps per action block (LeWM: 5)
    history: Count  # context frames of the predictor (LeWM: 3)
    # Per-task [training, held-out] episode counts overriding a task's own (``Task.episodes``)
    # and the two above: a ladder's rung sets them. Keys are task names.
    task_episodes: dict[StrictStr, Pair] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelSettings:
    __pydantic_config__ = ConfigDict(extra="forbid")

    encoder: Literal["cnn", "vit"]  # "cnn" (laptop/smoke) or "vit" (paper)
    embed_dim: Count  # D, the latent dimension
    encoder_widths: Annotated[tuple[Count, ...], Field(min_length=1)]  # CNN channel widths
    patch_size: Count  # ViT patch size (vit)
    vit_width: Count
    vit_depth: Count
    vit_heads: Count
    predictor_width: Count
    predictor_depth: Count
    predictor_heads: Count
    predictor_dim_head: Count  # attention width per head (LeWM: 64, so 16 heads -> 1024 > D)
    predictor_mlp: Count
    predictor_dropout: Probability  # attention/MLP dropout in the predictor (LeWM: 0.1)
    projector_hidden: Count


@dataclass(frozen=True)
class TrainSettings:
    __pydantic_config__ = ConfigDict(extra="forbid")

    steps: Count
    batch_size: Annotated[StrictInt, Field(ge=2, le=MAX_BATCH)]  # SIGReg's statistic needs 2
    lr: Positive
    weight_decay: NonNegative
    warmup_steps: NonNegativeInt
    grad_clip: Positive
    log_every: Count
    checkpoint_every: Count
    sigreg_weight: NonNegative  # lambda_sig (LeWM: 0.09)
    sigreg_projections: Count  # M, random directions per call (LeWM: 1024)
    pairs_per_batch: Count  # K, SCALE pairs per step
    # Arithmetic of the model's forward and backward: "bf16" (torch.autocast, weights and loss
    # terms in fp32, as LeWM's Lightning training) or "fp32".
    precision: Literal["bf16", "fp32"]


@dataclass(frozen=True)
class PlanSettings:
    __pydantic_config__ = ConfigDict(extra="forbid")

    horizon: Count  # action blocks per plan (LeWM: 5)
    tiers: Annotated[dict[StrictStr, Pair], Field(min_length=1)]  # tier -> (samples, iterations)
    topk_fraction: OpenProbability  # CEM elites = max(round(fraction * samples), 2)


@dataclass(frozen=True)
class EvalSettings:
    __pydantic_config__ = ConfigDict(extra="forbid")

    episodes: Count  # start/goal pairs per evaluation set
    goal_offset: Count  # env steps between start and goal (code protocol: 25)
    budget: Count  # env steps allowed to reach the goal (code protocol: 50)


@dataclass(frozen=True)
class TheorySettings:
    """Sizes of the CPU-only theory chapters."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    samples: Annotated[StrictInt, Field(ge=2)]  # Monte-Carlo samples for closed-form checks
    # dimension of the synthetic embeddings: a 2-D state plus at least one nuisance direction
    latent_dim: Annotated[StrictInt, Field(ge=3)]
    toy_seeds: Count  # seeds per noise level in the 2-D separation experiment
    toy_steps: Count  # training steps of the 2-D toy
    toy_noise_levels: Annotated[
        tuple[Positive, ...], Field(min_length=1), AfterValidator(_distinct)
    ]


@dataclass(frozen=True)
class DinoWMSettings:
    """The DINO-WM arm (:mod:`jepa_geometry.wm.dinowm`): its frozen encoder and the size of its
    patch-token predictor (DINO-WM's own: a 10-d action embedding, depth 6, 16 heads of
    width 64, MLP 2048).

    ``encoder`` is ``dinov2`` (DINOv2 ViT-S/14 from the local file ``dinov2_weights``) or
    ``standin`` (the offline stand-in, :mod:`jepa_geometry.wm.selfdistill`, pretrained for
    ``standin_steps`` steps). ``token_grid`` is the side of the token grid the predictor sees:
    the encoder's own grid (16 for DINOv2 at 224 px) keeps every patch, as DINO-WM does; a
    divisor of it average-pools g x g blocks of patches (the laptop's cost-saving deviation).
    """

    __pydantic_config__ = ConfigDict(extra="forbid")

    encoder: Literal["standin", "dinov2"]
    dinov2_weights: StrictStr  # path of dinov2_vits14_pretrain.pth ("" for the stand-in)
    action_embed: Count
    depth: Count
    heads: Count
    dim_head: Count
    mlp: Count
    standin_steps: Count
    token_grid: Count


@dataclass(frozen=True)
class LadderSettings:
    """How far the rungs of a task's ladder (:mod:`jepa_geometry.study.levers`) scale the
    profile: a lever's factor is capped at ``max_factor`` (``.inf`` at laptop and paper: the
    ladder as fixed, infinity being a setting here, not a typo; 2 at smoke, where every rung
    still differs from the one before, at a fraction of the cost)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    max_factor: Annotated[float, Field(strict=True, ge=1)]


@dataclass(frozen=True)
class GeometrySizes:
    """How much the geometry measurements take (:class:`jepa_geometry.analysis.measurements.
    GeometrySettings`): the papers' protocol sizes at ``laptop`` and ``paper`` (SCALE's 1,500
    probe frames, 20,000 dispersion pairs, 20 starts x 64 candidates; AnisoWM's 32 x 32
    landscape grid and 200 goals), a few of each at ``smoke``, where they test the code, not
    the science."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    probe_frames: Annotated[StrictInt, Field(ge=4)]  # a held-out ridge fit needs a few frames
    dispersion_pairs: Count
    ranking_starts: Count
    ranking_candidates: Annotated[StrictInt, Field(ge=2)]  # a rank correlation needs two
    grid: Annotated[StrictInt, Field(ge=2)]  # positions per side of the landscape grid
    landscape_goals: Count


CLUSTER_UNITS: tuple[str, ...] = ("collect", "train", "plan", "measure")
"""The kinds of unit of work of the study grid (:mod:`jepa_geometry.cluster`)."""
RESOURCE_KEYS: tuple[str, ...] = ("gpus", "cpus", "mem_gb", "hours")


def _resources(value: dict[str, float]) -> dict[str, float]:
    """A unit kind's request names exactly :data:`RESOURCE_KEYS`, with a time limit > 0."""
    if set(value) != set(RESOURCE_KEYS) or value["hours"] <= 0:
        raise ValueError(f"must give {', '.join(RESOURCE_KEYS)} (hours > 0)")
    return value


Resources = Annotated[dict[StrictStr, NonNegative], AfterValidator(_resources)]


@dataclass(frozen=True)
class ClusterSettings:
    """What each kind of unit of the study grid asks a job engine for, and what it is expected
    to cost (:mod:`jepa_geometry.cluster`). Never part of an artifact's key: where a job
    runs does not change what it computes.

    Each of ``collect``, ``train``, ``plan`` and ``measure`` maps ``gpus``, ``cpus``,
    ``mem_gb`` and ``hours`` (the job's time limit) to numbers. The estimates give device-hours
    per unit: a model trains ``train.steps / train_steps_per_s`` seconds, a plan at tier T1
    takes ``plan_seconds`` (other tiers in proportion to their rollouts; DINO-WM's arm
    ``dinowm_plan_factor`` times as long: its predictor runs on patch tokens), a dataset is
    collected at the task's ``collect_frames_per_s`` for this profile (a fact of the task:
    the simulators differ tenfold), a model is
    measured in ``measure_hours``, DINO-WM's stand-in encoder pretrains
    ``dinowm.standin_steps / pretrain_steps_per_s`` seconds (a ``train`` unit), and the
    ceiling simulates one candidate of a plan in the task's ``ceiling_rollout_ms`` milliseconds
    (``study.cells.ceiling_seconds_per_pair``).

    ``device`` is where training and planning run (``cpu`` or ``cuda``). It is the one field
    that enters keys, and only when it is not ``cpu``: a GPU does not give a CPU's bits, so a
    model trained on one never stands in for a model trained on the other.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")

    collect: Resources
    train: Resources
    plan: Resources
    measure: Resources
    train_steps_per_s: Positive
    plan_seconds: Positive
    dinowm_plan_factor: Positive
    measure_hours: Positive
    pretrain_steps_per_s: Positive
    device: Literal["cpu", "cuda"]


@dataclass(frozen=True)
class Profile:
    __pydantic_config__ = ConfigDict(extra="forbid")

    name: StrictStr
    description: StrictStr
    seeds: Seeds
    data: DataSettings
    model: ModelSettings
    train: TrainSettings
    plan: PlanSettings
    eval: EvalSettings
    theory: TheorySettings = field(repr=False)
    cluster: ClusterSettings = field(repr=False)
    dinowm: DinoWMSettings = field(repr=False)
    geometry: GeometrySizes = field(repr=False)
    ladder: LadderSettings = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (lists for tuples), e.g. for manifests and cache keys."""
        return _plain(dataclasses.asdict(self))

    def section(self, name: str) -> dict[str, Any]:
        """One section as a plain dict: the part of the profile an artifact depends on."""
        if name not in _SECTIONS:
            raise ProfileError(f"unknown profile section {name!r}; valid: {', '.join(_SECTIONS)}")
        return _plain(dataclasses.asdict(getattr(self, name)))


_SECTIONS = tuple(
    f.name for f in dataclasses.fields(Profile) if f.name not in ("name", "description")
)
_VALIDATOR = TypeAdapter(Profile)


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def _type_at(path: tuple[str | int, ...]) -> Any:
    """The declared type of the key at ``path`` (``()``: the profile itself)."""
    tp: Any = Profile
    for part in path:
        tp = typing.get_type_hints(tp)[part]
    return tp


def _validate(raw: dict[str, Any], name: str) -> Profile:
    """The :class:`Profile` of a raw tree, or :class:`ProfileError` in one line for its first
    fault (an unknown key before anything else: a typo explains the rest)."""
    try:
        return _VALIDATOR.validate_python(raw)
    except ValidationError as error:
        faults = sorted(
            error.errors(include_url=False),
            key=lambda e: e["type"] != "unexpected_keyword_argument",
        )
    e = faults[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"])[1:]
    if e["type"] == "unexpected_keyword_argument":
        valid = ", ".join(f.name for f in dataclasses.fields(_type_at(e["loc"][:-1])))
        raise ProfileError(f"profile {name!r}: unknown key {where!r}; valid: {valid}")
    if e["type"] == "missing":
        raise ProfileError(f"profile {name!r}: missing key {where}")
    if e["type"] == "literal_error":
        valid = ", ".join(typing.get_args(_type_at(e["loc"])))
        raise ProfileError(f"profile {name!r}: {where} must be one of {valid}, got {e['input']!r}")
    msg = e["msg"].removeprefix("Value error, ").replace("Input should be", "must be")
    raise ProfileError(f"profile {name!r}: {where} {msg[:1].lower()}{msg[1:]}, got {e['input']!r}")


def _set_dotted(tree: dict[str, Any], key: str, value: Any, profile: str) -> None:
    parts = key.split(".")
    node = tree
    for i, part in enumerate(parts):
        if not isinstance(node, dict) or part not in node:
            valid = sorted(node) if isinstance(node, dict) else []
            prefix = ".".join(parts[:i]) or "<top>"
            raise ProfileError(
                f"unknown override {key!r} for profile {profile!r}: no {part!r} under {prefix}; "
                f"valid: {', '.join(valid)}"
            )
        if i == len(parts) - 1:
            node[part] = value
        else:
            node = node[part]


def raw_profile(name: str) -> dict[str, Any]:
    """The YAML of a shipped profile as a dict (unvalidated)."""
    if name not in PROFILES:
        raise ProfileError(f"unknown profile {name!r}; valid: {', '.join(PROFILES)}")
    text = resources.files("jepa_geometry.presets").joinpath(f"{name}.yaml").read_text()
    return yaml.safe_load(text)


def with_overrides(profile: Profile, overrides: dict[str, Any]) -> Profile:
    """``profile`` with dotted-key overrides applied, validated like a loaded profile.

    >>> with_overrides(load_profile("smoke"), {"train.steps": 30}).train.steps
    30
    """
    raw = profile.to_dict()
    for key, value in overrides.items():
        _set_dotted(raw, key, value, profile.name)
    return _validate(raw, profile.name)


def load_profile(name: str = DEFAULT_PROFILE, overrides: dict[str, Any] | None = None) -> Profile:
    """Load and validate a profile, applying dotted-key overrides.

    >>> load_profile("smoke", {"train.steps": 10}).train.steps
    10
    """
    if not isinstance(name, str):
        raise ProfileError(f"profile must be a string, got {name!r}; valid: {', '.join(PROFILES)}")
    raw = raw_profile(name)
    for key, value in (overrides or {}).items():
        _set_dotted(raw, key, value, name)
    return _validate(raw, name)
