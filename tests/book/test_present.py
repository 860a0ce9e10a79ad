"""What a reader sees of a page: the plumbing removed, the build's parameters shown once."""

import nbformat

from jepa_geometry.book.present import parameters_html, present


def test_a_page_hides_its_plumbing_and_shows_what_a_reader_needs():
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
            's = study.load(cfg)\nglue("n", len(s),\n     display=False)  # two lines\nglue("t", s)'
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


def test_the_parameters_block_names_the_profile_and_lists_the_changed_parameters_first():
    block = parameters_html(
        {"profile": "smoke", "seed": 3, "lam": 1.0}, {"profile": "laptop", "seed": 0, "lam": 1.0}
    )
    assert "profile <b>smoke</b>, 1 changed from the chapter" in block
    rows = block.split("<tr>")[2:]  # header first; changed parameters before the defaults
    assert [r.split("<code>")[1].split("<")[0] for r in rows] == ["profile", "seed", "lam"]
    assert "changed" in rows[1] and "default" in rows[2]
