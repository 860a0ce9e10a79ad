"""Fault injection: kill -9 mid-build, corrupt every kind of artifact, fuzz every CLI option.

What must hold (the project's promise, tested here at a tiny smoke scale):

* an interrupted collect, plan or chapter, rerun, gives exactly what an uninterrupted run gives
  and leaves no temporary litter (training: ``tests/wm/test_training.py``'s kill tests);
* a truncated, bit-flipped or deleted payload is never used: it is reported or rebuilt, and a
  rebuild reproduces the original bytes; a deleted manifest or a foreign file in an artifact's
  folder stops the rebuild, and the user's file survives (resume checkpoints:
  ``tests/wm/test_training.py::test_a_corrupted_resume_checkpoint_is_never_trusted``);
* every bad command-line value stops with one line naming it, before any file is written
  (chapter parameters: ``tests/book/test_parameters.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import papermill
import pytest

from jepa_geometry.artifacts import ArtifactError, get_or_build
from jepa_geometry.book.toc import resolve_page
from jepa_geometry.cli import main
from jepa_geometry.envs import dataset as D
from jepa_geometry.planning.evaluator import evaluate_arm
from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.checkpoint import MODEL_FILE
from jepa_geometry.wm.training import train_world_model
from tests.conftest import REPO, executed

OVERRIDES = {"data.episodes": 4, "data.heldout_episodes": 2, "train.steps": 6}
SETS = [x for k, v in OVERRIDES.items() for x in ("--set", f"{k}={v}")]
CLI = [sys.executable, "-m", "jepa_geometry.cli"]


def profile():
    return load_profile("smoke", OVERRIDES)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


COLUMNS = ("pixels", "action", "state", "q", "episode", "step", "behaviour_success")


def arrays(path: Path) -> str:
    """A digest of a dataset's arrays (its HDF5 bytes also hold the collection's wall time)."""
    d = D.read_episodes(path, "tworoom")
    h = hashlib.sha256()
    for col in COLUMNS:
        h.update(np.ascontiguousarray(getattr(d, col)).tobytes())
    return h.hexdigest()


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A cache with one dataset, one trained model and one planned cell (the reference)."""
    root = tmp_path_factory.mktemp("world")
    old = os.environ["JEPA_GEOMETRY_DATA"]
    os.environ["JEPA_GEOMETRY_DATA"] = str(root)
    try:
        prof = profile()
        data = D.load_dataset("tworoom", prof, workers=1, progress=False)
        art = train_world_model("tworoom", "lewm", 0, prof, progress=False)
        plan = evaluate_arm("tworoom", "lewm", 0, prof, progress=False)
        return {
            "root": root,
            "dataset": arrays(data.path),
            "model": sha(art.path / MODEL_FILE),
            "plan": plan.episodes,
            "bytes": {k: sha(_payload(root, k)) for k in ("datasets", "results")},
        }
    finally:
        os.environ["JEPA_GEOMETRY_DATA"] = old


@pytest.fixture
def copy(world, tmp_path, monkeypatch):
    """A private copy of the reference cache, used as the cache of one test."""
    root = tmp_path / "data"
    shutil.copytree(world["root"], root)
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(root))
    return root


def _payload(root: Path, kind: str) -> Path:
    name = {"datasets": "episodes.h5", "checkpoints": MODEL_FILE, "results": "episodes.parquet"}
    sub = {"datasets": "tworoom", "checkpoints": "tworoom-lewm", "results": "plan-tworoom"}
    (folder,) = (root / kind / sub[kind]).iterdir()
    return folder / name[kind]


def _damage(path: Path, how: str) -> None:
    if how == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "flip":
        blob = bytearray(path.read_bytes())
        mid = len(blob) // 2
        blob[mid : mid + 8] = bytes(b ^ 0xFF for b in blob[mid : mid + 8])
        path.write_bytes(bytes(blob))
    elif how == "delete":
        path.unlink()


def _use(kind: str):
    """Load the artifact of ``kind`` through the library, as the chapters do."""
    prof = profile()
    if kind == "datasets":
        return D.load_dataset("tworoom", prof, workers=1, progress=False)
    if kind == "checkpoints":  # as a page that loads the weights (a missing file is rebuilt)
        return train_world_model("tworoom", "lewm", 0, prof, progress=False, heavy=True)
    return evaluate_arm("tworoom", "lewm", 0, prof, progress=False)


