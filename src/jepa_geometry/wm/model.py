"""The LeWorldModel (LeWM) architecture: encoder -> BN projector -> z, and an action-conditioned
causal predictor with AdaLN-zero blocks.

    z_t     = projector(encoder(o_t))                                   z_t in R^D
    ẑ_{t+1} = pred_proj(Predictor(z_{t-h+1:t}, Embedder(a_{t-h+1:t})))   (causal over the window)

One latent vector per frame; everything is trained jointly from pixels, with no EMA and no
stop-gradient (LeWM, Maes et al. 2026; the official code is ``lucas-maes/le-wm``).

* Encoder: the paper's ViT-tiny (patch 14, 224 px, width 192, 12 layers, 3 heads; the CLS
  token after the final LayerNorm) or, for CPU profiles, a small strided CNN (4 convs
  k4/s2 -> Linear -> LayerNorm), the 0.44M-parameter model of our exploratory CPU runs (see
  the book's *Reconstructions* page, section rec-laptop-model, ``book/reconstructions.md``).
* Projector and ``pred_proj``: Linear -> BatchNorm1d -> GELU -> Linear. BatchNorm, not
  LayerNorm, because the encoder already ends in a LayerNorm, which would fight SIGReg.
* Embedder: one action *block* (``frameskip`` raw actions, z-scored, concatenated) ->
  Conv1d(k=1) to 10 -> Linear -> SiLU -> Linear to D.
* Predictor: learned positions, AdaLN-zero blocks conditioned per token on the action
  embedding of the same step (the modulation Linear is zero-initialised, so each block starts
  as the identity), causal attention over at most ``history`` frame tokens, final LayerNorm.

With the ``paper`` profile this builds exactly LeWM's 18,034,478 parameters (our hand count of
the architecture, equal to that of the released checkpoints; see the *Reconstructions* page,
section rec-paper-profile).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from jepa_geometry.profiles import ModelSettings, Profile

ENCODERS: tuple[str, ...] = ("cnn", "vit")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
ACTION_SMOOTH_DIM = 10  # LeWM's Conv1d(5A -> 10) "smoothed" action width


@dataclass(frozen=True)
class WorldModelConfig(ModelSettings):
    """Everything that fixes the architecture (and so the shape of every weight): the profile's
    ``model`` section (:class:`~jepa_geometry.profiles.ModelSettings`, inherited, not re-typed)
    plus the three sizes the data fixes."""

    image_size: int
    history: int  # predictor context frames (LeWM: 3)
    action_block_dim: int  # frameskip * action_dim (LeWM Two-Room: 5 * 2 = 10)

    @classmethod
    def from_profile(cls, profile: Profile, action_dim: int) -> WorldModelConfig:
        """The model of ``profile`` for a task with ``action_dim`` raw action dimensions."""
        return cls(
            image_size=profile.data.image_size,
            history=profile.data.history,
            action_block_dim=profile.data.frameskip * action_dim,
            **profile.section("model"),
        )

    def __post_init__(self) -> None:
        object.__setattr__(self, "encoder_widths", tuple(self.encoder_widths))
        if self.encoder not in ENCODERS:
            raise ValueError(f"unknown encoder {self.encoder!r}; valid: {', '.join(ENCODERS)}")
        positive = {k: v for k, v in self.as_dict().items() if isinstance(v, int)}
        bad = {k: v for k, v in positive.items() if v < 1}
        if bad:
            raise ValueError(f"model sizes must be >= 1, got {bad}")
        if not 0 <= self.predictor_dropout < 1:
            raise ValueError(f"predictor_dropout must be in [0, 1), got {self.predictor_dropout}")
        if self.encoder == "cnn":
            n = len(self.encoder_widths)
            if n == 0 or self.image_size % (2**n) != 0:
                raise ValueError(
                    f"the CNN halves the image {n} times: image_size {self.image_size} must be "
                    f"a multiple of 2^{n} (encoder_widths={list(self.encoder_widths)})"
                )
        else:
            if self.image_size % self.patch_size != 0:
                raise ValueError(
                    f"image_size {self.image_size} is not a multiple of patch_size "
                    f"{self.patch_size}"
                )
            if self.vit_width % self.vit_heads != 0:
                raise ValueError(
                    f"vit_width {self.vit_width} must be divisible by vit_heads {self.vit_heads}"
                )

    def as_dict(self) -> dict:
        """The config as saved in every checkpoint: the data's sizes first, then the model's
        (the order checkpoints have always been written in, so their bytes do not change)."""
        d = asdict(self)
        d["encoder_widths"] = list(self.encoder_widths)
        first = ("image_size", "history", "action_block_dim")
        return {**{k: d[k] for k in first}, **{k: v for k, v in d.items() if k not in first}}


# --------------------------------------------------------------------------------------
# Encoders
# --------------------------------------------------------------------------------------


class CNNEncoder(nn.Module):
    """``len(widths)`` convs (kernel 4, stride 2, padding 1, GELU) -> flatten -> Linear -> LN.

    Each conv halves the image, so 64 px with widths 16-32-32-64 ends at 4x4x64. The output
    width is 2D, as in our exploratory CPU runs (book: rec-laptop-model); it ends in a
    LayerNorm like the ViT's CLS token. The convs hold their weights channels-last (NHWC), so
    PyTorch runs them and their activations in that layout: oneDNN's CPU convolutions then
    skip a layout conversion on every call (about 1.18x training steps/s on one thread,
    benchmarks/bench_levers.py); the flatten still reads the NCHW order, so only the rounding
    differs.
    """

    def __init__(self, image_size: int, widths: tuple[int, ...], out_dim: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        c_in = 3
        for c in widths:
            layers += [nn.Conv2d(c_in, c, 4, stride=2, padding=1), nn.GELU()]
            c_in = c
        self.convs = nn.Sequential(*layers).to(memory_format=torch.channels_last)
        side = image_size // 2 ** len(widths)
        self.fc = nn.Linear(c_in * side * side, out_dim)
        self.norm = nn.LayerNorm(out_dim)
        self.out_dim = out_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.fc(self.convs(x).flatten(1)))


class ViTLayer(nn.Module):
    """Pre-norm transformer layer of HF ``ViTModel``: LN -> MHSA (qkv bias) -> LN -> MLP(4x)."""

    def __init__(self, width: int, heads: int, eps: float = 1e-12) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width, eps=eps)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width, eps=eps)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, w = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, w // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, w))
        return x + self.mlp(self.norm2(x))


class ViTEncoder(nn.Module):
    """ViT with a CLS token; returns the CLS token after the final LayerNorm (LeWM's encoder).

    ViT-tiny/14 at 224 px: 16x16 patches + CLS = 257 tokens, width 192, 12 layers, 3 heads,
    5,501,376 parameters. Initialisation follows HF ViT: truncated normal, std 0.02.
    """

    def __init__(self, image_size: int, patch: int, width: int, depth: int, heads: int) -> None:
        super().__init__()
        self.patch_embed = nn.Conv2d(3, width, patch, stride=patch)
        n_tokens = (image_size // patch) ** 2 + 1
        self.cls_token = nn.Parameter(torch.zeros(1, 1, width))
        self.pos_embed = nn.Parameter(torch.zeros(1, n_tokens, width))
        self.layers = nn.ModuleList(ViTLayer(width, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(width, eps=1e-12)
        self.out_dim = width
        for m in self.modules():
            if isinstance(m, nn.Linear | nn.Conv2d):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(len(x), -1, -1), x], dim=1) + self.pos_embed
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)[:, 0]


def bn_mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    """LeWM's projector form: Linear -> BatchNorm1d -> GELU -> Linear (no output norm)."""
    return nn.Sequential(
        nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.GELU(), nn.Linear(hidden, d_out)
    )


class Embedder(nn.Module):
    """Action block (5A) -> Conv1d(k=1) to 10 -> Linear(10, 4D) -> SiLU -> Linear(4D, D)."""

    def __init__(self, block_dim: int, dim: int) -> None:
        super().__init__()
        self.smooth = nn.Conv1d(block_dim, ACTION_SMOOTH_DIM, kernel_size=1)
        self.mlp = nn.Sequential(
            nn.Linear(ACTION_SMOOTH_DIM, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim)
        )

    def forward(self, a: torch.Tensor) -> torch.Tensor:  # (B, T, 5A) -> (B, T, D)
        a = torch.nan_to_num(a.float(), nan=0.0)  # LeWM zeroes NaN actions (episode ends)
        return self.mlp(self.smooth(a.transpose(1, 2)).transpose(1, 2))


# --------------------------------------------------------------------------------------
# Predictor
# --------------------------------------------------------------------------------------


class CausalAttention(nn.Module):
    """LN -> qkv (no bias) -> causal SDPA -> out Linear -> dropout, as in LeWM's predictor."""

    def __init__(self, width: int, heads: int, dim_head: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.dim_head, self.dropout = heads, dim_head, dropout
        self.norm = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * heads * dim_head, bias=False)
        self.out = nn.Sequential(nn.Linear(heads * dim_head, width), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        qkv = self.qkv(self.norm(x)).view(b, t, 3, self.heads, self.dim_head)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        p = self.dropout if self.training else 0.0
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.out(a.transpose(1, 2).reshape(b, t, -1))


class AdaLNZeroBlock(nn.Module):
    """DiT-style block conditioned on c (the action embedding of the same time step).

        (β1, γ1, g1, β2, γ2, g2) = Linear(SiLU(c))        zero-initialised -> identity block
        x <- x + g1 * Attn(LN(x) (1 + γ1) + β1)
        x <- x + g2 * MLP(LN(x) (1 + γ2) + β2)

    LN here is affine-free (eps 1e-6); Attn and MLP begin with their own affine LayerNorm,
    so normalisation happens twice -- a quirk of LeWM's code, kept for fidelity.
    """

    def __init__(self, width: int, heads: int, dim_head: int, mlp: int, dropout: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.attn = CausalAttention(width, heads, dim_head, dropout)
        self.mlp = nn.Sequential(
            nn.LayerNorm(width),
            nn.Linear(width, mlp),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(mlp, width),
            nn.Dropout(dropout),
        )
        self.modulation = nn.Sequential(nn.SiLU(), nn.Linear(width, 6 * width))
        nn.init.zeros_(self.modulation[1].weight)
        nn.init.zeros_(self.modulation[1].bias)

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        b1, g1, gate1, b2, g2, gate2 = self.modulation(c).chunk(6, dim=-1)
        x = x + gate1 * self.attn(self.norm(x) * (1 + g1) + b1)
        return x + gate2 * self.mlp(self.norm(x) * (1 + g2) + b2)


class Predictor(nn.Module):
    """Learned positions + AdaLN-zero causal blocks + final LN, width W (in/out maps if W != D)."""

    def __init__(self, cfg: WorldModelConfig) -> None:
        super().__init__()
        d, w = cfg.embed_dim, cfg.predictor_width
        self.pos = nn.Parameter(torch.randn(1, cfg.history, w))
        self.z_in = nn.Identity() if w == d else nn.Linear(d, w)
        self.c_in = nn.Identity() if w == d else nn.Linear(d, w)
        self.blocks = nn.ModuleList(
            AdaLNZeroBlock(
                w,
                cfg.predictor_heads,
                cfg.predictor_dim_head,
                cfg.predictor_mlp,
                cfg.predictor_dropout,
            )
            for _ in range(cfg.predictor_depth)
        )
        self.norm = nn.LayerNorm(w)
        self.z_out = nn.Identity() if w == d else nn.Linear(w, d)

    def forward(self, z: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        x = self.z_in(z) + self.pos[:, : z.shape[1]]
        c = self.c_in(c)
        for block in self.blocks:
            x = block(x, c)
        return self.z_out(self.norm(x))


# --------------------------------------------------------------------------------------
# The world model
# --------------------------------------------------------------------------------------


class WorldModel(nn.Module):
    """LeWM: ``encode`` pixels to z, ``predict`` the next z per position, ``rollout`` to plan."""

    def __init__(self, cfg: WorldModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed_dim, self.history = cfg.embed_dim, cfg.history
        self.action_block_dim, self.image_size = cfg.action_block_dim, cfg.image_size
        if cfg.encoder == "vit":
            self.encoder: nn.Module = ViTEncoder(
                cfg.image_size, cfg.patch_size, cfg.vit_width, cfg.vit_depth, cfg.vit_heads
            )
        else:
            self.encoder = CNNEncoder(cfg.image_size, cfg.encoder_widths, 2 * cfg.embed_dim)
        self.projector = bn_mlp(self.encoder.out_dim, cfg.projector_hidden, cfg.embed_dim)
        self.action_encoder = Embedder(cfg.action_block_dim, cfg.embed_dim)
        self.predictor = Predictor(cfg)
        self.pred_proj = bn_mlp(cfg.embed_dim, cfg.projector_hidden, cfg.embed_dim)
        self.register_buffer("pixel_mean", torch.tensor(IMAGENET_MEAN).view(3, 1, 1))
        self.register_buffer("pixel_std", torch.tensor(IMAGENET_STD).view(3, 1, 1))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def parameter_counts(self) -> dict[str, int]:
        """Parameters per part (encoder, projector, action_encoder, predictor, pred_proj)."""
        return {name: sum(p.numel() for p in m.parameters()) for name, m in self.named_children()}

    def encode(self, pixels: torch.Tensor) -> torch.Tensor:
        """Pixels (..., 3, H, W), uint8 (or float in [0, 1]) -> z (..., D).

        ImageNet normalisation, no augmentation; BatchNorm statistics are taken over all
        frames of the call (B*T in training), running statistics in ``eval()`` mode.
        """
        size = self.cfg.image_size
        if pixels.ndim < 4 or tuple(pixels.shape[-3:]) != (3, size, size):
            raise ValueError(
                f"encode expects pixels of shape (..., 3, {size}, {size}), "
                f"got {tuple(pixels.shape)}"
            )
        lead = pixels.shape[:-3]
        x = pixels.reshape(-1, 3, size, size)
        # (x / 255 - mean) / std as one multiply-add per pixel: two divisions over every
        # pixel of a training batch cost ~10 % of a laptop step.
        scale = (255.0 if x.dtype == torch.uint8 else 1.0) * self.pixel_std
        x = torch.addcmul(-self.pixel_mean / self.pixel_std, x.float(), 1.0 / scale)
        return self.projector(self.encoder(x)).reshape(*lead, self.embed_dim)

    def embed_actions(self, actions: torch.Tensor) -> torch.Tensor:
        if actions.ndim != 3 or actions.shape[-1] != self.action_block_dim:
            raise ValueError(
                f"action blocks must be (B, T, {self.action_block_dim}), got {tuple(actions.shape)}"
            )
        return self.action_encoder(actions)

    def predict(self, z: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Teacher-forced one-step prediction: output t (causal over frames <= t) predicts z_{t+1}.

        ``z`` (B, T, D) and ``actions`` (B, T, 5A) with T <= history; action block t is the one
        executed after frame t.
        """
        if z.ndim != 3 or z.shape[-1] != self.embed_dim or not 1 <= z.shape[1] <= self.history:
            raise ValueError(
                f"predict expects z of shape (B, T <= {self.history}, {self.embed_dim}), "
                f"got {tuple(z.shape)}"
            )
        if actions.shape[:2] != z.shape[:2]:
            raise ValueError(
                f"actions {tuple(actions.shape)} must match z {tuple(z.shape)} in (B, T)"
            )
        out = self.predictor(z, self.embed_actions(actions))
        b, t, d = out.shape
        return self.pred_proj(out.reshape(b * t, d)).reshape(b, t, d)

    def rollout(
        self,
        z_context: torch.Tensor,
        action_blocks: torch.Tensor,
        context_actions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Autoregressive imagination for planning: H predictions from a context of h frames.

        ``z_context`` (B, h, D) holds observed embeddings; ``action_blocks`` (B, H, 5A) the
        candidate blocks, block k leading from the k-th imagined frame to the next. With h > 1,
        ``context_actions`` (B, h - 1, 5A) are the executed blocks between context frames.
        Each step feeds the last ``history`` embeddings (observed, then predicted) and their
        blocks to the predictor and appends its last-position output (LeWM's ``rollout``).
        Returns the H predicted embeddings (B, H, D); the planning cost uses the last one.
        """
        b, h, d = z_context.shape
        if d != self.embed_dim or h < 1:
            raise ValueError(f"z_context must be (B, h >= 1, {self.embed_dim}), got {(b, h, d)}")
        if action_blocks.ndim != 3 or action_blocks.shape[0] != b:
            raise ValueError(
                f"action_blocks must be (B={b}, H, {self.action_block_dim}), "
                f"got {tuple(action_blocks.shape)}"
            )
        past = action_blocks.new_zeros(b, 0, action_blocks.shape[-1])
        if h > 1:
            if context_actions is None or tuple(context_actions.shape[:2]) != (b, h - 1):
                got = None if context_actions is None else tuple(context_actions.shape)
                raise ValueError(
                    f"a context of h={h} frames needs context_actions of shape (B={b}, {h - 1}, "
                    f"{self.action_block_dim}), got {got}"
                )
            past = context_actions
        acts = self.embed_actions(torch.cat([past, action_blocks], dim=1))
        zs = z_context
        preds = []
        for _ in range(action_blocks.shape[1]):
            n = zs.shape[1]
            lo = max(0, n - self.history)
            out = self.predictor(zs[:, lo:], acts[:, lo:n])[:, -1]
            nxt = self.pred_proj(out)
            preds.append(nxt)
            zs = torch.cat([zs, nxt.unsqueeze(1)], dim=1)
        return torch.stack(preds, dim=1)


def build_world_model(profile: Profile, action_dim: int, seed: int = 0) -> WorldModel:
    """The world model of ``profile`` for a task with ``action_dim`` raw actions, seeded init."""
    cfg = WorldModelConfig.from_profile(profile, action_dim)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return WorldModel(cfg)


@torch.no_grad()
def encode_frames(model: WorldModel, pixels, batch_size: int = 256) -> torch.Tensor:
    """Embeddings of many frames (N, H, W, 3) or (N, 3, H, W) uint8, in eval mode, in chunks."""
    x = torch.as_tensor(pixels)
    if x.ndim == 4 and x.shape[-1] == 3 and x.shape[1] != 3:
        x = x.permute(0, 3, 1, 2)
    was_training = model.training
    model.eval()
    try:
        chunks = [model.encode(x[i : i + batch_size]) for i in range(0, len(x), batch_size)]
        return torch.cat(chunks)
    finally:
        model.train(was_training)


__all__ = [
    "ENCODERS",
    "WorldModel",
    "WorldModelConfig",
    "build_world_model",
    "encode_frames",
]
