"""Running pages: one chapter with papermill (its failures named, its own run folder), the
whole book (side by side, the κ sweep and the cross-task page last), a reader's run."""

import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml

from jepa_geometry import cluster
from jepa_geometry.book.parameters import ChapterError
from jepa_geometry.book.run import (
    READ_LOGS_ENV,
    READ_LOGS_PREFIX,
    RUNS_DIR,
    build_book,
    cost_statement,
    execution_order,
    read_logs,
    run_chapter,
    run_experiment,
    run_folder,
)
from jepa_geometry.book.toc import book_pages
from jepa_geometry.jobs import default_workers
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.spec import load_study
from tests.conftest import REPO

FIRST = REPO / "chapters" / "ch01_metric_leverage.md"


def test_an_unknown_parameter_stops_a_chapter_before_it_executes(tmp_path):
    with pytest.raises(ChapterError, match="unknown parameter 'nosuch'"):
        run_chapter(FIRST, tmp_path / "out.ipynb", {"nosuch": 1})
    assert not (tmp_path / "out.ipynb").exists()


def test_a_reader_s_run_with_a_value_of_the_wrong_type_stops_in_one_line(tmp_path):
    res = subprocess.run(
        [
            Path(sys.executable).parent / "jepa-geometry",
            "chapter",
            str(FIRST),
            str(tmp_path / "o.ipynb"),
            "-p",
            "seed=abc",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    assert "'seed' must be int" in res.stderr


def test_failing_chapter_names_itself(tmp_path):
    bad = tmp_path / "chapters" / "ch99_broken.md"
    bad.parent.mkdir()
    bad.write_text(
        FIRST.read_text()
        .replace("ch01_metric_leverage", "ch99_broken")
        .replace("rng = np.random.default_rng(seed)", "raise ValueError('boom')")
    )
    (tmp_path / "data.dvc").write_text("outs: [{path: data}]\n")
    with pytest.raises(ChapterError, match=r"chapter ch99_broken failed in cell \d+: .*boom"):
        run_chapter(bad, tmp_path / "out.ipynb", {"profile": "smoke"})
    assert not (tmp_path / "out.ipynb").exists()


def test_a_page_run_alone_computes_on_one_thread_whatever_the_caller_set(tmp_path, monkeypatch):
    """Chapter 1's glued Monte Carlo check differed in its last digits between a page run
    alone on 2 BLAS threads and side by side on one: the kernel's own work is on one thread."""
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    threads = "os.environ['OMP_NUM_THREADS'], os.environ['OPENBLAS_NUM_THREADS']"
    body = f"import os\nassert ({threads}) == ('1', '1')"
    tiny_book(tmp_path, {"ch01_a": body}, ["ch01_a"])
    run_chapter(tmp_path / "chapters" / "ch01_a.md", tmp_path / "out.ipynb", {"profile": "smoke"})
    assert os.environ["OMP_NUM_THREADS"] == "2"  # the caller's own setting, restored


def test_read_logs_go_with_their_command_and_a_killed_command_s_with_the_next(
    tmp_path, monkeypatch
):
    """The pages' read logs live in a folder their command removes when it ends (an
    interrupted book's pages never removed theirs); a folder left by a command killed with
    kill -9 goes with the next command's, one whose command runs stays, and nothing else in
    the temporary directory is touched."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv(READ_LOGS_ENV, raising=False)
    ended = subprocess.Popen(["true"])
    ended.wait()
    killed = tmp_path / f"{READ_LOGS_PREFIX}{ended.pid}-abc"
    running = tmp_path / f"{READ_LOGS_PREFIX}{os.getppid()}-def"
    other = tmp_path / "ch01-reads-xyz.txt"
    for folder in (killed, running):
        folder.mkdir()
        (folder / "ch01_metric_leverage-1.txt").write_text("datasets/tworoom/abc\n")
    other.write_text("not ours")
    with read_logs() as folder:
        assert folder.parent == tmp_path and folder.name.startswith(READ_LOGS_PREFIX)
        assert os.environ[READ_LOGS_ENV] == str(folder)
        with read_logs() as inner:  # a page run by the command: the command's folder
            assert inner == folder
        assert folder.is_dir()
        assert not killed.exists()
    assert not folder.exists() and READ_LOGS_ENV not in os.environ
    assert running.is_dir() and other.read_text() == "not ours"


def test_a_run_with_its_own_parameters_gets_its_own_folder():
    defaults = {"profile": "laptop", "seed": 0}
    assert run_folder("ch01", defaults, {}) is None
    assert run_folder("ch01", defaults, {"profile": "laptop", "seed": 0}) is None  # the book's
    a = run_folder("ch01", defaults, {"seed": 3, "profile": "smoke"})
    assert a.parent == REPO / RUNS_DIR / "ch01" and a.name.startswith("profile=smoke,seed=3-")
    assert a == run_folder("ch01", defaults, {"profile": "smoke", "seed": 3})  # order-free
    assert a != run_folder("ch01", defaults, {"seed": 4, "profile": "smoke"})


def test_a_run_of_an_objective_file_is_keyed_by_the_file_s_content(tmp_path, monkeypatch):
    """Issue 71: the weight-0.1 run of ``mine.py`` overwrote the weight-0.05 one (the folder
    was named from the parameters); each version of the file now has a folder of its own,
    named by the task, the file's stem and its sha256, and the same bytes the same folder."""
    import hashlib

    mine = tmp_path / "mine.py"
    source = (REPO / "examples" / "objectives" / "variance_match.py").read_text()
    defaults = {"profile": "laptop", "task": "tworoom", "objective": "x.py", "seeds": None}
    given = {"objective": str(mine), "profile": "smoke"}
    mine.write_text(source.replace("WEIGHT = 0.1", "WEIGHT = 0.05"))
    first = run_folder("ch10_own_objective", defaults, given)
    sha = hashlib.sha256(mine.read_bytes()).hexdigest()[:8]
    assert first.name.startswith(f"tworoom-mine-{sha}-profile=smoke-"), first.name
    mine.write_text(source)
    second = run_folder("ch10_own_objective", defaults, given)
    assert second != first and second.parent == first.parent
    assert second == run_folder("ch10_own_objective", defaults, given)  # the same bytes


def test_a_run_folder_cuts_only_its_readable_part_never_the_task_or_the_hash():
    """The Reacher run's folder lost its task to a 60-character cut; two runs whose long
    parameters share their first characters still get two folders."""
    defaults = {"profile": "laptop", "task": "tworoom", "note": ""}
    long = "x" * 200
    a = run_folder("ch06_planning", defaults, {"task": "reacher", "note": long + "a"})
    b = run_folder("ch06_planning", defaults, {"task": "reacher", "note": long + "b"})
    assert a.name.startswith("reacher-note=xxx") and b.name.startswith("reacher-")
    assert a != b and len(a.name) < 100


def test_a_chapter_run_builds_into_the_cache_every_command_uses(monkeypatch, tmp_path):
    """Issue 71: a run with its own parameters wrote its models to ``runs/<...>/data``, which
    ``train``, ``study``, ``grid`` and its own cost line never read; its artifacts now go to
    its profile's cache (or ``$JEPA_GEOMETRY_DATA``), its notebook to its own folder."""
    from jepa_geometry.artifacts import DATA_ENV, profile_cache

    seen = {}

    def fake(source, output, parameters, **kw):
        seen.update(output=output, cache=os.environ[DATA_ENV])
        raise RuntimeError("stop")

    monkeypatch.setattr("jepa_geometry.book.run.run_chapter", fake)
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(RuntimeError):
        run_experiment("ch06_reacher_planning", {"profile": "smoke"})
    assert seen["cache"] == str(profile_cache("smoke"))
    assert "runs" in seen["output"].parts and seen["output"].parent.name.startswith("reacher-")
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "mine"))
    with pytest.raises(RuntimeError):
        run_experiment("ch06_reacher_planning", {"profile": "smoke"})
    assert seen["cache"] == str(tmp_path / "mine")


