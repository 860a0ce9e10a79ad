"""What the claims assume about the trained models, measured before any claim is judged.

Two kinds. A claim whose *subject* is absent from this run is not tested: SCALE's DINO-WM claims
are about DINOv2's published features, and an offline stand-in cannot confirm or contradict
them (:func:`claim_requires`; the claim reads
:data:`~jepa_geometry.verdict.rule.NOT_TESTED`). The *premises* of a paper's argument are
readings shown beside the claims they inform, never gates (:func:`claim_premises`): AnisoWM's
argument starts from a near-isotropic LeWM, and a ΛReg arm differs from SIGReg only where its Λ
left the identity, but the paper states its claims unconditionally ("improves planning success
over LeWM in all four"), so they are judged as stated and the reading explains them.
:func:`preconditions` measures each, one row per precondition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.verdict.rule import seed_mean_evidence
from jepa_geometry.wm.dino import DINOV2_VITS14_SHA256, DinoWeightsError
from jepa_geometry.wm.dinowm import encoder_identity
from jepa_geometry.wm.objective import isotropic_top_share
from jepa_geometry.wm.training import last_logged

ISOTROPY_RATIO_MAX = (
    2.0  # LeWM's top-8 share at most twice an isotropic Gaussian's on as many frames
)
DEPARTURE_MIN = 0.25
"""Λ counts as selected when its target variances leave the identity by at least a quarter of
the box the bound allows (:func:`lambda_departure`), at the 95 % lower bound over training
seeds: two coordinates at the clamp and the rest at 1 stay far below (sqrt(2 / D))."""
LEWM_ISOTROPIC = "LeWM near-isotropic"
LAMBDA_SELECTED = "Λ selected"
DINOV2_FEATURES = "DINOv2's own features"


def probe_isotropic_top8(profile: Any) -> float:
    """The top-8 variance share of an exactly isotropic Gaussian on as many frames as the
    probes' spectra (``geometry.probe_frames``) in the profile's ``model.embed_dim``
    dimensions (:func:`~jepa_geometry.wm.objective.isotropic_top_share`): the reference of
    "LeWM near-isotropic" wherever LeWM's top-8 share is read. A sample spreads its
    eigenvalues, so the population 8 / D would call an isotropic embedding anisotropic."""
    return isotropic_top_share(8, profile.geometry.probe_frames, profile.model.embed_dim)


def lambda_selected_name(arm: str) -> str:
    """The precondition that ΛReg arm ``arm`` selected its Λ (one per arm: a claim about
    ``scale+anisowm`` is not tested by ``anisowm``'s Λ)."""
    return f"{LAMBDA_SELECTED} ({arm})"


def lambda_departure(v: np.ndarray, kappa: float) -> float:
    """How far ΛReg's target variances ``v`` (tr = D) are from the identity, as a share of the
    box its bound allows: ``RMS_i |log v_i| / (½ log κ)``. 0 is Λ = I; every coordinate at an
    edge of the box gives about 1; two coordinates at the clamp (cond Λ = κ already) and the
    others at 1 give about ``sqrt(2 / D)``. Unlike cond Λ, which reads the two extreme
    coordinates only, it counts every coordinate. κ = 1 pins Λ = I: 0."""
    v = np.asarray(v, dtype=float)
    if kappa <= 1:
        return 0.0
    return float(np.sqrt(np.mean(np.log(v) ** 2)) / (0.5 * np.log(kappa)))


def preconditions(
    geometry: Any,
    kappa: float = 2.0,
    diagnostics: pd.DataFrame | None = None,
    profile: Any = None,
) -> pd.DataFrame:
    """What the claims assume about the trained models, measured (one row each).

    * "LeWM near-isotropic" (with ``profile``): the baseline's top-8 PCs hold at most
      :data:`ISOTROPY_RATIO_MAX` times the share an exactly isotropic Gaussian shows on as many
      frames (:func:`~jepa_geometry.wm.objective.isotropic_top_share` on the profile's
      ``geometry.probe_frames`` in ``model.embed_dim`` dimensions; a sample spreads its
      eigenvalues, so 8 / D would call an isotropic embedding anisotropic), mean over seeds.
      AnisoWM's argument starts from an isotropic embedding: a premise read beside its claims.
      (Where the held-out episodes hold fewer frames than ``probe_frames`` the reference is a
      little low: the criterion is then stricter, never looser.)
    * "Λ selected (<arm>)", one row per ΛReg arm (:func:`lambda_selected_name`): that arm's
      final Λ left the identity, :func:`lambda_departure` at least :data:`DEPARTURE_MIN` at
      the lower bound of the 95 % t-interval over its training seeds (its spread between
      models; one seed has none, so the premise is not established). Near the identity ΛReg
      cannot differ much from SIGReg: a premise read beside the claims about that arm. cond Λ
      does not decide: two coordinates at the clamp reach κ.
    * "Λ follows the prediction error" (with ``diagnostics``, the long table of
      :func:`~jepa_geometry.study.diagnostics.training_diagnostics`): the ΛReg models' mean
      ``corr_v_rel_err`` over their last three logged steps is negative, i.e. Λ gives more
      target variance where the model predicts relatively well, as AnisoWM's theory wants.
      Informative only: no claim requires it (it is not among the claims fixed first).
    * "DINOv2's own features" (with ``profile``, where the study has a ``dinowm`` arm): its
      frozen encoder is DINOv2's published weights file, identified by its sha256
      (:func:`dinov2_precondition`). SCALE's DINO-WM claims are about DINOv2's pretrained
      features; an offline stand-in, or another file of the same shapes, cannot confirm or
      contradict them.
    """
    rows = []
    spec = geometry.spectra[geometry.spectra["arm"] == "lewm"]
    if not spec.empty and profile is not None:
        frames, dim = profile.geometry.probe_frames, profile.model.embed_dim
        iso = probe_isotropic_top8(profile)
        top8 = spec[spec["pc"] <= 8].groupby("train_seed")["share"].sum().mean()
        ratio = float(top8 / iso)
        rows.append(
            {
                "precondition": LEWM_ISOTROPIC,
                "measured": f"top-8 variance share {top8:.3f} = {ratio:.2f} x an isotropic "
                f"Gaussian's {iso:.3f} on {frames} frames in D = {dim}",
                "criterion": f"<= {ISOTROPY_RATIO_MAX:g} x isotropic",
                "holds": ratio <= ISOTROPY_RATIO_MAX,
            }
        )
    lams = getattr(geometry, "lambda_spectra", {})
    for arm in sorted({a for a, _ in lams}):
        dep = [
            lambda_departure(sp["v"][-1], kappa) for (a, _), sp in sorted(lams.items()) if a == arm
        ]
        ev = seed_mean_evidence(dep)
        rows.append(
            {
                "precondition": lambda_selected_name(arm),
                "measured": f"departure of Λ from I, RMS |log v| / (½ log κ), κ = {kappa:g}: "
                f"{ev.effect:.3f} [{ev.low:.3f}, {ev.high:.3f}], {ev.units}",
                "criterion": f"95 % lower bound >= {DEPARTURE_MIN:g} (one seed: no spread)",
                "holds": ev.low >= DEPARTURE_MIN,
            }
        )
    if diagnostics is not None:
        d = last_logged(diagnostics[diagnostics["diagnostic"] == "corr_v_rel_err"])
        if not d.empty:
            mean = float(d["value"].mean())
            rows.append(
                {
                    "precondition": "Λ follows the prediction error",
                    "measured": f"mean corr(v, relative prediction error) {mean:+.2f}",
                    "criterion": "< 0",
                    "holds": mean < 0,
                }
            )
    if profile is not None and "dinowm" in set(geometry.probes["arm"]):
        rows.append(dinov2_precondition(profile))
    return pd.DataFrame(rows, columns=["precondition", "measured", "criterion", "holds"])


def dinov2_precondition(profile: Any) -> dict[str, Any]:
    """The row "DINOv2's own features" of :func:`preconditions`, from the weights file itself.

    The profile's ``dinowm.encoder`` only says which encoder was asked for; any file with
    ViT-S/14's shapes loads as "dinov2". So the file is identified by its sha256
    (:func:`~jepa_geometry.wm.dinowm.encoder_identity`, the hash the checkpoints' keys record)
    and compared with the published file's, :data:`~jepa_geometry.wm.dino.DINOV2_VITS14_SHA256`:
    the precondition holds when they match. Where the book knows no published sha256 it holds
    for a readable file but says plainly, in the measured value and the criterion, that the
    weights are unverified. The stand-in, or a missing file, fails it."""
    enc = profile.dinowm.encoder
    grid = f"token grid {profile.dinowm.token_grid} x {profile.dinowm.token_grid}"
    published = DINOV2_VITS14_SHA256
    criterion = (
        "encoder = dinov2, weights sha256 = the published file's"
        if published
        else "encoder = dinov2; weights unverified (no published sha256 known to the book)"
    )
    row = {"precondition": DINOV2_FEATURES, "criterion": criterion}
    if enc != "dinov2":
        return {**row, "measured": f"DINO-WM's frozen encoder: {enc}, {grid}", "holds": False}
    try:
        digest = encoder_identity(profile)["dinov2_sha256"]
    except DinoWeightsError as e:
        return {**row, "measured": f"DINOv2 weights unreadable: {e}", "holds": False}
    if published:
        same = digest == published
        what = "the published file" if same else f"not the published file ({published[:12]}…)"
        return {**row, "measured": f"weights sha256 {digest[:12]}…: {what}, {grid}", "holds": same}
    return {
        **row,
        "measured": f"weights sha256 {digest[:12]}…, unverified: no published sha256, {grid}",
        "holds": True,
    }


def claim_requires(arms: Sequence[str]) -> tuple[str, ...]:
    """What must be present for a claim about ``arms`` to be tested at all: DINO-WM's claims
    need DINOv2's own features (SCALE's claims are about that pretrained encoder)."""
    return (DINOV2_FEATURES,) if "dinowm" in arms else ()


def claim_premises(arms: Sequence[str], paper: str = "") -> tuple[str, ...]:
    """The premises read beside a claim of ``paper`` about ``arms`` (never gates): each ΛReg
    arm's selected Λ (:func:`lambda_selected_name`), and for every AnisoWM claim a
    near-isotropic LeWM, the starting point of its argument."""
    out = [lambda_selected_name(a) for a in dict.fromkeys(arms) if "anisowm" in a]
    out += [LEWM_ISOTROPIC] if paper == "AnisoWM" else []
    return tuple(out)
