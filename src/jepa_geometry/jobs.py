"""Build jobs: one thread each, as many jobs at once as there are cores.

Every cached model and planning result is built inside :func:`job_threads`, with exactly
:data:`JOB_THREADS` = 1 PyTorch intra-op thread and 1 BLAS thread for numpy (the probes'
least squares and SVDs), whatever the machine. Two reasons, both
measured on the laptop's 2 cores (``benchmarks/bench_throughput.py``; the machine is shared,
so its speed drifts by tens of percent between runs, and only ratios measured back to back
count):

* **Determinism across machines.** PyTorch's CPU kernels split work by thread count, and the
  same training step gives different bits with 1 and 2 threads (gradients differ by ~4e-6 in
  fp32). numpy's BLAS does the same: a geometry measurement's probe R² differed in its last
  bits between a process with two OpenBLAS threads and one with one. A build that always uses
  one thread gives the same numbers on a 2-core laptop and a 64-core server, whatever the
  number of parallel jobs.
* **Throughput.** The laptop model is small, and a training step is many small operations;
  in the Two-Room study two 1-thread jobs side by side trained 23.4 steps/s together, against
  16.7-17.9 steps/s for one 2-thread process (the trainer's own overhead grows with threads).
  The price is latency: a lone model or planning cell takes longer on one thread than it
  would on two.

:func:`run_parallel` runs independent build jobs in a ``concurrent.futures`` process pool.
Its processes come from :func:`pool_context`, Python's ``forkserver`` start method: each is
forked from one server process per parent, a fresh interpreter that imported torch and the
jobs' modules once (``preload``). Forking the parent itself could deadlock (it may already run
PyTorch's thread pool or hold a GL context); a ``spawn``-ed interpreter is safe too but imports
torch and stable-worldmodel again in every process, about 5 s each: at the smoke profile more
than half of what the build processes do (py-spy over ``jepa-geometry book --profile smoke``:
257 of 482 CPU seconds). Jobs that would build the same artifact are safe: the
cache's lock lets one build it and the other read it
(:func:`jepa_geometry.artifacts.get_or_build`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
JOB_THREADS = 1  # intra-op threads of every build job (see the module docstring)


def progress_bar(iterable: Any = None, *, progress: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar that shows on a terminal and stays silent elsewhere.

    ``progress=False`` hides it; otherwise it is tqdm's ``disable=None``: drawn when stderr is
    a terminal, silent when stderr is a log file, a notebook kernel's stream or a captured
    test (a redrawn bar written to a file is one line of carriage returns per update).
    """
    from tqdm import tqdm

    return tqdm(iterable, disable=None if progress else True, **kwargs)


def log_line(what: str, seconds: float) -> str:
    """One line of a command's log where no bar is drawn: what finished and when, e.g.
    ``train tworoom: 3 of 18 built (4 min 12 s)``. A background build's log (output that is
    not a terminal, or ``--quiet``) says where it is with these, one per finished unit or
    stage, never a redrawn bar."""
    minutes, rest = divmod(round(seconds), 60)
    return f"{what} ({f'{minutes} min {rest} s' if minutes else f'{seconds:.1f} s'})"


@contextmanager
def job_threads(threads: int = JOB_THREADS) -> Iterator[None]:
    """Run the block with ``threads`` PyTorch intra-op threads and ``threads`` BLAS threads for
    numpy (default :data:`JOB_THREADS`), then restore the previous counts."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(before)


WORKERS_ENV = "JEPA_GEOMETRY_WORKERS"


def default_workers() -> int:
    """Parallel build jobs by default: ``$JEPA_GEOMETRY_WORKERS`` when it is set, else the CPU
    cores this process may use divided by :data:`JOB_THREADS` (one job per core; at least one).

    The variable is for processes that share the cores with others doing the same: ``make
    test`` sets 1 for each of its test workers and ``jepa-geometry book --jobs N`` gives each
    of its N page kernels its share, so a page builds in its own process instead of starting
    a pool whose processes would only wait for a core (and import torch again). A value that
    is not a positive integer stops with one line. (The simulator processes of one dataset's
    collection are counted apart: :func:`jepa_geometry.envs.collect.collector_processes`.)"""
    value = os.environ.get(WORKERS_ENV)
    if value is not None:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"${WORKERS_ENV} must be an integer >= 1, got {value!r}")
        return int(value)
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


PRELOAD = ("torch", "torch._dynamo")  # every job; torch.optim imports torch._dynamo (~1 s)


def pool_context(preload: Sequence[str] = ()) -> multiprocessing.context.BaseContext:
    """The ``forkserver`` context of every build process (module docstring); its server imports
    :data:`PRELOAD` and ``preload`` when it starts. A process has one server, started by its
    first pool: modules that only later pools name are imported by their jobs instead."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([*PRELOAD, *preload])
    return ctx


ORPHANED_EXIT = 70
"""The exit status of a pool process whose parent died (:func:`end_with_parent`)."""