# ----------------------------------------------------------------------------- corruption


@pytest.mark.parametrize("how", ["truncate", "flip"])
def test_a_damaged_dataset_is_reported_then_recollected_identically(world, copy, how):
    path = _payload(copy, "datasets")
    _damage(path, how)
    with pytest.raises(D.DatasetError, match="damaged.*--force"):
        _use("datasets")
    art = D.dataset_artifact("tworoom", profile())
    get_or_build(art, lambda d: D.build_dataset("tworoom", profile(), d, 2, False), rebuild=True)
    assert arrays(path) == world["dataset"]
    assert sha(path) == world["bytes"]["datasets"]  # no wall time or worker count in the file


def test_a_dataset_without_its_frames_collects_them_again_identically(world, copy):
    """A manifest whose frames are absent (the evidence tree's, or a deleted file) is not
    damage: the frames are collected where they are opened, bit-identical."""
    path = _payload(copy, "datasets")
    _damage(path, "delete")
    with pytest.warns(UserWarning, match="rebuilding datasets/tworoom/.* is missing"):
        _use("datasets")
    assert arrays(path) == world["dataset"]
    assert sha(path) == world["bytes"]["datasets"]


@pytest.mark.parametrize("how", ["truncate", "flip", "delete"])
def test_a_damaged_checkpoint_is_rebuilt_to_the_same_bytes(world, copy, how):
    _damage(_payload(copy, "checkpoints"), how)
    with pytest.warns(UserWarning, match="rebuilding checkpoints/tworoom-lewm"):
        art = _use("checkpoints")
    assert sha(art.path / MODEL_FILE) == world["model"]


@pytest.mark.parametrize("how", ["truncate", "flip", "delete"])
def test_a_damaged_planning_result_is_replanned_identically(world, copy, how):
    _damage(_payload(copy, "results"), how)
    with pytest.warns(UserWarning, match="rebuilding results/plan-tworoom"):
        res = _use("results")
    cols = [c for c in res.episodes.columns if c != "plan_seconds"]  # wall time varies
    pd.testing.assert_frame_equal(res.episodes[cols], world["plan"][cols])
    assert sha(_payload(copy, "results")) == world["bytes"]["results"]  # it lives in the manifest


@pytest.mark.parametrize("kind", ["datasets", "checkpoints", "results"])
def test_a_deleted_manifest_is_reported_not_rebuilt_over(copy, kind):
    folder = _payload(copy, kind).parent
    (folder / "manifest.json").unlink()
    before = files_under(folder)
    with pytest.raises(ArtifactError, match="holds files but no valid manifest.json"):
        _use(kind)
    assert files_under(folder) == before


MANIFESTS = {
    "a list": "[]",
    "no files object": '{"files": []}',
    "an entry without its size": '{"files": {"episodes.parquet": {"sha256": "0"}}}',
}


@pytest.mark.parametrize("content", MANIFESTS.values(), ids=MANIFESTS.keys())
def test_a_manifest_of_the_wrong_shape_stops_in_one_line_and_keeps_the_files(copy, content, capsys):
    """A manifest that is JSON but not a manifest is damaged: the command stops in one line
    naming the folder, and nothing in it is deleted (the cache cannot tell what it wrote)."""
    folder = _payload(copy, "results").parent
    (folder / "manifest.json").write_text(content)
    before = files_under(folder)
    with pytest.warns(UserWarning, match="corrupt manifest"):
        code = main(["plan", "--task", "tworoom", "--arm", "lewm", "--profile", "smoke", *SETS])
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert code == 2 and len(err) == 1, err
    assert f"{folder} holds files but no valid manifest.json" in err[0]
    assert files_under(folder) == before


@pytest.mark.parametrize("target", ["folder", "file"])
def test_a_symlink_in_an_artifact_folder_is_foreign_and_survives(copy, tmp_path, target):
    """A link the manifest does not list (to a folder or a file) stops the rebuild that would
    delete it; the link and what it points to survive."""
    path = _payload(copy, "results")
    mine = tmp_path / "mine"
    if target == "folder":
        mine.mkdir()
        (mine / "notes.txt").write_text("the user's")
    else:
        mine.write_text("the user's")
    (path.parent / "linked").symlink_to(mine, target_is_directory=target == "folder")
    _damage(path, "flip")
    with pytest.warns(UserWarning), pytest.raises(ArtifactError, match="does not list: linked;"):
        _use("results")
    assert (path.parent / "linked").is_symlink() and mine.exists()


