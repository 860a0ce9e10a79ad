"""Fault injection, continued: what a long build meets (issue 52).

A laptop build runs for hours, in the background, from a worktree, and is interrupted again
and again before it ends; its evidence is then committed for every reader. What must hold, on
top of ``tests/test_faults.py``:

* an interruption (Ctrl-C to the terminal's group, or a plain SIGTERM to the command alone)
  ends every process the command started, at once, and says so in one line;
* the cache is one folder, whatever the working directory of the process that reads it;
* the committed evidence tree is never trusted blindly: a damaged payload is copied again, a
  killed export's leftovers are removed and never versioned;
* every bad value a user can give (environment variables, study files, ``--set``) stops with
  one line naming it, before any work.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import papermill
import psutil
import pytest

from jepa_geometry.artifacts import (
    DATA_ENV,
    READ_ONLY_ENV,
    Artifact,
    NotCached,
    cache_only,
    get_or_build,
)
from jepa_geometry.book.evidence import export_evidence
from jepa_geometry.book.toc import book_pages
from jepa_geometry.cli import main
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.profiles import load_profile
from jepa_geometry.study import spec
from tests.book.test_evidence import page_notebook
from tests.book.test_run import tiny_book
from tests.conftest import REPO
from tests.test_faults import CLI, OVERRIDES, SETS, start_in_group

INTERRUPTED = (
    "jepa-geometry: {} interrupted; what it finished is in the cache, and the same command "
    "resumes from there"
)


def _wait_for(proc: subprocess.Popen, ready, timeout: float = 300.0) -> None:
    deadline = time.time() + timeout
    while not ready() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the command ended before it could be interrupted"
    assert ready(), "the command never got where it could be interrupted"


def _alive(pids: list[int]) -> list[int]:
    """The processes of ``pids`` still running (a zombie has ended)."""
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def _end(proc: subprocess.Popen, pids: list[int]) -> None:
    """Clean up after a failed test: the command's group and every process it started."""
    for pid in _alive(pids):
        os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ----------------------------------------------------------------------------- interrupts


def _slow_book(root: Path, stamps: Path, pages: int) -> None:
    """A book of ``pages`` pages in ``root``, each noting its kernel's pid in ``stamps`` when it
    starts, then running for two minutes."""
    names = [f"ch0{i}_slow" for i in range(1, pages + 1)]
    note = "pathlib.Path({!r}).write_text(str(__import__('os').getpid()))\ntime.sleep(120)"
    tiny_book(root, {name: note.format(str(stamps / name)) for name in names}, names)


