"""The offline stand-in for DINOv2: a small ViT pretrained by DINO's self-distillation on frames
of the five tasks, then frozen.

DINO-WM's claim to test is that *pretrained* features, learned without the world model and
without the task's objective, are not enough on some tasks (SCALE Section 5). DINOv2's weights
cannot be downloaded here, so the laptop arm stands in for them with an encoder that keeps the
two properties that matter and says what it is not:

* it is trained **before and apart from** every world model, by a self-supervised image
  objective only (no actions, no q, no prediction), and frozen afterwards;
* it is trained on frames pooled from the **training episodes of all five tasks** (never their
  held-out episodes), so no task's evaluation pairs are seen;
* it is *not* DINOv2: ~100x fewer parameters, minutes of CPU instead of a GPU cluster, about
  10^4 simulator frames instead of 142 M natural images, and only DINO's class-token loss (no
  iBOT patch loss, so its patch tokens are shaped only through the class token). Its page says
  so (book: *Reconstructions*, section rec-dino-standin).

DINO's self-distillation (Caron et al. 2021): a student and a teacher of the same architecture
(encoder + projection head ending in K prototypes) see two random crops of the same frame; the
loss is the cross-entropy ``H(P_t(x_1), P_s(x_2)) + H(P_t(x_2), P_s(x_1))`` between the
teacher's sharpened, centred distribution ``P_t = softmax((g_t - c) / τ_t)`` and the student's
``P_s = softmax(g_s / τ_s)``. Only the student gets gradients; the teacher is an exponential
moving average of the student (momentum m), and the centre c an EMA of the teacher's batch mean
(which, with sharpening, prevents collapse). The encoder is :class:`~.dino.DinoViT`, so its
saved state dict has DINOv2's layout and :func:`~.dino.load_dinov2` reads it.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from jepa_geometry.artifacts import Artifact, atomic_path, get_or_build
from jepa_geometry.envs import TASKS
from jepa_geometry.envs.dataset import dataset_artifact, load_dataset
from jepa_geometry.jobs import job_threads, progress_bar
from jepa_geometry.profiles import Profile, with_overrides
from jepa_geometry.wm.dino import DinoConfig, DinoViT, load_dinov2

STANDIN_VIT = DinoConfig(
    patch_size=8, embed_dim=96, depth=4, heads=3, pretrain_size=64, image_size=64
)
"""The stand-in's architecture at laptop size: 8 x 8 = 64 patch tokens of 96 features."""


@dataclass(frozen=True)
class DistillSettings:
    """DINO's recipe at laptop size (DINO's own values in the comments)."""

    # 1,500 steps of 64 frames (two views each): 0.57 s a step on one thread of the laptop,
    # about 14 min, inside the stand-in's 15-minute budget (DINO: 100+ epochs of ImageNet)
    steps: int = 1500
    batch_size: int = 64
    lr: float = 5e-4  # DINO: 5e-4 x batch / 256, warm-up, cosine
    warmup_steps: int = 150
    weight_decay: float = 0.04  # DINO: 0.04 -> 0.4
    prototypes: int = 512  # K (DINO: 65,536)
    head_hidden: int = 256  # DINO: 2,048
    bottleneck: int = 64  # DINO: 256
    student_temp: float = 0.1
    teacher_temp: float = 0.04
    center_momentum: float = 0.9
    momentum: float = 0.996  # teacher EMA, raised to 1 on a cosine schedule
    crop_scale: tuple[float, float] = (0.4, 1.0)  # DINO's global crops: (0.4, 1)

    def as_dict(self) -> dict:
        return asdict(self)


class DinoHead(nn.Module):
    """DINO's projection head: MLP -> L2-normalised bottleneck -> weight-normalised linear to
    K prototypes (the norm of each prototype's weight fixed to 1)."""

    def __init__(self, dim: int, hidden: int, bottleneck: int, prototypes: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(dim, hidden),
            nn.GELU(),
            nn.Linear(hidden, hidden),
            nn.GELU(),
            nn.Linear(hidden, bottleneck),
        )
        self.prototypes = nn.Parameter(torch.randn(prototypes, bottleneck) / math.sqrt(bottleneck))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.normalize(self.mlp(x), dim=-1)
        return x @ F.normalize(self.prototypes, dim=-1).T


class _Net(nn.Module):
    """Encoder + head on the class token."""

    def __init__(self, cfg: DinoConfig, s: DistillSettings) -> None:
        super().__init__()
        self.encoder = DinoViT(cfg)
        self.head = DinoHead(cfg.embed_dim, s.head_hidden, s.bottleneck, s.prototypes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder.tokens(x)[:, 0])


