"""A chapter's parameters: its cell of literals, the type of each default, the rule of each name;
a bad value stops in one line before any work."""

import jupytext
import pytest

from jepa_geometry.book.parameters import (
    RULES,
    ChapterError,
    check_parameter,
    parameters_of,
    validate_parameters,
)
from jepa_geometry.book.run import run_chapter
from jepa_geometry.book.toc import book_pages
from jepa_geometry.profiles import ProfileError
from tests.conftest import REPO

FIRST = REPO / "chapters" / "ch01_metric_leverage.md"


def test_an_unknown_name_a_wrong_type_or_an_unknown_profile_names_the_valid_choices():
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
        # chapter 10 judges the reader's arm on every task and solver it is given, on one page
        ("ch10_own_objective", "task", ["tworoom", "reacher"], None),
        ("ch10_own_objective", "task", ["tworoom", "nosuch"], "or a list of distinct such"),
        ("ch10_own_objective", "task", ["tworoom", "tworoom"], "or a list of distinct such"),
        ("ch10_own_objective", "solvers", ["cem", "icem"], None),
        ("ch10_own_objective", "solvers", ["mppi"], "distinct solvers of cem, icem \\(MPPI"),
        ("ch10_own_objective", "solvers", "cem", "must be list \\(default \\['cem'\\]\\)"),
        ("ch06_planning", "task", ["tworoom", "reacher"], "must be str"),  # chapter 10's only
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
    for source in dict.fromkeys(p.source for p in book_pages(REPO)):
        defaults = parameters_of(jupytext.read(source))
        for name, default in defaults.items():
            if name == "profile":
                continue
            assert default is not None or name in RULES, f"{source.name}: {name} has no rule"
            check_parameter(source.stem, name, default)  # the defaults obey their own rules
