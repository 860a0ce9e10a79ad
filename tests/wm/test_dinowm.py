"""DINO-WM's patch-token world model: the block-causal mask in closed form, causality and
within-frame attention checked by perturbation, the frozen encoder, rollout as repeated
prediction, the paper-size predictor's parameter count, and the planners' cost."""

from __future__ import annotations

import torch

from jepa_geometry.wm.dino import DINOV2_VITS14, DinoConfig, DinoViT
from jepa_geometry.wm.dinowm import (
    PatchPredictorConfig,
    PatchWorldModel,
    block_causal_mask,
    frame_tokens,
    pool_tokens,
)

TINY_VIT = DinoConfig(patch_size=8, embed_dim=32, depth=1, heads=2, pretrain_size=32, image_size=32)


def tiny_model(seed: int = 0) -> PatchWorldModel:
    torch.manual_seed(seed)
    cfg = PatchPredictorConfig(
        patches=TINY_VIT.patches,
        features=32,
        action_block_dim=4,
        depth=2,
        heads=2,
        dim_head=8,
        mlp=64,
    )
    return PatchWorldModel(DinoViT(TINY_VIT), cfg, image_size=32, token_grid=4).eval()


def test_block_causal_mask_equals_its_closed_form():
    m = block_causal_mask(frames=3, patches=2).int()
    expect = torch.tensor(
        [
            [1, 1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [1, 1, 1, 1, 0, 0],
            [1, 1, 1, 1, 0, 0],
            [1, 1, 1, 1, 1, 1],
            [1, 1, 1, 1, 1, 1],
        ]
    )
    assert torch.equal(m, expect)


def test_a_frame_sees_its_own_patches_and_the_past_never_the_future():
    model = tiny_model()
    d = model.embed_dim
    z = torch.randn(2, 3, d)
    a = torch.randn(2, 3, 4)
    with torch.no_grad():
        base = model.predict(z, a)
        later = z.clone()
        later[:, 2] += 1.0  # change the last frame only
        out = model.predict(later, a)
        assert torch.allclose(out[:, :2], base[:, :2], atol=1e-6)  # earlier outputs unchanged
        assert not torch.allclose(out[:, 2], base[:, 2])
        one_patch = z.clone()
        one_patch[:, 0, :32] += 1.0  # patch 0 of frame 0
        out = model.predict(one_patch, a)
        f = model.cfg.features
        assert not torch.allclose(out[:, 0, f : 2 * f], base[:, 0, f : 2 * f])  # patch 1 sees it


def test_the_encoder_is_frozen_and_only_the_predictor_learns():
    model = tiny_model().train()
    assert not model.encoder.training
    frames = torch.randint(0, 256, (2, 4, 3, 32, 32), dtype=torch.uint8)
    z = model.encode(frames)
    assert z.shape == (2, 4, model.embed_dim) and not z.requires_grad
    loss = (model.predict(z[:, :3], torch.randn(2, 3, 4)) - z[:, 1:]).pow(2).mean()
    loss.backward()
    assert all(p.grad is None for p in model.encoder.parameters())
    assert all(p.grad is not None for p in model.predictor.parameters())
    assert model.num_parameters(trainable=True) < model.num_parameters()


def test_rollout_is_repeated_one_step_prediction():
    model = tiny_model(1)
    z0 = torch.randn(3, 1, model.embed_dim)
    blocks = torch.randn(3, 4, 4)
    with torch.no_grad():
        got = model.rollout(z0, blocks)
        zs = z0
        for k in range(4):
            lo = max(0, zs.shape[1] - model.history)
            nxt = model.predict(zs[:, lo:], blocks[:, lo : k + 1])[:, -1:]
            zs = torch.cat([zs, nxt], dim=1)
    torch.testing.assert_close(got, zs[:, 1:])


def test_paper_size_predictor_has_the_counted_parameters_and_98304_dimensions():
    cfg = PatchPredictorConfig(patches=256, features=384, action_block_dim=10)  # DINO-WM's
    model = PatchWorldModel(DinoViT(DINOV2_VITS14), cfg, image_size=224, token_grid=16)
    w, inner = 384 + 10, 16 * 64
    block = 2 * w + w * 3 * inner + inner * w + w + 2 * w + w * 2048 + 2048 + 2048 * w + w
    expect = 6 * block + 3 * 256 * w + 2 * w + (10 * 10 + 10)
    assert model.num_parameters(trainable=True) == expect
    assert model.embed_dim == 98_304  # SCALE: "a mean over 98,304 dimensions"


def test_pooled_tokens_are_block_means_of_the_patch_grid():
    # a 4 x 4 grid whose token (r, c) holds the number 4r + c in every feature
    grid = torch.arange(16.0).reshape(1, 16, 1).expand(2, 16, 3)
    pooled = pool_tokens(grid, 2)
    # blocks (0, 0): 0, 1, 4, 5; (0, 1): 2, 3, 6, 7; (1, 0): 8, 9, 12, 13; (1, 1): 10, 11, 14, 15
    expect = torch.tensor([2.5, 4.5, 10.5, 12.5]).reshape(1, 4, 1).expand(2, 4, 3)
    assert torch.equal(pooled, expect)
    assert pool_tokens(grid, 4) is grid


def test_a_pooled_model_encodes_the_mean_of_its_encoders_patches():
    torch.manual_seed(0)
    cfg = PatchPredictorConfig(
        patches=4, features=32, action_block_dim=4, depth=1, heads=2, dim_head=8, mlp=16
    )
    enc = DinoViT(TINY_VIT)
    model = PatchWorldModel(enc, cfg, image_size=32, token_grid=2)
    px = torch.randint(0, 256, (3, 3, 32, 32), dtype=torch.uint8)
    with torch.no_grad():
        full = enc(px).reshape(3, 4, 4, 32)  # (N, row, col, F) of the 4 x 4 patch grid
    expect = full.reshape(3, 2, 2, 2, 2, 32).mean(dim=(2, 4)).reshape(3, 4 * 32)
    torch.testing.assert_close(model.encode(px), expect)
    try:
        PatchWorldModel(enc, cfg, image_size=32, token_grid=3)
    except ValueError as e:
        assert "token_grid 3" in str(e)
    else:
        raise AssertionError("a token grid that does not divide 4 was accepted")


def test_frame_tokens_are_the_encoding_of_the_chosen_rows():
    model = tiny_model()
    pixels = torch.randint(0, 256, (10, 32, 32, 3), dtype=torch.uint8).numpy()
    rows = torch.tensor([7, 2, 5]).numpy()
    table = frame_tokens(model, pixels, rows, chunk=2, progress=False)
    direct = model.encode(torch.from_numpy(pixels[rows]).permute(0, 3, 1, 2).contiguous())
    torch.testing.assert_close(table, direct)