@pytest.mark.slow
def test_ctrl_c_stops_a_book_of_pages_side_by_side_at_once(tmp_path, monkeypatch):
    """Ctrl-C while two pages run side by side: no queued page starts a kernel, the running
    pages' kernels end, the command says so in one line within seconds, writes no page and
    leaves no page's read log in the temporary directory (it left ``<page>-reads-*.txt``)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    stamps = tmp_path / "stamps"
    stamps.mkdir()
    book = tmp_path / "book"
    book.mkdir()
    _slow_book(book, stamps, pages=4)
    cmd = [*CLI, "book", "--profile", "smoke", "--jobs", "2", "--quiet"]
    proc = start_in_group(cmd, tmp_path / "data", book)
    kernels: list[int] = []
    try:
        _wait_for(proc, lambda: len(list(stamps.iterdir())) == 2, timeout=120)
        time.sleep(0.5)  # both pids written
        kernels = [int(p.read_text()) for p in stamps.iterdir()]
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=30)[1]
        deadline = time.time() + 10  # a kernel sees its page's process end within a second
        while _alive(kernels) and time.time() < deadline:
            time.sleep(0.1)
        assert not _alive(kernels), "a page's kernel outlived the interrupted book"
        time.sleep(2)
        assert len(list(stamps.iterdir())) == 2, "a queued page started after Ctrl-C"
        assert proc.returncode == 130, err[-2000:]
        assert err.strip().splitlines()[-1] == INTERRUPTED.format("book"), err[-2000:]
        assert not list((book / "book" / "chapters").glob("*.ipynb"))
        assert not [p.name for p in temp.rglob("*") if "reads-" in p.name]
    finally:
        _end(proc, kernels)


SHORT_STUDY = ["--set", "data.episodes=4", "--set", "data.heldout_episodes=2"]


def test_sigterm_to_a_study_ends_its_build_jobs_too(tmp_path):
    """``kill <pid>`` (a service manager, a container stop) reaches the command alone: it ends
    its build jobs before it exits, reported as an interruption (status 143), and rerunning
    resumes as after Ctrl-C."""
    root = tmp_path / "data"
    sets = [*SHORT_STUDY, "--set", "train.steps=5000"]  # models that train long enough to catch
    cmd = [*CLI, "study", "tworoom", "--workers", "2", "--quiet", "--profile", "smoke", *sets]
    proc = start_in_group(cmd, root)
    jobs: list[int] = []
    try:
        _wait_for(proc, lambda: len(list((root / "checkpoints").glob("*/.tmp-*"))) >= 2)
        jobs = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        os.kill(proc.pid, signal.SIGTERM)
        err = proc.communicate(timeout=60)[1]
        deadline = time.time() + 15
        while _alive(jobs) and time.time() < deadline:
            time.sleep(0.1)
        assert not _alive(jobs), f"build processes outlived the study: {_alive(jobs)}"
        assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
        assert "Traceback" not in err, err[-2000:]
        assert err.strip().splitlines()[-1] == INTERRUPTED.format("study"), err[-2000:]
    finally:
        _end(proc, jobs)


# ----------------------------------------------------------------------------- paths


def test_a_relative_cache_is_one_folder_for_the_command_and_its_page_kernels(
    tmp_path, monkeypatch, capsys
):
    """``JEPA_GEOMETRY_DATA=relcache``: the page's kernel (working directory ``chapters/``)
    reads and writes the cache the command resolved against the user's working directory."""
    seen = tmp_path / "seen.txt"
    body = (
        "from jepa_geometry.artifacts import data_root\n"
        f"pathlib.Path({str(seen)!r}).write_text(str(data_root()))"
    )
    tiny_book(tmp_path, {"ch01_cache": body}, ["ch01_cache"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", "relcache")
    assert main(["chapter", "ch01_cache", str(tmp_path / "out.ipynb")]) == 0, capsys.readouterr()
    assert seen.read_text() == str(tmp_path / "relcache")


# ----------------------------------------------------------------------------- evidence


@pytest.fixture
def exported(tmp_path, monkeypatch) -> dict:
    """An evidence tree exported from a cache with one artifact (a small payload) that every
    page of the book read."""
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "data"))
    art = Artifact("results", "toy", {"n": 1})
    get_or_build(art, lambda tmp: (tmp / "v.json").write_text('{"n": 1}') and None)
    ref = f"results/{art.name}/{art.key}"
    executed, dest = tmp_path / "book", tmp_path / "evidence"
    for page in book_pages(REPO):
        page_notebook(executed, page.name, [ref], "'1'")
    export_evidence(REPO, "laptop", dest, executed)
    return {"art": art, "ref": ref, "executed": executed, "dest": dest}


def test_an_export_copies_a_tampered_payload_of_the_tree_again(exported):
    """A byte of a committed payload changed: the next export copies the artifact again
    (it used to compare manifests only, say "0 copied" and leave the damage to be committed)."""
    payload = exported["dest"] / exported["ref"] / "v.json"
    good = payload.read_bytes()
    payload.write_bytes(good.replace(b"1", b"2"))
    again = export_evidence(REPO, "laptop", exported["dest"], exported["executed"])
    assert again.copied == 1
    assert payload.read_bytes() == good


