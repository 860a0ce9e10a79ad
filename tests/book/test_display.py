"""How a page shows a data frame (jepa_geometry.book.display)."""

import math

import numpy as np
import pandas as pd

from jepa_geometry.book.display import (
    Findings,
    format_number,
    header,
    styler_html,
    table_html,
    unbroken_intervals,
)


def test_numbers_read_as_a_reader_expects():
    cases = {
        74.0: "74",
        0.0: "0",
        1300: "1,300",
        0.123456: "0.1235",
        -0.5: "-0.5",
        12345.678: "12,346",
        3.2e-05: "3.2e-05",
        2.5e12: "2.5e+12",
        math.inf: "∞",
    }
    assert {k: format_number(k) for k in cases} == cases
    assert format_number(float("nan")) == format_number(None) == ""
    assert format_number(True) == "yes" and format_number(np.bool_(False)) == "no"
    assert format_number("lewm") == "lewm"


def test_a_table_has_blanks_no_row_numbers_and_renders_the_same_twice():
    df = pd.DataFrame({"rate": [74.0, np.nan], "arm": ["lewm", None]})
    html = table_html(df)
    cells = [c.split(">", 1)[1].split("<", 1)[0] for c in html.split("<td")[1:]]
    assert cells == ["74", "lewm", "", ""]
    assert "row_heading" not in html  # the 0..n index is hidden
    assert "nan" not in html.lower().replace("class", "") and html == table_html(df.copy())
    named = df.set_index("arm")  # a meaningful index stays
    assert "row_heading" in table_html(named)


def test_headers_read_as_words_and_cells_keep_their_identifiers():
    df = pd.DataFrame({"top8_share": [0.5], "arm": ["scale_half_q"], 5: [1.0]})
    html = table_html(df)
    heads = [c.split(">", 1)[1].split("<", 1)[0] for c in html.split("<th ")[1:]]
    assert heads == ["top8 share", "arm", "5"]
    assert ">scale_half_q<" in html  # a value is data, not a header: never rewritten
    own = "examples/objectives/variance_match.py"  # a reader's arm, named by its file
    names = (own, "mine.py", "objective.min_std", "k / D", "λ_sig·B / LeWM's")
    assert [header(c) for c in names] == [*names[:3], "k / D", "λ sig·B / LeWM's"]


def _cells(html: str) -> list[str]:
    return [c.split(">", 1)[1].split("<", 1)[0] for c in html.split("<td")[1:]]


def test_truth_values_read_yes_or_no_in_frames_and_in_tables_a_chapter_styled():
    df = pd.DataFrame({"arm": ["lewm", "scale"], "holds": [True, False], "p": [0.01, 0.2]})
    assert _cells(table_html(df)) == ["lewm", "yes", "0.01", "scale", "no", "0.2"]
    gaps = df.assign(holds=pd.Series([True, None], dtype=object))  # a truth column with a gap
    styled = styler_html(gaps.style.format({"p": "{:.3f}"}).hide(axis="index"))
    assert _cells(styled) == ["lewm", "yes", "0.010", "scale", "", "0.200"]


def _row_labels(html: str) -> list[str]:
    return [c.split(">", 1)[1].split("<", 1)[0] for c in html.split('class="row_heading')[1:]]


def test_a_table_a_chapter_styled_shows_readable_numbers_wherever_it_gave_no_format():
    """pandas writes six decimals (``0.090000``) in every cell a chapter's ``format`` left
    alone, a column format resetting all the other columns to that; a precision the chapter
    chose stays, and row numbers go."""
    df = pd.DataFrame({"weight": [0.09, 0.1], "steps": [1300.0, 2.0], "rate": [0.71, 0.6667]})
    plain = _cells(styler_html(df.style))
    assert plain == ["0.09", "1,300", "0.71", "0.1", "2", "0.6667"]
    one_column = styler_html(df.style.format({"rate": "{:.1%}"}))
    assert _cells(one_column) == ["0.09", "1,300", "71.0%", "0.1", "2", "66.7%"]
    assert _row_labels(one_column) == []  # pandas' 0..n-1 carries nothing
    assert _cells(styler_html(df.style.format(precision=3)))[:3] == ["0.090", "1300.000", "0.710"]
    swept = df.set_index(pd.Index([0.666667, 2.6666667], name="temperature"))
    html = styler_html(swept.style.format("{:.1%}"))
    assert _row_labels(html) == ["0.6667", "2.667"]  # labels the chapter left alone


def test_findings_show_a_list_and_compare_as_text():
    """The HTML a reader sees is an escaped list with bold leads; the text form the evidence
    compares holds every number, so a changed number is a changed value."""
    f = Findings((("SCALE plans <better>:", "+7.07 [+1.6, +12.5] pp"), ("Geometry:", "0 of 5")))
    assert repr(f) == "- SCALE plans <better>: +7.07 [+1.6, +12.5] pp\n- Geometry: 0 of 5"
    html = f._repr_html_()
    assert html.startswith('<ul class="findings"><li><strong>SCALE plans &lt;better&gt;:')
    assert html.count("<li>") == 2 and "+12.5" in html


def test_an_interval_never_wraps_inside_but_its_table_still_wraps_between_words():
    html = table_html(pd.DataFrame({"ours": ["+7.07 [+1.6, +12.5] pp"], "why": ["a long reason"]}))
    assert "+7.07\u00a0[+1.6,\u00a0+12.5] pp" in html
    assert "a long reason" in html  # other text keeps its spaces
    assert unbroken_intervals("<td>[a, b]</td>") == "<td>[a, b]</td>"  # no estimate before it


def test_a_p_value_reads_with_three_decimals_or_as_below_the_floor():
    from jepa_geometry.book.display import format_p, p_phrase

    assert [format_p(p) for p in (0.0347, 1.0, 9.82e-82, 0.001, float("nan"), None)] == [
        "0.035",
        "1.000",
        "< 0.001",
        "0.001",
        "",
        "",
    ]
    assert p_phrase(9.82e-82) == "< 0.001" and p_phrase(0.25) == "= 0.250"
