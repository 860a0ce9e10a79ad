"""Training compute in floating-point operations: the x-axis a reader can compare across scales.

One optimizer step of the LeWM objective is one forward and one backward pass of the world
model on the profile's batch of clips (``batch_size`` clips of ``history + 1`` frames): encode
every frame, predict each next embedding from the context, the prediction loss and SIGReg on
the embeddings. :func:`train_step_flops` counts the floating-point operations of that step with
PyTorch's own counter (``torch.utils.flop_counter``: 2 per multiply-add of every matmul and
convolution, forward and backward), on the ``meta`` device, so no number is computed and a
paper-sized step (ViT-tiny at 224 px, batch 128) is counted in a second on a CPU. The count is
the same for every arm to within its loss head (SCALE's pair term and Aux's head are a few
linear layers on the batch's embeddings), so one count per (profile, task) serves all arms;
the total compute of a run is ``steps x train_step_flops``. ``benchmarks/bench_limits.py``
counts the same step on real tensors (the tests compare the two).
"""

from __future__ import annotations

import torch
from torch.utils.flop_counter import FlopCounterMode

from jepa_geometry.profiles import Profile
from jepa_geometry.wm.losses import sigreg
from jepa_geometry.wm.model import build_world_model


def count_flops(fn, *args, **kwargs) -> int:
    """Floating-point operations of ``fn(*args, **kwargs)`` (forward and any backward it runs),
    by ``torch.utils.flop_counter.FlopCounterMode``."""
    with FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return int(counter.get_total_flops())


def lewm_step(model, pixels: torch.Tensor, actions: torch.Tensor, profile: Profile) -> None:
    """One forward and backward pass of the LeWM loss, ``||ẑ_{t+1} - z_{t+1}||² + λ SIGReg(Z)``,
    on a batch of clips (fp32: autocast changes the precision of an operation, not its count)."""
    z = model.encode(pixels)
    z_hat = model.predict(z[:, :-1], actions[:, :-1])
    directions = torch.randn(
        z.shape[-1], profile.train.sigreg_projections, device=z.device, dtype=z.dtype
    )
    loss = ((z_hat - z[:, 1:]) ** 2).mean() + profile.train.sigreg_weight * sigreg(
        z.transpose(0, 1), profile.train.sigreg_projections, directions=directions
    )
    loss.backward()


def train_step_flops(profile: Profile, action_dim: int, device: str = "meta") -> int:
    """Floating-point operations of one training step of ``profile``'s world model for a task
    with ``action_dim`` raw actions (see the module docstring); ``device="cpu"`` counts on
    real tensors instead (same count, slower)."""
    if isinstance(action_dim, bool) or not isinstance(action_dim, int) or action_dim < 1:
        raise ValueError(f"action_dim must be an integer >= 1, got {action_dim!r}")
    if device not in ("meta", "cpu"):
        raise ValueError(f"device must be 'meta' or 'cpu', got {device!r}")
    with torch.device(device):
        model = build_world_model(profile, action_dim, seed=0)
    model.train()
    b, t, size = profile.train.batch_size, profile.data.history + 1, profile.data.image_size
    pixels = torch.zeros((b, t, 3, size, size), dtype=torch.uint8, device=device)
    actions = torch.zeros((b, t, model.action_block_dim), device=device)
    return count_flops(lewm_step, model, pixels, actions, profile)


__all__ = ["count_flops", "lewm_step", "train_step_flops"]
