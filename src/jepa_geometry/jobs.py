"""Build jobs: one thread each, many at once.

Every cached model and planning result is built inside :func:`single_threaded`, with
:data:`JOB_THREADS` = 1 intra-op thread. Two reasons, both measured on the laptop's 2 cores
(``benchmarks/bench_throughput.py``):

* **Determinism across machines.** PyTorch's CPU kernels split work by thread count, and the
  same training step gives different bits with 1 and 2 threads (gradients differ by ~4e-6 in
  fp32). A build that always uses one thread gives the same numbers on a 2-core laptop and a
  64-core server, whatever the number of parallel jobs.
* **Throughput.** The laptop model is small: one 2-thread process is far from twice as fast
  as a 1-thread one, so two 1-thread jobs side by side finish more work per minute.

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
def single_threaded() -> Iterator[None]:
    """Run the block with :data:`JOB_THREADS` PyTorch intra-op threads, then restore."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(JOB_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def default_workers() -> int:
    """Parallel build jobs by default: one per CPU core this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return max(os.cpu_count() or 1, 1)


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


__all__ = ["JOB_THREADS", "check_workers", "default_workers", "run_parallel", "single_threaded"]
