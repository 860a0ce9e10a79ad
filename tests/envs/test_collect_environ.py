"""A collecting worker process computes Two-Room's pixels with MKL in its CPU-independent mode
(``envs.collect.COLLECT_ENVIRON``): its ``torch.exp`` gives the bits of a process started with
``MKL_CBWR=COMPATIBLE``, the mode that reproduced the committed dataset on an Intel Xeon.

On a CPU where MKL's default code differs from its compatible one (the Intel Xeon with
AVX-512 the issue was found on: ``default`` and ``compatible`` below differ), the pool test
fails without the setting; where they agree (the AMD EPYC), it holds either way."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import torch

from jepa_geometry.envs import collect
from jepa_geometry.envs.collect import collecting_environ
from jepa_geometry.jobs import pool_context, start_job_process

PROBE = (
    "import hashlib, torch\n"
    "x = torch.randn(1_000_000, generator=torch.Generator().manual_seed(0)) * 10\n"
    "print(hashlib.sha256(torch.exp(x).numpy().tobytes()).hexdigest())\n"
)


def exp_digest() -> str:
    """The sha256 of ``torch.exp`` over a fixed million floats, in this process."""
    x = torch.randn(1_000_000, generator=torch.Generator().manual_seed(0)) * 10
    return hashlib.sha256(torch.exp(x).numpy().tobytes()).hexdigest()


def _fresh_process(environ: dict[str, str]) -> str:
    run = subprocess.run(
        [sys.executable, "-c", PROBE], env=environ, capture_output=True, text=True, check=True
    )
    return run.stdout.strip()


def test_a_collecting_worker_computes_in_mkl_compatible_mode():
    compatible = _fresh_process({**os.environ, "MKL_CBWR": "COMPATIBLE"})
    ctx = pool_context()
    with ctx.Pool(1, start_job_process, (collecting_environ(),)) as pool:
        assert pool.apply(exp_digest) == compatible


def test_one_worker_collects_what_two_do_and_leaves_this_process_s_mkl_alone(monkeypatch):
    """MKL reads its mode once per process: a collection never sets it in this process (its
    later training and planning would run in it; a serial build then differed from a parallel
    one on the Xeon), and one worker collects the bytes two do (a small dataset's one worker
    and a laptop dataset's two, or a rebuild with another count, agree on any CPU)."""
    monkeypatch.delenv("MKL_CBWR", raising=False)
    one = list(collect._episodes("tworoom", 16, 0, 3, 2, workers=1))
    two = list(collect._episodes("tworoom", 16, 0, 3, 2, workers=2))
    assert "MKL_CBWR" not in os.environ
    for a, b in zip(one, two, strict=True):
        assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)