def test_chapter_dry_run_states_the_cost_and_the_folder_and_runs_nothing(
    data_root, monkeypatch, capsys
):
    from jepa_geometry.cli import commands, main

    monkeypatch.setenv("JEPA_GEOMETRY_WORKERS", "2")
    monkeypatch.setattr(commands, "run_experiment", lambda *a: pytest.fail("it ran"))
    monkeypatch.setattr(commands, "run_chapter", lambda *a, **k: pytest.fail("it ran"))
    obj = "examples/objectives/variance_match.py"
    args = ["chapter", "ch10_own_objective", "-p", f"objective={obj}", "-p", "profile=smoke"]
    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ch10_own_objective (profile=smoke): 10 of its 10 units"), out
    assert "core-hours of work" in out[0] and "of wall time on 2 cores" in out[0]
    assert "the new arm variance_match" in out[0]
    assert out[1].startswith("would write: ") and "tworoom-variance_match-" in out[1]


def test_make_book_at_smoke_never_touches_the_book_s_data():
    out = subprocess.run(
        ["make", "-n", "book", "PROFILE=smoke"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "jepa-geometry book --profile smoke" in out
    assert "dvc add" not in out and "data-push" not in out and "data-pull" not in out
    laptop = subprocess.run(
        ["make", "-n", "book"], cwd=REPO, capture_output=True, text=True, timeout=60
    ).stdout
    assert "data-push" in laptop and "data-pull" in laptop
    # a reader learns whether the pages' values are the committed ones (issue 70: a tampered
    # evidence value was rendered silently): laptop only, and it never fails the build
    assert "jepa-geometry evidence diff --profile laptop" in laptop
    assert "-$(BIN)/jepa-geometry evidence diff" in (REPO / "Makefile").read_text()  # never fails
    assert "evidence diff" not in out


_TINY_CHAPTER = """---
jupytext:
  text_representation: {{extension: .md, format_name: myst}}
kernelspec: {{display_name: Python 3, language: python, name: python3}}
---

# {name}

```{{code-cell}} python
:tags: [parameters]
profile = "laptop"
```

```{{code-cell}} python
import pathlib, time
{body}
```
"""


def tiny_book(root: Path, bodies: dict[str, str], toc: Sequence[str]) -> None:
    """A book in ``root``: a chapter per name of ``bodies`` running that code (after
    ``import pathlib, time``), its ``_toc.yml`` listing the pages ``toc`` in that order, and the
    ``data.dvc`` that marks the repository's root."""
    (root / "chapters").mkdir()
    for name, body in bodies.items():
        (root / "chapters" / f"{name}.md").write_text(_TINY_CHAPTER.format(name=name, body=body))
    chapters = [{"file": f"book/chapters/{p}"} for p in toc]
    (root / "_toc.yml").write_text(
        yaml.safe_dump({"format": "jb-book", "root": "book/intro", "chapters": chapters})
    )
    (root / "data.dvc").write_text("outs: [{path: data}]\n")


@pytest.mark.slow
def test_pages_run_side_by_side_and_the_cross_task_page_after_them(tmp_path, monkeypatch):
    """``jobs=2``: the two pages of the first wave each wait for the other to have started
    (a serial build would time out), each kernel's build jobs on its share of the cores and
    its own work on one thread, whatever the caller set; ``ch08_across`` starts only after
    both have ended."""
    stamps = tmp_path / "stamps"
    stamps.mkdir()
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    share = str(max(default_workers() // 2, 1))
    bodies = {}
    for me, other in (("ch01_a", "ch02_b"), ("ch02_b", "ch01_a")):
        body = (
            f"import os\n"
            f"assert os.environ['OMP_NUM_THREADS'] == os.environ['OPENBLAS_NUM_THREADS'] == '1'\n"
            f"assert os.environ['JEPA_GEOMETRY_WORKERS'] == {share!r}\n"
            f"pathlib.Path({str(stamps / me)!r}).touch()\n"
            f"deadline = time.time() + 120\n"
            f"while not pathlib.Path({str(stamps / other)!r}).exists():\n"
            f"    assert time.time() < deadline, 'the other page never started'\n"
            f"    time.sleep(0.1)\n"
            f"time.sleep(1)\n"
            f"pathlib.Path({str(stamps / (me + '.done'))!r}).touch()"
        )
        bodies[me] = body
    done = [str(stamps / f"{p}.done") for p in ("ch01_a", "ch02_b")]
    last = f"assert all(pathlib.Path(p).exists() for p in {done!r})"
    names = ("ch08_across", "ch01_a", "ch02_b")  # the cross-task page listed first, run last
    tiny_book(tmp_path, {"ch08_across": last, **bodies}, names)
    monkeypatch.chdir(tmp_path)
    log = io.StringIO()
    runs = build_book(  # these pages read no κ sweep: no need to build it
        "smoke", out_dir=tmp_path / "out", stream=log, progress=False, jobs=2, kappa_sweep=False
    )
    assert [r.name for r in runs] == list(names)  # reported in the toc's order
    assert all((tmp_path / "out" / f"{r.name}.ipynb").is_file() for r in runs)
    assert "2 of 3 pages, 2 at a time" in log.getvalue()  # counted as the lines count: [1/3]
    with pytest.raises(ValueError, match="workers must be an integer >= 1, got 0"):
        build_book("smoke", out_dir=tmp_path / "out", jobs=0)


def test_the_kappa_sweep_is_built_after_the_task_pages_and_before_the_cross_task_page(
    tmp_path, monkeypatch
):
    """``build_book`` builds AnisoWM's κ sweep (``cluster.build_here`` of ``kappa.GRID``,
    here recorded instead of run) once, between the first wave of pages and the cross-task
    page."""
    tiny_book(tmp_path, {"ch01_a": "pass", "ch08_across": "pass"}, ("ch08_across", "ch01_a"))
    monkeypatch.chdir(tmp_path)
    log = io.StringIO()
    calls = []

    def record(ext, base, workers, progress, say):
        calls.append((ext.name, base.name))
        say("κ sweep cost estimate: recorded")

    monkeypatch.setattr("jepa_geometry.book.run.cluster.build_here", record)
    build_book("smoke", out_dir=tmp_path / "out", stream=log, progress=False)
    text = log.getvalue()
    assert calls == [("kappa", "smoke")]
    assert (
        text.index("ch01_a: ")
        < text.index("κ sweep cost estimate")
        < text.index("ch08_across (profile=smoke)")
    )
    calls.clear()
    build_book("smoke", out_dir=tmp_path / "out2", stream=log, progress=False, kappa_sweep=False)
    assert calls == []


def test_pages_start_chapter_by_chapter_the_ladder_first_the_cross_task_page_last():
    pages = book_pages(REPO)
    order = execution_order(pages)
    assert sorted(p.name for p in order) == sorted(p.name for p in pages)  # nothing lost
    names = [p.name for p in order]
    assert names[0] == "ch06_cube_gate" and names[-1] == "ch08_across"
    stems = [p.source.stem for p in order]
    changes = sum(a != b for a, b in zip(stems, stems[1:], strict=False))
    assert changes == len(set(stems)) - 1  # each chapter's pages are contiguous
    for task in ("tworoom", "reacher", "pointmaze", "pusht"):  # every planning page before
        assert names.index(f"ch07_{task}_geometry") > max(  # any geometry page
            i for i, n in enumerate(names) if n.startswith("ch06_") and n.endswith("_planning")
        )
    within = [p for p in order if p.source.stem == "ch06_planning"]
    assert within == [p for p in pages if p.source.stem == "ch06_planning"]  # reading order


def test_task_pages_outside_the_book_run_in_their_own_folder(monkeypatch):
    """The Reacher page at its own parameters is the book's run; another profile is not."""
    seen = {}

    def fake(source, output, parameters, **kw):
        seen.update(output=output, parameters=parameters)
        raise RuntimeError("stop")

    monkeypatch.setattr("jepa_geometry.book.run.run_chapter", fake)
    with pytest.raises(RuntimeError):
        run_experiment("ch06_reacher_planning", {})
    assert seen["output"].name == "ch06_reacher_planning.ipynb"
    assert seen["output"].parent.name == "chapters" and seen["parameters"]["task"] == "reacher"
    with pytest.raises(RuntimeError):
        run_experiment("ch06_reacher_planning", {"profile": "smoke"})
    assert "runs" in seen["output"].parts and seen["parameters"]["task"] == "reacher"


def test_a_task_page_states_the_cost_of_its_study_at_the_study_s_own_rung(data_root, monkeypatch):
    """Push-T's laptop study runs at its 96 px rung: the page's statement prices the grid of
    that study (``grid --tasks pusht --dry-run``), not the rung applied twice (144 px)."""
    monkeypatch.setenv("JEPA_GEOMETRY_WORKERS", "2")
    page = next(p for p in book_pages(REPO) if p.name == "ch06_pusht_planning")
    every = cluster.dry_run([load_study("pusht")], load_profile("laptop"), reads_only=True)
    units = every[every["read"]]  # not the ladder's rungs past the study's own (96 px):
    assert len(every) - len(units) == 5  # their dataset, two models and two gate cells
    said = cost_statement(page, {})
    assert f"{len(units)} of its {len(units)} units" in said, said
    assert f"about {cluster.core_hours(units)} of work" in said, said
    assert f"{cluster.span(cluster.wall_hours(units, 2))} of wall time on 2 cores" in said


def _student_page(path: Path) -> Path:
    """A tiny executed page (nothing runs): prose, a result, and the plumbing the book hides."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    result = new_code_cell("answer()", execution_count=1)
    result.outputs = [new_output("execute_result", {"text/plain": "0.731"}, execution_count=1)]
    plumbing = new_code_cell("hidden_setup()", metadata={"tags": ["remove-cell"]})
    nb = new_notebook(
        cells=[
            new_markdown_cell("# 3. A student's page\n\nThe planner reaches the goal."),
            result,
            plumbing,
        ]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_a_student_s_page_renders_as_html_beside_its_notebook(tmp_path):
    from jepa_geometry.book.html import notebook_html

    page = _student_page(tmp_path / RUNS_DIR / "ch03_x" / "seed=5-0123abcd" / "ch03_x.ipynb")
    html = notebook_html(page)
    assert html == page.with_suffix(".html") and html.is_file()
    text = html.read_text(encoding="utf-8")
    assert "The planner reaches the goal." in text and "0.731" in text
    assert "hidden_setup" not in text  # the book's hidden cells stay hidden


def test_jepa_geometry_chapter_prints_where_the_notebook_and_its_html_are(
    tmp_path, monkeypatch, capsys
):
    from jepa_geometry.book.run import ChapterRun
    from jepa_geometry.cli import commands, main

    page = _student_page(tmp_path / "ch03_x.ipynb")
    monkeypatch.setattr(commands, "cost_statement", lambda page, params: None)
    monkeypatch.setattr(commands, "resolve_page", lambda name: None)
    monkeypatch.setattr(commands, "run_experiment", lambda ch, p: ChapterRun("ch03_x", page, 1, 0))
    assert main(["chapter", "ch03_x", "-p", "seed=5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == [
        f"notebook: {page}",
        f"html:     {page.with_suffix('.html')}  (open it in a browser)",
    ]
    assert page.with_suffix(".html").is_file()
