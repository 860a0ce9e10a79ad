"""The reference file as the book uses it (issue 53): every table is read by some page or
claim, the values no source prints are marked as derived and by whom, AnisoWM's LeWM column is
noted as the LeWM paper's, and the Wilcoxon p of Reacher's DINO-WM minus SCALE is the printed
one."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats as sps

import jepa_geometry
from jepa_geometry.verdict.reference import reference_numbers, source_with_caveats

ROOT = Path(jepa_geometry.__file__).parents[2]


def _table_ids() -> list[str]:
    text = resources.files("jepa_geometry.verdict").joinpath("reference_numbers.yaml").read_text()
    return [t["id"] for t in yaml.safe_load(text)["tables"]]


def _readers() -> str:
    """The text of everything that may read the file: the package's code and the pages."""
    files = [*Path(jepa_geometry.__file__).parent.rglob("*.py"), *(ROOT / "chapters").glob("*.md")]
    return "\n".join(p.read_text() for p in files)


@pytest.mark.skipif(not (ROOT / "chapters").is_dir(), reason="needs the book's checkout")
def test_every_reference_table_is_read_by_a_page_or_a_claim():
    """A table no code or page names is numbers that no reader sees: used, or removed."""
    text = _readers()
    unread = [t for t in _table_ids() if not re.search(rf"\b{t}\b", text)]
    assert unread == []


def test_derived_values_say_so_and_by_whom():
    pca = reference_numbers(table="scale_pca_variance_share")
    assert pca["derived"].str.contains("recipe's author").all()
    dec = reference_numbers(table="scale_full_decodability")
    assert dec.loc[dec.probe == "mlp", "derived"].str.contains("recipe's author").all()
    assert (dec.loc[dec.probe == "ridge", "derived"] == "").all()  # printed by the repository
    steps = reference_numbers(table="lewm_training_steps")
    assert steps["derived"].str.len().min() > 0
    assert (reference_numbers(table="scale_success_per_solver")["derived"] == "").all()
    assert "derived by the recipe's author" in source_with_caveats(dec[dec.probe == "mlp"])


def test_anisowm_lewm_column_is_noted_as_the_lewm_papers():
    """The premise (AnisoWM's LeWM column equals the LeWM paper's on every task), and the note."""
    ani = reference_numbers(table="aniso_success", arm="lewm").set_index("task").value
    lewm = reference_numbers(table="lewm_success").set_index("task").value
    assert ani.to_dict() == lewm.loc[ani.index].to_dict()
    assert "lewm_success" in source_with_caveats(reference_numbers(table="aniso_success"))


def test_reacher_dinowm_minus_scale_wilcoxon_p_is_the_printed_one():
    """Printed .063, as the setting says; the exact two-sided p of n = 6 with the smallest
    rank alone on one side is 2 x 2/64 = 0.0625, the value behind both .062 and .063."""
    p = reference_numbers(
        table="scale_success_overall_wilcoxon_p", task="reacher", versus="scale", arm="dinowm"
    )["value"]
    assert float(p.iloc[0]) == 0.063
    exact = sps.wilcoxon(np.array([-1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), method="exact")
    assert float(exact.pvalue) == pytest.approx(4 / 64)
