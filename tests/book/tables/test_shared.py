"""What several page families share (jepa_geometry.book.tables.shared): verdict colours and
the papers' columns marked."""

import pandas as pd

from jepa_geometry.book import tables


def test_verdict_style_colours_verdicts_only():
    t = pd.DataFrame({"claim": ["a", "b"], "Two-Room": ["reproduced", "fight"], "n": [1, 2]})
    html = tables.shared.verdict_style(t).to_html()
    assert tables.shared.VERDICT_COLOURS["reproduced"] in html
    assert tables.shared.VERDICT_COLOURS["fight"] in html
    assert html.count("background-color") == 2


def test_the_papers_columns_are_marked_and_ours_are_not():
    cols = [
        "lewm (%)",
        "lewm, SCALE (%)",
        "LeWM, AnisoWM (%)",
        "share above mean, AnisoWM",
        "paper's effect",
        "our effect [95% CI]",
        "AnisoWM (%)",
        "AnisoWM - LeWM (pp)",
    ]
    marked = tables.shared.paper_columns(cols)
    assert marked == cols[1:5]
    html = tables.shared.mark_papers(
        pd.DataFrame([[1.0] * len(cols)], columns=cols).style
    ).to_html()
    assert html.count("font-style: italic") == 1 and "#eef1f6" in html  # one CSS rule, 4 cells
    plain = pd.DataFrame({"lewm (%)": [1.0]}).style
    assert tables.shared.mark_papers(plain) is plain
