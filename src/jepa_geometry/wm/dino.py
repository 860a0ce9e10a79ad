"""DINO-WM's encoder: a frozen DINOv2 ViT-S/14 that turns a frame into patch tokens.

DINO-WM (the fourth arm of SCALE's grid, SCALE Section 5) plans on the patch features of a
pretrained, frozen DINOv2 encoder: at 224 px a ViT-S/14 gives 16 x 16 = 256 patch tokens of 384
features each. This module is that encoder, written from the published architecture
(Oquab et al., DINOv2; the ``dinov2_vits14`` model of its ``torch.hub`` entry point), so that
the state dict DINOv2 publishes loads into it unchanged, key for key:

* ``patch_embed.proj``: a 14 x 14 convolution with stride 14, 3 -> 384 channels;
* ``cls_token`` (1, 1, 384), ``mask_token`` (1, 384) (unused here, kept for the layout) and
  ``pos_embed`` (1, 1 + 37 x 37, 384): learned at 518 px and interpolated bicubically to the
  input's grid, with DINOv2's offset of 0.1 patch in the scale factor;
* 12 pre-norm blocks ``blocks.<i>``: ``norm1``, ``attn.qkv`` (384 -> 1152, with bias),
  ``attn.proj``, ``ls1.gamma`` (LayerScale), ``norm2``, ``mlp.fc1`` (384 -> 1536), GELU,
  ``mlp.fc2``, ``ls2.gamma``; LayerNorms with eps 1e-6; 6 heads of width 64;
* ``norm``: the final LayerNorm; DINO-WM uses its output on the patch tokens
  (DINOv2's ``x_norm_patchtokens``).

The weights cannot be downloaded at run time here, and a reader offline cannot either:
:func:`load_dinov2` takes a local path and fails in one line naming it and how to obtain the
file when it is missing or does not fit. Frames are scaled to [0, 1], normalised with
ImageNet's mean and standard deviation (as DINOv2 was trained) and resized to ``image_size``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from jepa_geometry.wm.model import IMAGENET_MEAN, IMAGENET_STD

DINOV2_VITS14_URL = "https://dl.fbaipublicfiles.com/dinov2/dinov2_vits14/dinov2_vits14_pretrain.pth"
DINOV2_VITS14_SHA256: str | None = None
"""The sha256 of the file at :data:`DINOV2_VITS14_URL`, where this book knows it. DINOv2
publishes no checksum of it (its name carries no hash prefix, as ``torch.hub`` files often do)
and the book has not recorded one from a download it could check, so it is None: a file with
the right shapes is then DINOv2 *unverified*, and the book says so wherever it relies on it
(:func:`~jepa_geometry.verdict.preconditions.dinov2_precondition`)."""


class DinoWeightsError(FileNotFoundError):
    """The DINOv2 weights are missing, unreadable, or not a ViT-S/14 state dict."""


@dataclass(frozen=True)
class DinoConfig:
    """A DINOv2 ViT: its width, depth and heads, the resolution its position embedding was
    learned at, and the resolution frames are resized to."""

    patch_size: int = 14
    embed_dim: int = 384
    depth: int = 12
    heads: int = 6
    mlp_ratio: int = 4
    pretrain_size: int = 518  # 37 x 37 patches: the size of the published pos_embed
    image_size: int = 224  # DINO-WM's frames: 16 x 16 = 256 patch tokens
    interpolate_offset: float = 0.1  # DINOv2's offset in the pos_embed interpolation

    @property
    def grid(self) -> int:
        """Side of the patch grid at ``image_size``."""
        return self.image_size // self.patch_size

    @property
    def patches(self) -> int:
        """Patch tokens per frame at ``image_size``."""
        return self.grid**2


DINOV2_VITS14 = DinoConfig()


class _Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, n, d))


class _Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class _LayerScale(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma


class _Block(nn.Module):
    """Pre-norm block: ``x + ls1(attn(norm1 x))``, then ``x + ls2(mlp(norm2 x))``."""

    def __init__(self, cfg: DinoConfig) -> None:
        super().__init__()
        d = cfg.embed_dim
        self.norm1 = nn.LayerNorm(d, eps=1e-6)
        self.attn = _Attention(d, cfg.heads)
        self.ls1 = _LayerScale(d)
        self.norm2 = nn.LayerNorm(d, eps=1e-6)
        self.mlp = _Mlp(d, cfg.mlp_ratio * d)
        self.ls2 = _LayerScale(d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.ls1(self.attn(self.norm1(x)))
        return x + self.ls2(self.mlp(self.norm2(x)))


class _PatchEmbed(nn.Module):
    def __init__(self, cfg: DinoConfig) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, cfg.embed_dim, cfg.patch_size, stride=cfg.patch_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).flatten(2).transpose(1, 2)  # (B, patches, D)


class DinoViT(nn.Module):
    """A DINOv2 vision transformer whose state dict has the published layout; ``forward``
    maps uint8 frames (B, 3, H, W) to normalised patch tokens (B, patches, D)."""

    def __init__(self, cfg: DinoConfig = DINOV2_VITS14) -> None:
        super().__init__()
        self.cfg = cfg
        grid = cfg.pretrain_size // cfg.patch_size
        self.patch_embed = _PatchEmbed(cfg)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, cfg.embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, 1 + grid * grid, cfg.embed_dim))
        self.mask_token = nn.Parameter(torch.zeros(1, cfg.embed_dim))
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.depth))
        self.norm = nn.LayerNorm(cfg.embed_dim, eps=1e-6)
        self.register_buffer("pixel_mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1))
        self.register_buffer("pixel_std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1))

    def _pos_embed(self, h: int, w: int) -> torch.Tensor:
        """The position embedding for an h x w patch grid: DINOv2's bicubic interpolation of
        the learned grid, scale factor (h + offset) / M (identity at the learned size)."""
        n = self.pos_embed.shape[1] - 1
        m = int(math.isqrt(n))
        if h == w == m:
            return self.pos_embed
        cls, grid = self.pos_embed[:, :1], self.pos_embed[:, 1:].float()
        off = self.cfg.interpolate_offset
        grid = F.interpolate(
            grid.reshape(1, m, m, -1).permute(0, 3, 1, 2),
            mode="bicubic",
            scale_factor=((h + off) / m, (w + off) / m),
            antialias=False,
        )
        if grid.shape[-2:] != (h, w):
            raise ValueError(f"position grid {tuple(grid.shape[-2:])} != patch grid {(h, w)}")
        return torch.cat([cls, grid.permute(0, 2, 3, 1).reshape(1, h * w, -1)], dim=1)

    def preprocess(self, pixels: torch.Tensor) -> torch.Tensor:
        """uint8 (B, 3, H, W) -> ImageNet-normalised floats at ``cfg.image_size``."""
        x = pixels.float() / 255.0
        size = self.cfg.image_size
        if x.shape[-2:] != (size, size):
            x = F.interpolate(x, size=(size, size), mode="bilinear", antialias=True)
        return (x - self.pixel_mean) / self.pixel_std

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised float frames -> final-norm tokens (B, 1 + patches, D), class token first."""
        b, _, h, w = x.shape
        p = self.cfg.patch_size
        t = torch.cat([self.cls_token.expand(b, -1, -1), self.patch_embed(x)], dim=1)
        t = t + self._pos_embed(h // p, w // p)
        for blk in self.blocks:
            t = blk(t)
        return self.norm(t)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.tokens(self.preprocess(pixels))[:, 1:]


def load_dinov2(
    path: str | Path | None, cfg: DinoConfig = DINOV2_VITS14, remedy: str | None = None
) -> DinoViT:
    """The frozen encoder of architecture ``cfg`` (DINOv2 ViT-S/14 by default) with the
    ``torch.hub``-layout state dict at ``path`` (eval mode, no gradients). A missing file, an
    unreadable one, or one that does not fit the architecture stops with one line naming the
    path, the architecture and ``remedy`` (by default: how to obtain DINOv2's weights)."""
    how = remedy or (
        f"download {DINOV2_VITS14_URL} on a machine with internet (the file "
        f"torch.hub caches for dinov2_vits14) and give its path"
    )
    name = (
        "DINOv2 ViT-S/14"
        if cfg == DINOV2_VITS14
        else (f"ViT (patch {cfg.patch_size}, {cfg.embed_dim} features, depth {cfg.depth})")
    )
    if path is None or not Path(path).is_file():
        where = repr(str(path)) if path is not None else "None"
        raise DinoWeightsError(f"{name} weights not found at {where}; {how}")
    try:
        state = torch.load(Path(path), map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 -- any unreadable file gets the same one-line answer
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]  # one line, always
        raise DinoWeightsError(f"cannot read {name} weights {str(path)!r} ({first}); {how}") from e
    model = DinoViT(cfg)
    expected = model.state_dict()
    expected = {k: v for k, v in expected.items() if not k.startswith("pixel_")}
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    bad = [k for k in expected if k in state and tuple(state[k].shape) != tuple(expected[k].shape)]
    if missing or extra or bad:
        what = (
            f"missing {missing[:3]}"
            if missing
            else f"unexpected {extra[:3]}"
            if extra
            else f"shape of {bad[0]} {tuple(state[bad[0]].shape)} != "
            f"{tuple(expected[bad[0]].shape)}"
        )
        raise DinoWeightsError(f"{path} is not a {name} state dict: {what}; {how}")
    model.load_state_dict(state, strict=False)  # pixel_mean / pixel_std are ours
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model