def test_a_cache_path_that_is_a_file_stops_in_one_line(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache.txt"
    cache.write_text("not a folder")
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(cache))
    code = main(["collect", "--task", "tworoom", "--profile", "smoke", *SETS])
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert code == 2 and len(err) == 1, err
    assert f"$JEPA_GEOMETRY_DATA is {cache}, which is not a directory" in err[0]
    assert cache.read_text() == "not a folder"


@pytest.mark.parametrize("kind", ["datasets", "checkpoints", "results"])
def test_a_foreign_file_survives_and_stops_a_rebuild(copy, kind):
    path = _payload(copy, kind)
    (path.parent / "NOTES.txt").write_text("the user's")
    _use(kind)  # an intact artifact with a foreign file is used as it is
    _damage(path, "flip")
    if kind == "datasets":  # a dataset is re-collected only on request
        art = D.dataset_artifact("tworoom", profile())
        with pytest.raises(ArtifactError, match="does not list: NOTES.txt; move them out"):
            get_or_build(art, lambda d: D.build_dataset("tworoom", profile(), d, 1), rebuild=True)
    else:
        with pytest.warns(UserWarning), pytest.raises(ArtifactError, match="NOTES.txt; move"):
            _use(kind)
    assert (path.parent / "NOTES.txt").read_text() == "the user's"


# ----------------------------------------------------------------------------- kill -9


def _kill_when(cmd: list[str], root: Path, ready, timeout: float = 120.0) -> None:
    """Start ``cmd`` (its own process group), SIGKILL the group once ``ready()`` holds."""
    env = {**os.environ, "JEPA_GEOMETRY_DATA": str(root), "MUJOCO_GL": "egl"}
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + timeout
    while not ready() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the command finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def start_in_group(
    cmd: list[str], root: Path, cwd: Path = REPO, stdout: int = subprocess.DEVNULL
) -> subprocess.Popen:
    """``cmd`` with the cache ``root``, in its own process group (as a terminal starts a
    command, so that Ctrl-C reaches the group), its stderr captured as text (its stdout too
    with ``stdout=subprocess.PIPE``)."""
    env = {**os.environ, "JEPA_GEOMETRY_DATA": str(root), "MUJOCO_GL": "egl"}
    return subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        start_new_session=True,
        text=True,
        stdout=stdout,
        stderr=subprocess.PIPE,
    )


def _rerun(cmd: list[str], root: Path) -> None:
    env = {**os.environ, "JEPA_GEOMETRY_DATA": str(root), "MUJOCO_GL": "egl"}
    res = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]


def test_collection_killed_mid_build_resumes_to_the_same_file(world, tmp_path):
    root = tmp_path / "data"
    parent = root / "datasets" / "tworoom"
    cmd = [*CLI, "collect", "--task", "tworoom", "--profile", "smoke", "--workers", "1", *SETS]
    _kill_when(cmd, root, lambda: parent.is_dir() and any(parent.glob(".tmp-*")))
    assert not any(p.name != ".locks" for p in parent.iterdir() if not p.name.startswith("."))
    _rerun(cmd, root)
    assert arrays(_payload(root, "datasets")) == world["dataset"]
    assert not list(parent.glob(".tmp-*"))  # the killed build's folder was cleaned up