def test_a_killed_export_s_leftovers_are_removed_and_never_versioned(exported):
    dest = exported["dest"]
    folder = dest / exported["ref"]
    leftovers = [
        folder.parent / f".tmp-{folder.name}-1a2b3c" / "v.json",
        dest / "pages" / ".ch01_metric_leverage.json.tmp5d6e",
    ]
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    in_repo = [str(Path("evidence/laptop") / p.relative_to(dest)) for p in leftovers]
    ignored = subprocess.run(["git", "check-ignore", *in_repo], cwd=REPO, capture_output=True)
    assert ignored.stdout.decode().split() == in_repo  # git never commits them
    export_evidence(REPO, "laptop", dest, exported["executed"])
    assert not any(p.exists() for p in leftovers)
    assert not leftovers[0].parent.exists()


def test_an_evidence_artifact_without_its_manifest_is_named_as_damaged(exported, monkeypatch):
    """Read from the tree alone (cache-only, as a fresh clone renders): the one line names the
    evidence folder and the damage, not only the empty cache."""
    folder = exported["dest"] / exported["ref"]
    (folder / "manifest.json").unlink()
    monkeypatch.setenv(READ_ONLY_ENV, str(exported["dest"]))
    monkeypatch.setenv(DATA_ENV, str(exported["dest"].parent / "empty"))
    with cache_only(), pytest.raises(NotCached) as stop:
        get_or_build(exported["art"], lambda tmp: None, how="make book")
    assert f"{folder} holds files but no manifest.json (damaged" in str(stop.value)


def _kernels(proc: subprocess.Popen) -> list[int]:
    """The Jupyter kernels ``proc`` started (they run in sessions of their own)."""
    children = psutil.Process(proc.pid).children(recursive=True)
    return [c.pid for c in children if "ipykernel_launcher" in " ".join(c.cmdline())]


BUILT = re.compile(r".+ \((\d+ min )?\d+(\.\d)? s\)")  # jobs.log_line: what finished, when
STARTED = re.compile(r"\w+ study: [\w +*]+ started \(\d+ jobs?\)")  # a stage of build_study


@pytest.mark.slow
def test_a_chapter_says_what_its_kernel_builds_and_ctrl_c_stops_it_in_one_line(tmp_path):
    """Two-Room's planning page at smoke from an empty cache. While its kernel builds the study,
    the command says what finished, one line each (the dataset, then each model: the page used
    to say nothing for minutes at smoke, hours at laptop). Ctrl-C then ends it in the one line,
    not the asyncio report of each task the kernel client left ("Task exception was never
    retrieved", with its traceback: about 140 lines)."""
    out = tmp_path / "out.ipynb"
    cmd = [*CLI, "chapter", "ch06_tworoom_planning", str(out), "-p", "profile=smoke"]
    proc = start_in_group(cmd, tmp_path / "data")
    lines: list[str] = []

    def read() -> None:
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    kernels: list[int] = []
    try:
        _wait_for(proc, lambda: any(ln.startswith("train tworoom: 1 of ") for ln in lines))
        kernels = _kernels(proc)
        assert kernels, "the page's kernel is not running"
        said = [ln for ln in lines if not ln.startswith("jepa-geometry: note:")]
        assert said[:2] == ["tworoom study: collect started (1 job)", said[1]], said
        assert said[1].startswith("tworoom study: collect done ("), said
        assert all(BUILT.fullmatch(ln) or STARTED.fullmatch(ln) for ln in said), said
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=60) == 130
        reader.join(timeout=10)
        rest = [ln for ln in lines if not ln.startswith("jepa-geometry: note:")]
        rest = [ln for ln in rest if not (BUILT.fullmatch(ln) or STARTED.fullmatch(ln))]
        assert rest == [INTERRUPTED.format("chapter")], "\n".join(lines)[-3000:]
        assert not out.exists()
    finally:
        _end(proc, kernels)


# ----------------------------------------------------------------------------- bad input


