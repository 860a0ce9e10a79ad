"""SIGReg's strength at a CPU profile's batch, and the rule that may restore it.

SIGReg's statistic is N times a distance, so λ_sig · B, not λ_sig alone, sets how hard a
deviation from the Gaussian is penalised: LeWM's λ_sig = 0.09 was set at B = 128, and the laptop
batch of 64 halves its effective strength. :func:`sigreg_strength_decision` applies the rule of
the book's section rec-sigreg-strength.
"""

from __future__ import annotations

import pandas as pd

from jepa_geometry.profiles import Profile
from jepa_geometry.study.spec import BASELINE
from jepa_geometry.wm.arms import LEWM_SIGREG_WEIGHT
from jepa_geometry.wm.losses import sigreg_gaussian_floor
from jepa_geometry.wm.objective import batch_isotropic_share
from jepa_geometry.wm.training import training_log


def _last_rows(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None, last: int
) -> pd.DataFrame:
    """The last ``last`` rows of a model's training log (trained first if missing)."""
    return pd.DataFrame(training_log(task, arm, seed, profile, weights)).tail(last)


PAPER_SIGREG_BATCH = 128  # the batch LeWM's λ_sig was set at (1,024 directions)


def sigreg_strength(task: str, profile: Profile, last: int = 3) -> pd.DataFrame:
    """How close SIGReg keeps the baseline to isotropy at this profile, one row per training
    seed of ``lewm``.

    Columns: the logged SIGReg statistic (mean of the last ``last`` log rows) and its Gaussian
    floor (:func:`~jepa_geometry.wm.losses.sigreg_gaussian_floor`, the expectation for exactly
    N(0, I) embeddings); the top-2 and top-8 variance shares of a training batch divided by
    what an isotropic Gaussian shows on a batch of the same size
    (:func:`~jepa_geometry.wm.objective.isotropic_top_share`; 1 = isotropic); and
    ``λ_sig · B`` against LeWM's ``0.09 · 128``: SIGReg's statistic is N times a distance, so
    a deviation from the Gaussian is penalised in proportion to the batch, and halving the
    batch halves the effective strength.
    """
    iso2, iso8 = (batch_isotropic_share(profile, k) for k in (2, 8))
    floor = sigreg_gaussian_floor()
    rows = []
    for s in profile.seeds.train:
        log = _last_rows(task, BASELINE, s, profile, None, last)
        rows.append(
            {
                "train_seed": s,
                "SIGReg": float(log["sigreg"].mean()),
                "Gaussian floor": floor,
                "SIGReg / floor": float(log["sigreg"].mean()) / floor,
                "top-2 share / isotropic": float(log["top2_share"].mean()) / iso2,
                "top-8 share / isotropic": float(log["top8_share"].mean()) / iso8,
                "λ_sig·B / LeWM's": profile.train.sigreg_weight
                * profile.train.batch_size
                / (LEWM_SIGREG_WEIGHT * PAPER_SIGREG_BATCH),
            }
        )
    return pd.DataFrame(rows)


RESTORED_SIGREG = 0.18  # LeWM's λ_sig · B = 0.09 · 128 at the laptop batch of 64


def decision_models(
    task: str, profile: Profile, weight: float = RESTORED_SIGREG
) -> list[tuple[str, str, int, Profile, dict | None]]:
    """The models :func:`sigreg_strength_decision` reads, as training arguments: ``lewm`` with
    the first training seed at the profile's λ_sig and at ``weight``."""
    seed = profile.seeds.train[0]
    return [(task, BASELINE, seed, profile, w) for w in (None, {"sigreg": weight})]


def sigreg_strength_decision(
    task: str, profile: Profile, weight: float = RESTORED_SIGREG, last: int = 3
) -> tuple[pd.DataFrame, str]:
    """The rule of the book's section rec-sigreg-strength, applied: ``lewm`` with the first
    training seed at the profile's λ_sig and at ``weight`` (trained first if missing).

    Returns a table (rows: the two λ_sig; columns: the last ``last`` log rows' mean top-8 share,
    SIGReg statistic and prediction loss) and the decision: restore ``weight`` for every arm if
    the top-8 share moves at least a quarter of the way from the default's towards the isotropic
    batch value (:func:`~jepa_geometry.wm.objective.isotropic_top_share`) and the prediction loss
    rises by at most 20 %; otherwise keep the profile's λ_sig.
    """
    iso8 = batch_isotropic_share(profile, 8)
    rows = {}
    lams = (profile.train.sigreg_weight, weight)
    for lam, model in zip(lams, decision_models(task, profile, weight), strict=True):
        log = pd.DataFrame(training_log(*model)).tail(last)
        rows[f"λ_sig = {lam:g}"] = {
            "top8_share": float(log["top8_share"].mean()),
            "SIGReg": float(log["sigreg"].mean()),
            "pred": float(log["pred"].mean()),
        }
    table = pd.DataFrame(rows).T
    (default, restored) = table.to_dict("index").values()
    moved = (default["top8_share"] - restored["top8_share"]) / (default["top8_share"] - iso8)
    rise = restored["pred"] / default["pred"] - 1
    restore = moved >= 0.25 and rise <= 0.2
    decision = (
        f"at λ_sig = {weight:g} the top-8 share moves {moved:.0%} of the way towards the isotropic "
        f"batch value {iso8:.3f} (rule: at least 25 %) and the prediction loss changes by "
        f"{rise:+.0%} (rule: at most +20 %), so the rule "
        + (
            "restores the paper's effective strength for every arm"
            if restore
            else f"keeps λ_sig = {profile.train.sigreg_weight:g}"
        )
    )
    return table, decision
