"""DINO-WM's world model: a block-causal predictor on the patch tokens of a frozen encoder.

DINO-WM (SCALE's fourth arm, SCALE Section 5) does not learn its encoder: every frame becomes
the patch tokens of a frozen pretrained ViT (DINOv2 ViT-S/14 in the paper, :mod:`.dino`; an
offline stand-in here when the weights are not at hand), and a transformer predicts the next
frame's patch tokens from the last ``history`` frames and the executed action block. The paper
settings: a 10-d action embedding concatenated to every patch token (width 384 + 10), depth 6,
16 heads of width 64, MLP 2048; no SIGReg and no state q.

The predictor is **block-causal**: a token of frame t attends to every token of frames <= t
(all patches of the same frame see each other), never to a later frame; output token (t, p)
predicts patch p of frame t + 1 (its first F features; the action features are dropped).

:class:`PatchWorldModel` has the interface of :class:`~jepa_geometry.wm.model.WorldModel`, so
the planners use it unchanged: ``encode`` flattens a frame's P x F tokens into one vector of
D = P * F numbers, and ``rollout`` imagines from flattened vectors. The planning cost the
solvers minimise, ``||z_T - z_goal||^2`` summed over D, is DINO-WM's mean over patch features
times D: CEM and iCEM rank candidates identically under both, and an MPPI temperature on the
mean (SCALE keeps DINO-WM's 0.5) is D times that temperature on the sum.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from jepa_geometry.artifacts import sha256_file
from jepa_geometry.jobs import progress_bar
from jepa_geometry.profiles import Profile
from jepa_geometry.wm.dino import DINOV2_VITS14, DinoConfig, DinoViT, DinoWeightsError, load_dinov2
from jepa_geometry.wm.selfdistill import (
    STANDIN_VIT,
    DistillSettings,
    load_standin,
    standin_artifact,
)


@dataclass(frozen=True)
class PatchPredictorConfig:
    """The predictor's size (DINO-WM's by default) and what it is fed."""

    patches: int  # P, patch tokens per frame
    features: int  # F, features per patch token
    action_block_dim: int  # frameskip x action dim
    history: int = 3
    action_embed: int = 10
    depth: int = 6
    heads: int = 16
    dim_head: int = 64
    mlp: int = 2048
    dropout: float = 0.0

    @property
    def width(self) -> int:
        return self.features + self.action_embed

    def as_dict(self) -> dict:
        return asdict(self)


def block_causal_mask(frames: int, patches: int) -> torch.Tensor:
    """(frames * patches)^2 bool mask, True where attention is allowed: token i of frame
    ``i // patches`` sees token j iff ``j // patches <= i // patches``."""
    f = torch.arange(frames * patches) // patches
    return f[:, None] >= f[None, :]


class _Block(nn.Module):
    """Pre-norm transformer block with a given attention mask."""

    def __init__(self, cfg: PatchPredictorConfig) -> None:
        super().__init__()
        w, inner = cfg.width, cfg.heads * cfg.dim_head
        self.heads, self.dropout = cfg.heads, cfg.dropout
        self.norm1 = nn.LayerNorm(w)
        self.qkv = nn.Linear(w, 3 * inner, bias=False)
        self.out = nn.Linear(inner, w)
        self.norm2 = nn.LayerNorm(w)
        self.mlp = nn.Sequential(
            nn.Linear(w, cfg.mlp), nn.GELU(), nn.Dropout(cfg.dropout), nn.Linear(cfg.mlp, w)
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        drop = self.dropout if self.training else 0.0
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=drop)
        x = x + self.out(a.transpose(1, 2).reshape(b, n, -1))
        return x + self.mlp(self.norm2(x))