def one_error_line(capsys) -> str:
    """The one ``error:`` line a command printed (it fails the test if there are more)."""
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("value", ["abc", "0"])
@pytest.mark.parametrize("command", ["study tworoom", "kappa", "book"])
def test_a_bad_workers_variable_stops_the_command_in_one_line(
    command, value, data_root, monkeypatch, capsys
):
    """``$JEPA_GEOMETRY_WORKERS`` is read by the command, inside its error handling (it used
    to be read while the parser was built: a traceback for every command)."""
    monkeypatch.setenv("JEPA_GEOMETRY_WORKERS", value)
    assert main([*command.split(), "--profile", "smoke"]) == 2
    line = one_error_line(capsys)
    assert f"$JEPA_GEOMETRY_WORKERS must be an integer >= 1, got {value!r}" in line
    assert not data_root.exists() or not any(data_root.rglob("*"))
    assert main(["profile", "smoke"]) == 0  # a command that starts no job never reads it


def test_per_task_counts_for_an_unknown_task_stop_in_one_line(data_root, capsys):
    """``data.task_episodes={'nosuchtask': ...}`` used to be accepted: the counts were carried
    along unused while the real tasks took the defaults."""
    sets = ["--set", "data.task_episodes={'nosuchtask': [3, 1]}"]
    assert main(["profile", "smoke", *sets]) == 2  # it printed the profile
    line = one_error_line(capsys)
    assert "data.task_episodes has unknown task(s) 'nosuchtask'; valid: tworoom" in line
    assert not data_root.exists() or not any(data_root.rglob("*"))


ARMS_LINE = "arms: [lewm, scale, aux, anisowm, scale+anisowm, dinowm]"
HAND_WRITTEN = {  # a line of the Two-Room study file, what a hand replaced it with, the message
    "an unclosed bracket": (ARMS_LINE, "arms: [lewm, scale", "not valid YAML at line"),
    "seeds as a number": (
        "solver_seeds: [0]",
        "solver_seeds: 0",
        "solver_seeds must be null (every training seed) or a non-empty list of integers >= 0, "
        "got 0",
    ),
    "no arms": (ARMS_LINE, "arms:", "arms must be a non-empty list of arms (lewm, scale,"),
    "one arm as a string": (
        ARMS_LINE,
        "arms: lewm",
        "arms must be a non-empty list of arms (lewm, scale, aux, anisowm or a sum such as "
        "scale+aux), got 'lewm'",
    ),
}


@pytest.mark.parametrize("fault", HAND_WRITTEN.values(), ids=HAND_WRITTEN.keys())
def test_a_study_file_written_by_hand_stops_in_one_line_naming_it(fault, tmp_path):
    old, new, message = fault
    text = (REPO / "src" / "jepa_geometry" / "study" / "specs" / "tworoom.yaml").read_text()
    assert old in text
    path = tmp_path / "tworoom.yaml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(spec.SpecError) as stop:
        spec.read_study(path, "tworoom")
    assert str(stop.value).startswith(f"study file {path}: ")
    assert message in str(stop.value) and "\n" not in str(stop.value)


# ----------------------------------------------------------------------------- logs


def test_a_study_whose_output_is_a_log_says_what_it_finished_as_it_goes(tmp_path):
    """Output redirected to a file (a background build): no bar, and not silence either: one
    short line per built model and per finished stage, each with its time, while it runs."""
    root = tmp_path / "data"
    sets = [*SHORT_STUDY, "--set", "train.steps=6"]
    cmd = [*CLI, "study", "tworoom", "--workers", "2", "--profile", "smoke", *sets]
    proc = start_in_group(cmd, root, stdout=subprocess.PIPE)
    lines: list[str] = []

    def read() -> None:  # each line as the command writes it
        for line in proc.stderr:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        cost = proc.stdout.readline()  # stated before any work
        assert cost.startswith("tworoom study (profile=smoke): ") and "not in the cache" in cost
        assert re.search(
            r"about [\d.]+ core-hours of work, about \d+ min of wall time on 2 cores", cost
        )
        _wait_for(proc, lambda: any(ln.startswith("train tworoom: 2 of ") for ln in lines))
        log = [ln.rstrip("\n") for ln in lines if not ln.startswith("jepa-geometry: note:")]
        assert log[0] == "tworoom study: collect started (1 job)", log
        assert log[1].startswith("tworoom study: collect done (") and log[1].endswith(" s)"), log
        assert re.fullmatch(r"tworoom study: train started \(\d+ jobs\)", log[2]), log
        assert re.fullmatch(r"train tworoom: 1 of (\d+) built \(\d+\.\d s\)", log[3]), log
        assert "\r" not in "".join(lines)  # no redrawn bar
    finally:
        _end(proc, [])


