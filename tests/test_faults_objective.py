"""Fault injection for a loss term of the reader's own: every bad objective file stops in one
line naming the file and what was wrong, before any work when the file itself is wrong (the
cache stays empty), at the first step when the values its term returns are (no model is
stored), and where its loss is logged when it goes bad later.

Each case is the command line's ``train`` at smoke (the chapter's parameters and ``grid``
last), so what is tested is what a user sees."""

from __future__ import annotations

import shutil
from pathlib import Path

import papermill
import pytest

from jepa_geometry.cli import main
from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.training import world_model_artifact
from tests.conftest import REPO
from tests.test_faults import files_under

TRAIN = ["train", "--task", "tworoom", "--profile", "smoke"]
STEPS = {"train.steps": 4, "train.log_every": 2}

LOAD_FAULTS = {  # the file itself: stops before any work
    "missing": (None, "not found"),
    "syntax": ("def term(z, z_hat, q, step)\n    return z.mean()\n", "line 1): SyntaxError"),
    "import": ("import no_such_module_here\n", "(line 1): ModuleNotFoundError"),
    "raises": ("x = 1\nraise RuntimeError('boom')\n", "(line 2): RuntimeError: boom"),
    "no_term": ("def loss(z, z_hat, q, step):\n    return z.mean()\n", "defines no function"),
    "not_callable": ("term = 3\n", "defines no function term(z, z_hat, q, step)"),
    "signature": ("def term(z):\n    return z.mean()\n", "term must accept term(z, z_hat"),
}
STEP_FAULTS = {  # what the term returns: stops at the first step
    "vector": ("return z.mean(0)", "must be a scalar (shape ()), got shape (4, 32)"),
    "integer": ("return torch.tensor(3)", "must be a scalar float tensor, got torch.int64"),
    "string": ("return 'small'", "must be a scalar float tensor, got str"),
    "triple": ("return z.mean(), {}, 1", "got a tuple of 3"),
    "nan": ("return z.mean() * float('nan')", "term's value is nan at step 0"),
    "bad_diagnostic": ("return z.mean(), {'d': z.std(0)}", "diagnostic 'd' must be a scalar"),
    "inf_diagnostic": (
        "return z.mean(), {'d': z.mean().abs() / 0}",
        "diagnostic 'd' is inf at step 0",
    ),
    "bug": ("return z.no_such_method()", "term raised at step 0 (line 4): AttributeError"),
    # a value without a gradient to z or z_hat would train the arm as if without the term
    "detached": ("return z.mean().detach()", "returned a value with no gradient to z or z_hat"),
    "item": ("return z.mean().item()", "returned a Python float at step 0, not a tensor"),
    "constant": ("return torch.tensor(0.5)", "returned a value with no gradient to z or z_hat"),
    "nan_later": (
        "return z.mean() * (float('nan') if step == 3 else 1.0)",
        "objective not finite between steps 2 and 3",
    ),
}


def _file(folder: Path, name: str, body: str | None) -> Path:
    path = folder / f"{name}.py"
    if body is not None:
        path.write_text(body)
    return path


def _one_error_line(capsys, path: Path, message: str) -> None:
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1, err
    assert f"objective file {path}" in err[0] and message in err[0], err[0]


@pytest.mark.parametrize("case", list(LOAD_FAULTS))
def test_a_bad_objective_file_stops_in_one_line_before_any_work(case, data_root, tmp_path, capsys):
    body, message = LOAD_FAULTS[case]
    path = _file(tmp_path, case, body)
    assert main([*TRAIN, "--arm", f"lewm+{path}"]) == 2
    _one_error_line(capsys, path, message)
    assert not data_root.exists() or files_under(data_root) == []


@pytest.mark.parametrize("case", list(STEP_FAULTS))
def test_a_bad_value_of_the_term_stops_in_one_line_and_stores_no_model(
    case, smoke_datasets, data_root, tmp_path, capsys
):
    line, message = STEP_FAULTS[case]
    body = f"import torch\n\ndef term(z, z_hat, q, step):\n    {line}\n"
    path = _file(tmp_path, case, body)
    shutil.copytree(smoke_datasets / "tworoom", data_root / "datasets" / "tworoom")
    sets = [x for k, v in STEPS.items() for x in ("--set", f"{k}={v}")]
    assert main([*TRAIN, "--arm", f"lewm+{path}", *sets]) == 2
    _one_error_line(capsys, path, message)
    profile = load_profile("smoke", STEPS)
    assert not world_model_artifact("tworoom", f"lewm+{path}", 0, profile).exists()


def test_the_example_file_is_a_valid_term(capsys):
    """The file the chapter and the README use by default passes every check above."""
    example = REPO / "examples" / "objectives" / "variance_match.py"
    argv = ["grid", "--tasks", "tworoom", "--arms", f"lewm,scale,lewm+{example}", "--dry-run"]
    assert main([*argv, "--profile", "smoke"]) == 0, capsys.readouterr().err


