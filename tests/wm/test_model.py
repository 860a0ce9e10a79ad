"""The LeWM architecture: parameter counts against a hand count, causality,
AdaLN-zero identity at init, rollout windowing, and input validation."""

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.model import WorldModel, WorldModelConfig, build_world_model, encode_frames


def small_config(**kw) -> WorldModelConfig:
    cfg = WorldModelConfig.from_profile(load_profile("smoke"), action_dim=2)
    return dataclasses.replace(cfg, **kw)


def test_paper_model_has_lewm_parameter_count():
    """Counted by hand from the architecture (matches the released weights; see the book's
    *Reconstructions* page, section rec-paper-profile)."""
    model = build_world_model(load_profile("paper"), action_dim=2)
    parts = model.parameter_counts()
    # ViT-tiny/14@224: patch conv 3*14*14*192+192, CLS 192, positions 257*192,
    # 12 layers of (2 LN + qkv + out + MLP 192-768-192), final LN.
    layer = 2 * 384 + (192 * 576 + 576) + (192 * 192 + 192) + (192 * 768 + 768 + 768 * 192 + 192)
    assert parts["encoder"] == (3 * 14 * 14 * 192 + 192) + 192 + 257 * 192 + 12 * layer + 384
    bn_mlp = (192 * 2048 + 2048) + 2 * 2048 + (2048 * 192 + 192)
    assert parts["projector"] == parts["pred_proj"] == bn_mlp == 792_768
    assert parts["action_encoder"] == (10 * 10 + 10) + (10 * 768 + 768) + (768 * 192 + 192)
    block = (384 + 192 * 3072 + 1024 * 192 + 192) + (384 + 2 * 192 * 2048 + 2048 + 192)
    block += 192 * 1152 + 1152  # adaLN modulation
    assert parts["predictor"] == 6 * block + 3 * 192 + 384 == 10_791_360
    assert model.num_parameters() == 18_034_478
    cube = build_world_model(load_profile("paper"), action_dim=5)  # 25-d action blocks
    assert cube.num_parameters() == 18_034_628


def test_laptop_model_is_the_small_feasibility_model():
    model = build_world_model(load_profile("laptop"), action_dim=2)
    assert 0.40e6 < model.num_parameters() < 0.48e6  # book: rec-laptop-model
    assert model.embed_dim == 64 and model.history == 3 and model.action_block_dim == 10


def test_predictor_is_causal():
    torch.manual_seed(0)
    model = WorldModel(small_config(predictor_depth=2)).eval()
    # Break the AdaLN-zero identity so attention actually mixes tokens.
    for p in model.predictor.parameters():
        p.data.normal_(0, 0.2)
    z, a = torch.randn(3, 3, model.embed_dim), torch.randn(3, 3, model.action_block_dim)
    out = model.predict(z, a)
    z2, a2 = z.clone(), a.clone()
    z2[:, 2] += torch.randn(3, model.embed_dim)  # not a constant shift: LayerNorm removes those
    a2[:, 2] -= 3.0
    out2 = model.predict(z2, a2)
    torch.testing.assert_close(out[:, :2], out2[:, :2])
    assert not torch.allclose(out[:, 2], out2[:, 2])
    z3 = z.clone()
    z3[:, 0] += torch.randn(3, model.embed_dim)
    assert not torch.allclose(model.predict(z3, a)[:, 1:], out[:, 1:])  # the past is seen


def test_adaln_zero_blocks_start_as_identity():
    """At init every block is the identity: predictor(z) = LN(z + pos), independently of actions."""
    model = WorldModel(small_config(predictor_depth=3)).eval()
    z = torch.randn(4, 3, model.embed_dim)
    a = torch.randn(4, 3, model.action_block_dim)
    pred = model.predictor
    expected = F.layer_norm(z + pred.pos, (z.shape[-1],), pred.norm.weight, pred.norm.bias)
    torch.testing.assert_close(pred(z, model.embed_actions(a)), expected)
    # ... and the zero-initialised modulation still receives gradients.
    model.train()
    model.predict(z, a).pow(2).sum().backward()
    grad = model.predictor.blocks[0].modulation[1].weight.grad
    assert grad is not None and grad.abs().sum() > 0


