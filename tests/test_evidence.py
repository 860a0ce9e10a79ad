"""The evidence tree's size budget (``book.evidence.over_budget``)."""

from __future__ import annotations

from pathlib import Path

from jepa_geometry.book.evidence import BUDGET_MB, over_budget


def _file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def test_the_budget_names_a_large_file_a_figure_and_a_large_tree(tmp_path):
    tree = tmp_path / "laptop"
    _file(tree / "results" / "plan-tworoom" / "abc" / "episodes.parquet", 1_500_000)
    _file(tree / "pages" / "ch01.json", 2_000)
    assert over_budget(tree, total_mb=2.0, file_mb=2.0) == []
    _file(tree / "results" / "big" / "k" / "z_grid.npy", 2_000_001)  # 1 byte over 2 MB
    _file(tree / "figures" / "x" / "k" / "fig.PNG", 10)
    lines = over_budget(tree, total_mb=2.0, file_mb=2.0)
    assert lines[0] == "results/big/k/z_grid.npy: 2.00 MB > 2 MB per file"
    assert lines[1] == "figures/x/k/fig.PNG: a figure (pages render their figures)"
    assert lines[2] == f"{tree}: 3.5 MB in 4 files > 2 MB"
    assert len(lines) == 3
    assert BUDGET_MB == {"total": 60.0, "file": 2.0}  # the budget the README states
