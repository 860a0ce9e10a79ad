"""Build jobs: a fixed thread count each, results in job order, the same numbers serial or
parallel."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest
import torch
from threadpoolctl import threadpool_info, threadpool_limits

from jepa_geometry.jobs import (
    JOB_THREADS,
    WORKERS_ENV,
    check_workers,
    default_workers,
    job_threads,
    run_parallel,
)


def _job(i: int) -> tuple[int, int, list[float]]:
    """A job that reports its thread count and process, and computes something seeded."""
    with job_threads():
        g = torch.Generator().manual_seed(i)
        a = torch.randn(64, 64, generator=g)
        value = (a @ a.T).sum(0)[:3].tolist()
        return torch.get_num_threads(), os.getpid(), value


def _pid_and_env(i: int) -> tuple[int, str | None]:
    return os.getpid(), os.environ.get("JOBS_TEST_MARK")


def _odd(i: int) -> bool:
    return i % 2 == 1


def _fails(i: int) -> int:
    if i == 2:
        raise RuntimeError(f"job {i} failed")
    return i


def _blas_threads() -> set[int]:
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def test_job_threads_sets_and_restores_threads() -> None:
    """PyTorch's and numpy's BLAS thread counts alike (numpy's is what the probes use)."""
    before, blas = torch.get_num_threads(), _blas_threads()
    assert blas  # numpy's BLAS is visible to threadpoolctl
    with threadpool_limits(limits=2, user_api="blas"):  # as on a machine with several cores
        with job_threads():
            assert torch.get_num_threads() == JOB_THREADS == 1
            assert _blas_threads() == {1}
            with job_threads(2):
                assert torch.get_num_threads() == 2 and _blas_threads() == {2}
            assert torch.get_num_threads() == JOB_THREADS and _blas_threads() == {1}
        assert _blas_threads() == {2}
    assert torch.get_num_threads() == before and _blas_threads() == blas


def test_parallel_equals_serial_in_job_order() -> None:
    jobs = [(i,) for i in range(6)]
    serial = run_parallel(_job, jobs, workers=1, progress=False)
    parallel = run_parallel(_job, jobs, workers=2, progress=False)
    assert [r[2] for r in parallel] == [r[2] for r in serial]  # bit-identical numbers, in order
    assert all(r[0] == JOB_THREADS for r in parallel)
    assert {r[1] for r in serial} == {os.getpid()}  # workers=1 runs here
    assert os.getpid() not in {r[1] for r in parallel}
    assert run_parallel(_job, [], workers=2, progress=False) == []


def test_a_failing_job_raises_its_own_error() -> None:
    with pytest.raises(RuntimeError, match="job 2 failed"):
        run_parallel(_fails, [(i,) for i in range(4)], workers=2, progress=False)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
def test_bad_worker_counts_fail_in_one_line(bad) -> None:
    with pytest.raises(ValueError, match=r"workers must be an integer >= 1, got"):
        check_workers(bad)


def test_only_pending_jobs_go_to_the_pool_and_see_the_callers_environment(monkeypatch) -> None:
    """``pending`` sends the jobs with work to do to the pool (cached ones run here, so a
    stage with nothing to build starts no process); a pool process sees the environment as
    it is at the call, not as it was when the pool's server started."""
    run_parallel(_pid_and_env, [(0,), (1,)], workers=2, progress=False)  # starts the server
    monkeypatch.setenv("JOBS_TEST_MARK", "now")
    out = run_parallel(_pid_and_env, [(i,) for i in range(6)], 2, progress=False, pending=_odd)
    here = [i for i, (pid, _) in enumerate(out) if pid == os.getpid()]
    assert here == [0, 2, 4]
    assert {mark for _, mark in out} == {"now"}
    nothing = run_parallel(_pid_and_env, [(0,), (2,)], 2, progress=False, pending=_odd)
    assert {pid for pid, _ in nothing} == {os.getpid()}


def test_default_workers_reads_the_environment_or_counts_cores(monkeypatch) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert default_workers() == max(len(os.sched_getaffinity(0)) // JOB_THREADS, 1)
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert default_workers() == 3
    for bad in ("0", "-1", "two", "1.5", ""):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(ValueError, match=rf"\$JEPA_GEOMETRY_WORKERS must be .* got '{bad}'"):
            default_workers()


BAR = "from jepa_geometry.jobs import progress_bar\nfor _ in progress_bar(range(3), desc='work'): 0"


def _stderr_of_bar(stderr_fd: int) -> None:
    subprocess.run([sys.executable, "-c", BAR], stderr=stderr_fd, check=True, timeout=60)


def test_a_bar_draws_on_a_terminal_and_writes_nothing_to_a_log(tmp_path) -> None:
    with open(tmp_path / "log", "w") as log:
        _stderr_of_bar(log.fileno())
    assert (tmp_path / "log").read_text() == ""
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # 80 columns
    try:
        _stderr_of_bar(secondary)
        os.close(secondary)
        drawn = b""
        while chunk := _read(primary):
            drawn += chunk
    finally:
        os.close(primary)
    assert b"work: 100%" in drawn and b"3/3" in drawn


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # the terminal's other end is closed: everything was read
        return b""