class PatchPredictor(nn.Module):
    """(B, T, P, F) patch tokens and (B, T, A') embedded actions -> (B, T, P, F) predictions
    of the next frame's tokens, block-causal over frames."""

    def __init__(self, cfg: PatchPredictorConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.pos = nn.Parameter(0.02 * torch.randn(1, cfg.history * cfg.patches, cfg.width))
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.depth))
        self.norm = nn.LayerNorm(cfg.width)
        self.register_buffer("mask", block_causal_mask(cfg.history, cfg.patches), persistent=False)

    def forward(self, tokens: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        b, t, p, f = tokens.shape
        x = torch.cat([tokens, actions[:, :, None].expand(b, t, p, -1)], dim=-1)
        x = x.reshape(b, t * p, -1) + self.pos[:, : t * p]
        mask = self.mask[: t * p, : t * p]
        for blk in self.blocks:
            x = blk(x, mask)
        return self.norm(x)[..., :f].reshape(b, t, p, f)


class PatchWorldModel(nn.Module):
    """DINO-WM: a frozen patch encoder, an action embedding and a :class:`PatchPredictor`.

    ``encoder`` maps uint8 frames (N, 3, H, W) to patch tokens (N, G^2, F) on its G x G patch
    grid and is frozen here (no gradients, eval mode, whatever it was before). ``token_grid`` g
    (a divisor of G) average-pools each (G/g) x (G/g) block of patches into one token, so the
    predictor sees P = g^2 tokens (g = G keeps every patch, DINO-WM's setting). Latents are the
    flattened tokens, so ``embed_dim`` = P * F.
    """

    def __init__(
        self, encoder: nn.Module, cfg: PatchPredictorConfig, image_size: int, token_grid: int
    ) -> None:
        super().__init__()
        grid = encoder.cfg.grid
        if token_grid < 1 or grid % token_grid or cfg.patches != token_grid**2:
            raise ValueError(
                f"token_grid {token_grid} must divide the encoder's {grid} x "
                f"{grid} patch grid and give the predictor's {cfg.patches} "
                "tokens"
            )
        self.cfg, self.image_size, self.token_grid = cfg, image_size, token_grid
        self.encoder = encoder.eval()
        for prm in self.encoder.parameters():
            prm.requires_grad_(False)
        self.history, self.action_block_dim = cfg.history, cfg.action_block_dim
        self.embed_dim = cfg.patches * cfg.features
        self.action_encoder = nn.Linear(cfg.action_block_dim, cfg.action_embed)
        self.predictor = PatchPredictor(cfg)

    def train(self, mode: bool = True) -> PatchWorldModel:
        super().train(mode)
        self.encoder.eval()  # frozen: its normalisation statistics never move
        return self

    def num_parameters(self, trainable: bool = False) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not trainable)

    @torch.no_grad()
    def encode(self, pixels: torch.Tensor) -> torch.Tensor:
        """uint8 pixels (..., 3, H, W) -> flattened patch tokens (..., P * F)."""
        s = self.image_size
        if pixels.ndim < 4 or tuple(pixels.shape[-3:]) != (3, s, s):
            raise ValueError(
                f"encode expects pixels of shape (..., 3, {s}, {s}), got {tuple(pixels.shape)}"
            )
        lead = pixels.shape[:-3]
        tokens = pool_tokens(self.encoder(pixels.reshape(-1, 3, s, s)), self.token_grid)
        if tokens.shape[1:] != (self.cfg.patches, self.cfg.features):
            raise ValueError(
                f"the encoder gave tokens {tuple(tokens.shape[1:])}, expected "
                f"({self.cfg.patches}, {self.cfg.features})"
            )
        return tokens.reshape(*lead, self.embed_dim)

    def predict(self, z: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Teacher-forced one-step prediction, as ``WorldModel.predict``: output t (from frames
        <= t and action blocks <= t) predicts z_{t+1}; z (B, T, P * F), T <= history."""
        b, t, d = z.shape
        if d != self.embed_dim or not 1 <= t <= self.history or actions.shape[:2] != (b, t):
            raise ValueError(
                f"predict expects z (B, T <= {self.history}, {self.embed_dim}) and "
                f"actions (B, T, {self.action_block_dim}); got {tuple(z.shape)}, "
                f"{tuple(actions.shape)}"
            )
        tokens = z.reshape(b, t, self.cfg.patches, self.cfg.features)
        out = self.predictor(tokens, self.action_encoder(actions))
        return out.reshape(b, t, d)

    def rollout(
        self,
        z_context: torch.Tensor,
        action_blocks: torch.Tensor,
        context_actions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """H imagined frames (B, H, P * F) from ``z_context`` (B, h, P * F), as
        ``WorldModel.rollout``: each step feeds the last ``history`` frames and their blocks and
        appends the last position's prediction."""
        b, h, _ = z_context.shape
        past = action_blocks.new_zeros(b, 0, action_blocks.shape[-1])
        if h > 1:
            if context_actions is None or tuple(context_actions.shape[:2]) != (b, h - 1):
                raise ValueError(
                    f"a context of {h} frames needs context_actions (B, {h - 1}, "
                    f"{self.action_block_dim})"
                )
            past = context_actions
        acts = torch.cat([past, action_blocks], dim=1)
        zs, preds = z_context, []
        for _ in range(action_blocks.shape[1]):
            n = zs.shape[1]
            lo = max(0, n - self.history)
            nxt = self.predict(zs[:, lo:], acts[:, lo:n])[:, -1]
            preds.append(nxt)
            zs = torch.cat([zs, nxt.unsqueeze(1)], dim=1)
        return torch.stack(preds, dim=1)


@torch.no_grad()
def frame_tokens(
    model: PatchWorldModel, pixels: Any, rows: np.ndarray, chunk: int = 256, progress: bool = True
) -> torch.Tensor:
    """The flattened tokens (len(rows), D) of frames ``pixels[rows]`` (uint8, N x H x W x 3).

    DINO-WM's encoder is frozen, so every training frame is encoded once, before training,
    and the predictor trains on the stored tokens (as DINO-WM does): the same numbers as
    encoding each batch, without encoding a frame ~``batch x (history + 1)`` times per step
    over and over.
    """
    out = torch.empty(len(rows), model.embed_dim)
    for lo in progress_bar(
        range(0, len(rows), chunk),
        progress=progress,
        desc="frozen tokens",
        unit="chunk",
        leave=False,
    ):
        px = torch.from_numpy(np.asarray(pixels[rows[lo : lo + chunk]])).permute(0, 3, 1, 2)
        out[lo : lo + chunk] = model.encode(px.contiguous()).float()
    return out


def pool_tokens(tokens: torch.Tensor, grid: int) -> torch.Tensor:
    """(N, G^2, F) patch tokens of a G x G grid -> (N, grid^2, F): the mean of each
    (G/grid) x (G/grid) block of neighbouring patches (the identity when grid = G)."""
    n, p, f = tokens.shape
    side = int(round(p**0.5))
    if side == grid:
        return tokens
    x = tokens.transpose(1, 2).reshape(n, f, side, side)
    return F.avg_pool2d(x, side // grid).flatten(2).transpose(1, 2)


# --------------------------------------------------------------------------------------------
# The arm at a profile: which encoder, which predictor, and how a saved model comes back
# --------------------------------------------------------------------------------------------

MPPI_MEAN_TEMPERATURE = 0.5
"""DINO-WM's MPPI temperature on its mean cost, which SCALE keeps (Section 5): on the summed
cost the solvers minimise it is ``0.5 * D`` (:func:`mppi_temperature`)."""


def standin_settings(profile: Profile) -> DistillSettings:
    """The stand-in's recipe at ``profile``: ``dinowm.standin_steps`` steps, 10 % warm-up."""
    steps = profile.dinowm.standin_steps
    return DistillSettings(steps=steps, warmup_steps=max(steps // 10, 1))


def encoder_config(profile: Profile) -> DinoConfig:
    """The patch encoder's architecture: DINOv2 ViT-S/14 or the stand-in."""
    return DINOV2_VITS14 if profile.dinowm.encoder == "dinov2" else STANDIN_VIT


def encoder_identity(profile: Profile) -> dict[str, Any]:
    """What a DINO-WM checkpoint's key records of its encoder: the stand-in's artifact key, or
    the sha256 of the DINOv2 file (a missing file stops here, naming it; so does a
    ``token_grid`` that does not divide the encoder's patch grid)."""
    grid = encoder_config(profile).grid
    if grid % profile.dinowm.token_grid:
        valid = ", ".join(str(g) for g in range(1, grid + 1) if grid % g == 0)
        raise ValueError(
            f"dinowm.token_grid {profile.dinowm.token_grid} does not divide the "
            f"encoder's {grid} x {grid} patch grid; valid: {valid}"
        )
    if profile.dinowm.encoder == "standin":
        return {"standin": standin_artifact(profile, standin_settings(profile)).key}
    path = profile.dinowm.dinov2_weights
    if not path or not Path(path).is_file():
        load_dinov2(path or None)  # raises DinoWeightsError naming the path and the URL
    st = Path(path).stat()
    return {"dinov2_sha256": _weights_sha256(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)}


@lru_cache(maxsize=8)
def _weights_sha256(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of the DINOv2 file, hashed once per (path, size, modification time): every
    planning cell's key names its checkpoint, so this is asked for once per cell."""
    return sha256_file(Path(path))


def patch_encoder(profile: Profile) -> DinoViT:
    """The frozen encoder of ``profile`` (the stand-in is pretrained first if not cached)."""
    if profile.dinowm.encoder == "standin":
        return load_standin(profile, standin_settings(profile))
    return load_dinov2(profile.dinowm.dinov2_weights or None)


def predictor_config(profile: Profile, action_dim: int) -> PatchPredictorConfig:
    """The predictor of ``profile``'s DINO-WM for a task with ``action_dim`` raw actions."""
    enc, d = encoder_config(profile), profile.dinowm
    return PatchPredictorConfig(
        patches=d.token_grid**2,
        features=enc.embed_dim,
        action_block_dim=profile.data.frameskip * action_dim,
        history=profile.data.history,
        action_embed=d.action_embed,
        depth=d.depth,
        heads=d.heads,
        dim_head=d.dim_head,
        mlp=d.mlp,
        dropout=profile.model.predictor_dropout,
    )


def build_dinowm(profile: Profile, action_dim: int, seed: int = 0) -> PatchWorldModel:
    """DINO-WM at ``profile``: the frozen encoder and a predictor initialised from ``seed``."""
    encoder = patch_encoder(profile)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return PatchWorldModel(
            encoder,
            predictor_config(profile, action_dim),
            profile.data.image_size,
            profile.dinowm.token_grid,
        )


def load_patch_model(blob: dict[str, Any]) -> PatchWorldModel:
    """A saved DINO-WM (``{"config", "encoder", "image_size", "token_grid", "state"}``),
    rebuilt around an encoder of the recorded architecture whose weights come from the file."""
    try:
        encoder = DinoViT(DinoConfig(**blob["encoder"]))
        model = PatchWorldModel(
            encoder,
            PatchPredictorConfig(**blob["config"]),
            int(blob["image_size"]),
            int(blob["token_grid"]),
        )
    except (KeyError, TypeError) as e:
        raise DinoWeightsError(f"not a saved DINO-WM model: {e}") from e
    model.load_state_dict(blob["state"])
    return model.eval()


def latent_dim(profile: Profile) -> int:
    """D of ``profile``'s DINO-WM latent: the predictor's tokens x its encoder's features."""
    return profile.dinowm.token_grid**2 * encoder_config(profile).embed_dim


def mppi_temperature(model_dim: int) -> float:
    """DINO-WM's MPPI temperature on the summed cost of a ``model_dim``-dim latent."""
    return MPPI_MEAN_TEMPERATURE * model_dim
