"""What a training run writes: resume checkpoints with their fingerprint, and model files.

A resume checkpoint holds the full training state (model, objective, optimizer, scheduler,
torch RNG for dropout, the generator of SIGReg directions and SCALE pairs, the log) with a
fingerprint of the run (:func:`run_fingerprint`); a run resumes only from a checkpoint whose
fingerprint matches its own (:func:`check_config`), and a checkpoint that fails its sha256 is
set aside, never trusted. A model file holds the config, weights and metadata, so a model
reloads without the code that trained it.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import torch

from jepa_geometry.artifacts import atomic_path, read_verified, set_aside, stable_spec
from jepa_geometry.profiles import TrainSettings
from jepa_geometry.wm.dinowm import PatchWorldModel, load_patch_model
from jepa_geometry.wm.model import WorldModel, WorldModelConfig
from jepa_geometry.wm.objective import Objective

CHECKPOINT_FORMAT = 1


def _flatten(d: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _config_diff(saved: dict, expected: dict) -> dict[str, tuple[Any, Any]]:
    saved, expected = _flatten(saved), _flatten(expected)
    keys = sorted(set(saved) | set(expected))
    return {k: (saved.get(k), expected.get(k)) for k in keys if saved.get(k) != expected.get(k)}


def check_config(saved: dict, expected: dict, what: str) -> None:
    """Raise a ValueError naming every differing key if a checkpoint is for another setup."""
    diff = _config_diff(saved, expected)
    if diff:
        lines = ", ".join(f"{k}: checkpoint {a!r} vs requested {b!r}" for k, (a, b) in diff.items())
        raise ValueError(f"{what} was made with a different configuration ({lines}); delete it")


def run_fingerprint(
    model: WorldModel, objective: Objective, settings: TrainSettings, seed: int
) -> dict:
    return stable_spec(
        {
            "format": CHECKPOINT_FORMAT,
            "model": model.cfg.as_dict(),
            "arm": objective.arm,
            "weights": objective.weights.as_dict(),
            "q_dim": objective.q_dim,
            "train": dataclasses.asdict(settings),
            "seed": seed,
        }
    )


def load_training_state(path: Path) -> dict[str, Any]:
    """The full training state of a resume checkpoint, verified against its sha256
    (:class:`~jepa_geometry.artifacts.ArtifactError` if any byte changed)."""
    return torch.load(io.BytesIO(read_verified(path)), map_location="cpu", weights_only=False)


def read_resume(path: Path) -> dict[str, Any] | None:
    """The training state saved at ``path``, or None if there is none to trust.

    Resume files carry their sha256 (:func:`~jepa_geometry.artifacts.write_verified`). One that
    fails verification or does not unpickle is set aside (renamed, never deleted) with a
    one-line warning, and training restarts from scratch: a corrupted resume file must never
    become a trusted model.
    """
    if not path.is_file():
        return None
    try:
        return load_training_state(path)
    except Exception as e:  # ArtifactError, or a payload that verifies but does not load
        set_aside(path, f"resume checkpoint unusable ({e}); training restarts from step 0")
        return None


MODEL_FILE = "model.pt"


LOG_FILE = "log.json"


def save_model(path: Path, model: WorldModel | PatchWorldModel, meta: dict[str, Any]) -> None:
    """Atomically write the world model's config, weights and metadata (arm, q_dim, ...); a
    DINO-WM also records its encoder's architecture and frame size (its frozen weights are in
    the state, so the model reloads without the encoder's source)."""
    blob = {"config": model.cfg.as_dict(), "state": model.state_dict(), "meta": meta}
    if isinstance(model, PatchWorldModel):
        blob.update(
            encoder=dataclasses.asdict(model.encoder.cfg),
            image_size=model.image_size,
            token_grid=model.token_grid,
        )
    with atomic_path(Path(path)) as tmp:
        torch.save(blob, tmp)


def load_model_file(
    path: Path, expected: WorldModelConfig | None = None
) -> WorldModel | PatchWorldModel:
    """Rebuild a saved world model in eval mode; refuse one whose config is not ``expected``
    (a LeWM-family model; a DINO-WM file is rebuilt from its own record)."""
    blob = torch.load(path, map_location="cpu", weights_only=False)
    if "encoder" in blob:
        return load_patch_model(blob)
    if expected is not None:
        check_config(blob["config"], expected.as_dict(), f"model file {path}")
    model = WorldModel(WorldModelConfig(**blob["config"]))
    model.load_state_dict(blob["state"])
    return model.eval()