def test_planning_killed_mid_cell_replans_identically(world, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(world["root"], root)
    shutil.rmtree(root / "results")
    parent = root / "results" / "plan-tworoom"
    cmd = [*CLI, "plan", "--task", "tworoom", "--arm", "lewm", "--profile", "smoke", *SETS]
    _kill_when(cmd, root, lambda: parent.is_dir() and any(parent.glob(".tmp-*")))
    _rerun(cmd, root)
    table = pd.read_parquet(_payload(root, "results"))
    ref = world["plan"][table.columns]
    cols = [c for c in table.columns if c != "plan_seconds"]
    pd.testing.assert_frame_equal(table[cols].reset_index(drop=True), ref[cols])
    assert not list(parent.glob(".tmp-*"))


@pytest.mark.slow
def test_a_chapter_killed_mid_run_reruns_to_the_same_notebook(tmp_path, book_copy):
    """The reference is the page's own uninterrupted run at smoke (``test_chapters``: run once
    per test run, whichever test asks first)."""
    import jupytext  # noqa: F401  (the chapter command needs it; fail clearly if missing)
    import nbformat

    root = tmp_path / "data"
    out = tmp_path / "ch02.ipynb"
    cmd = [*CLI, "chapter", "chapters/ch02_isotropy_regret.md", str(out), "-p", "profile=smoke"]
    figures = root / "figures" / "smoke"
    _kill_when(cmd, root, lambda: figures.is_dir() and any(figures.glob("*.png")))
    assert not out.exists()  # the notebook is written once, at the end
    _rerun(cmd, root)
    ref = executed(resolve_page("ch02_isotropy_regret", REPO), book_copy)

    def texts(p: Path) -> list[str]:
        """Each code cell's printed text; how a stream is split into outputs depends on timing."""
        nb = nbformat.read(p, as_version=4)
        return [
            "".join(o.get("text", "") for o in c.outputs) for c in nb.cells if c.cell_type == "code"
        ]

    assert texts(out) == texts(ref)


def test_ctrl_c_stops_a_study_in_one_line_and_its_jobs_quietly(tmp_path):
    """Ctrl-C reaches the whole process group (the command and its build jobs): the command
    says in one line what was interrupted and that rerunning resumes; no process prints a
    traceback."""
    root = tmp_path / "data"
    sets = [
        "--set",
        "data.episodes=4",
        "--set",
        "data.heldout_episodes=2",
        "--set",
        "train.steps=5000",
    ]  # models that train long enough to catch
    cmd = [*CLI, "study", "tworoom", "--workers", "2", "--quiet", "--profile", "smoke", *sets]
    proc = start_in_group(cmd, root)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:  # two models training side by side
        if len(list((root / "checkpoints").glob("*/.tmp-*"))) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the study ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-2000:]
    lines = [  # the command's own lines: not its log of finished units, not its notes
        ln
        for ln in err.strip().splitlines()
        if ln.startswith("jepa-geometry:") and not ln.startswith("jepa-geometry: note:")
    ]
    assert lines == [
        "jepa-geometry: study interrupted; what it finished is in the cache, and the same "
        "command resumes from there"
    ]


# ----------------------------------------------------------------------------- bad input

