"""The DINOv2 ViT-S/14 encoder of the DINO-WM arm: the published state-dict layout (key names
and shapes written here from the architecture, not read from the module), a forward pass at
224 px giving 256 x 384 patch tokens, a closed-form check of the token path, and the one-line
errors of the loader."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from jepa_geometry.wm.dino import DINOV2_VITS14_URL, DinoConfig, DinoWeightsError, load_dinov2
from jepa_geometry.wm.model import IMAGENET_MEAN, IMAGENET_STD

D, HIDDEN, DEPTH = 384, 1536, 12


def published_layout() -> dict[str, tuple[int, ...]]:
    """dinov2_vits14's state dict: names and shapes (patch 14, pos_embed learned at 518 px)."""
    shapes = {
        "cls_token": (1, 1, D),
        "pos_embed": (1, 1 + 37 * 37, D),
        "mask_token": (1, D),
        "patch_embed.proj.weight": (D, 3, 14, 14),
        "patch_embed.proj.bias": (D,),
        "norm.weight": (D,),
        "norm.bias": (D,),
    }
    for i in range(DEPTH):
        b = f"blocks.{i}."
        shapes.update(
            {
                b + "norm1.weight": (D,),
                b + "norm1.bias": (D,),
                b + "attn.qkv.weight": (3 * D, D),
                b + "attn.qkv.bias": (3 * D,),
                b + "attn.proj.weight": (D, D),
                b + "attn.proj.bias": (D,),
                b + "ls1.gamma": (D,),
                b + "norm2.weight": (D,),
                b + "norm2.bias": (D,),
                b + "mlp.fc1.weight": (HIDDEN, D),
                b + "mlp.fc1.bias": (HIDDEN,),
                b + "mlp.fc2.weight": (D, HIDDEN),
                b + "mlp.fc2.bias": (D,),
                b + "ls2.gamma": (D,),
            }
        )
    return shapes


def random_state(seed: int = 0, scale: float = 0.02) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {k: scale * torch.randn(s, generator=g) for k, s in published_layout().items()}


def test_a_random_state_dict_of_the_published_layout_loads_and_gives_256_patch_tokens(tmp_path):
    path = tmp_path / "dinov2_vits14_pretrain.pth"
    state = random_state()
    torch.save(state, path)
    model = load_dinov2(path)
    n_params = sum(p.numel() for p in model.parameters())
    assert n_params == sum(t.numel() for t in state.values())  # 22,056,576: ViT-S/14 ("21M")
    assert not any(p.requires_grad for p in model.parameters()) and not model.training
    frames = torch.randint(0, 256, (2, 3, 224, 224), dtype=torch.uint8)
    with torch.no_grad():
        tokens = model(frames)
    assert tokens.shape == (2, 256, 384) and torch.isfinite(tokens).all()
    assert torch.equal(model.pos_embed, state["pos_embed"])  # loaded, not re-initialised


def test_with_identity_blocks_the_tokens_are_the_normalised_patch_projection(tmp_path):
    """LayerScale 0 makes every block the identity: the output must be LayerNorm(conv(x) +
    interpolated position), computed here with torch.nn.functional on the same inputs."""
    state = random_state(1)
    for i in range(DEPTH):
        state[f"blocks.{i}.ls1.gamma"].zero_()
        state[f"blocks.{i}.ls2.gamma"].zero_()
    state["pos_embed"][:, 1:] = state["pos_embed"][:, 1:2]  # a constant grid interpolates to itself
    torch.save(state, tmp_path / "w.pth")
    model = load_dinov2(tmp_path / "w.pth")
    frames = torch.randint(0, 256, (1, 3, 224, 224), dtype=torch.uint8)
    x = (frames.float() / 255 - torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)) / torch.tensor(
        IMAGENET_STD
    ).view(1, 3, 1, 1)
    patches = (
        F.conv2d(x, state["patch_embed.proj.weight"], state["patch_embed.proj.bias"], stride=14)
        .flatten(2)
        .transpose(1, 2)
    )
    expect = F.layer_norm(
        patches + state["pos_embed"][:, 1:2],
        (D,),
        state["norm.weight"],
        state["norm.bias"],
        eps=1e-6,
    )
    with torch.no_grad():
        got = model(frames)
    torch.testing.assert_close(got, expect, rtol=1e-4, atol=1e-4)


def test_the_loader_names_the_path_and_how_to_get_the_weights(tmp_path):
    missing = tmp_path / "nowhere.pth"
    with pytest.raises(DinoWeightsError, match=f"not found at '{missing}'.*{DINOV2_VITS14_URL}"):
        load_dinov2(missing)
    with pytest.raises(DinoWeightsError, match="not found at None"):
        load_dinov2(None)
    (tmp_path / "broken.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(DinoWeightsError, match="cannot read DINOv2 ViT-S/14 weights") as err:
        load_dinov2(tmp_path / "broken.pth")
    assert "\n" not in str(err.value)  # one line, whatever torch's own message holds
    state = random_state()
    del state["blocks.11.ls2.gamma"]
    torch.save(state, tmp_path / "short.pth")
    with pytest.raises(DinoWeightsError, match=r"missing \['blocks.11.ls2.gamma'\]"):
        load_dinov2(tmp_path / "short.pth")
    state = random_state()
    state["pos_embed"] = torch.zeros(1, 1 + 16 * 16, D)  # a ViT learned at 224 px, not DINOv2's
    torch.save(state, tmp_path / "other.pth")
    with pytest.raises(DinoWeightsError, match=r"shape of pos_embed \(1, 257, 384\)"):
        load_dinov2(tmp_path / "other.pth")


def test_a_non_dinov2_file_is_named_by_its_own_architecture_and_remedy(tmp_path):
    small = DinoConfig(
        patch_size=8, embed_dim=32, depth=1, heads=2, pretrain_size=32, image_size=32
    )
    (tmp_path / "broken.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(DinoWeightsError) as err:
        load_dinov2(tmp_path / "broken.pth", small, remedy="rebuild it")
    text = str(err.value)
    assert "cannot read ViT (patch 8, 32 features, depth 1) weights" in text
    assert text.endswith("; rebuild it") and "DINOv2" not in text and "\n" not in text