def dino_loss(
    student: torch.Tensor,
    teacher: torch.Tensor,
    center: torch.Tensor,
    student_temp: float,
    teacher_temp: float,
) -> torch.Tensor:
    """DINO's loss for two views: ``student``, ``teacher`` are (2, B, K) logits of view 1 and
    view 2; each student view is scored against the *other* view's teacher distribution,
    ``-Σ_k P_t[k] log P_s[k]``, averaged over the batch and the two pairs."""
    p_t = F.softmax((teacher - center) / teacher_temp, dim=-1).detach()
    log_p_s = F.log_softmax(student / student_temp, dim=-1)
    return 0.5 * (-(p_t[1] * log_p_s[0]).sum(-1).mean() - (p_t[0] * log_p_s[1]).sum(-1).mean())


@torch.no_grad()
def ema_(teacher: nn.Module, student: nn.Module, momentum: float) -> None:
    """In place: every teacher parameter becomes ``m * teacher + (1 - m) * student``."""
    for t, s in zip(teacher.parameters(), student.parameters(), strict=True):
        t.mul_(momentum).add_(s.detach(), alpha=1.0 - momentum)


def teacher_momentum(step: int, steps: int, base: float) -> float:
    """DINO's schedule: ``1 - (1 - base) (cos(π step / steps) + 1) / 2``, base to 1."""
    return 1.0 - (1.0 - base) * (math.cos(math.pi * step / steps) + 1.0) / 2.0


def random_crops(
    frames: torch.Tensor, size: int, scale: tuple[float, float], generator: torch.Generator
) -> torch.Tensor:
    """One random resized crop per frame (area fraction uniform in ``scale``, aspect ratio
    log-uniform in [3/4, 4/3], as torchvision's RandomResizedCrop), resized to ``size`` and
    flipped horizontally with probability 1/2. ``frames`` float (B, 3, H, W)."""
    b, _, h, w = frames.shape
    u = torch.rand(b, 4, generator=generator)
    area = scale[0] + (scale[1] - scale[0]) * u[:, 0]
    ratio = torch.exp(math.log(3 / 4) + (math.log(4 / 3) - math.log(3 / 4)) * u[:, 1])
    ch = torch.sqrt(area / ratio).clamp(max=1.0)  # crop height / H
    cw = torch.sqrt(area * ratio).clamp(max=1.0)
    cy = (1 - ch) * u[:, 2]
    cx = (1 - cw) * u[:, 3]
    flip = torch.rand(b, generator=generator) < 0.5
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0] = cw * torch.where(flip, -1.0, 1.0)
    theta[:, 0, 2] = 2 * cx + cw - 1
    theta[:, 1, 1] = ch
    theta[:, 1, 2] = 2 * cy + ch - 1
    grid = F.affine_grid(theta, (b, 3, size, size), align_corners=False)
    return F.grid_sample(frames, grid, mode="bilinear", padding_mode="border", align_corners=False)


