"""Run profiles: every size knob of the book, stored as YAML and validated on load.

Three profiles ship with the package (``presets/*.yaml``):

* ``smoke``  -- CI: every chapter end to end in minutes; numbers are meaningless.
* ``laptop`` -- the default: the whole book on a 2-core CPU without a GPU.
* ``paper``  -- the papers' own settings (ViT-tiny, 224 px, D = 192), for a GPU.

A profile is a tree of frozen dataclasses. Loading checks every key and every type,
so a typo fails before any work with a message naming the bad key and the valid ones.
Chapters override single knobs with dotted keys, e.g. ``{"train.steps": 200}``.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

PROFILES: tuple[str, ...] = ("smoke", "laptop", "paper")
DEFAULT_PROFILE = "laptop"


class ProfileError(ValueError):
    """A profile name, key or value is invalid."""


@dataclass(frozen=True)
class Seeds:
    """Seeds fixed before any result is seen (never picked afterwards)."""

    train: tuple[int, ...]  # training seeds, one model per seed
    data: int  # dataset collection
    eval: int  # evaluation episode sets and solver noise


@dataclass(frozen=True)
class DataSettings:
    image_size: int  # rendered frames are image_size x image_size RGB
    episodes: int  # training episodes collected per task
    heldout_episodes: int  # held-out episodes (evaluation pairs, probes)
    max_episode_steps: int
    frameskip: int  # env steps per action block (LeWM: 5)
    history: int  # context frames of the predictor (LeWM: 3)
    # Per-task [training, held-out] episode counts overriding the two above (collection cost
    # differs ~10x between tasks: Cube renders a 185k-triangle arm). Keys are task names.
    task_episodes: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelSettings:
    encoder: str  # "cnn" (laptop/smoke) or "vit" (paper)
    embed_dim: int  # D, the latent dimension
    encoder_widths: tuple[int, ...]  # CNN channel widths (cnn) or unused (vit)
    patch_size: int  # ViT patch size (vit)
    vit_width: int
    vit_depth: int
    vit_heads: int
    predictor_width: int
    predictor_depth: int
    predictor_heads: int
    predictor_dim_head: int  # attention width per head (LeWM: 64, so 16 heads -> 1024 > D)
    predictor_mlp: int
    predictor_dropout: float  # attention/MLP dropout in the predictor (LeWM: 0.1)
    projector_hidden: int


@dataclass(frozen=True)
class TrainSettings:
    steps: int
    batch_size: int  # clips per step
    lr: float
    weight_decay: float
    warmup_steps: int
    grad_clip: float
    log_every: int
    checkpoint_every: int
    sigreg_weight: float  # lambda_sig (LeWM: 0.09)
    sigreg_projections: int  # M, random directions per call (LeWM: 1024)
    pairs_per_batch: int  # K, SCALE pairs per step
    # Arithmetic of the model's forward and backward: "bf16" (torch.autocast, weights and loss
    # terms in fp32, as LeWM's Lightning training) or "fp32".
    precision: str


@dataclass(frozen=True)
class PlanSettings:
    horizon: int  # action blocks per plan (LeWM: 5)
    tiers: dict[str, tuple[int, int]]  # budget tier -> (samples, iterations)
    topk_fraction: float  # CEM elites = max(round(fraction * samples), 2)


@dataclass(frozen=True)
class EvalSettings:
    episodes: int  # start/goal pairs per evaluation set
    goal_offset: int  # env steps between start and goal (code protocol: 25)
    budget: int  # env steps allowed to reach the goal (code protocol: 50)


@dataclass(frozen=True)
class TheorySettings:
    """Sizes of the CPU-only theory chapters."""

    samples: int  # Monte-Carlo samples for closed-form checks
    latent_dim: int  # dimension of the synthetic embeddings
    toy_seeds: int  # seeds per noise level in the 2-D separation experiment
    toy_steps: int  # training steps of the 2-D toy
    toy_noise_levels: tuple[float, ...]


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

    encoder: str
    dinov2_weights: str  # path of dinov2_vits14_pretrain.pth ("" when the encoder is standin)
    action_embed: int
    depth: int
    heads: int
    dim_head: int
    mlp: int
    standin_steps: int
    token_grid: int


@dataclass(frozen=True)
class LadderSettings:
    """How far the rungs of a task's ladder (:mod:`jepa_geometry.study.levers`) scale the
    profile: a lever's factor is capped at ``max_factor`` (``.inf`` at laptop and paper: the
    ladder as fixed; 2 at smoke, where every rung still differs from the one before, at a
    fraction of the cost)."""

    max_factor: float


@dataclass(frozen=True)
class GeometrySizes:
    """How much the geometry measurements take (:class:`jepa_geometry.analysis.measurements.
    GeometrySettings`): the papers' protocol sizes at ``laptop`` and ``paper`` (SCALE's 1,500
    probe frames, 20,000 dispersion pairs, 20 starts x 64 candidates; AnisoWM's 32 x 32
    landscape grid and 200 goals), a few of each at ``smoke``, where they test the code, not
    the science."""

    probe_frames: int
    dispersion_pairs: int
    ranking_starts: int
    ranking_candidates: int
    grid: int  # positions per side of the landscape grid
    landscape_goals: int


CLUSTER_UNITS: tuple[str, ...] = ("collect", "train", "plan", "measure")
"""The kinds of unit of work of the study grid (:mod:`jepa_geometry.study.cluster`)."""
RESOURCE_KEYS: tuple[str, ...] = ("gpus", "cpus", "mem_gb", "hours")


@dataclass(frozen=True)
class ClusterSettings:
    """What each kind of unit of the study grid asks a job engine for, and what it is expected
    to cost (:mod:`jepa_geometry.study.cluster`). Never part of an artifact's key: where a job
    runs does not change what it computes.

    Each of ``collect``, ``train``, ``plan`` and ``measure`` maps ``gpus``, ``cpus``,
    ``mem_gb`` and ``hours`` (the job's time limit) to numbers. The estimates give device-hours
    per unit: a model trains ``train.steps / train_steps_per_s`` seconds, a plan at tier T1
    takes ``plan_seconds`` (other tiers in proportion to their rollouts), a dataset is
    collected at ``collect_frames_per_s``, a model is measured in ``measure_hours``, and
    DINO-WM's stand-in encoder pretrains ``dinowm.standin_steps / pretrain_steps_per_s``
    seconds (a ``train`` unit).

    ``device`` is where training and planning run (``cpu`` or ``cuda``). It is the one field
    that enters keys, and only when it is not ``cpu``: a GPU does not give a CPU's bits, so a
    model trained on one never stands in for a model trained on the other.
    """

    collect: dict[str, float]
    train: dict[str, float]
    plan: dict[str, float]
    measure: dict[str, float]
    train_steps_per_s: float
    plan_seconds: float
    collect_frames_per_s: float
    measure_hours: float
    pretrain_steps_per_s: float
    device: str


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
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


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """Check ``value`` against the annotation ``tp`` and convert lists to tuples."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ProfileError(f"{where}: expected a mapping, got {type(value).__name__}")
        return _build(tp, value, where)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list | tuple):
            raise ProfileError(f"{where}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ProfileError(f"{where}: expected {len(args)} items, got {value!r}")
        return tuple(
            _coerce(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args, strict=True))
        )
    if origin is dict:
        kt, vt = typing.get_args(tp)
        if not isinstance(value, dict):
            raise ProfileError(f"{where}: expected a mapping, got {value!r}")
        return {_coerce(k, kt, where): _coerce(v, vt, f"{where}.{k}") for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            try:
                return _coerce(value, arg, where)
            except ProfileError:
                continue
        raise ProfileError(f"{where}: {value!r} matches none of {tp}")
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ProfileError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProfileError(f"{where}: expected an integer, got {value!r}")
        return value
    if tp in (str, bool):
        if not isinstance(value, tp):
            raise ProfileError(f"{where}: expected {tp.__name__}, got {value!r}")
        return value
    raise TypeError(f"unsupported annotation {tp} at {where}")  # programming error


def _build(cls: type, raw: dict[str, Any], where: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise ProfileError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; valid: {', '.join(names)}"
        )
    missing = [n for n in names if n not in raw]
    if missing:
        raise ProfileError(f"{where}: missing key(s) {', '.join(missing)}")
    return cls(**{n: _coerce(raw[n], hints[n], f"{where}.{n}") for n in names})


# Ranges of every numeric profile value: (lowest, highest, lowest is excluded). One place, so the
# command line, --set overrides, chapter overrides and the presets are held to the same limits.
# A tuple value (seeds, episode counts, noise levels, tiers) has each element checked, and a
# tuple must not be empty.
_INF = float("inf")
MAX_SEED = 2**32 - 1
"""The largest seed: NumPy's legacy generator and every seeding API the book uses take 32-bit
seeds, so a larger one would fail inside a run instead of before it."""
LIMITS: dict[str, tuple[float, float, bool]] = {
    "seeds.train": (0, MAX_SEED, False),
    "seeds.data": (0, MAX_SEED, False),
    "seeds.eval": (0, MAX_SEED, False),
    "data.image_size": (8, _INF, False),
    "data.episodes": (1, _INF, False),
    "data.heldout_episodes": (1, _INF, False),
    "data.max_episode_steps": (1, _INF, False),
    "data.frameskip": (1, _INF, False),
    "data.history": (1, _INF, False),
    "data.task_episodes": (1, _INF, False),
    "model.embed_dim": (1, _INF, False),
    "model.encoder_widths": (1, _INF, False),
    "model.patch_size": (1, _INF, False),
    "model.vit_width": (1, _INF, False),
    "model.vit_depth": (1, _INF, False),
    "model.vit_heads": (1, _INF, False),
    "model.predictor_width": (1, _INF, False),
    "model.predictor_depth": (1, _INF, False),
    "model.predictor_heads": (1, _INF, False),
    "model.predictor_dim_head": (1, _INF, False),
    "model.predictor_mlp": (1, _INF, False),
    "model.predictor_dropout": (0, 1, False),
    "model.projector_hidden": (1, _INF, False),
    "train.steps": (1, _INF, False),
    "train.batch_size": (2, _INF, False),  # SIGReg's statistic needs two samples
    "train.lr": (0, _INF, True),
    "train.weight_decay": (0, _INF, False),
    "train.warmup_steps": (0, _INF, False),
    "train.grad_clip": (0, _INF, True),
    "train.log_every": (1, _INF, False),
    "train.checkpoint_every": (1, _INF, False),
    "train.sigreg_weight": (0, _INF, False),
    "train.sigreg_projections": (1, _INF, False),
    "train.pairs_per_batch": (1, _INF, False),
    "plan.horizon": (1, _INF, False),
    "plan.tiers": (1, _INF, False),
    "plan.topk_fraction": (0, 1, True),
    "eval.episodes": (1, _INF, False),
    "eval.goal_offset": (1, _INF, False),
    "eval.budget": (1, _INF, False),
    "theory.samples": (2, _INF, False),
    "theory.latent_dim": (3, _INF, False),  # a 2-D state plus at least one nuisance direction
    "theory.toy_seeds": (1, _INF, False),
    "theory.toy_steps": (1, _INF, False),
    "theory.toy_noise_levels": (0, _INF, True),
    "cluster.collect": (0, _INF, False),
    "cluster.train": (0, _INF, False),
    "cluster.plan": (0, _INF, False),
    "cluster.measure": (0, _INF, False),
    "cluster.train_steps_per_s": (0, _INF, True),
    "cluster.plan_seconds": (0, _INF, True),
    "cluster.collect_frames_per_s": (0, _INF, True),
    "cluster.measure_hours": (0, _INF, True),
    "cluster.pretrain_steps_per_s": (0, _INF, True),
    "dinowm.action_embed": (1, _INF, False),
    "dinowm.depth": (1, _INF, False),
    "dinowm.heads": (1, _INF, False),
    "dinowm.dim_head": (1, _INF, False),
    "dinowm.mlp": (1, _INF, False),
    "dinowm.standin_steps": (1, _INF, False),
    "dinowm.token_grid": (1, _INF, False),
    "ladder.max_factor": (1, _INF, False),
    "geometry.probe_frames": (4, _INF, False),  # a held-out ridge fit needs a few frames
    "geometry.dispersion_pairs": (1, _INF, False),
    "geometry.ranking_starts": (1, _INF, False),
    "geometry.ranking_candidates": (2, _INF, False),  # a rank correlation needs two
    "geometry.grid": (2, _INF, False),
    "geometry.landscape_goals": (1, _INF, False),
}


INFINITY_MEANS_NONE = ("ladder.max_factor",)
"""Values where ``.inf`` is a setting (no cap on a lever's factor), not a typo."""

DISTINCT = ("seeds.train", "theory.toy_noise_levels")
"""Lists whose elements are independent units (one model per seed, one toy run per noise
level): a repeated element would pass one unit off as two in every table that pools them."""


# The valid values of every string setting that is not a name of something else.
CHOICES: dict[str, tuple[str, ...]] = {
    "train.precision": ("bf16", "fp32"),
    "cluster.device": ("cpu", "cuda"),
    "dinowm.encoder": ("standin", "dinov2"),
}


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in _leaves(v)]
    return [value]


