"""Training several world models as one batched computation, and compiling the training step:
issue #34's levers, each as a new/old ratio of training steps per second *per model*.

    nice -n 10 .venv/bin/python benchmarks/bench_batched.py [--profile laptop]
        [--precision fp32|bf16] [--rounds 3] [--steps 6] [--ks 2 [3 ...]]
        [--levers batched compile limits]

Inputs are synthetic tensors of Two-Room's shape (the profile's batch of clips of history + 1
frames at image_size px, 2-D actions in blocks of frameskip); the step is the trainer's for the
``lewm`` arm (prediction + λ_sig SIGReg, gradient clipping, AdamW at the profile's lr and weight
decay). ``--precision`` sets the autocast of the models' forward as the trainer's
``train.precision`` does: bf16 figures mean something only on a CPU with native bf16
(``training.native_bf16``), so on any other machine measure fp32 and label it so.

Levers, old and new alternated ``--rounds`` times in one run (the machine is shared and drifts,
so each ratio is the median of per-round ratios, with their spread):

1. ``k`` seeds of one arm trained as one vmapped step (:class:`BatchedLeWMStep`:
   ``torch.func.stack_module_state`` + ``functional_call`` + ``vmap``; per-model SIGReg
   directions from each model's own generator, per-model gradient-norm clipping, one AdamW
   over the stacked parameters, which is elementwise and so per model) against ``k``
   single-model steps one after the other; at 1 and at 2 threads, and as two 1-thread
   processes side by side (each batched) against two 1-thread single-model processes side by
   side (how the study uses 2 cores now: ``jobs.run_parallel``).
2. ``torch.compile`` of the single-model loss (forward + loss; backward through AOTAutograd):
   the compile seconds, the steady-state ratio and the steps after which the compile has paid
   for itself, against the profile's ``train.steps`` per model.

Then the physical-limit table: GFLOP of one step (``bench_limits.flops``, the same count),
GFLOP/s achieved by each path and the fraction of this machine's measured matmul peak at the
benchmark's precision and one thread.
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import torch
from bench_limits import flops, matmul_peak
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from jepa_geometry.jobs import run_parallel
from jepa_geometry.profiles import Profile, load_profile
from jepa_geometry.wm.losses import random_directions, sigreg
from jepa_geometry.wm.model import WorldModel, build_world_model
from jepa_geometry.wm.objective import derive_seed

PRECISIONS = ("fp32", "bf16")
ACTION_DIM = 2  # Two-Room's


class _EncodePredict(nn.Module):
    """``(pixels, actions) -> (z, ẑ)`` of a world model, as one ``forward`` for
    ``functional_call`` (the world model itself has ``encode`` and ``predict``, no forward)."""

    def __init__(self, model: WorldModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, pixels: torch.Tensor, actions: torch.Tensor):
        z = self.model.encode(pixels)
        return z, self.model.predict(z[:, :-1], actions[:, :-1])


def lewm_loss(
    z: torch.Tensor, z_hat: torch.Tensor, sigreg_weight: float, directions: torch.Tensor
) -> torch.Tensor:
    """The ``lewm`` arm's loss, ``mean((ẑ - z_{t+1})²) + λ_sig SIGReg(zᵀ)`` on fixed SIGReg
    directions (D, M), computed in fp32 as :class:`~jepa_geometry.wm.objective.Objective` does."""
    z, z_hat = z.float(), z_hat.float()
    pred = ((z_hat - z[:, 1:]) ** 2).mean()
    return pred + sigreg_weight * sigreg(z.transpose(0, 1), directions=directions)


def clip_per_model_(grads: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Clip the gradients of k stacked models (leading dimension k) each to norm ``max_norm``.

    Model m's norm is ``||g_m|| = sqrt(Σ_params ||g_{p,m}||²)`` and its gradients are scaled by
    ``min(1, max_norm / (||g_m|| + 1e-6))``: ``torch.nn.utils.clip_grad_norm_`` applied to each
    model alone. Returns the k norms.
    """
    per_param = torch.stack([g.flatten(1).norm(dim=1) for g in grads], dim=1)  # (k, params)
    norms = per_param.norm(dim=1)
    coef = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *[1] * (g.ndim - 1)))
    return norms


