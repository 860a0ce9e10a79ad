"""The book's one colour per arm and task and one display name per code name
(jepa_geometry.book.style): the same whichever arms a figure or a table shows."""

import pandas as pd

from jepa_geometry.book import style
from jepa_geometry.book.display import table_html
from jepa_geometry.envs import TASKS, task_title


def test_code_names_show_as_the_papers_name_them():
    shown = {
        "lewm": "LeWM",
        "scale+anisowm": "SCALE + AnisoWM",
        "scale-halfq": "SCALE half-q",
        "lewm+examples/objectives/mine.py": "LeWM + mine",
        # a reader's arm as its checkpoints and claims name it (wm.arms.arm_label)
        "examples/objectives/mine.py": "mine",
        "scale+examples/objectives/mine.py": "SCALE + mine",
        "lewm+mine": "LeWM + mine",  # a reader's term named by its stem stays as it is
        "lambda_reg": "ΛReg",
        "kappa": "κ",
        "ratio_p90_over_p10": "p90/p10 ratio",
        "goal100_budget150": "goal 100, budget 150",
        "mppi_swm": "MPPI at T = 0.5",
        "tworoom": "Two-Room",
        "random": "random",
        "a+b": "a+b",  # no part is an arm: not an arm's name
    }
    assert {c: style.display_name(c) for c in shown} == shown
    assert style.named("ceiling - lewm (pp)") == "ceiling - LeWM (pp)"
    assert style.named("a_only") == "a_only"  # a header's words are the page's (display.header)
    assert style.label("a_only") == style.label("a only") == "a only"  # a figure's are its own


def test_an_arm_has_one_colour_whatever_else_is_drawn():
    assert len(set(style.ARM_COLOURS.values())) == len(style.ARM_COLOURS)
    assert not set(style.OWN_ARM_COLOURS) & set(style.ARM_COLOURS.values())
    own = style.arm_colour("lewm+examples/objectives/mine.py")
    assert own in style.OWN_ARM_COLOURS and own == style.arm_colour("lewm+mine")
    assert {style.task_colour(t) for t in TASKS} == set(style.TASK_COLOURS.values())
    assert all(style.task_colour(task_title(t)) == style.task_colour(t) for t in TASKS)


def test_a_shown_frame_names_its_headers_rows_and_chosen_cells_and_keeps_row_numbers_hidden():
    df = pd.DataFrame({"arm": ["lewm", "scale"], "solver": ["mppi_swm", "cem"], "lewm (%)": [1, 2]})
    out = style.shown(df, cells=["arm"])
    assert list(out.columns) == ["arm", "solver", "LeWM (%)"]
    assert list(out["arm"]) == ["LeWM", "SCALE"] and list(out["solver"]) == ["mppi_swm", "cem"]
    assert "row_heading" not in table_html(out)  # still pandas' 0..n-1: hidden
    assert list(style.shown(df.set_index("arm")).index) == ["LeWM", "SCALE"]


def test_a_reader_s_arm_keeps_its_name_in_a_table_s_header() -> None:
    """A reader's arm is its objective file's stem in every table: a header that would read an
    identifier's underscores as spaces keeps the stem as written once the arm was named."""
    from jepa_geometry.book.display import header

    assert (
        header("header_probe_term") == "header probe term"
    )  # an identifier nobody named as an arm
    assert style.display_name("examples/objectives/header_probe_term.py") == "header_probe_term"
    assert header("header_probe_term") == "<code>header_probe_term</code>"
