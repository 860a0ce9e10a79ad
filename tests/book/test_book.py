"""The chapter pipeline: parameter validation, papermill on MyST sources, failures."""

import importlib.util
import io
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import jupytext
import pytest
import yaml

from jepa_geometry.book.pipeline import (
    ChapterError,
    book_pages,
    build_book,
    chapter_sources,
    execution_order,
    parameters_of,
    run_chapter,
    validate_parameters,
)
from jepa_geometry.jobs import default_workers
from jepa_geometry.profiles import ProfileError
from tests.conftest import REPO

FIRST = REPO / "chapters" / "ch01_metric_leverage.md"


def test_toc_lists_existing_chapters_with_parameters():
    sources = chapter_sources(REPO)
    assert sources and sources[0] == FIRST
    for src in sources:
        params = parameters_of(jupytext.read(src))
        assert "profile" in params and params["profile"] == "laptop"


def test_no_executed_notebook_next_to_sources():
    assert not list((REPO / "chapters").glob("*.ipynb"))


def test_validate_parameters_rejects_bad_input():
    defaults = {"profile": "laptop", "seed": 0, "scales": [1.0]}
    validate_parameters("ch", defaults, {"profile": "smoke", "seed": 3})
    with pytest.raises(
        ChapterError, match=r"unknown parameter 'sede'; valid: profile, scales, seed"
    ):
        validate_parameters("ch", defaults, {"sede": 3})
    with pytest.raises(ChapterError, match=r"'seed' must be int"):
        validate_parameters("ch", defaults, {"seed": "three"})
    with pytest.raises(
        ProfileError, match=r"unknown profile 'nosuch'; valid: smoke, laptop, paper"
    ):
        validate_parameters("ch", defaults, {"profile": "nosuch"})


def test_parameters_cell_must_hold_literals(tmp_path):
    nb = jupytext.read(FIRST)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    cell.source = "import os\nprofile = 'laptop'"
    with pytest.raises(ChapterError, match="only hold 'name = literal'"):
        parameters_of(nb)


def test_run_chapter_fails_before_execution_on_unknown_parameter(tmp_path):
    with pytest.raises(ChapterError, match="unknown parameter 'nosuch'"):
        run_chapter(FIRST, tmp_path / "out.ipynb", {"nosuch": 1})
    assert not (tmp_path / "out.ipynb").exists()