BAD_COMMANDS = [
    ["collect", "--task", "nosuch"],
    ["collect", "--task", "tworoom", "--workers", "0"],
    ["collect", "--task", "tworoom", "--workers", "-2"],
    ["collect", "--task", "tworoom", "--workers", "two"],
    ["collect", "--task", "tworoom", "--profile", "huge"],
    ["collect", "--task", "tworoom", "--set", "data.episodes=0"],
    ["collect", "--task", "tworoom", "--set", "data.nosuch=1"],
    ["collect", "--task", "tworoom", "--set", "noequals"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--set", "train.steps=0"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--set", "train.steps=-5"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--set", "train.checkpoint_every=0"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--set", "train.steps=abc"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--set", "train.lr=0"],
    # no value is without an upper bound where memory grows with it
    ["profile", "smoke", "--set", "train.batch_size=1000000"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--set", "train.batch_size=1025"],
    ["train", "--task", "tworoom", "--arm", "nosuch"],
    ["train", "--task", "tworoom", "--arm", ""],
    ["train", "--task", "tworoom", "--arm", "lewm", "--seed", "-1"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--seed", "x"],
    ["train", "--task", "tworoom", "--arm", "anisowm", "--weight", "kappa=0.5"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--weight", "scale=0.1"],
    ["train", "--task", "tworoom", "--arm", "lewm", "--weight", "nosuch=1"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--pairs", "0"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--pairs", "-3"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--tier", "T9"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--solver", "adam"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--protocol", "code"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--temperature", "hot"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--set", "eval.episodes=0"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--set", "plan.topk_fraction=0"],
    ["profile", "huge"],
    ["profile", "smoke", "--set", "model.predictor_dropout=1.5"],
    ["book", "--profile", "huge"],
    ["chapter", "chapters/nosuch.md", "out.ipynb"],
    ["chapter", "chapters/ch01_metric_leverage.md", "out.ipynb", "-p", "trained_seed=-1"],
    # a list that names independent units holds each once (a repeated seed is fake replication)
    ["profile", "smoke", "--set", "seeds.train=[0,0,0]"],
    ["profile", "smoke", "--set", "theory.toy_noise_levels=[0.1,0.1]"],
    ["grid", "--tasks", "tworoom,tworoom", "--dry-run"],
    ["grid", "--tasks", "tworoom", "--with", "kappa", "nope", "--dry-run"],
    ["chapter", "chapters/ch02_isotropy_regret.md", "out.ipynb", "-p", "etas=[1.0,1.0]"],
    [
        "chapter",
        "chapters/ch03_prediction_vs_planning.md",
        "out.ipynb",
        "-p",
        "regularizers=['sigreg','sigreg']",
    ],
    # no infinite value passes an open-ended range
    ["profile", "smoke", "--set", "train.lr=1e999"],
    ["profile", "smoke", "--set", "train.sigreg_weight=1e999"],
    ["profile", "smoke", "--set", "theory.toy_noise_levels=[1e999]"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--temperature", "inf"],
    ["plan", "--task", "tworoom", "--arm", "lewm", "--temperature", "nan"],
    ["chapter", "chapters/ch02_isotropy_regret.md", "out.ipynb", "-p", "etas=[1e999]"],
    # every integer parameter has a range checked before the kernel starts
    ["chapter", "chapters/ch02_isotropy_regret.md", "out.ipynb", "-p", "seed=99999999999999999999"],
    ["chapter", "chapters/ch04_tasks.md", "out.ipynb", "-p", "strip_frames=10000000000"],
]


@pytest.mark.parametrize("argv", BAD_COMMANDS, ids=lambda a: " ".join(a)[:60])
def test_bad_command_line_values_stop_in_one_line_before_any_work(
    argv, data_root, capsys, monkeypatch
):
    def kernel(*args, **kwargs):  # a chapter must stop before its kernel starts
        raise AssertionError("a chapter with a bad parameter started its kernel")

    monkeypatch.setattr(papermill, "execute_notebook", kernel)
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's own check
        code = stop.code
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert code == 2 and len(err) == 1, err
    assert not data_root.exists() or files_under(data_root) == [], files_under(data_root)
    assert not (REPO / "out.ipynb").exists()


ORPHAN_SCRIPT = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
import multiprocessing as mp

def nap(out):
    with open(out, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(120)

if __name__ == "__main__":
    out, pool = sys.argv[1], sys.argv[2]
    if pool == "build":  # a build stage's jobs (forkserver)
        from jepa_geometry.jobs import run_parallel
        run_parallel(nap, [(out,)] * 4, workers=2, progress=False)
    else:  # the book's side-by-side pages (spawn)
        from jepa_geometry.book.run import _share_cores
        ctx = mp.get_context("spawn")
        init = {"initializer": _share_cores, "initargs": ("1",)}
        with ProcessPoolExecutor(2, mp_context=ctx, **init) as ex:
            list(ex.map(nap, [out] * 4))
"""


def _gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (ended, or a zombie its new parent has not reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith(("Z", "X"))
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.mark.parametrize("pool", ["build", "pages"])
def test_kill_9_of_a_command_ends_its_pool_s_processes(tmp_path, pool):
    """``kill -9`` of the command alone (not its group): its pool's processes end within
    seconds instead of taking the queued jobs (jobs.end_with_parent)."""
    script, pids = tmp_path / "orphans.py", tmp_path / "pids"
    script.write_text(ORPHAN_SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(pids), pool], cwd=tmp_path, start_new_session=True
    )
    deadline = time.time() + 120
    while time.time() < deadline and (not pids.is_file() or len(pids.read_text().split()) < 2):
        time.sleep(0.1)
    workers = [int(p) for p in pids.read_text().split()]
    assert len(workers) == 2 and not any(_gone(p) for p in workers)
    os.kill(proc.pid, signal.SIGKILL)  # the command only, as `kill -9 PID` does
    proc.wait()
    deadline = time.time() + 15
    while time.time() < deadline and not all(_gone(p) for p in workers):
        time.sleep(0.1)
    try:
        assert all(_gone(p) for p in workers), "the pool's processes outlived the command"
        time.sleep(1)
        assert len(pids.read_text().split()) == 2, "a process took another job after the kill"
    finally:
        for p in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
