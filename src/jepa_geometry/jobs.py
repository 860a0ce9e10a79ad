"""Build jobs: one thread each, as many jobs at once as there are cores.

Every cached model and planning result is built inside :func:`job_threads`, with exactly
:data:`JOB_THREADS` = 1 PyTorch intra-op thread, whatever the machine. Two reasons, both
measured on the laptop's 2 cores (``benchmarks/bench_throughput.py``; the machine is shared,
so its speed drifts by tens of percent between runs, and only ratios measured back to back
count):

* **Determinism across machines.** PyTorch's CPU kernels split work by thread count, and the
  same training step gives different bits with 1 and 2 threads (gradients differ by ~4e-6 in
  fp32). A build that always uses one thread gives the same numbers on a 2-core laptop and a
  64-core server, whatever the number of parallel jobs.
* **Throughput.** The laptop model is small, and a training step is many small operations;
  in the Two-Room study two 1-thread jobs side by side trained 23.4 steps/s together, against
  16.7-17.9 steps/s for one 2-thread process (the trainer's own overhead grows with threads).
  The price is latency: a lone model or planning cell takes longer on one thread than it
  would on two.

:func:`run_parallel` runs independent build jobs in a ``concurrent.futures`` process pool
(the ``spawn`` start method: forking a process that has already used PyTorch's thread pool can
deadlock). Jobs that would build the same artifact are safe: the cache's lock lets one build it
and the other read it (:func:`jepa_geometry.artifacts.get_or_build`).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
JOB_THREADS = 1  # intra-op threads of every build job (see the module docstring)


@contextmanager
def job_threads(threads: int = JOB_THREADS) -> Iterator[None]:
    """Run the block with ``threads`` PyTorch intra-op threads (default :data:`JOB_THREADS`),
    then restore the previous count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def default_workers() -> int:
    """Parallel build jobs by default: the CPU cores this process may use divided by
    :data:`JOB_THREADS` (one job per core; at least one)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(cores // JOB_THREADS, 1)


def check_workers(workers: Any) -> int:
    """``workers`` as a positive int, or a one-line ValueError naming the bad value."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    return workers


def _init_worker() -> None:
    import torch

    torch.set_num_threads(JOB_THREADS)


def run_parallel(
    fn: Callable[..., T],
    jobs: Sequence[tuple],
    workers: int,
    desc: str = "jobs",
    progress: bool = True,
) -> list[T]:
    """``[fn(*job) for job in jobs]``, computed by ``workers`` processes; results in job order.

    ``fn`` must be a module-level function (it is pickled). With ``workers == 1`` or a single
    job everything runs in this process, so a failure shows its plain traceback. The first
    job that raises stops the pool and re-raises its exception; jobs already finished are
    cached by their own builders, so rerunning resumes.
    """
    from tqdm import tqdm

    workers = check_workers(workers)
    if not jobs:
        return []
    bar = tqdm(total=len(jobs), desc=desc, disable=not progress)
    try:
        if workers == 1 or len(jobs) == 1:
            out = []
            for job in jobs:
                out.append(fn(*job))
                bar.update(1)
            return out
        ctx = multiprocessing.get_context("spawn")
        results: dict[int, T] = {}
        with ProcessPoolExecutor(
            min(workers, len(jobs)), mp_context=ctx, initializer=_init_worker
        ) as pool:
            futures = {pool.submit(fn, *job): i for i, job in enumerate(jobs)}
            try:
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(1)
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return [results[i] for i in range(len(jobs))]
    finally:
        bar.close()


__all__ = ["JOB_THREADS", "check_workers", "default_workers", "job_threads", "run_parallel"]
