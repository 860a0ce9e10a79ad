"""Numbers the chapters used to type by hand (issue 53) are computed and glued, or cited: the
pages no longer hold them, and the values they glue instead come from the library."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jepa_geometry
from jepa_geometry.extensions import scaling
from jepa_geometry.profiles import load_profile
from jepa_geometry.verdict import preconditions as P
from jepa_geometry.verdict.reference import reference_numbers
from jepa_geometry.wm.objective import isotropic_top_share

CHAPTERS = Path(jepa_geometry.__file__).parents[2] / "chapters"
TYPED = {
    "ch04_tasks.md": ["63 steps", "24 ms", "25 ms", "1.3–2 ms"],
    "ch05_world_model.md": ["18,034,478", "18M"],
    "ch06_gate.md": ["15 minutes per model", "2.5 hours per study"],
    "ch07_geometry.md": ["half as hard", "batch of 64"],
    "ch09_scaling.md": ["batch-isotropic 8 / D", "(8 / D for"],
}


@pytest.mark.skipif(not CHAPTERS.is_dir(), reason="needs the book's checkout")
@pytest.mark.parametrize("page", sorted(TYPED))
def test_the_pages_no_longer_type_these_results(page):
    text = (CHAPTERS / page).read_text()
    assert [t for t in TYPED[page] if t in text] == []


def test_the_released_parameter_count_is_a_reference_number():
    ref = reference_numbers(table="lewm_parameter_count")
    assert ref["value"].tolist() == [18_034_478.0] and ref["derived"].iloc[0]


def _point(share_top8: float, dim: int, profile) -> types.SimpleNamespace:
    """One scaling point whose LeWM spectrum puts ``share_top8`` in its top 8 of ``dim`` PCs."""
    shares = np.r_[np.full(8, share_top8 / 8), np.full(dim - 8, (1 - share_top8) / (dim - 8))]
    spectra = pd.DataFrame(
        {"arm": "lewm", "train_seed": 0, "pc": np.arange(1, dim + 1), "share": shares}
    )
    empty = pd.DataFrame(columns=["arm", "train_seed", "source", "spearman", "r2_top2"])
    geometry = types.SimpleNamespace(
        spectra=spectra, lambda_spectra={}, probes=empty, ranking=empty, landscape=empty
    )
    point = types.SimpleNamespace(name="1x", image=64)
    named = {"point": point.name, "image": point.image, "steps": profile.train.steps}
    return types.SimpleNamespace(
        task="tworoom",
        point=point,
        profile=profile,
        train_flops=1.0,
        columns={"task": "tworoom", **named, "flops": 1.0},
        geometry=geometry,
        diagnostics=pd.DataFrame(),
    )


def test_the_premise_reads_lewm_against_the_isotropic_share_on_as_many_frames():
    """Chapter 9's reference for LeWM's top-8 share is the precondition's, an isotropic
    Gaussian's on the probe frames, not the population's 8 / D (which is smaller)."""
    profile = load_profile("smoke")
    dim = profile.model.embed_dim
    table = scaling.premise_table([_point(0.6, dim, profile)])
    row = table[table.measure == "LeWM top-8 variance share"].iloc[0]
    want = isotropic_top_share(8, profile.geometry.probe_frames, dim)
    assert row["reference"] == pytest.approx(want) == P.probe_isotropic_top8(profile)
    assert row["reference"] > 8 / dim and row["value"] == pytest.approx(0.6)