def distill(
    frames: np.ndarray, cfg: DinoConfig, s: DistillSettings, seed: int, progress: bool = True
) -> tuple[DinoViT, list[dict[str, float]]]:
    """Pretrain the stand-in encoder on uint8 ``frames`` (N, H, W, 3) by DINO; returns the
    teacher's encoder (DINO keeps the teacher) in eval mode, frozen, and the loss log."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    student = _Net(cfg, s)
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad_(False)
    center = torch.zeros(s.prototypes)
    opt = torch.optim.AdamW(student.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda k: (
            min(1.0, (k + 1) / max(s.warmup_steps, 1))
            * 0.5
            * (1 + math.cos(math.pi * min(k, s.steps) / s.steps))
        ),
    )
    pool = torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2)
    mean, std = student.encoder.pixel_mean, student.encoder.pixel_std
    log = []
    for step in progress_bar(range(s.steps), progress=progress, desc="DINO stand-in"):
        idx = torch.randint(0, len(pool), (s.batch_size,), generator=g)
        x = pool[idx].float() / 255.0
        views = torch.stack([random_crops(x, cfg.image_size, s.crop_scale, g) for _ in range(2)])
        views = (views - mean) / std
        out_s = student(views.flatten(0, 1)).reshape(2, s.batch_size, -1)
        with torch.no_grad():
            out_t = teacher(views.flatten(0, 1)).reshape(2, s.batch_size, -1)
        loss = dino_loss(out_s, out_t, center, s.student_temp, s.teacher_temp)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 3.0)
        opt.step()
        sched.step()
        ema_(teacher, student, teacher_momentum(step, s.steps, s.momentum))
        with torch.no_grad():
            center.mul_(s.center_momentum).add_(out_t.mean((0, 1)), alpha=1 - s.center_momentum)
            if step % 50 == 0 or step == s.steps - 1:
                p_t = F.softmax((out_t - center) / s.teacher_temp, -1).mean((0, 1))
                log.append(
                    {
                        "step": step + 1,
                        "loss": float(loss),
                        "teacher_entropy": float(-(p_t * p_t.clamp_min(1e-12).log()).sum()),
                    }
                )
    encoder = teacher.encoder.eval()
    for p in encoder.parameters():
        p.requires_grad_(False)
    return encoder, log


# --------------------------------------------------------------------------------------------
# The cached stand-in
# --------------------------------------------------------------------------------------------

ENCODER_FILE = "encoder.pth"
FRAMES_PER_TASK = 2000  # frames drawn from each task's training episodes


def pooled_frames(profile: Profile, per_task: int, seed: int, size: int) -> np.ndarray:
    """``per_task`` frames from the *training* episodes of each of the five tasks' datasets at
    ``profile`` (drawn without replacement with ``seed``), resized to ``size`` px: (N, size,
    size, 3) uint8. Held-out episodes, where the evaluation pairs come from, are never used."""
    rng = np.random.default_rng(seed)
    out = []
    for task in TASKS:
        data = load_dataset(task, profile, progress=False)
        rows = np.flatnonzero(np.isin(data.episode, data.train_episodes))
        pick = np.sort(rng.choice(rows, size=min(per_task, len(rows)), replace=False))
        x = torch.from_numpy(np.ascontiguousarray(data.pixels[pick])).permute(0, 3, 1, 2)
        x = F.interpolate(x.float(), size=(size, size), mode="bilinear", antialias=True)
        out.append(x.round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).numpy())
    return np.concatenate(out)


def source_profile(profile: Profile, cfg: DinoConfig = STANDIN_VIT) -> Profile:
    """The profile whose five datasets the stand-in learns from: ``profile`` with its frames
    at the encoder's own resolution, or at the profile's where that is lower.

    The stand-in is pretrained once for all tasks, so a study that raises one task's resolution
    (Push-T's 96 px rung, :mod:`jepa_geometry.study.levers`) reuses the stand-in of its base
    profile instead of collecting five datasets again at a resolution the encoder resizes away.
    """
    size = min(profile.data.image_size, cfg.image_size)
    if size == profile.data.image_size:
        return profile
    return with_overrides(profile, {"data.image_size": size})


def standin_artifact(
    profile: Profile, settings: DistillSettings, seed: int = 0, cfg: DinoConfig = STANDIN_VIT
) -> Artifact:
    """``checkpoints/dino-standin/<key>``: keyed by the five datasets (of
    :func:`source_profile`), the architecture, the recipe, the frames per task and the seed."""
    source = source_profile(profile, cfg)
    spec = {
        "datasets": {t: dataset_artifact(t, source).key for t in TASKS},
        "vit": asdict(cfg),
        "settings": settings.as_dict(),
        "frames_per_task": FRAMES_PER_TASK,
        "seed": seed,
    }
    return Artifact("checkpoints", "dino-standin", spec)


def train_standin(
    profile: Profile,
    settings: DistillSettings | None = None,
    seed: int = 0,
    progress: bool = True,
    heavy: bool = False,
) -> Artifact:
    """Pretrain (or find in the cache) the stand-in encoder, once for all tasks; its state dict
    is saved in DINOv2's layout, its loss log beside it. With ``heavy`` the caller will load
    the weights, so a cached artifact without them is pretrained again (bit-identical)."""
    s = settings or DistillSettings()
    art = standin_artifact(profile, s, seed)

    def build(tmp: Path) -> dict[str, Any]:
        frames = pooled_frames(
            source_profile(profile), FRAMES_PER_TASK, seed, STANDIN_VIT.image_size
        )
        with job_threads():
            encoder, log = distill(frames, STANDIN_VIT, s, seed, progress)
        state = {k: v for k, v in encoder.state_dict().items() if not k.startswith("pixel_")}
        with atomic_path(tmp / ENCODER_FILE) as f:
            torch.save(state, f)
        (tmp / "log.json").write_text(json.dumps(log))
        return {"summary": {"frames": len(frames), "final": log[-1]}}

    how = f"jepa-geometry train --task tworoom --arm dinowm --profile {profile.name}"
    get_or_build(art, build, heavy=heavy, how=how)
    return art


def load_standin(
    profile: Profile, settings: DistillSettings | None = None, seed: int = 0
) -> DinoViT:
    """The frozen stand-in encoder (pretrained first if it is not cached)."""
    art = train_standin(profile, settings, seed, heavy=True)  # weights verified
    folder = art.path
    return load_dinov2(
        folder / ENCODER_FILE,
        STANDIN_VIT,
        remedy=f"it is the stand-in encoder this cache built; remove {folder} "
        "and rerun to pretrain it again",
    )
