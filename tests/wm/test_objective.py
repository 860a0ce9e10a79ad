"""An arm's objective (jepa_geometry.wm.objective): the loss as the weighted sum of its terms
computed independently, bf16 autocast of the model only, and the embedding diagnostics against
closed forms."""

import pytest
import torch

from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.losses import sample_pairs, scale_loss, sigreg
from jepa_geometry.wm.objective import embedding_diagnostics
from tests.wm.test_training import Q_DIM, make_run


@pytest.mark.parametrize("arm", ["lewm", "scale", "aux", "anisowm", "scale+aux+anisowm"])
def test_loss_is_the_weighted_sum_of_independently_computed_terms(arm):
    prof, model, obj, src = make_run(arm)
    if obj.lambda_reg is not None:
        obj.lambda_reg.alpha.data = torch.linspace(-1, 1, model.embed_dim)  # anisotropic v
    batch = next(src(0))
    gen = torch.Generator().manual_seed(5)
    model.train()
    terms = obj(model, batch, gen)

    gen2 = torch.Generator().manual_seed(5)  # replay the same directions and pairs
    z = model.encode(batch["pixels"])
    z_hat = model.predict(z[:, :3], batch["actions"][:, :3])
    pred = F_mse = ((z_hat - z[:, 1:]) ** 2).sum() / z_hat.numel()
    w = obj.weights
    zt = z.transpose(0, 1)
    if "anisowm" in arm:
        v = obj.lambda_reg.variances
        reg = sigreg(zt / v.sqrt(), prof.train.sigreg_projections, generator=gen2)
        assert terms["lambda_reg"].item() == pytest.approx(reg.item(), rel=1e-5)
        assert "sigreg" not in terms  # ΛReg replaces SIGReg
    else:
        reg = sigreg(zt, prof.train.sigreg_projections, generator=gen2)
        assert terms["sigreg"].item() == pytest.approx(reg.item(), rel=1e-5)
    expected = pred + w.sigreg * reg
    assert terms["pred"].item() == pytest.approx(F_mse.item(), rel=1e-5)
    if "scale" in arm:
        i, j = sample_pairs(batch["episode"], 4, prof.train.pairs_per_batch, gen2)
        zf, qf = z.reshape(-1, z.shape[-1]), batch["q"].reshape(-1, Q_DIM)
        x, y = ((zf[i] - zf[j]) ** 2).sum(-1), ((qf[i] - qf[j]) ** 2).sum(-1)
        r = torch.corrcoef(torch.stack([x, y]))[0, 1]
        assert terms["scale"].item() == pytest.approx(1 - r.item(), abs=1e-4)
        expected = expected + w.scale * scale_loss(zf[i], zf[j], qf[i], qf[j])
    if "aux" in arm:
        aux = ((obj.aux_head(z) - batch["q"]) ** 2).mean()
        assert terms["aux"].item() == pytest.approx(aux.item(), rel=1e-5)
        expected = expected + w.aux * aux
    assert terms["loss"].item() == pytest.approx(expected.item(), rel=1e-5)


def test_bf16_precision_autocasts_the_model_but_not_the_loss_terms():
    prof, model, obj, src = make_run("scale+aux+anisowm")
    batch = next(src(0))
    model.train()
    fp32 = obj(model, batch, torch.Generator().manual_seed(5), "fp32")
    z32 = obj.last_embeddings[0]
    bf16 = obj(model, batch, torch.Generator().manual_seed(5), "bf16")
    z16 = obj.last_embeddings[0]
    assert z16.dtype == torch.float32 and all(t.dtype == torch.float32 for t in bf16.values())
    assert not torch.equal(z16, z32)  # the model really ran in bf16 ...
    assert torch.allclose(z16, z32, atol=0.1)  # ... at bf16's precision (8 mantissa bits)
    for k in fp32:
        assert bf16[k].item() == pytest.approx(fp32[k].item(), rel=0.05, abs=1e-3), k
    bf16["loss"].backward()
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in model.parameters())


def test_embedding_diagnostics_against_closed_forms():
    g = torch.Generator().manual_seed(0)
    d = 16
    scales = torch.ones(d)
    scales[:2] = 3.0  # two coordinates with 9x the variance
    z = torch.randn(4000, 2, d, generator=g) * scales
    iso = embedding_diagnostics(torch.randn(4000, 2, d, generator=g), torch.zeros(4000, 1, d))
    # population shares: isotropic k/D; here (9+9)/(18+14) for the top 2
    assert iso["top2_share"] == pytest.approx(2 / d, rel=0.15)
    assert iso["top8_share"] == pytest.approx(8 / d, rel=0.05)
    assert set(iso) == {"top2_share", "top8_share"}  # no ΛReg entries without v
    aniso = embedding_diagnostics(z, z[:, 1:] + 0.1 * torch.randn(4000, 1, d, generator=g), None)
    assert aniso["top2_share"] == pytest.approx(18 / 32, rel=0.05)
    # v proportional to Var z: corr +1; relative error 0.01 / Var z: corr(v, rel err) < 0
    v = scales**2 * d / (scales**2).sum()
    z_hat = z[:, 1:] + 0.1 * torch.randn(4000, 1, d, generator=g)
    diag = embedding_diagnostics(z, z_hat, v)
    assert diag["cond_lambda"] == pytest.approx(9.0)
    assert diag["corr_v_var_z"] == pytest.approx(1.0, abs=0.01)
    assert diag["corr_v_rel_err"] < -0.9


def test_isotropic_top_share_is_k_over_d_for_many_frames_and_more_for_a_batch():
    from jepa_geometry.wm.objective import batch_isotropic_share, isotropic_top_share

    # many frames: k/D, up to the Marchenko-Pastur edge (1 + sqrt(D/n))² of the top eigenvalues
    many = isotropic_top_share(8, 20000, 16, draws=5)
    assert 8 / 16 < many < 8 / 16 * (1 + (16 / 20000) ** 0.5) ** 2
    batch = isotropic_top_share(8, 256, 64, draws=50)
    # Marchenko-Pastur: at D/n = 1/4 the top eigenvalues are inflated up to (1 + 1/2)² = 2.25x
    assert 8 / 64 * 1.5 < batch < 8 / 64 * 2.25
    assert isotropic_top_share(64, 256, 64, draws=3) == pytest.approx(1.0)
    laptop = load_profile("laptop")  # one training batch: 64 clips x 4 frames in D = 64
    assert batch_isotropic_share(laptop, 8) == isotropic_top_share(8, 256, 64)


def test_wide_embedding_diagnostics_use_the_gram_matrix():
    """Zc^T Zc and Zc Zc^T share their non-zero eigenvalues: the top shares of a 40 x 300
    embedding equal those computed from the full 300 x 300 covariance."""
    z = torch.randn(10, 4, 300, generator=torch.Generator().manual_seed(0))
    got = embedding_diagnostics(z, z[:, 1:])
    zf = z.reshape(-1, 300).double()
    zf = zf - zf.mean(0)
    eig = torch.linalg.eigvalsh(zf.T @ zf).flip(0).clamp_min(0)
    for k in (2, 8):
        assert got[f"top{k}_share"] == pytest.approx(float(eig[:k].sum() / eig.sum()), rel=1e-9)