class SingleLeWMStep:
    """The trainer's step for one ``lewm`` model on a fixed batch: forward (autocast at
    ``precision``), loss, backward, ``clip_grad_norm_``, AdamW. ``loss_fn`` may be replaced by a
    compiled copy of :meth:`loss`."""

    def __init__(self, model: WorldModel, profile: Profile, seed: int, precision: str) -> None:
        self.model, self.profile, self.precision = model.train(), profile, precision
        self.wrapped = _EncodePredict(model)
        self.gen = torch.Generator().manual_seed(derive_seed(seed, "objective"))
        tr = profile.train
        self.opt = torch.optim.AdamW(model.parameters(), lr=tr.lr, weight_decay=tr.weight_decay)
        self.loss_fn: Callable[..., torch.Tensor] = self.loss

    def directions(self) -> torch.Tensor:
        return random_directions(
            self.model.embed_dim, self.profile.train.sigreg_projections, self.gen
        )

    def loss(self, pixels: torch.Tensor, actions: torch.Tensor, dirs: torch.Tensor):
        with torch.autocast("cpu", torch.bfloat16, self.precision == "bf16"):
            z, z_hat = self.wrapped(pixels, actions)
        return lewm_loss(z, z_hat, self.profile.train.sigreg_weight, dirs)

    def __call__(self, pixels: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        loss = self.loss_fn(pixels, actions, self.directions())
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.profile.train.grad_clip)
        self.opt.step()
        return loss.detach()


class BatchedLeWMStep:
    """The trainer's ``lewm`` step for k models at once, as one vmapped computation.

    The k models' parameters and buffers are stacked along a new leading dimension
    (``stack_module_state``); one forward ``vmap(functional_call)`` maps model m's weights to
    its own batch m, so every convolution becomes one grouped convolution over k models and
    every matmul one batched matmul. The loss of model m is the single-model loss on its own
    SIGReg directions, drawn from its own generator in the single model's order, so the k
    losses are the single-model losses; backward of their sum gives each model its own
    gradient (the models share nothing). Clipping is per model (:func:`clip_per_model_`);
    AdamW is elementwise, so one optimizer over the stacked tensors updates each model as its
    own optimizer would. BatchNorm's running statistics are stacked buffers, updated per model.
    Dropout would need per-model masks in the single model's order; the laptop profile has none,
    and vmap's ``randomness="error"`` stops any random op inside the step.
    """

    def __init__(
        self, models: list[WorldModel], profile: Profile, seeds: list[int], precision: str
    ) -> None:
        if len(models) != len(seeds) or len(models) < 1:
            raise ValueError(f"need one seed per model, got {len(models)} models, seeds {seeds}")
        if profile.model.predictor_dropout != 0:
            raise ValueError(
                f"the batched step draws no dropout masks (vmap would draw other ones than the "
                f"single-model step): predictor_dropout must be 0, got "
                f"{profile.model.predictor_dropout}"
            )
        self.k, self.profile, self.precision = len(models), profile, precision
        self.base = _EncodePredict(copy.deepcopy(models[0])).to("meta")
        params, buffers = stack_module_state([_EncodePredict(m.train()) for m in models])
        self.params, self.buffers = params, buffers
        self.gens = [torch.Generator().manual_seed(derive_seed(s, "objective")) for s in seeds]
        tr = profile.train
        self.opt = torch.optim.AdamW(list(params.values()), lr=tr.lr, weight_decay=tr.weight_decay)
        self.embed_dim = models[0].embed_dim
        self._losses = vmap(self._one, in_dims=(0, 0, 0, 0, 0), randomness="error")

    def _one(self, params, buffers, pixels, actions, dirs) -> torch.Tensor:
        with torch.autocast("cpu", torch.bfloat16, self.precision == "bf16"):
            z, z_hat = functional_call(self.base, (params, buffers), (pixels, actions))
        return lewm_loss(z, z_hat, self.profile.train.sigreg_weight, dirs)

    def directions(self) -> torch.Tensor:
        m = self.profile.train.sigreg_projections
        return torch.stack([random_directions(self.embed_dim, m, g) for g in self.gens])

    def losses(self, pixels: torch.Tensor, actions: torch.Tensor, dirs: torch.Tensor):
        """The k models' losses; ``pixels`` (k, B, T, 3, H, W), ``actions`` (k, B, T, 5A),
        ``dirs`` (k, D, M)."""
        return self._losses(self.params, self.buffers, pixels, actions, dirs)

    def __call__(self, pixels: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        losses = self.losses(pixels, actions, self.directions())
        self.opt.zero_grad(set_to_none=True)
        losses.sum().backward()
        clip_per_model_([p.grad for p in self.params.values()], self.profile.train.grad_clip)
        self.opt.step()
        return losses.detach()


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


def synthetic_batch(profile: Profile, k: int | None, seed: int = 0):
    """Two-Room-shaped pixels (uint8) and action blocks; with ``k``, one batch per model."""
    g = torch.Generator().manual_seed(seed)
    b, t, size = profile.train.batch_size, profile.data.history + 1, profile.data.image_size
    lead = (b,) if k is None else (k, b)
    block = profile.data.frameskip * ACTION_DIM
    pixels = torch.randint(0, 256, (*lead, t, 3, size, size), dtype=torch.uint8, generator=g)
    return pixels, torch.randn(*lead, t, block, generator=g)


def models(profile: Profile, k: int) -> list[WorldModel]:
    return [build_world_model(profile, ACTION_DIM, derive_seed(s, "init")) for s in range(k)]


def model_steps_per_s(
    profile_name: str, precision: str, k: int, batched: bool, threads: int, steps: int
) -> float:
    """Model-steps per second (one optimizer step of one model counts one) of k models: one
    batched step or k single steps per iteration, after two warm-up iterations. Proportional
    to models trained per hour. A job: runs in a worker process too."""
    torch.set_num_threads(threads)
    prof = load_profile(profile_name)
    ms = models(prof, k)
    if batched:
        fns = [BatchedLeWMStep(ms, prof, list(range(k)), precision)]
        batches = [synthetic_batch(prof, k)]
    else:
        fns = [SingleLeWMStep(m, prof, s, precision) for s, m in enumerate(ms)]
        batches = [synthetic_batch(prof, None, s) for s in range(k)]

    def iteration() -> None:
        for fn, (px, act) in zip(fns, batches, strict=True):
            fn(px, act)

    for _ in range(2):
        iteration()
    t0 = time.perf_counter()
    for _ in range(steps):
        iteration()
    return k * steps / (time.perf_counter() - t0)


def pair_rate(*args) -> float:
    """Model-steps per second of two 1-thread processes side by side (``run_parallel``), each
    training the same workload: the sum of the two."""
    return sum(run_parallel(model_steps_per_s, [args, args], workers=2, progress=False))


def compile_payback(profile_name: str, precision: str, steps: int, cache: str) -> dict:
    """``torch.compile`` of the single-model loss, one thread, in a fresh process whose
    Inductor cache is ``cache`` (empty: a cold compile; filled by an earlier call: warm): the
    first compiled step's seconds beyond an eager step (the compile cost) and the steady-state
    rates, eager timed before and after the compiled steps."""
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    torch.set_num_threads(1)
    prof = load_profile(profile_name)
    px, act = synthetic_batch(prof, None)
    eager = SingleLeWMStep(build_world_model(prof, ACTION_DIM, 0), prof, 0, precision)
    comp = SingleLeWMStep(build_world_model(prof, ACTION_DIM, 0), prof, 0, precision)
    comp.loss_fn = torch.compile(comp.loss)
    for _ in range(2):
        eager(px, act)
    t0 = time.perf_counter()
    eager(px, act)
    eager_step = time.perf_counter() - t0
    t0 = time.perf_counter()
    comp(px, act)
    first = time.perf_counter() - t0
    comp(px, act)
    rates = {}
    for name, fn in (("eager", eager), ("compiled", comp), ("eager2", eager)):
        t0 = time.perf_counter()
        for _ in range(steps):
            fn(px, act)
        rates[name] = steps / (time.perf_counter() - t0)
    return {
        "compile_s": first - eager_step,
        "eager": (rates["eager"] + rates["eager2"]) / 2,
        "compiled": rates["compiled"],
    }


def in_fresh_process(fn: Callable[..., dict], *args) -> dict:
    """``fn(*args)`` in a new spawned process (so nothing compiled here is reused)."""
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def median_spread(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):6.2f}x  [{min(ratios):.2f}, {max(ratios):.2f}]"


