"""The offline DINOv2 stand-in: DINO's loss, the teacher's EMA and momentum schedule against
closed forms, crops that are deterministic and preserve a constant image, a tiny
self-distillation that is bit-identical when repeated, and the cached encoder reading back
through the DINOv2 loader."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from jepa_geometry.profiles import load_profile
from jepa_geometry.wm import selfdistill as sd
from jepa_geometry.wm.dino import DinoConfig

TINY = DinoConfig(patch_size=8, embed_dim=16, depth=1, heads=2, pretrain_size=16, image_size=16)
FAST = sd.DistillSettings(
    steps=4, batch_size=4, warmup_steps=1, prototypes=8, head_hidden=16, bottleneck=8
)


def test_dino_loss_is_the_cross_entropy_across_views():
    g = torch.Generator().manual_seed(0)
    s, t, c = torch.randn(2, 3, 5, generator=g), torch.randn(2, 3, 5, generator=g), torch.randn(5)
    got = sd.dino_loss(s, t, c, student_temp=0.1, teacher_temp=0.04)
    sn, tn, cn = s.numpy().astype(float), t.numpy().astype(float), c.numpy().astype(float)

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    pt = softmax((tn - cn) / 0.04)
    lps = np.log(softmax(sn / 0.1))
    expect = 0.5 * (-(pt[1] * lps[0]).sum(-1).mean() - (pt[0] * lps[1]).sum(-1).mean())
    assert float(got) == pytest.approx(expect, rel=1e-5)


def test_teacher_is_an_ema_of_the_student_with_momentum_rising_to_one():
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    before = [p.detach().clone() for p in a.parameters()]
    sd.ema_(a, b, 0.9)
    for new, old, s in zip(a.parameters(), before, b.parameters(), strict=True):
        torch.testing.assert_close(new, 0.9 * old + 0.1 * s)
    assert sd.teacher_momentum(0, 100, 0.996) == pytest.approx(0.996)
    assert sd.teacher_momentum(100, 100, 0.996) == pytest.approx(1.0)
    assert sd.teacher_momentum(50, 100, 0.996) == pytest.approx(0.998)


def test_crops_are_seeded_and_keep_a_constant_image_constant():
    x = torch.rand(6, 3, 32, 32)
    one = sd.random_crops(x, 16, (0.4, 1.0), torch.Generator().manual_seed(3))
    two = sd.random_crops(x, 16, (0.4, 1.0), torch.Generator().manual_seed(3))
    assert one.shape == (6, 3, 16, 16) and torch.equal(one, two)
    flat = torch.full((2, 3, 32, 32), 0.25)
    out = sd.random_crops(flat, 16, (0.4, 1.0), torch.Generator().manual_seed(0))
    torch.testing.assert_close(out, torch.full_like(out, 0.25))


def test_a_tiny_distillation_is_deterministic_and_frozen():
    frames = np.random.default_rng(0).integers(0, 256, (20, 24, 24, 3), dtype=np.uint8)
    enc1, log1 = sd.distill(frames, TINY, FAST, seed=1, progress=False)
    enc2, log2 = sd.distill(frames, TINY, FAST, seed=1, progress=False)
    s1, s2 = enc1.state_dict(), enc2.state_dict()
    assert all(torch.equal(s1[k], s2[k]) for k in s1) and log1 == log2
    assert np.isfinite([r["loss"] for r in log1]).all()
    assert not any(p.requires_grad for p in enc1.parameters())
    assert enc1(torch.zeros(2, 3, 24, 24, dtype=torch.uint8)).shape == (2, 4, 16)


def test_the_cached_standin_reads_back_through_the_dinov2_loader(monkeypatch):
    monkeypatch.setattr(sd, "FRAMES_PER_TASK", 6)
    monkeypatch.setattr(sd, "STANDIN_VIT", TINY)
    smoke = load_profile("smoke")
    art = sd.train_standin(smoke, FAST, progress=False)
    assert art.manifest()["summary"]["frames"] == 5 * 6  # six frames from each of five tasks
    enc = sd.load_standin(smoke, FAST)
    assert enc(torch.zeros(1, 3, 16, 16, dtype=torch.uint8)).shape == (1, 4, 16)
