"""Build jobs: a fixed thread count each, results in job order, the same numbers serial or
parallel."""

from __future__ import annotations

import os

import pytest
import torch

from jepa_geometry.jobs import JOB_THREADS, check_workers, job_threads, run_parallel


def _job(i: int) -> tuple[int, int, list[float]]:
    """A job that reports its thread count and process, and computes something seeded."""
    with job_threads():
        g = torch.Generator().manual_seed(i)
        a = torch.randn(64, 64, generator=g)
        value = (a @ a.T).sum(0)[:3].tolist()
        return torch.get_num_threads(), os.getpid(), value


def _fails(i: int) -> int:
    if i == 2:
        raise RuntimeError(f"job {i} failed")
    return i


def test_job_threads_sets_and_restores_threads() -> None:
    before = torch.get_num_threads()
    with job_threads():
        assert torch.get_num_threads() == JOB_THREADS == 1
        with job_threads(2):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == JOB_THREADS
    assert torch.get_num_threads() == before


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