# ----------------------------------------------------------------------------- the machine


def _namespaces_work() -> bool:
    """Whether this machine lets a user confine a process (user and mount namespaces)."""
    try:
        probe = ["unshare", "--user", "--map-root-user", "--mount", "true"]
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


confined = pytest.mark.skipif(
    not _namespaces_work(), reason="needs unshare (user and mount namespaces)"
)


def _as_another_user(cmd: list[str]) -> list[str]:
    """``cmd`` run by a user without root's power over files: root's own, in a user namespace
    that maps no user (as root, chmod alone would not stop a write)."""
    return ["unshare", "--user", *cmd] if os.geteuid() == 0 else cmd


def _run(cmd: list[str], cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        cmd, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=300
    )


def _read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)


def _writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture
def dataset_cache(tmp_path, monkeypatch) -> Path:
    """A cache holding the smoke dataset of :data:`SETS`, and nothing else."""
    root = tmp_path / "built"
    monkeypatch.setenv(DATA_ENV, str(root))
    load_dataset("tworoom", load_profile("smoke", OVERRIDES), workers=1, progress=False)
    return root


TRAIN = [*CLI, "train", "--task", "tworoom", "--arm", "lewm", "--profile", "smoke", *SETS]


COLLECT = [*CLI, "collect", "--task", "tworoom", "--profile", "smoke", "--workers", "1", *SETS]


@confined
@pytest.mark.parametrize("cmd", [COLLECT, TRAIN], ids=["collect", "train"])
def test_building_onto_a_full_disk_stops_in_one_line(cmd, tmp_path, request):
    """A cache on a full filesystem (a 16 KB one here): one line naming it, not a traceback
    (train) or a segmentation fault after HDF5's errno 28 (collect)."""
    full = tmp_path / "full"
    full.mkdir()
    mount = f'mount -t tmpfs -o size=16k tmpfs {full} && exec "$@"'
    confine = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", mount, "sh"]
    # train reads its dataset from a cache of its own; collect finds none anywhere
    dataset = str(request.getfixturevalue("dataset_cache")) if cmd is TRAIN else ""
    res = _run([*confine, *cmd], JEPA_GEOMETRY_DATA=str(full), JEPA_GEOMETRY_READ_ONLY=dataset)
    assert res.returncode == 2, res.stderr[-3000:]
    (line,) = [ln for ln in res.stderr.splitlines() if not ln.startswith("jepa-geometry: note:")]
    assert line.startswith(f"jepa-geometry: error: no space left on {full}"), line


