"""The DINO-WM arm wired into the library: its name and weights, its key (the encoder's
identity), training that leaves the frozen encoder untouched and reads its frames' tokens from
a table encoded once, a saved model that reloads and
predicts the same, planning through the shared protocol, its own MPPI temperature, the
wide-embedding diagnostics, and the one-line stop when the DINOv2 file is missing."""

from __future__ import annotations

import pytest
import torch

from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.planning.evaluator import evaluate_arm
from jepa_geometry.profiles import load_profile, with_overrides
from jepa_geometry.study.cells import arm_temperature
from jepa_geometry.wm import dinowm, selfdistill
from jepa_geometry.wm.dino import DinoWeightsError
from jepa_geometry.wm.training import (
    clip_batches,
    frozen_token_table,
    load_world_model,
    train_world_model,
    world_model_artifact,
)

SMOKE = load_profile("smoke")


def test_a_dinowm_model_trains_around_a_frozen_encoder_reloads_and_plans():
    art = train_world_model("tworoom", "dinowm", 0, SMOKE, progress=False)
    spec = art.spec["dinowm"]
    assert (
        spec["standin"] == selfdistill.standin_artifact(SMOKE, dinowm.standin_settings(SMOKE)).key
    )
    model = load_world_model("tworoom", "dinowm", 0, SMOKE)
    assert isinstance(model, dinowm.PatchWorldModel)
    assert model.embed_dim == dinowm.latent_dim(SMOKE) == SMOKE.dinowm.token_grid**2 * 96
    frozen = dinowm.patch_encoder(SMOKE).state_dict()
    after = model.encoder.state_dict()
    assert all(torch.equal(frozen[k], after[k]) for k in frozen)  # training never moved it
    again = load_world_model("tworoom", "dinowm", 0, SMOKE)
    z = torch.randn(2, 2, model.embed_dim)
    a = torch.randn(2, 2, model.action_block_dim)
    with torch.no_grad():
        torch.testing.assert_close(model.predict(z, a), again.predict(z, a))
    # the tokens training read from its table are the encoding of the batch's own frames
    ds = load_dataset("tworoom", SMOKE)
    batch = next(clip_batches(ds, SMOKE, 0, tokens=frozen_token_table(model, ds, False))(3))
    torch.testing.assert_close(batch["z"], model.encode(batch["pixels"]))
    res = evaluate_arm("tworoom", "dinowm", 0, SMOKE, solver="cem", tier="T1", progress=False)
    assert len(res.episodes) == SMOKE.eval.episodes and res.episodes["plans"].min() >= 1


def test_dinowm_keeps_its_own_mppi_temperature():
    assert arm_temperature("lewm", 3.0, SMOKE) == 3.0
    assert arm_temperature("dinowm", None, SMOKE) is None  # CEM and iCEM have none
    assert arm_temperature("dinowm", 3.0, SMOKE) == 0.5 * dinowm.latent_dim(SMOKE)
    paper = load_profile("paper")
    assert dinowm.latent_dim(paper) == 256 * 384  # SCALE: a mean over 98,304 dimensions


def test_the_paper_arm_stops_in_one_line_without_the_dinov2_file(tmp_path):
    paper = load_profile("paper")
    with pytest.raises(DinoWeightsError, match="weights not found at None.*dl.fbaipublicfiles"):
        world_model_artifact("tworoom", "dinowm", 0, paper)
    missing = with_overrides(paper, {"dinowm.dinov2_weights": str(tmp_path / "w.pth")})
    with pytest.raises(DinoWeightsError, match="w.pth"):
        world_model_artifact("tworoom", "dinowm", 0, missing)