LEVERS = ("batched", "compile", "limits")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="laptop")
    ap.add_argument("--precision", default="fp32", help=f"one of {', '.join(PRECISIONS)}")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6, help="timed iterations per measurement")
    ap.add_argument("--ks", type=int, nargs="+", default=[2], help="models per batched step")
    ap.add_argument("--levers", nargs="+", default=list(LEVERS), help=f"of {', '.join(LEVERS)}")
    args = ap.parse_args()
    if args.precision not in PRECISIONS:
        raise SystemExit(f"unknown --precision {args.precision!r}; valid: {', '.join(PRECISIONS)}")
    bad = [lever for lever in args.levers if lever not in LEVERS]
    if bad:
        raise SystemExit(f"unknown --levers {bad}; valid: {', '.join(LEVERS)}")
    if args.rounds < 1 or args.steps < 1 or min(args.ks) < 2:
        raise SystemExit(
            f"--rounds and --steps must be >= 1 and --ks >= 2, got {args.rounds}, {args.steps}, "
            f"{args.ks}"
        )
    p, prec, n = args.profile, args.precision, args.steps
    prof = load_profile(p)
    print(
        f"profile {p}, precision {prec} (autocast of the forward), "
        f"{len(os.sched_getaffinity(0))} cores, {args.rounds} rounds of old/new, {n} timed "
        f"iterations each; rates in model-steps/s (proportional to models per hour)",
        flush=True,
    )
    if "batched" in args.levers:
        batched_lever(p, prec, n, args.rounds, args.ks)
    if "compile" in args.levers:
        compile_lever(p, prec, n, args.rounds, prof.train.steps)
    if "limits" in args.levers:
        limit_table(prof, prec, args.ks)


