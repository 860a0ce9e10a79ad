"""benchmarks/bench_batched.py's vmapped step for k models against the trainer's single-model
computation: the same losses, gradients, BatchNorm statistics and SIGReg directions per model,
clipping per model, and AdamW over the stacked parameters equal to one AdamW per model."""

import copy
import importlib.util
import sys

import pytest
import torch

from jepa_geometry.profiles import with_overrides
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.objective import Objective, derive_seed
from tests.conftest import REPO
from tests.wm.test_training import tiny_profile

K = 2
SEEDS = [0, 1]
# fp32: the vmapped step runs each convolution as one grouped convolution and each matmul as a
# batched matmul, which sum in another order than the single model's kernels
RTOL, ATOL = 1e-5, 1e-6


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_batched", REPO / "benchmarks" / "bench_batched.py"
    )
    sys.path.insert(0, str(REPO / "benchmarks"))  # it imports bench_limits
    try:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return mod


bb = _bench()


def tiny(**train):
    """The trainer tests' tiny profile without dropout (the vmapped step refuses it)."""
    return with_overrides(tiny_profile(**train), {"model.predictor_dropout": 0.0})


def trainer_grads(model, prof, seed, pixels, actions):
    """Loss, gradients and BatchNorm buffers of one model from the trainer's own ``lewm``
    Objective (its own generator, seeded as the trainer seeds it)."""
    w = arm_weights("lewm", "tworoom", prof.train.sigreg_weight)
    obj = Objective("lewm", w, model.embed_dim, 2, prof.train.sigreg_projections, 16, seed)
    gen = torch.Generator().manual_seed(derive_seed(seed, "objective"))
    model.train().zero_grad(set_to_none=True)
    loss = obj(model, {"pixels": pixels, "actions": actions}, gen)["loss"]
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    return loss.detach(), grads, dict(model.named_buffers())


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Within fp32 summation noise, relative to the tensor's scale."""
    return torch.allclose(a, b, rtol=RTOL, atol=ATOL + RTOL * float(b.abs().max()))


def test_vmapped_losses_gradients_and_statistics_are_the_single_models():
    prof = tiny()
    models = bb.models(prof, K)
    step = bb.BatchedLeWMStep([copy.deepcopy(m) for m in models], prof, SEEDS, "fp32")
    pixels, actions = bb.synthetic_batch(prof, K)
    losses = step.losses(pixels, actions, step.directions())
    losses.sum().backward()
    assert losses.shape == (K,)
    for m, (model, seed) in enumerate(zip(models, SEEDS, strict=True)):
        loss, grads, buffers = trainer_grads(model, prof, seed, pixels[m], actions[m])
        assert close(losses[m].detach(), loss), (m, float(losses[m].detach()), float(loss))
        for name, g in grads.items():
            assert close(step.params[f"model.{name}"].grad[m], g), (m, name)
        for name, b in buffers.items():  # BatchNorm running statistics, updated per model
            assert close(step.buffers[f"model.{name}"][m].double(), b.double()), (m, name)
    # the two models differ, so equal-to-own is not equal-to-any
    assert not torch.allclose(losses[0], losses[1])


def test_directions_are_each_models_own_draws():
    prof = tiny()
    step = bb.BatchedLeWMStep(bb.models(prof, K), prof, SEEDS, "fp32")
    singles = [
        bb.SingleLeWMStep(m, prof, s, "fp32")
        for s, m in zip(SEEDS, bb.models(prof, K), strict=True)
    ]
    for _ in range(2):  # successive steps draw successive directions of each generator
        dirs = step.directions()
        for m, single in enumerate(singles):
            assert torch.equal(dirs[m], single.directions())