def _papermill(*args, cwd=REPO):
    return subprocess.run(
        [sys.executable, "-m", "papermill", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_papermill_reads_chapter_and_rejects_unknown_profile(tmp_path):
    out = tmp_path / "out.ipynb"
    res = _papermill("chapters/ch01_metric_leverage.md", str(out), "-p", "profile", "nosuch")
    assert res.returncode != 0
    assert "unknown profile 'nosuch'; valid: smoke, laptop, paper" in res.stderr + res.stdout


def test_papermill_rejects_unknown_parameter_in_first_cell(tmp_path):
    res = _papermill(
        "chapters/ch01_metric_leverage.md",
        str(tmp_path / "o.ipynb"),
        "-p",
        "profile",
        "smoke",
        "-p",
        "sede",
        "1",
    )
    assert res.returncode != 0
    assert "unknown parameter 'sede'" in res.stderr + res.stdout


def test_cli_chapter_rejects_wrong_type(tmp_path):
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


@pytest.mark.parametrize(
    ("chapter", "name", "value", "message"),
    [  # the values a fault-injection probe found passing validation, and a few more
        (
            "ch01_metric_leverage",
            "trained_seed",
            -1,
            "must be an integer from 0 to 4294967295, got -1",
        ),
        ("ch01_metric_leverage", "trained_task", "foo", "must be one of tworoom, pusht"),
        ("ch01_metric_leverage", "trained_arm", "nosuch", "must be an arm"),
        ("ch03_prediction_vs_planning", "num_seeds", "abc", "null or an integer from 1 to 10000"),
        ("ch03_prediction_vs_planning", "num_seeds", 0, "null or an integer from 1 to 10000"),
        ("ch03_prediction_vs_planning", "kappa", "abc", "null or a finite number >= 1"),
        ("ch03_prediction_vs_planning", "kappa", 0.5, "null or a finite number >= 1"),
        ("ch03_prediction_vs_planning", "kappa", float("inf"), "null or a finite number >= 1"),
        ("ch03_prediction_vs_planning", "kappa", float("nan"), "null or a finite number >= 1"),
        ("ch03_prediction_vs_planning", "regularizers", ["sigreg", "x"], "regularizers \\(sigreg"),
        ("ch03_prediction_vs_planning", "num_seeds", 10_001, "from 1 to 10000, got 10001"),
        ("ch01_metric_leverage", "seed", 2**32, "from 0 to 4294967295, got 4294967296"),
        ("ch01_metric_leverage", "seed", 2**32 - 1, None),  # the largest seed passes
        ("ch05_world_model", "arms", [], "must not be an empty list"),
        ("ch05_world_model", "arms", ["lewm", "lewm"], "list of distinct arms"),
        ("ch02_isotropy_regret", "sigma_eigenvalues", [1.0, 4.0], "the major one first"),
        ("ch02_isotropy_regret", "etas", [0.1, -1.0], "numbers > 0"),
        ("ch02_isotropy_regret", "etas", [0.1, 0.1], "distinct finite numbers"),
        ("ch02_isotropy_regret", "sigma_eigenvalues", [2.0, 2.0], None),  # isotropic: allowed
        ("ch02_isotropy_regret", "sigma_angle", float("-inf"), "a finite number of degrees"),
        ("ch07_geometry", "landscape_examples", 0, "an integer from 1 to 10000"),
        ("ch07_geometry", "task", "reacher", None),  # a task with a study: passes the rules
        ("ch07_geometry", "task", "nosuch", "a task with a study file: cube, pointmaze, pusht, "),
        ("ch06_planning", "task", "cube", "a task whose study plans: pointmaze, pusht, reacher, "),
        ("ch06_gate", "task", "reacher", "a task with a study file and a ladder: cube, pusht"),
    ],
)
def test_chapter_parameters_out_of_range_stop_before_execution(chapter, name, value, message):
    source = REPO / "chapters" / f"{chapter}.md"
    defaults = parameters_of(jupytext.read(source))
    assert name in defaults
    if message is None:
        validate_parameters(chapter, defaults, {name: value})
        return
    with pytest.raises(ChapterError, match=message) as err:
        run_chapter(source, REPO / "nothing-written.ipynb", {name: value})
    assert "\n" not in str(err.value) and f"{name!r}" in str(err.value)
    assert not (REPO / "nothing-written.ipynb").exists()


def test_every_chapter_parameter_has_a_type_or_a_rule():
    """A parameter whose default is None declares what it may be (a rule), or the pipeline
    could not check it before work starts."""
    from jepa_geometry.book.parameters import RULES, check_parameter

    for source in chapter_sources(REPO):
        defaults = parameters_of(jupytext.read(source))
        for name, default in defaults.items():
            if name == "profile":
                continue
            assert default is not None or name in RULES, f"{source.name}: {name} has no rule"
            check_parameter(source.stem, name, default)  # the defaults obey their own rules


def test_chapters_are_found_by_name_prefix_or_any_path(tmp_path, monkeypatch):
    from jepa_geometry.book.pipeline import resolve_chapter

    assert resolve_chapter("ch02").name == "ch02_isotropy_regret.md"
    assert resolve_chapter("ch02_isotropy_regret") == resolve_chapter(
        "chapters/ch02_isotropy_regret.md"
    )
    monkeypatch.chdir(REPO / "chapters")
    assert resolve_chapter("./ch02_isotropy_regret.md") == resolve_chapter("ch02")
    with pytest.raises(ChapterError, match=r"unknown chapter 'ch0'; valid: ch01_metric_leverage, "):
        resolve_chapter("ch0")


def test_a_run_with_its_own_parameters_gets_its_own_folder():
    from jepa_geometry.book.pipeline import RUNS_DIR, run_folder

    defaults = {"profile": "laptop", "seed": 0}
    assert run_folder("ch01", defaults, {}) is None
    assert run_folder("ch01", defaults, {"profile": "laptop", "seed": 0}) is None  # the book's
    a = run_folder("ch01", defaults, {"seed": 3, "profile": "smoke"})
    assert a.parent == REPO / RUNS_DIR / "ch01" and a.name.startswith("profile=smoke,seed=3-")
    assert a == run_folder("ch01", defaults, {"profile": "smoke", "seed": 3})  # order-free
    assert a != run_folder("ch01", defaults, {"seed": 4, "profile": "smoke"})


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
    (a serial build would time out), each kernel on its share of the cores (OpenMP threads
    and build jobs alike); ``ch08_across`` starts only after both have ended."""
    stamps = tmp_path / "stamps"
    stamps.mkdir()
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    share = str(max(default_workers() // 2, 1))
    bodies = {}
    for me, other in (("ch01_a", "ch02_b"), ("ch02_b", "ch01_a")):
        body = (
            f"import os\n"
            f"assert os.environ['OMP_NUM_THREADS'] == {share!r}\n"
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
    """``build_book`` builds AnisoWM's κ sweep (``kappa_build.build_sweep``, here recorded
    instead of run) once, between the first wave of pages and the cross-task page."""
    from jepa_geometry.book import pipeline

    tiny_book(tmp_path, {"ch01_a": "pass", "ch08_across": "pass"}, ("ch08_across", "ch01_a"))
    monkeypatch.chdir(tmp_path)
    log = io.StringIO()
    calls = []

    def record(base, sweep, workers, progress, say):
        calls.append(base.name)
        say("κ sweep cost estimate: recorded")

    monkeypatch.setattr(pipeline.kappa_build, "build_sweep", record)
    build_book("smoke", out_dir=tmp_path / "out", stream=log, progress=False)
    text = log.getvalue()
    assert calls == ["smoke"]
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


def test_present_removes_the_plumbing_and_keeps_what_a_reader_needs():
    import nbformat

    from jepa_geometry.book.pipeline import present

    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell
    nb.cells = [
        code("profile = 'laptop'", metadata={"tags": ["parameters"]}),
        code("profile = 'smoke'", metadata={"tags": ["injected-parameters"]}),
        code("import numpy as np\nfrom myst_nb import glue"),
        code("cfg = jg.setup_chapter(globals(), 'ch02')"),
        code('glue("a", 1, display=False)\nglue("b", 2, display=False)'),
        code('glue("c", table)', outputs=[nbformat.v4.new_output("display_data", {})]),
        code("x = lg.covariance_2d([4.0, 1.0], 45.0)\nglue('x', x, display=False)"),
        code("%matplotlib inline"),
        code(
            's = study.load(cfg)\nglue("n", len(s),\n     display=False)  # fmt: skip\nglue("t", s)'
        ),
        code('a = 1; glue("a", a, display=False)\nb = 2'),
    ]
    present(nb)
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    removed = ["remove-cell" in t for t in tags]
    assert removed == [True, True, True, False, True, False, False, False, False, False]
    # a cell that computes and glues shows the computation, not the quiet glue lines (a glue
    # that displays, and a line shared with another statement, stay)
    assert nb.cells[6].source == "x = lg.covariance_2d([4.0, 1.0], 45.0)"
    assert nb.cells[8].source == 's = study.load(cfg)\nglue("t", s)'
    assert nb.cells[9].source == 'a = 1; glue("a", a, display=False)\nb = 2'
    assert "remove-input" in tags[3]  # the setup cell's output (the parameters) stays
    assert tags[0] == ["parameters", "remove-cell"]  # papermill's tag is kept


def test_the_parameters_block_and_the_banner_name_the_profile():
    from jepa_geometry.book.pipeline import BANNERS, banner, parameters_html

    block = parameters_html(
        {"profile": "smoke", "seed": 3, "lam": 1.0}, {"profile": "laptop", "seed": 0, "lam": 1.0}
    )
    assert "profile <b>smoke</b>, 1 changed from the chapter" in block
    rows = block.split("<tr>")[2:]  # header first; changed parameters before the defaults
    assert [r.split("<code>")[1].split("<")[0] for r in rows] == ["profile", "seed", "lam"]
    assert "changed" in rows[1] and "default" in rows[2]
    assert banner({"ch01": "smoke", "ch02": "smoke"}) == BANNERS["smoke"]
    mixed = banner({"ch01": "smoke", "ch02": "laptop"})
    assert mixed.startswith("<b>Mixed build.</b>") and "<b>laptop</b>: ch02" in mixed


def test_a_chapter_page_numbers_its_figures_and_tables_from_its_chapter():
    spec = importlib.util.spec_from_file_location("numbering", REPO / "book/_ext/numbering.py")
    numbering = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(numbering)
    sphinx_numbers = {"figure": {"fig-b": (41,), "fig-a": (40,)}, "table": {"tbl-a": (97,)}}
    assert numbering.chapter_numbers("book/chapters/ch06_cube_gate", sphinx_numbers) == {
        "figure": {"fig-a": (6, 1), "fig-b": (6, 2)},  # reading order kept
        "table": {"tbl-a": (6, 1)},  # each kind counts from 1
    }
    assert numbering.chapter_numbers("book/reconstructions", sphinx_numbers)["figure"] == {
        "fig-a": (1,),
        "fig-b": (2,),
    }
