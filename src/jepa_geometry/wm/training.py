"""Training a world model with one of the four objectives (or a sum of them), resumably.

A training step on a batch of B clips of T = history + 1 frames (ClipSampler's format):

    z      = encode(pixels)                                  (B, T, D), all frames
    ẑ      = predict(z[:, :-1], actions[:, :-1])             teacher-forced, causal
    L      = mean((ẑ - z[:, 1:])^2)                          no stop-gradient (LeWM)
           + λ_sig · SIGReg(zᵀ)        or  λ_sig · ΛReg(zᵀ)   (anisowm replaces SIGReg)
           + λ · (1 - Pearson(||z_i - z_j||², ||q_i - q_j||²))   over K sampled pairs (scale)
           + w · mean((AuxHead(z) - q)²)                                               (aux)

Optimisation follows LeWM: AdamW, linear warm-up then cosine to 0 *per optimizer step* (the
per-epoch stepping of some LeWM configs would leave the LR near 0), gradient clipping at
norm 1. CPU profiles use lr 1e-3 instead of 5e-5, which is far too slow for minutes of
training (see the book's *Reconstructions* page, section rec-cpu-learning-rate,
``book/reconstructions.md``). ΛReg's α is excluded from weight decay, which would otherwise
pull Λ back to the identity; every other parameter is decayed.

Everything random is seeded from the training seed and saved in every checkpoint (model,
objective, optimizer, scheduler, torch RNG for dropout, the generator of SIGReg directions and
SCALE pairs, the log), and batches are a pure function of (seed, step), so a run interrupted
at any point and resumed ends with bit-identical weights on CPU.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from jepa_geometry.artifacts import (
    Artifact,
    atomic_path,
    get_or_build,
    load,
    read_verified,
    set_aside,
    write_verified,
)
from jepa_geometry.envs import TASKS, q_indices, q_names
from jepa_geometry.envs.dataset import ClipSampler, dataset_spec, load_dataset
from jepa_geometry.jobs import JOB_THREADS, job_threads, progress_bar
from jepa_geometry.profiles import Profile, TrainSettings
from jepa_geometry.wm.arms import (
    DINOWM,
    ObjectiveWeights,
    arm_name,
    arm_weights,
    parse_arm,
    q_variant,
)
from jepa_geometry.wm.dinowm import (
    PatchWorldModel,
    build_dinowm,
    encoder_config,
    encoder_identity,
    frame_tokens,
    load_patch_model,
)
from jepa_geometry.wm.losses import AuxHead, LambdaReg, sample_pairs, scale_loss, sigreg
from jepa_geometry.wm.model import WorldModel, WorldModelConfig, build_world_model

Batch = dict[str, torch.Tensor]
BatchSource = Callable[[int], Iterator[Batch]]  # step s -> the batches of steps s, s+1, ...
CHECKPOINT_FORMAT = 1


# --------------------------------------------------------------------------------------
# The objective of an arm
# --------------------------------------------------------------------------------------


class Objective(nn.Module):
    """The loss terms of an arm, with the training-only modules they own.

    Holds ΛReg's α (anisowm) and the Aux head (aux); both are trained with the model and
    neither is part of the world model used for planning.
    """

    def __init__(
        self,
        arm: str,
        weights: ObjectiveWeights,
        embed_dim: int,
        q_dim: int,
        num_projections: int = 1024,
        num_pairs: int = 4096,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.arm = arm_name(arm)
        self.components = parse_arm(arm)
        self.weights = weights
        self.q_dim = q_dim
        self.num_projections, self.num_pairs = num_projections, num_pairs
        self.last_embeddings: tuple[torch.Tensor, torch.Tensor] | None = None  # z, ẑ (detached)
        missing = [
            c for c in ("scale", "aux") if c in self.components and getattr(weights, c) is None
        ]
        if "anisowm" in self.components and weights.kappa is None:
            missing.append("kappa")
        if missing:
            raise ValueError(f"arm {self.arm!r} needs weights {missing}; got {weights}")
        self.lambda_reg = (
            LambdaReg(embed_dim, weights.kappa, weights.bound or "clamp")
            if "anisowm" in self.components
            else None
        )
        with torch.random.fork_rng(devices=[]):  # the Aux head's init depends on the seed only
            torch.manual_seed(derive_seed(seed, "objective-init"))
            self.aux_head = AuxHead(embed_dim, q_dim) if "aux" in self.components else None

    def forward(
        self,
        model: WorldModel,
        batch: Batch,
        generator: torch.Generator,
        precision: str = "fp32",
    ) -> dict:
        """All loss terms of one batch; ``loss`` is their weighted sum.

        With ``precision="bf16"`` the world model's forward (and so its backward) runs under
        ``torch.autocast(bfloat16)``, as LeWM trains; the weights stay fp32 and every loss term
        is computed in fp32 from the fp32 copies of z and ẑ, so SIGReg's characteristic
        function and SCALE's Pearson correlation keep full precision.
        """
        device = next(model.parameters()).device.type
        with torch.autocast(device, torch.bfloat16, precision == "bf16"):
            # (B, T, D); DINO-WM's batches carry their frozen tokens, encoded once
            z = batch["z"] if "z" in batch else model.encode(batch["pixels"])
            z_hat = model.predict(z[:, :-1], batch["actions"][:, :-1])
        z, z_hat = z.float(), z_hat.float()
        self.last_embeddings = (z.detach(), z_hat.detach())  # for embedding_diagnostics
        terms = {"pred": ((z_hat - z[:, 1:]) ** 2).mean()}
        if self.components == (DINOWM,):  # DINO-WM: the frozen tokens' next-frame error only
            terms["loss"] = terms["pred"]
            return terms
        zt = z.transpose(0, 1)  # (T, B, D): SIGReg per time step over the batch
        w = self.weights
        if self.lambda_reg is not None:
            terms["lambda_reg"] = self.lambda_reg(zt, self.num_projections, generator=generator)
            loss = terms["pred"] + w.sigreg * terms["lambda_reg"]
        else:
            terms["sigreg"] = sigreg(zt, self.num_projections, generator=generator)
            loss = terms["pred"] + w.sigreg * terms["sigreg"]
        if "scale" in self.components:
            b, t, d = z.shape
            i, j = sample_pairs(batch["episode"], t, self.num_pairs, generator)
            zf, qf = z.reshape(b * t, d), batch["q"].reshape(b * t, -1)
            terms["scale"] = scale_loss(zf[i], zf[j], qf[i], qf[j])
            loss = loss + w.scale * terms["scale"]
        if self.aux_head is not None:
            terms["aux"] = self.aux_head.loss(z, batch["q"])
            loss = loss + w.aux * terms["aux"]
        terms["loss"] = loss
        return terms


DIAGNOSTICS: tuple[str, ...] = (
    "top2_share", "top8_share", "cond_lambda", "corr_v_var_z", "corr_v_rel_err",
)  # fmt: skip
"""The embedding diagnostics a training log row holds (the ΛReg ones only for ΛReg arms)."""


def _corr(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / (a.norm() * b.norm()).clamp_min(1e-12))


@torch.no_grad()
def embedding_diagnostics(
    z: torch.Tensor, z_hat: torch.Tensor, v: torch.Tensor | None = None
) -> dict[str, float]:
    """Whether the embedding is isotropic and, for ΛReg, whether Λ follows the encoder.

    From one batch's embeddings ``z`` (B, T, D) and teacher-forced predictions ``z_hat``
    (B, T-1, D), with λ_1 ≥ … ≥ λ_D the eigenvalues of the covariance of z over all B·T
    frames:

    * ``top2_share``, ``top8_share`` = Σ_{j≤k} λ_j / Σ_j λ_j (isotropic: k / D in the
      population, more on one batch: :func:`isotropic_top_share`);
    * with ΛReg's target variances ``v`` (D,): ``cond_lambda`` = max v / min v (at most κ);
      ``corr_v_var_z`` = corr_i(v_i, Var z_i); ``corr_v_rel_err`` = corr_i(v_i, e_i / Var z_i)
      with e_i the mean squared prediction error of coordinate i. AnisoWM's theory wants Λ to
      give more variance where the model predicts well (relative to the coordinate's spread),
      so the last correlation should be negative once Λ has been selected (issue #13).
    """
    zf = z.reshape(-1, z.shape[-1]).double()
    zf = zf - zf.mean(0)
    # Zc^T Zc and Zc Zc^T share their non-zero eigenvalues: the smaller one is decomposed
    # (a DINO-WM latent has thousands of dimensions and a batch a few hundred frames)
    gram = zf @ zf.T if zf.shape[1] > zf.shape[0] else zf.T @ zf
    eig = torch.linalg.eigvalsh(gram / max(len(zf) - 1, 1)).flip(0).clamp_min(0)
    total = eig.sum().clamp_min(1e-12)
    out = {f"top{k}_share": float(eig[:k].sum() / total) for k in (2, 8)}
    if v is not None:
        v = v.detach().double()
        var = zf.var(0).clamp_min(1e-12)
        err = (z_hat - z[:, 1:]).double().pow(2).reshape(-1, z.shape[-1]).mean(0)
        out["cond_lambda"] = float(v.max() / v.min())
        out["corr_v_var_z"] = _corr(v, var)
        out["corr_v_rel_err"] = _corr(v, err / var)
    return out


def isotropic_top_share(k: int, frames: int, dim: int, draws: int = 200, seed: int = 0) -> float:
    """The top-``k`` variance share an exactly isotropic Gaussian embedding shows on one batch
    of ``frames`` frames in ``dim`` dimensions (Monte Carlo mean over ``draws`` batches).

    The population share is k / D, but a sample covariance of n frames spreads its eigenvalues
    (Marchenko-Pastur: the largest grows like (1 + sqrt(D/n))²), so a batch of 256 frames in
    D = 64 shows about 0.24 for k = 8, not 0.125. :func:`embedding_diagnostics` measures one
    training batch, so this, not k / D, is its isotropic reference.
    """
    g = torch.Generator().manual_seed(seed)
    total = 0.0
    for _ in range(draws):
        z = torch.randn(frames, dim, generator=g, dtype=torch.float64)
        z = z - z.mean(0)
        eig = torch.linalg.eigvalsh(z.T @ z).flip(0)
        total += float(eig[:k].sum() / eig.sum())
    return total / draws


def batch_isotropic_share(profile: Profile, k: int) -> float:
    """:func:`isotropic_top_share` for one training batch of ``profile`` (batch_size clips of
    history + 1 frames, in embed_dim dimensions): the isotropic reference of the top-k shares
    that :func:`embedding_diagnostics` logs."""
    frames = profile.train.batch_size * (profile.data.history + 1)
    return isotropic_top_share(k, frames, profile.model.embed_dim)


def check_batch(batch: Batch, model: WorldModel, q_dim: int) -> None:
    """Fail before training if a batch does not have ClipSampler's format for this model."""
    where = "training batch"
    history, size, block = model.history, model.image_size, model.action_block_dim
    need = ("pixels", "actions", "q", "episode")
    missing = [k for k in need if k not in batch]
    if missing:
        raise ValueError(f"{where} lacks {missing}; a ClipSampler batch has {list(need)}")
    px, act, q, ep = (batch[k] for k in need)
    t = history + 1
    if px.ndim != 5 or tuple(px.shape[1:]) != (t, 3, size, size):
        raise ValueError(
            f"{where}: pixels must be (B, {t}, 3, {size}, {size}) "
            f"(history + 1 frames), got {tuple(px.shape)}"
        )
    b = px.shape[0]
    if b < 2:
        raise ValueError(f"{where}: SIGReg and BatchNorm need >= 2 clips per batch, got {b}")
    if tuple(act.shape) != (b, t, block):
        raise ValueError(
            f"{where}: actions must be (B, T, frameskip * action_dim) = "
            f"{(b, t, block)}, got {tuple(act.shape)}"
        )
    if q.ndim != 3 or tuple(q.shape[:2]) != (b, t) or q.shape[2] != q_dim:
        raise ValueError(
            f"{where}: q must be (B, T, q_dim) = {(b, t, q_dim)}, got {tuple(q.shape)} "
            f"(wrong task state dimension?)"
        )
    if tuple(ep.shape) != (b,):
        raise ValueError(f"{where}: episode must be (B,) = ({b},), got {tuple(ep.shape)}")


# --------------------------------------------------------------------------------------
# Schedule, seeds, checkpoints
# --------------------------------------------------------------------------------------


def lr_factor(step: int, warmup: int, total: int) -> float:
    """LR multiplier at optimizer step ``step`` (0-based): linear warm-up, then cosine to 0.

    ``(step + 1) / warmup`` for the first ``warmup`` steps (so step 0 already learns), then
    ``½ (1 + cos(π (step - warmup) / (total - warmup)))``.
    """
    if step < warmup:
        return (step + 1) / warmup
    span = max(total - warmup, 1)
    return 0.5 * (1.0 + math.cos(math.pi * min(step - warmup, span) / span))


def derive_seed(seed: int, purpose: str) -> int:
    """An independent 63-bit seed for one use of the training seed (init, batches, losses)."""
    digest = hashlib.sha256(f"{seed}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


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


@dataclass
class TrainResult:
    """What a training run leaves besides the weights."""

    log: list[dict[str, Any]]
    steps: int
    wall_s: float  # this process's training time (excludes time before a resume)
    resumed_from: int  # 0 for a fresh run
    extra: dict[str, Any] = field(default_factory=dict)


def _run_fingerprint(
    model: WorldModel, objective: Objective, settings: TrainSettings, seed: int
) -> dict:
    return {
        "format": CHECKPOINT_FORMAT,
        "model": model.cfg.as_dict(),
        "method": objective.arm,  # key name kept: resume files written before the rename
        "weights": objective.weights.as_dict(),
        "q_dim": objective.q_dim,
        "train": dataclasses.asdict(settings),
        "seed": seed,
    }


# --------------------------------------------------------------------------------------
# The training loop
# --------------------------------------------------------------------------------------


def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX). Without it PyTorch
    emulates bf16: a laptop training step under bf16 autocast ran at 0.07x its fp32 speed on
    one core of an AMD EPYC without AVX-512 (README, Profiles). A bf16 profile still trains in
    bf16 there, since its numbers are the ones the book reports."""
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def train(
    model: WorldModel,
    objective: Objective,
    batches: BatchSource,
    settings: TrainSettings,
    seed: int,
    checkpoint: Path | None = None,
    progress: bool = True,
    on_checkpoint: Callable[[int], None] | None = None,
    device: str = "cpu",
) -> TrainResult:
    """Train ``model`` (in place) for ``settings.steps`` optimizer steps.

    ``batches(s)`` yields the batches of steps s, s+1, ... (a pure function of the step, so a
    resumed run sees the same data). With ``checkpoint`` set, the full training state is
    written there atomically every ``checkpoint_every`` steps and at the end, and an existing
    checkpoint is resumed from -- after checking it belongs to the same model, arm, weights,
    q dimension, settings and seed. ``on_checkpoint(step)`` is called after each write.
    ΛReg's declared variants (``objective.weights``): α's learning rate is ``alpha_lr`` times
    the model's, α gets no gradient for the first ``alpha_warmup`` steps (so Adam's moments
    stay zero and α stays 0), and ``bound="project"`` projects α after every step.
    Loss terms are averaged over ``log_every`` steps and logged with the LR, the gradient norm,
    :func:`embedding_diagnostics` of the logging step's batch and, for ΛReg, the target
    variances v.
    """
    model.to(device)
    objective.to(device)
    decayed = list(model.parameters()) + [
        p for n, p in objective.named_parameters() if not n.startswith("lambda_reg.")
    ]
    groups = [{"params": decayed, "weight_decay": settings.weight_decay}]
    w = objective.weights
    alpha_warmup = int(w.alpha_warmup or 0)
    if objective.lambda_reg is not None:
        groups.append(
            {
                "params": list(objective.lambda_reg.parameters()),
                "weight_decay": 0.0,
                "lr": settings.lr * (w.alpha_lr or 1.0),
            }
        )
    params = [p for g in groups for p in g["params"]]  # all clipped together, as in LeWM
    opt = torch.optim.AdamW(groups, lr=settings.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: lr_factor(s, settings.warmup_steps, settings.steps)
    )
    gen = torch.Generator().manual_seed(derive_seed(seed, "objective"))
    torch.manual_seed(derive_seed(seed, "dropout"))
    fingerprint = _run_fingerprint(model, objective, settings, seed)
    log: list[dict[str, Any]] = []
    window: dict[str, float] = {}
    window_n = 0
    start = 0
    state = _read_resume(Path(checkpoint)) if checkpoint is not None else None
    if state is not None:
        check_config(state["fingerprint"], fingerprint, f"checkpoint {checkpoint}")
        model.load_state_dict(state["model"])
        objective.load_state_dict(state["objective"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        if state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        gen.set_state(state["generator"])
        log, window, window_n = state["log"], state["window"], state["window_n"]
        start = state["step"]

    def save(step: int) -> None:
        state = {
            "fingerprint": fingerprint,
            "step": step,
            "model": model.state_dict(),
            "objective": objective.state_dict(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if device != "cpu" else None,
            "generator": gen.get_state(),
            "log": log,
            "window": window,
            "window_n": window_n,
        }
        buf = io.BytesIO()
        torch.save(state, buf)
        write_verified(Path(checkpoint), buf.getvalue())
        if on_checkpoint is not None:
            on_checkpoint(step)

    model.train()
    objective.train()
    it = batches(start)
    t0 = time.perf_counter()
    bar = _progress(settings.steps, start, objective.arm, progress)
    try:
        for step in range(start, settings.steps):
            batch = {k: v.to(device, non_blocking=True) for k, v in next(it).items()}
            if step == start:
                check_batch(batch, model, objective.q_dim)
            terms = objective(model, batch, gen, settings.precision)
            opt.zero_grad(set_to_none=True)
            terms["loss"].backward()
            if step < alpha_warmup:  # Λ = I until the global scale of z has settled
                objective.lambda_reg.alpha.grad = None
            grad_norm = torch.nn.utils.clip_grad_norm_(params, settings.grad_clip)
            lr = opt.param_groups[0]["lr"]
            opt.step()
            sched.step()
            if objective.lambda_reg is not None:
                objective.lambda_reg.project_()
            for k, v in terms.items():
                window[k] = window.get(k, 0.0) + float(v.detach())
            window["grad_norm"] = window.get("grad_norm", 0.0) + float(grad_norm)
            window_n += 1
            done = step + 1
            if done % settings.log_every == 0 or done == settings.steps:
                row = {"step": done, "lr": lr, **{k: v / window_n for k, v in window.items()}}
                v = None
                if objective.lambda_reg is not None:
                    v = objective.lambda_reg.variances.detach()
                    row["lambda_v"] = v.tolist()
                row.update(embedding_diagnostics(*objective.last_embeddings, v))
                log.append(row)
                window, window_n = {}, 0
                bar.set_postfix(loss=f"{row['loss']:.4f}", pred=f"{row['pred']:.4f}")
            bar.update(1)
            if checkpoint is not None and (
                done % settings.checkpoint_every == 0 or done == settings.steps
            ):
                save(done)
    finally:
        bar.close()
    model.eval()
    return TrainResult(log, settings.steps, time.perf_counter() - t0, start)


def load_training_state(path: Path) -> dict[str, Any]:
    """The full training state of a resume checkpoint, verified against its sha256
    (:class:`~jepa_geometry.artifacts.ArtifactError` if any byte changed)."""
    return torch.load(io.BytesIO(read_verified(path)), map_location="cpu", weights_only=False)


def _read_resume(path: Path) -> dict[str, Any] | None:
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


def _progress(total: int, initial: int, desc: str, enabled: bool):
    return progress_bar(total=total, initial=initial, desc=f"train {desc}", progress=enabled)


# --------------------------------------------------------------------------------------
# Saved models
# --------------------------------------------------------------------------------------

MODEL_FILE = "model.pt"
LOG_FILE = "log.json"


def save_model(path: Path, model: WorldModel | PatchWorldModel, meta: dict[str, Any]) -> None:
    """Atomically write the world model's config, weights and metadata (arm, q_dim, ...); a
    DINO-WM also records its encoder's architecture and frame size (its frozen weights are in
    the state, so the model reloads without the encoder's source)."""
    blob = {"config": model.cfg.as_dict(), "state": model.state_dict(), "meta": meta}
    if isinstance(model, PatchWorldModel):
        blob.update(encoder=dataclasses.asdict(model.encoder.cfg), image_size=model.image_size,
                    token_grid=model.token_grid)  # fmt: skip
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


# --------------------------------------------------------------------------------------
# Wiring to the datasets and the artifact cache
# --------------------------------------------------------------------------------------


def _check_run(task: str, arm: str, seed: int, profile: Profile, weights: dict | None):
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid: {', '.join(TASKS)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not isinstance(profile, Profile):
        raise ValueError(f"profile must be a Profile (load_profile(...)), got {profile!r}")
    return arm_weights(arm, task, profile.train.sigreg_weight, weights)


def world_model_artifact(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None = None
) -> Artifact:
    """``data/checkpoints/<task>-<arm>/<key>``: keyed by everything the weights depend on."""

    w = _check_run(task, arm, seed, profile, weights)
    clips = {k: getattr(profile.data, k) for k in ("image_size", "history", "frameskip")}
    spec: dict[str, Any] = {
        "task": task,
        "method": arm_name(arm),  # spelled "method" in keys written before the arm rename
        "weights": w.as_dict(),
        "seed": seed,
        "dataset": dataset_spec(task, profile),
        "clips": clips,
        "model": profile.section("model"),
        "train": profile.section("train"),
        "format": CHECKPOINT_FORMAT,
        "torch_threads": JOB_THREADS,
    }
    if q_variant(arm) != "full":  # full-q keys predate the field and stay valid without it
        spec["q"] = [q_names(task)[i] for i in q_indices(task, q_variant(arm))]
    if profile.cluster.device != "cpu":  # CPU keys predate the field and stay valid
        spec["device"] = profile.cluster.device
    if arm_name(arm) == DINOWM:  # its own model: the predictor's size and the frozen encoder
        spec["dinowm"] = {**profile.section("dinowm"), "dinov2_weights": None,
                          "encoder": dataclasses.asdict(encoder_config(profile)),
                          **encoder_identity(profile)}  # fmt: skip
    return Artifact("checkpoints", f"{task}-{arm_name(arm)}", spec)


def clip_batches(
    dataset: Any,
    profile: Profile,
    seed: int,
    q: str = "full",
    tokens: tuple[np.ndarray, torch.Tensor] | None = None,
) -> BatchSource:
    """Training batches of ``data.ClipSampler`` clips; step s's batch depends only on (seed, s).

    The clip starts of step s are drawn uniformly (with replacement, like ClipSampler) by a
    generator seeded with (seed, s), so a resumed run needs no fast-forward. With ``tokens`` =
    (position of each dataset row in the table or -1, table of frozen tokens), each batch also
    carries its frames' tokens as ``z`` (DINO-WM, :func:`frozen_token_table`).
    """

    sampler = ClipSampler(
        dataset,
        split="train",
        history=profile.data.history,
        frameskip=profile.data.frameskip,
        batch_size=profile.train.batch_size,
        q_variant=q,
    )
    base = derive_seed(seed, "batches")

    def source(start: int) -> Iterator[Batch]:
        step = start
        while True:
            rng = np.random.default_rng([base, step])
            starts = rng.choice(sampler.starts, size=profile.train.batch_size)
            batch = sampler.sample(starts)
            if tokens is not None:
                frames = starts[:, None] + sampler.k * np.arange(sampler.T)
                batch["z"] = tokens[1][tokens[0][frames]]
            yield batch
            step += 1

    return source


def frozen_token_table(
    model: PatchWorldModel, dataset: Any, progress: bool = True
) -> tuple[np.ndarray, torch.Tensor]:
    """DINO-WM's frozen tokens of every frame of the training episodes, encoded once
    (:func:`~jepa_geometry.wm.dinowm.frame_tokens`): (row -> table position or -1, table)."""
    eps = dataset.episodes("train")
    rows = np.concatenate([np.arange(dataset.starts[e], dataset.starts[e] + dataset.lengths[e])
                           for e in eps])  # fmt: skip
    where = np.full(len(dataset.episode), -1, dtype=np.int64)
    where[rows] = np.arange(len(rows))
    return where, frame_tokens(model, dataset.pixels, rows, progress=progress)


def train_world_model(
    task: str,
    arm: str,
    seed: int,
    profile: Profile,
    weights: dict | None = None,
    progress: bool = True,
    heavy: bool = False,
) -> Artifact:
    """Train (or find in the cache) the world model of (task, arm, weights, seed, profile).

    With ``heavy`` the caller will load ``model.pt``, so a cached artifact without it (the
    evidence tree keeps the manifest and the log only) is trained again, bit-identical;
    without it the manifest and ``log.json`` suffice.

    Interrupted runs resume from ``.<key>.resume.pt`` next to the artifact. The artifact holds
    ``model.pt`` (config, weights, metadata) and ``log.json`` (the loss terms every
    ``log_every`` steps); its manifest carries a summary (final terms, wall time, steps/s).
    Training runs with a fixed thread count (:func:`jepa_geometry.jobs.job_threads`), so the
    weights do not depend on the machine's core count; parallelism is across models
    (:func:`jepa_geometry.study.build.build_study`).
    """
    art = world_model_artifact(task, arm, seed, profile, weights)
    w = arm_weights(arm, task, profile.train.sigreg_weight, weights)
    resume = art.write_path.parent / f".{art.key}.resume.pt"

    def build(tmp: Path) -> dict[str, Any]:

        ds = load_dataset(task, profile)
        make = build_dinowm if arm_name(arm) == DINOWM else build_world_model
        model = make(profile, ds.action.shape[1], derive_seed(seed, "init"))
        q_cols = q_indices(task, q_variant(arm))
        objective = Objective(
            arm,
            w,
            model.embed_dim,
            len(q_cols),
            profile.train.sigreg_projections,
            profile.train.pairs_per_batch,
            seed,
        )
        with job_threads():  # the same bits on any machine (jepa_geometry.jobs)
            t0 = time.perf_counter()
            table = frozen_token_table(model, ds, progress) if arm_name(arm) == DINOWM else None
            tokens_wall = time.perf_counter() - t0
            result = train(
                model,
                objective,
                clip_batches(ds, profile, seed, q_variant(arm), table),
                profile.train,
                seed,
                checkpoint=resume,
                progress=progress,
                device=profile.cluster.device,
            )
        model.to("cpu")  # the model file is read anywhere (load_model_file maps to the CPU)
        meta = {"task": task, "method": arm_name(arm), "weights": w.as_dict(), "seed": seed}
        meta.update(q_dim=len(q_cols), action_dim=int(ds.action.shape[1]))
        meta["q"] = [q_names(task)[i] for i in q_cols]
        save_model(tmp / MODEL_FILE, model, meta)
        (tmp / LOG_FILE).write_text(json.dumps(result.log))
        fresh = result.steps - result.resumed_from
        return {
            "summary": {
                **meta,
                "parameters": model.num_parameters(),
                "final": {k: v for k, v in result.log[-1].items() if k != "lambda_v"},
                "train_wall_s": round(result.wall_s, 2),
                "tokens_wall_s": round(tokens_wall, 2),  # DINO-WM's one encoding pass
                "steps_per_s": round(fresh / max(result.wall_s, 1e-9), 2),
                "resumed_from": result.resumed_from,
                "torch_threads": JOB_THREADS,
            }
        }

    how = f"jepa-geometry train --task {task} --arm {arm} --seed {seed} --profile {profile.name}"
    how += "".join(f" --weight {k}={v}" for k, v in (weights or {}).items())
    get_or_build(art, build, heavy=heavy, how=how)
    resume.unlink(missing_ok=True)
    return art


def load_world_model(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None = None
) -> WorldModel:
    """The trained world model in eval mode (trained first if not in the cache)."""
    art = train_world_model(task, arm, seed, profile, weights, heavy=True)  # weights verified
    path = art.path / MODEL_FILE
    action_dim = torch.load(path, map_location="cpu", weights_only=False)["meta"]["action_dim"]
    return load_model_file(path, WorldModelConfig.from_profile(profile, action_dim))


def training_log(task: str, arm: str, seed: int, profile: Profile, weights=None) -> list[dict]:
    """The logged loss terms of a trained model (trains it if missing)."""
    art = train_world_model(task, arm, seed, profile, weights)
    return json.loads((load(art) / LOG_FILE).read_text())


# --------------------------------------------------------------------------------------
# Tables over arms (the book's chapter on the objectives)
# --------------------------------------------------------------------------------------

LOSS_TERMS: tuple[str, ...] = ("pred", "sigreg", "lambda_reg", "scale", "aux")
"""The loss terms a training log can hold, in the order the book plots them."""


def arm_weights_table(arms: Sequence[str], task: str, sigreg_weight: float) -> pd.DataFrame:
    """The default weights of each arm on ``task`` (rows: arms; columns: sigreg, scale, aux,
    kappa in order of first use; NaN where an arm has no such term).

    An arm's loss is ``L_pred + Σ_term weight · term``, so this table is the whole difference
    between the arms' objectives (:func:`jepa_geometry.wm.arms.arm_weights`).
    """
    return pd.DataFrame({m: arm_weights(m, task, sigreg_weight).as_dict() for m in arms}).T


def train_one_seed(
    task: str, arms: Sequence[str], seed: int, profile: Profile, progress: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train (or find in the cache) one model per arm; return ``(logs, summary)``.

    ``logs`` stacks every arm's ``log.json`` (one row per logged step, an ``arm`` column
    added; terms an arm lacks are NaN). ``summary`` has one row per arm: training wall time,
    ``steps/s = fresh steps / wall time`` and the final prediction loss ``L_pred``, read from
    the artifact's manifest, so a cached model reports the run that built it.
    """
    logs, summaries = [], {}
    for m in arms:
        art = train_world_model(task, m, seed, profile, progress=progress)
        s = art.manifest()["summary"]
        summaries[m] = {
            "train time (s)": s["train_wall_s"],
            "steps/s": s["steps_per_s"],
            "final L_pred": s["final"]["pred"],
        }
        log = pd.read_json(art.path / LOG_FILE)
        log["arm"] = m
        logs.append(log)
    return pd.concat(logs, ignore_index=True), pd.DataFrame(summaries).T


def loss_terms_long(logs: pd.DataFrame) -> pd.DataFrame:
    """:func:`train_one_seed`' logs in long form: one row per (step, arm, term) with its ``value``.

    Only the :data:`LOSS_TERMS` present are kept, in that order, and rows whose value is NaN
    (a term the arm does not train) are dropped, so each arm appears only in the panels of
    its own terms: ``len = Σ_term #{rows where the term is logged}``.
    """
    terms = [t for t in LOSS_TERMS if t in logs]
    return logs.melt(id_vars=["step", "arm"], value_vars=terms, var_name="term").dropna()


def diagnostics_long(logs: pd.DataFrame, seed: int) -> pd.DataFrame:
    """:func:`train_one_seed`' logs as one row per (arm, step, diagnostic) with its ``value``
    and ``train_seed = seed``: the :data:`DIAGNOSTICS` an arm logged (NaN ones, which the arm
    does not have, are dropped)."""
    names = [d for d in DIAGNOSTICS if d in logs]
    out = logs.melt(id_vars=["step", "arm"], value_vars=names, var_name="diagnostic").dropna()
    out.insert(1, "train_seed", seed)
    return out[["arm", "train_seed", "step", "diagnostic", "value"]].reset_index(drop=True)


def last_logged(diagnostics: pd.DataFrame, last: int = 3) -> pd.DataFrame:
    """The rows of each model's (arm, train_seed, diagnostic) ``last`` logged steps, from the
    long table of :func:`diagnostics_long`: what "at the end of training" means for every
    diagnostic the book reports."""
    order = diagnostics.groupby(["arm", "train_seed", "diagnostic"])["step"]
    return diagnostics[order.rank(method="first", ascending=False) <= last]


def lambda_target_summary(logs: pd.DataFrame) -> pd.DataFrame:
    """ΛReg's learned target spectrum over training, per arm that has one.

    For each logged row with ``lambda_v`` (``v = D softmax(clip(α, ±½ log κ))``, Σ v = D):
    ``largest v = max_i v_i``, ``smallest v = min_i v_i`` (their ratio ≤ κ) and ``share of
    v > 1 = #{i : v_i > 1} / D``, the fraction of coordinates given more than the isotropic
    variance 1. Rows are arm by arm (sorted by name), in step order; no ΛReg arm gives an
    empty table with the same columns.
    """
    cols = ["arm", "step", "largest v", "smallest v", "share of v > 1"]
    if "lambda_v" not in logs or not logs["lambda_v"].notna().any():
        return pd.DataFrame(columns=cols)
    parts = []
    for m, g in logs.dropna(subset=["lambda_v"]).groupby("arm"):
        v = np.stack(g["lambda_v"].to_numpy()).astype(np.float64)
        parts.append(
            pd.DataFrame(
                {
                    "arm": m,
                    "step": g["step"].to_numpy(),
                    "largest v": v.max(1),
                    "smallest v": v.min(1),
                    "share of v > 1": (v > 1).sum(1) / v.shape[1],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)[cols]


def measure_one_seed(
    task: str,
    arms: Sequence[str],
    seed: int,
    profile: Profile,
    measure: Callable[[WorldModel], float],
    name: str | None = None,
) -> pd.Series:
    """``measure(model)`` of each arm's trained model (trained first if missing), by arm.

    The measure (a probe, a planning score) is passed in because those live in the layers
    above the world model; this function only pairs each arm with its cached model, so every
    arm is measured on the same task, seed and profile.
    """
    return pd.Series(
        {m: measure(load_world_model(task, m, seed, profile)) for m in arms}, name=name
    )


def model_untrained(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None = None
) -> bool:
    """Whether :func:`train_world_model` with these arguments still has to train: the
    ``pending`` test of a pool of training jobs (trained models load without a pool)."""
    return not world_model_artifact(task, arm, seed, profile, weights).exists()