def batched_lever(p: str, prec: str, n: int, rounds: int, ks: list[int]) -> None:
    """Each round: for every k, vmapped against sequential at 1 and 2 threads, then two
    1-thread processes of k vmapped models against two of one model each."""
    rows: dict[str, list[tuple[float, float]]] = {}
    for r in range(rounds):
        for k in ks:
            for threads in (1, 2):
                old = model_steps_per_s(p, prec, k, False, threads, n)
                new = model_steps_per_s(p, prec, k, True, threads, n)
                name = f"k={k} vmapped / {k} sequential, {threads} thread(s)"
                rows.setdefault(name, []).append((new, old))
            old = pair_rate(p, prec, 1, False, 1, n * k)
            new = pair_rate(p, prec, k, True, 1, n)
            name = f"k={k} vmapped x 2 procs / 1 model x 2 procs, 1 thread each"
            rows.setdefault(name, []).append((new, old))
        done = ", ".join(f"{a / b:.2f}" for a, b in (v[-1] for v in rows.values()))
        print(f"  round {r + 1}: new/old {done}", flush=True)
    print(f"{'lever':<62}{'new':>8}{'old':>8}  {'new/old median [min, max]':>28}")
    for name, pairs in rows.items():
        new = statistics.median(a for a, _ in pairs)
        old = statistics.median(b for _, b in pairs)
        print(f"{name:<62}{new:8.2f}{old:8.2f}  {median_spread([a / b for a, b in pairs]):>28}")


def compile_lever(p: str, prec: str, n: int, rounds: int, model_steps: int) -> None:
    """Round 1 compiles with an empty Inductor cache (cold: the first model a machine trains),
    the later rounds with the cache round 1 filled (warm: every later model)."""
    with tempfile.TemporaryDirectory(prefix="jg-inductor-") as cache:
        res = [in_fresh_process(compile_payback, p, prec, 2 * n, cache) for _ in range(rounds)]
    ratio = [r["compiled"] / r["eager"] for r in res]
    e = statistics.median(r["eager"] for r in res)
    c = statistics.median(r["compiled"] for r in res)
    saved = 1 / e - 1 / c  # seconds saved per step
    print(
        f"\ntorch.compile of the single-model loss, 1 thread: eager {e:.2f}, compiled {c:.2f} "
        f"steps/s, compiled/eager {median_spread(ratio)}",
        flush=True,
    )
    for i, r in enumerate(res):
        kind = "cold cache" if i == 0 else "warm cache"
        payback = r["compile_s"] / saved if saved > 0 else float("inf")
        print(
            f"  round {i + 1} ({kind}): compile {r['compile_s']:.1f} s, pays back after "
            f"{payback:.0f} steps (a {p} model trains {model_steps})"
        )


def limit_table(prof: Profile, precision: str, ks: list[int]) -> None:
    """GFLOP per step, GFLOP/s achieved and the share of the measured 1-thread matmul peak."""
    torch.set_num_threads(1)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    peak = matmul_peak(dtype)
    single = SingleLeWMStep(build_world_model(prof, ACTION_DIM, 0), prof, 0, precision)
    px, act = synthetic_batch(prof, None)
    gflop = flops(lambda: single(px, act)) / 1e9
    print(f"\nmatmul peak (2048^2, 1 thread, {precision}): {peak / 1e9:.1f} GFLOP/s")
    print(
        f"{'path (1 thread)':<34}{'GFLOP/step/model':>18}{'model-steps/s':>15}"
        f"{'GFLOP/s':>9}{'% peak':>8}"
    )
    paths = [("1 model", 1, False)] + [(f"{k} models vmapped", k, True) for k in ks]
    for name, k, batched in paths:
        rate = model_steps_per_s(prof.name, precision, k, batched, 1, 6)
        achieved = gflop * rate
        print(
            f"{name:<34}{gflop:18.2f}{rate:15.2f}{achieved:9.1f}{100 * achieved * 1e9 / peak:7.1f}%"
        )


if __name__ == "__main__":
    main()