RACING_COLLECT = """
import os, sys
from jepa_geometry.cli import main
from jepa_geometry.envs import collect

checked, calls = collect.check_room, []


def check_room_then_lose_the_room(*args):
    # another process takes the room right after the second episode's check: HDF5 meets a
    # full disk in the middle of its writes. The patch is at the script's top level, which
    # multiprocessing runs again in every process it starts, the writer among them
    checked(*args)
    calls.append(args)
    if len(calls) == 2:
        with open(os.environ["FILLER"], "wb") as f:
            try:
                while True:
                    f.write(bytes(1 << 16))
                    f.flush()
            except OSError:
                pass


collect.check_room = check_room_then_lose_the_room
if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""


@confined
def test_a_disk_that_fills_while_a_dataset_is_written_stops_in_one_line_and_resumes(tmp_path):
    """The disk had room when checked and none when HDF5 wrote (issue 70, breakage 1): one
    line naming the file and exit 2, where HDF5 once crashed the command (a multi-line error,
    then a segmentation fault, rc 139); nothing half-written is kept, and once the room is
    back the same command collects the dataset: 0.3 MB on a 4 MB disk (a flat 1 MB per
    column for HDF5's chunk caches asked for 8 MB, and refused it)."""
    full, script, filler = tmp_path / "full", tmp_path / "racing_collect.py", tmp_path / "full/f"
    full.mkdir()
    script.write_text(RACING_COLLECT)
    racing, plain = " ".join([CLI[0], str(script), *COLLECT[3:]]), " ".join(COLLECT)
    steps = f"{racing}; echo rc=$?; rm {filler}; {plain}; echo rc=$?; ls -A {full}/datasets/*"
    mount = f"mount -t tmpfs -o size=4m tmpfs {full} && {{ {steps}; }}"
    confine = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", mount]
    res = _run(confine, JEPA_GEOMETRY_DATA=str(full), FILLER=str(filler))
    said = [ln for ln in res.stderr.splitlines() if not ln.startswith("jepa-geometry: note:")]
    (line,) = said  # the first run's one line; the second says nothing on stderr
    assert line.startswith(f"jepa-geometry: error: no space left on {full}"), said
    out = res.stdout.splitlines()
    assert [ln for ln in out if ln.startswith("rc=")] == ["rc=2", "rc=0"], res.stderr[-3000:]
    assert re.fullmatch(r"[0-9a-f]{12}", out[-1]), out  # the dataset alone, nothing half-written


@confined
def test_building_in_another_user_s_cache_stops_in_one_line(dataset_cache):
    """Another user's cache (read-only to this one): what it holds is read, and the model it
    lacks stops in one line naming the folder and the missing permission, before training."""
    _read_only(dataset_cache)
    try:
        res = _run(_as_another_user(TRAIN), JEPA_GEOMETRY_DATA=str(dataset_cache))
    finally:
        _writable(dataset_cache)
    assert res.returncode == 2, res.stderr[-3000:]
    (line,) = [ln for ln in res.stderr.splitlines() if not ln.startswith("jepa-geometry: note:")]
    assert line.startswith(f"jepa-geometry: error: {dataset_cache / '.locks'} is not writable"), (
        line
    )
    assert "needs write permission on it" in line
    assert not (dataset_cache / "checkpoints").exists()


@pytest.fixture
def one_slow_page(tmp_path) -> tuple[Path, Path]:
    """A book of one slow page (:func:`_slow_book`) and the folder its kernel notes itself in."""
    stamps = tmp_path / "stamps"
    stamps.mkdir()
    book = tmp_path / "book"
    book.mkdir()
    _slow_book(book, stamps, pages=1)
    return book, stamps


def _error_line(res: subprocess.CompletedProcess) -> str:
    """The command's one line on stderr (its notes aside), after it stopped with status 2."""
    assert res.returncode == 2, res.stderr[-3000:]
    (line,) = [ln for ln in res.stderr.splitlines() if not ln.startswith("jepa-geometry: note:")]
    return line


@confined
@pytest.mark.parametrize(
    "cmd, what",
    [(["book", "--profile", "smoke", "--quiet"], "pages"), (["chapter", "ch01_slow"], "notebooks")],
    ids=["book", "chapter"],
)
def test_a_read_only_checkout_stops_before_any_page_runs(one_slow_page, tmp_path, cmd, what):
    """``book`` and ``chapter`` check where they will write before any page runs (they ran a
    page for seconds or minutes, then failed with a traceback writing it)."""
    book, stamps = one_slow_page
    _read_only(book)
    try:
        res = _run(_as_another_user([*CLI, *cmd]), book, JEPA_GEOMETRY_DATA=str(tmp_path / "data"))
    finally:
        _writable(book)
    out = book / "book" / "chapters"
    error = f"jepa-geometry: error: the executed {what} go to {out}, but {book} is"
    assert _error_line(res).startswith(error)
    assert not any(stamps.iterdir())  # no page's kernel started


@confined
def test_a_figure_folder_it_may_not_write_stops_a_chapter_before_its_kernel_starts(
    one_slow_page, tmp_path
):
    """Issue 70 (a nit): a page whose figures' folder is another's (the cache writable, its
    ``figures/<profile>`` not) failed with a raw ``PermissionError`` once it drew; now it stops
    in one line before its kernel starts."""
    book, stamps = one_slow_page
    data = tmp_path / "data"
    figures = data / "figures" / "laptop"
    figures.mkdir(parents=True)
    _read_only(figures)
    try:
        res = _run(
            _as_another_user([*CLI, "chapter", "ch01_slow"]), book, JEPA_GEOMETRY_DATA=str(data)
        )
    finally:
        _writable(figures)
    error = f"jepa-geometry: error: the page's figures go to {figures}, but {figures} is"
    assert _error_line(res).startswith(error), res.stderr
    assert not any(stamps.iterdir())


def test_a_bad_workers_variable_stops_a_chapter_before_its_kernel_starts(one_slow_page, tmp_path):
    """``$JEPA_GEOMETRY_WORKERS=abc`` stops ``chapter`` in one line, as ``book`` and ``study``
    (it failed ch03 in a cell after 24 s, and ch04 ignored it)."""
    book, stamps = one_slow_page
    cmd = [*CLI, "chapter", "ch01_slow"]
    res = _run(cmd, book, JEPA_GEOMETRY_DATA=str(tmp_path / "data"), JEPA_GEOMETRY_WORKERS="abc")
    said = "jepa-geometry: error: $JEPA_GEOMETRY_WORKERS must be an integer >= 1, got 'abc'"
    assert _error_line(res) == said
    assert not any(stamps.iterdir())


def test_a_task_page_states_its_cost_before_its_kernel_starts(data_root, monkeypatch, capsys):
    """``chapter ch06_tworoom_planning -p profile=laptop`` from an empty cache: hours of work,
    stated in one line before the kernel starts (here the kernel is where the test stops,
    the hours not spent)."""
    said = []

    def kernel(*args, **kwargs):
        said.append(capsys.readouterr().out)
        raise RuntimeError("the test stops here")

    monkeypatch.setattr(papermill, "execute_notebook", kernel)
    assert main(["chapter", "ch06_tworoom_planning", "-p", "profile=laptop"]) == 2
    (statement,) = said[0].splitlines()
    hours = re.fullmatch(
        r"ch06_tworoom_planning \(profile=laptop\) reads the tworoom study: (\d+) of its \1 "
        r"units are not in the cache: about (\d+\.\d) core-hours of work, about [\d.]+ h of wall "
        r"time on \d+ cores? of this machine \(estimated as `jepa-geometry grid --tasks tworoom "
        r"--dry-run --profile laptop`\)",
        statement,
    )
    assert hours and float(hours.group(2)) > 0, statement
    assert not data_root.exists() or not any(data_root.rglob("*"))


def test_a_page_s_cost_counts_what_it_reads_and_a_deleted_result(tmp_path, monkeypatch, capsys):
    """Issue 70, breakage 7: on an untouched clone the Two-Room planning page said "2 of its 90
    units are not in the cache" (the stand-in's pretraining and a gate cell past its climb's
    stop, which no page reads) and then built nothing; after a committed cell's
    ``episodes.parquet`` was deleted the line was the same. Here the page's statement, from the
    committed evidence alone: nothing to build; with one result deleted, that cell and what
    planning it needs (the model's weights and the dataset's frames the evidence leaves out)."""
    from jepa_geometry.artifacts import CACHE_ONLY_ENV, DATA_ENV, READ_ONLY_ENV

    evidence = tmp_path / "evidence"
    shutil.copytree(REPO / "evidence" / "laptop", evidence)
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "data"))
    monkeypatch.setenv(READ_ONLY_ENV, str(evidence))
    monkeypatch.setenv(CACHE_ONLY_ENV, "1")
    argv = ["chapter", "ch06_tworoom_planning", "--dry-run"]
    assert main(argv) == 0
    nothing = r"all \d+ of its units are in the cache, nothing to build"
    assert re.search(nothing, capsys.readouterr().out)
    cell = sorted((evidence / "results").glob("plan-tworoom/*/episodes.parquet"))[0]
    cell.unlink()
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert re.search(r": 3 of its \d+ units are not in the cache: about", said), said