def end_with_parent() -> None:
    """End this pool process as soon as the process that started it ends, however it ends.

    A command ended by ``kill -9`` cannot stop its pool: its processes, reparented to PID 1,
    went on taking queued work (a killed ``book`` wrote three more pages over a minute, a
    killed ``study`` left 2.5 GB of workers). ``spawn`` and ``forkserver`` give each process a
    sentinel of its parent (:func:`multiprocessing.parent_process`: a pipe whose other end the
    parent holds, readable once it is gone); a daemon thread waits on it and exits the process.
    A build it interrupts leaves a temporary folder, which the next build removes; a page's
    kernel ends with its process (ipykernel polls its parent)."""
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(ORPHANED_EXIT)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


def start_job_process(
    environ: dict[str, str], init: Callable[..., Any] | None = None, initargs: tuple = ()
) -> None:
    """Pool initializer: the parent's environment as it is now (a forked job would otherwise
    see the server's, from when it started), :data:`JOB_THREADS` torch threads, then ``init``.

    Ctrl-C reaches every process of the terminal's group: a job process ignores it, and the
    process that started the pool ends its jobs (:func:`run_parallel`; an unfinished build
    leaves only a temporary folder, which the next run removes) and reports the interruption
    in one line.
    """
    import torch
    from tqdm import tqdm

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_with_parent()
    # tqdm's default lock holds a multiprocessing semaphore, which a job ended mid-run would
    # leave to the resource tracker (a "leaked semaphore" warning at exit); bars of one
    # process need a thread lock only
    tqdm.set_lock(threading.RLock())
    os.environ.clear()
    os.environ.update(environ)
    torch.set_num_threads(JOB_THREADS)
    if init is not None:
        init(*initargs)


def stop_pool(pool: ProcessPoolExecutor, futures: Iterable[Future], interrupted: bool) -> None:
    """Cancel every queued job of ``pool``; when ``interrupted`` (Ctrl-C, or a SIGTERM the
    command turned into one), also end its processes.

    Leaving the pool's ``with`` block waits for every job already handed to a process, and the
    executor hands one more job than it has processes: after an interruption those would start
    and run to their end (a page kernel, a model). A build job ignores Ctrl-C and a job that a
    SIGTERM reached only through its parent never sees it, so the parent ends them; an ended
    build leaves only a temporary folder, which the next build removes. (Python 3.11's executor
    has no public call for it; 3.14 adds one.) An interrupted pool's jobs are not cancelled
    first: its executor, finding a process ended, sets an error on every job not yet done, and
    on a cancelled one that raises in its manager thread (InvalidStateError), which then dies
    and leaves the command waiting for it; the error it sets ends those jobs as well.
    """
    if interrupted:
        for proc in list((pool._processes or {}).values()):
            proc.terminate()
        return
    for f in futures:
        f.cancel()


def run_parallel(
    fn: Callable[..., T],
    jobs: Sequence[tuple],
    workers: int,
    desc: str = "jobs",
    progress: bool = True,
    *,
    pending: Callable[..., bool] | None = None,
    preload: Sequence[str] = (),
    say: Callable[[str], None] | None = None,
) -> list[T]:
    """``[fn(*job) for job in jobs]``, computed by ``workers`` processes; results in job order.

    ``fn`` must be a module-level function (it is pickled). With ``workers == 1`` or a single
    job everything runs in this process, so a failure shows its plain traceback.
    ``pending(*job)`` (default: every job) says which jobs still have work to do; the others
    (cached ones) run in this process, so a stage with nothing to build starts no process.
    ``preload`` names modules the jobs import, for the pool's server (:func:`pool_context`).
    The first job that raises stops the pool and re-raises its exception; jobs already
    finished are cached by their own builders, so rerunning resumes. ``say`` (a command's
    log where no bar is drawn) gets one short line per finished pending job, with the time
    since the first started (:func:`log_line`).
    """
    workers = check_workers(workers)
    if not jobs:
        return []
    todo = [i for i, job in enumerate(jobs) if pending is None or pending(*job)]
    results: dict[int, T] = {}
    bar = progress_bar(total=len(jobs), desc=desc, progress=progress)
    t0 = time.perf_counter()

    def finished(i: int) -> None:
        bar.update(1)
        if say is not None and i in todo:
            done = sum(j in results for j in todo)
            say(log_line(f"{desc}: {done} of {len(todo)} built", time.perf_counter() - t0))

    try:
        if workers > 1 and len(todo) > 1:
            ctx = pool_context([fn.__module__, *preload])
            with ProcessPoolExecutor(
                min(workers, len(todo)),
                mp_context=ctx,
                initializer=start_job_process,
                initargs=(dict(os.environ),),
            ) as pool:
                futures: dict[Future, int] = {}
                try:  # a Ctrl-C while jobs are still being handed over stops them too
                    for i in todo:
                        futures[pool.submit(fn, *jobs[i])] = i
                    for fut in as_completed(futures):
                        results[futures[fut]] = fut.result()
                        finished(futures[fut])
                except BaseException as e:
                    stop_pool(pool, futures, isinstance(e, KeyboardInterrupt))
                    raise
        for i, job in enumerate(jobs):
            if i not in results:
                results[i] = fn(*job)
                finished(i)
        return [results[i] for i in range(len(jobs))]
    finally:
        bar.close()


__all__ = [
    "JOB_THREADS",
    "PRELOAD",
    "WORKERS_ENV",
    "check_workers",
    "default_workers",
    "job_threads",
    "log_line",
    "pool_context",
    "run_parallel",
    "end_with_parent",
    "start_job_process",
    "stop_pool",
]
