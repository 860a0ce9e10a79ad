"""The FLOP counter of a training step (wm.flops) against closed forms and the benchmark's count."""

from __future__ import annotations

import pytest
import torch

from benchmarks.bench_limits import flops as bench_flops
from benchmarks.bench_limits import train_step as bench_train_step
from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.flops import count_flops, train_step_flops
from jepa_geometry.wm.model import build_world_model


def test_a_linear_layer_counts_two_flops_per_multiply_add_forward_and_twice_that_backward():
    b, n_in, n_out = 7, 5, 3
    layer = torch.nn.Linear(n_in, n_out, bias=False)
    x = torch.randn(b, n_in, requires_grad=True)
    assert count_flops(lambda: layer(x)) == 2 * b * n_in * n_out
    # backward: the gradient of the input and of the weight, one matmul each
    assert count_flops(lambda: layer(x).sum().backward()) == 3 * 2 * b * n_in * n_out


def test_the_step_count_equals_the_benchmarks_count_on_real_tensors():
    prof = load_profile("smoke")
    model = build_world_model(prof, action_dim=2, seed=0)
    model.train()
    b, t, size = prof.train.batch_size, prof.data.history + 1, prof.data.image_size
    gen = torch.Generator().manual_seed(0)
    pixels = torch.randint(0, 256, (b, t, 3, size, size), dtype=torch.uint8, generator=gen)
    actions = torch.randn(b, t, model.action_block_dim, generator=gen)
    measured = bench_flops(lambda: bench_train_step(model, pixels, actions, prof, gen))
    assert train_step_flops(prof, 2, device="cpu") == measured
    # on the meta device no number is computed; the count agrees to within 0.1 %
    assert train_step_flops(prof, 2) == pytest.approx(measured, rel=1e-3)


def test_the_count_grows_with_the_batch_and_the_pixels():
    prof = load_profile("smoke")
    base = train_step_flops(prof, 2)
    double = load_profile("smoke", {"train.batch_size": 2 * prof.train.batch_size})
    assert train_step_flops(double, 2) == pytest.approx(2 * base, rel=0.05)
    bigger = load_profile("smoke", {"data.image_size": 2 * prof.data.image_size})
    assert train_step_flops(bigger, 2) > 2 * base  # the encoder's work grows with the area


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_bad_action_width_stops_in_one_line(bad):
    with pytest.raises(ValueError, match="action_dim must be an integer >= 1"):
        train_step_flops(load_profile("smoke"), bad)
