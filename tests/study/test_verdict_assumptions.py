"""What the verdicts assume about the trained models (issue 53, paths 7 and 8): each test fails
on the earlier rule and checks the new one against an independent computation.

7. The preconditions measure the right quantity: "Λ selected" per ΛReg arm, as the departure
   of its target variances from the identity against their spread over training seeds (the
   earlier rule pooled the arms and seeds and asked only whether cond Λ reached κ, which two
   coordinates at the clamp achieve); "LeWM near-isotropic" against the top-8 share an
   isotropic Gaussian shows on the same number of frames (the earlier rule used 8 / D), and it
   gates AnisoWM's claims, which assume it.
8. Stand-ins: "DINOv2's own features" identifies the weights file by its sha256 (the earlier
   rule read the profile's encoder name, which any file of the right shapes satisfies).
"""

from __future__ import annotations

import hashlib
import types
from pathlib import Path

import pandas as pd
import pytest

from jepa_geometry.study import verdict as V


def _dinov2_profile(path: Path) -> types.SimpleNamespace:
    dw = types.SimpleNamespace(encoder="dinov2", dinov2_weights=str(path), token_grid=2)
    return types.SimpleNamespace(dinowm=dw)


def _dinov2_row(profile: types.SimpleNamespace) -> pd.Series:
    """The "DINOv2's own features" row of the preconditions of a study with a dinowm arm."""
    geo = types.SimpleNamespace(
        spectra=pd.DataFrame(columns=["arm"]), probes=pd.DataFrame({"arm": ["lewm", "dinowm"]})
    )
    return V.preconditions(geo, profile=profile).set_index("precondition").loc[V.DINOV2_FEATURES]


def test_dinov2_is_the_published_file_not_a_profile_string(tmp_path, monkeypatch):
    weights = tmp_path / "dinov2_vits14_pretrain.pth"
    weights.write_bytes(b"some other ViT-S/14 of the same shapes")
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    profile = _dinov2_profile(weights)
    # a published sha256 the file does not match: not DINOv2's own features
    monkeypatch.setattr(
        V, "DINOV2_VITS14_SHA256", raising=False, value=hashlib.sha256(b"the published").hexdigest()
    )
    row = _dinov2_row(profile)
    assert not row["holds"] and digest[:12] in row["measured"]
    assert "not the published file" in row["measured"]
    # the published file itself
    monkeypatch.setattr(V, "DINOV2_VITS14_SHA256", raising=False, value=digest)
    assert _dinov2_row(profile)["holds"]
    # no published sha256 known: the row says plainly that the weights are unverified
    monkeypatch.setattr(V, "DINOV2_VITS14_SHA256", raising=False, value=None)
    row = _dinov2_row(profile)
    assert "unverified" in row["measured"] and "unverified" in row["criterion"]
    # a missing file is no DINOv2 at all
    gone = _dinov2_row(_dinov2_profile(tmp_path / "missing.pth"))
    assert not gone["holds"] and "missing.pth" in gone["measured"]


@pytest.mark.parametrize("published", [None, "0" * 64])
def test_the_stand_in_never_holds(published, monkeypatch):
    monkeypatch.setattr(V, "DINOV2_VITS14_SHA256", raising=False, value=published)
    dw = types.SimpleNamespace(encoder="standin", dinov2_weights="", token_grid=2)
    row = _dinov2_row(types.SimpleNamespace(dinowm=dw))
    assert not row["holds"] and "standin" in row["measured"]