def _dotted(profile: Profile, key: str) -> Any:
    section, name = key.split(".")
    return getattr(getattr(profile, section), name)


def _within(v: float, low: float, high: float, open_low: bool, inf_ok: bool = False) -> bool:
    """``low <(=) v <= high`` and ``v`` finite (or ``+inf`` where ``inf_ok``): an open-ended
    range (``high`` infinite) must not admit infinity, and NaN compares false with everything
    (an int is always finite)."""
    finite = not isinstance(v, float) or math.isfinite(v) or (inf_ok and v == _INF)
    return finite and v <= high and (low < v if open_low else low <= v)


def check_limits(profile: Profile) -> None:
    """Raise :class:`ProfileError` (one line) for the first value outside :data:`LIMITS` or
    :data:`CHOICES`."""
    for key, valid in CHOICES.items():
        value = _dotted(profile, key)
        if value not in valid:
            raise ProfileError(
                f"profile {profile.name!r}: {key} must be one of {', '.join(valid)}, got {value!r}"
            )
    for kind in CLUSTER_UNITS:
        keys = set(getattr(profile.cluster, kind))
        if keys != set(RESOURCE_KEYS) or getattr(profile.cluster, kind)["hours"] <= 0:
            raise ProfileError(
                f"profile {profile.name!r}: cluster.{kind} must give {', '.join(RESOURCE_KEYS)} "
                f"(hours > 0), got {dict(getattr(profile.cluster, kind))!r}"
            )
    for key, (low, high, open_low) in LIMITS.items():
        value = _dotted(profile, key)
        if isinstance(value, tuple) and not value and key != "data.task_episodes":
            raise ProfileError(f"profile {profile.name!r}: {key} must not be empty")
        bad = [
            v
            for v in _leaves(value)
            if not _within(v, low, high, open_low, key in INFINITY_MEANS_NONE)
        ]
        if bad:
            lo = f"> {low:g}" if open_low else f">= {low:g}"
            hi = (
                f" and <= {high:_.15g}".replace("_", ",")
                if high != _INF
                else ""
                if key in INFINITY_MEANS_NONE
                else " and finite"
            )
            raise ProfileError(f"profile {profile.name!r}: {key} must be {lo}{hi}, got {value!r}")
        if key in DISTINCT and len(set(value)) != len(value):
            raise ProfileError(
                f"profile {profile.name!r}: {key} names independent units, each "
                f"once; got {list(value)!r}"
            )


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
    out = _build(Profile, raw, f"profile {profile.name!r}")
    check_limits(out)
    return out


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
    profile = _build(Profile, raw, f"profile {name!r}")
    check_limits(profile)
    return profile