def test_clipping_is_per_model_in_the_step():
    prof = tiny()
    models = bb.models(prof, K)
    pixels, actions = bb.synthetic_batch(prof, K)
    norms = []
    for m, (model, seed) in enumerate(zip(models, SEEDS, strict=True)):
        _, grads, _ = trainer_grads(copy.deepcopy(model), prof, seed, pixels[m], actions[m])
        norms.append(float(torch.stack([g.norm() for g in grads.values()]).norm()))
    clip = (norms[0] * norms[1]) ** 0.5  # the larger norm is clipped, the smaller is not
    prof = tiny(grad_clip=clip)
    step = bb.BatchedLeWMStep([copy.deepcopy(m) for m in models], prof, SEEDS, "fp32")
    step(pixels, actions)  # the gradients stay on the parameters after the step
    big = max(range(K), key=lambda m: norms[m])
    for m, (model, seed) in enumerate(zip(models, SEEDS, strict=True)):
        _, grads, _ = trainer_grads(model, prof, seed, pixels[m], actions[m])
        clipped = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        assert abs(float(clipped) - norms[m]) <= 1e-4 * norms[m]  # the norm before clipping
        after = torch.stack([step.params[f"model.{n}"].grad[m].norm() for n in grads]).norm()
        expect = clip if m == big else norms[m]
        assert abs(float(after) - expect) <= 1e-4 * expect, (m, float(after), expect)
        for name, p in model.named_parameters():
            assert close(step.params[f"model.{name}"].grad[m], p.grad), (m, name)


def test_clip_per_model_against_clip_grad_norm():
    g = torch.Generator().manual_seed(0)
    grads = [torch.randn(K, 5, 3, generator=g), torch.randn(K, 7, generator=g)]
    grads[0][1] *= 0.01
    grads[1][1] *= 0.01  # model 1's norm is far below 1, model 0's above
    singles = [[t[m].clone() for t in grads] for m in range(K)]
    norms = bb.clip_per_model_(grads, 1.0)
    for m in range(K):
        params = [torch.nn.Parameter(torch.zeros_like(t)) for t in singles[m]]
        for p, t in zip(params, singles[m], strict=True):
            p.grad = t
        expect = torch.nn.utils.clip_grad_norm_(params, 1.0)
        assert torch.allclose(norms[m], expect)
        for t, p in zip(grads, params, strict=True):
            assert torch.allclose(t[m], p.grad)
    assert norms[0] > 1 > norms[1]
    assert torch.allclose(torch.stack([t[0].norm() for t in grads]).norm(), torch.tensor(1.0))


def test_stacked_adamw_is_one_adamw_per_model():
    """Given the same gradients, AdamW over the stacked tensors and one AdamW per model move
    every weight to the same bits (the update is elementwise)."""
    prof = tiny()
    models = bb.models(prof, K)
    step = bb.BatchedLeWMStep([copy.deepcopy(m) for m in models], prof, SEEDS, "fp32")
    singles = [bb.SingleLeWMStep(m, prof, s, "fp32") for s, m in zip(SEEDS, models, strict=True)]
    g = torch.Generator().manual_seed(1)
    for _ in range(3):
        for name, p in step.params.items():
            p.grad = torch.randn(p.shape, generator=g)
            for m, single in enumerate(singles):
                dict(single.wrapped.named_parameters())[name].grad = p.grad[m].clone()
        step.opt.step()
        for single in singles:
            single.opt.step()
    for name, p in step.params.items():
        for m, single in enumerate(singles):
            assert torch.equal(p[m], dict(single.wrapped.named_parameters())[name]), (m, name)


def test_dropout_is_refused():
    prof = tiny()
    prof_drop = tiny_profile()  # the trainer tests' dropout, 0.1
    with pytest.raises(ValueError, match="predictor_dropout must be 0, got 0.1"):
        bb.BatchedLeWMStep(bb.models(prof_drop, K), prof_drop, SEEDS, "fp32")
    with pytest.raises(ValueError, match="one seed per model"):
        bb.BatchedLeWMStep(bb.models(prof, K), prof, [0], "fp32")
