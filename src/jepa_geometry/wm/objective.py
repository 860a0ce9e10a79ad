"""The objective of an arm (LeWM, SCALE, AnisoWM, Aux or a sum of them) and what it logs.

A training step on a batch of B clips of T = history + 1 frames (ClipSampler's format):

    z      = encode(pixels)                                  (B, T, D), all frames
    ẑ      = predict(z[:, :-1], actions[:, :-1])             teacher-forced, causal
    L      = mean((ẑ - z[:, 1:])^2)                          no stop-gradient (LeWM)
           + λ_sig · SIGReg(zᵀ)        or  λ_sig · ΛReg(zᵀ)   (anisowm replaces SIGReg)
           + λ · (1 - Pearson(||z_i - z_j||², ||q_i - q_j||²))   over K sampled pairs (scale)
           + w · mean((AuxHead(z) - q)²)                                               (aux)
           + term(z, ẑ, q, step)                          a file of the reader's (lewm+mine.py)

The loss terms themselves are in :mod:`jepa_geometry.wm.losses`; this module combines them per
arm, checks a batch's format, and measures the embedding every logged step
(:func:`embedding_diagnostics`).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import torch
from torch import nn

from jepa_geometry.profiles import Profile
from jepa_geometry.wm.arms import DINOWM, ObjectiveWeights, arm_label, objective_file, parse_arm
from jepa_geometry.wm.losses import AuxHead, LambdaReg, sample_pairs, scale_loss, sigreg
from jepa_geometry.wm.model import WorldModel
from jepa_geometry.wm.user_objective import call_term, load_term

USER_TERM = "objective"
"""The logged name of the reader's own term; its diagnostics are ``objective.<name>``."""

Batch = dict[str, torch.Tensor]


class Objective(nn.Module):
    """The loss terms of an arm, with the training-only modules they own.

    Holds ΛReg's α (anisowm) and the Aux head (aux); both are trained with the model and
    neither is part of the world model used for planning. An arm with an objective file loads
    it here (:func:`~jepa_geometry.wm.user_objective.load_term`), so a bad file stops before
    the first step.
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
        self.arm = arm_label(arm)  # a resume file's fingerprint names no file's path
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
        path = objective_file(arm)
        self.user_term = None if path is None else load_term(path)

    def forward(
        self,
        model: WorldModel,
        batch: Batch,
        generator: torch.Generator,
        precision: str = "fp32",
        step: int = 0,
        check: bool = False,
    ) -> dict:
        """All loss terms of one batch; ``loss`` is their weighted sum.

        An objective file's term is added as it returns (``step`` is passed to it); with
        ``check`` its value and diagnostics must also be finite (the first step of a run).

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
        if self.user_term is not None:
            value, diagnostics = call_term(self.user_term, z, z_hat, batch["q"], step, check)
            terms[USER_TERM] = value
            terms.update({f"{USER_TERM}.{k}": v for k, v in diagnostics.items()})
            loss = loss + value
        terms["loss"] = loss
        return terms


DIAGNOSTICS: tuple[str, ...] = (
    "top2_share",
    "top8_share",
    "cond_lambda",
    "corr_v_var_z",
    "corr_v_rel_err",
)
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
      so the last correlation should be negative once Λ has been selected.
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


@lru_cache(maxsize=32)
def isotropic_top_share(k: int, frames: int, dim: int, draws: int = 200, seed: int = 0) -> float:
    """The top-``k`` variance share an exactly isotropic Gaussian embedding shows on one batch
    of ``frames`` frames in ``dim`` dimensions (Monte Carlo mean over ``draws`` batches).

    The population share is k / D, but a sample covariance of n frames spreads its eigenvalues
    (Marchenko-Pastur: the largest grows like (1 + sqrt(D/n))²), so a batch of 256 frames in
    D = 64 shows about 0.24 for k = 8, not 0.125. :func:`embedding_diagnostics` measures one
    training batch, so this, not k / D, is its isotropic reference. Kept per process (a pure
    function of its arguments: the cross-task page asked 20 times for two values, 9 s).
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


def derive_seed(seed: int, purpose: str) -> int:
    """An independent 63-bit seed for one use of the training seed (init, batches, losses)."""
    digest = hashlib.sha256(f"{seed}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1