def test_rollout_matches_step_by_step_predictions():
    """Autoregressive rollout = predict() on the last <= history frames, one block at a time."""
    torch.manual_seed(1)
    model = WorldModel(small_config(predictor_depth=2)).eval()
    for p in model.predictor.parameters():
        p.data.normal_(0, 0.1)
    b, d, ab = 2, model.embed_dim, model.action_block_dim
    z0, blocks = torch.randn(b, 1, d), torch.randn(b, 5, ab)
    seq, acts = [z0[:, 0]], []
    for k in range(5):
        acts.append(blocks[:, k])
        zs, As = torch.stack(seq[-3:], 1), torch.stack(acts[-3:], 1)
        seq.append(model.predict(zs, As)[:, -1])
    with torch.no_grad():
        torch.testing.assert_close(model.rollout(z0, blocks), torch.stack(seq[1:], 1))
        # A 2-frame context needs the block executed between the two frames.
        zc, past = torch.randn(b, 2, d), torch.randn(b, 1, ab)
        first = model.predict(zc, torch.cat([past, blocks[:, :1]], 1))[:, -1]
        torch.testing.assert_close(model.rollout(zc, blocks, past)[:, 0], first)
        with pytest.raises(ValueError, match="context_actions"):
            model.rollout(zc, blocks)


def test_encoding_agrees_across_input_layouts_and_refuses_bad_shapes():
    model = WorldModel(small_config()).eval()
    s = model.cfg.image_size
    px = torch.randint(0, 256, (2, 4, 3, s, s), dtype=torch.uint8)
    z = model.encode(px)
    assert z.shape == (2, 4, model.embed_dim)
    torch.testing.assert_close(model.encode(px.reshape(8, 3, s, s)), z.reshape(8, -1))
    torch.testing.assert_close(model.encode(px.float() / 255), z)  # float input in [0, 1]
    hwc = px.reshape(8, 3, s, s).permute(0, 2, 3, 1).numpy()
    torch.testing.assert_close(encode_frames(model, hwc, batch_size=3), z.reshape(8, -1))
    with pytest.raises(ValueError, match=rf"\(\.\.\., 3, {s}, {s}\)"):
        model.encode(torch.zeros(2, 3, s + 1, s, dtype=torch.uint8))
    with pytest.raises(ValueError, match="action blocks must be"):
        model.predict(z[:, :3], torch.zeros(2, 3, 7))
    with pytest.raises(ValueError, match="T <= 3"):
        model.predict(z, torch.zeros(2, 4, model.action_block_dim))


def test_config_validation_names_valid_choices():
    with pytest.raises(ValueError, match=r"unknown encoder 'resnet'; valid: cnn, vit"):
        small_config(encoder="resnet")
    with pytest.raises(ValueError, match="multiple of 2"):
        small_config(image_size=36, encoder_widths=(8, 16, 32))
    with pytest.raises(ValueError, match="patch_size"):
        small_config(encoder="vit", image_size=30, patch_size=8)
    with pytest.raises(ValueError, match="predictor_dropout"):
        small_config(predictor_dropout=1.5)


def test_small_vit_encoder_builds_and_encodes():
    cfg = small_config(encoder="vit", image_size=32, patch_size=8, vit_width=32, vit_heads=2)
    model = WorldModel(cfg).eval()
    assert model.encode(torch.zeros(3, 3, 32, 32, dtype=torch.uint8)).shape == (3, cfg.embed_dim)


def test_parameter_table_parts_sum_to_every_parameter():
    """The total row against an independent count over ``parameters()``, per model."""
    from jepa_geometry.book.tables.models import parameter_table

    a = WorldModel(small_config())
    b = WorldModel(small_config(embed_dim=16, projector_hidden=24))
    table = parameter_table({"a": a, "b": b})
    parts = ["encoder", "projector", "action_encoder", "predictor", "pred_proj", "total"]
    assert list(table.index) == parts and list(table.columns) == ["a", "b"]
    for name, m in (("a", a), ("b", b)):
        assert table.loc["total", name] == sum(p.numel() for p in m.parameters())
    # the projector is Linear(e, h) -> BatchNorm(h) -> Linear(h, D) with D = 16, h = 24
    e = b.encoder.out_dim
    assert table.loc["projector", "b"] == (e * 24 + 24) + 2 * 24 + (24 * 16 + 16)