BAD_ELSEWHERE = [
    ["grid", "--tasks", "tworoom", "--arms", "lewm,lewm+no_such_file.py", "--dry-run"],
    ["grid", "--tasks", "tworoom", "--arms", "scale,scale+no_such_file.py", "--dry-run"],
    ["study", "tworoom", "--arms", "lewm,lewm+mine", "--objective", "no_such_file.py"],
    ["plan", "--task", "tworoom", "--arm", "lewm+no_such_file.py"],
    ["chapter", "ch10_own_objective", "out.ipynb", "-p", "objective=no_such_file.py"],
    ["chapter", "ch10_own_objective", "out.ipynb", "-p", "objective=README.md"],
    ["chapter", "ch10_own_objective", "out.ipynb", "-p", "seeds=[0,0]"],
]


@pytest.mark.parametrize("argv", BAD_ELSEWHERE, ids=lambda a: " ".join(a)[:60])
def test_every_command_stops_on_a_bad_objective_in_one_line(argv, data_root, capsys, monkeypatch):
    def kernel(*args, **kwargs):  # a chapter must stop before its kernel starts
        raise AssertionError("a chapter with a bad objective started its kernel")

    monkeypatch.setattr(papermill, "execute_notebook", kernel)
    assert main([*argv, "--profile", "smoke"] if argv[0] != "chapter" else argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1, err
    assert not data_root.exists() or files_under(data_root) == []
    assert not (REPO / "out.ipynb").exists()


CHAPTER_10 = ["chapter", "ch10_own_objective", "out.ipynb", "-p", "profile=smoke"]
BAD_PARAMETERS = {  # a parameter, or an objective file of LOAD_FAULTS: what the line says
    "seeds=0": ("parameter 'seeds' must be null or a non-empty list", "such as [0]", "got 0"),
    "seeds=[-1]": ("parameter 'seeds' must be null or a non-empty list", "got [-1]"),
    "task='foo'": ("parameter 'task' must be a task whose study plans", "got 'foo'"),
    "no_term": ("parameter 'objective': objective file", "defines no function term(z, z_hat"),
    "syntax": ("parameter 'objective': objective file", "(line 1): SyntaxError"),
}


@pytest.mark.parametrize("case", list(BAD_PARAMETERS))
def test_chapter_10_checks_every_parameter_before_its_cost_statement(
    case, data_root, tmp_path, capsys, monkeypatch
):
    """A bad value of chapter 10's parameters stops in one line naming the parameter and what
    is valid, before the page states its cost (which reads them); a file that is there but
    wrong says what the loader found, not that the path is wrong."""

    def kernel(*args, **kwargs):
        raise AssertionError("a chapter with a bad parameter started its kernel")

    monkeypatch.setattr(papermill, "execute_notebook", kernel)
    given = case
    if case in LOAD_FAULTS:
        given = f"objective={_file(tmp_path, case, LOAD_FAULTS[case][0])}"
    assert main([*CHAPTER_10, "-p", given]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no cost line
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert all(part in lines[0] for part in BAD_PARAMETERS[case]), lines[0]
    assert "must be the path" not in lines[0]


def test_a_term_that_turns_nan_between_two_logged_rows_leaves_no_nan_checkpoint(
    smoke_datasets, data_root, tmp_path, capsys
):
    """Issue 70 (a nit): the term turns NaN at step 3, the log reads it only at step 5, and a
    checkpoint at step 4 held the NaN weights: a rerun resumed from them. Now the run stops at
    that checkpoint, in one line, and the checkpoint of step 2 (finite) is the one kept."""
    import torch

    from jepa_geometry.wm.checkpoint import read_resume

    body = (
        "def term(z, z_hat, q, step):\n    return z.mean() * (float('nan') if step == 3 else 1.0)\n"
    )
    path = _file(tmp_path, "nan_at_3", body)
    shutil.copytree(smoke_datasets / "tworoom", data_root / "datasets" / "tworoom")
    steps = {"train.steps": 6, "train.log_every": 5, "train.checkpoint_every": 2}
    sets = [x for k, v in steps.items() for x in ("--set", f"{k}={v}")]
    assert main([*TRAIN, "--arm", f"lewm+{path}", *sets]) == 2
    _one_error_line(capsys, path, "training diverged: weight")
    art = world_model_artifact("tworoom", f"lewm+{path}", 0, load_profile("smoke", steps))
    assert not art.exists()
    (resume,) = art.write_path.parent.glob(f".{art.key}.resume.pt")
    state = read_resume(resume)
    assert state["step"] == 2
    assert all(torch.isfinite(w).all() for w in state["model"].values())
