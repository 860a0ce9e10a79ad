"""Chapter 6's gate pages: the papers' weights, what the protocol gate and the ladder decided,
and their tables as a page shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from jepa_geometry.book.style import named, shown
from jepa_geometry.study.decisions.gate import POWER_RATIO
from jepa_geometry.wm.arms import arm_weights


def weight_table(task: str, arms: Sequence[str]) -> pd.DataFrame:
    """The papers' default loss weights of each arm on ``task``
    (:func:`~jepa_geometry.wm.arms.arm_weights`): one row per arm, a column per weight the
    arms use (λ_sig, SCALE's λ, Aux's w, ΛReg's κ), NaN where an arm has no such term; arms by
    their display names."""
    rows = [{"arm": a, **arm_weights(a, task).as_dict()} for a in arms]
    out = pd.DataFrame(rows)
    names = {"sigreg": "λ_sig", "scale": "SCALE λ", "aux": "Aux w", "kappa": "ΛReg κ"}
    out = out.reindex(columns=["arm", *[c for c in names if c in out]]).rename(columns=names)
    return shown(out, cells=["arm"])


def gate_sentence(gate: pd.DataFrame, chosen: str, main_protocol: str, profile: str) -> str:
    """What the protocol gate (:func:`~jepa_geometry.study.decisions.gate.protocol_choice`)
    decided, and whether the study file's main protocol is the one it picks."""
    steps = "; then ".join(
        f"{r.protocol} on the {r.pairs} pairs: {r.reason}" for r in gate.itertuples()
    )
    if chosen == main_protocol:
        tail = f"The study's main protocol, {main_protocol}, is the one the rule picks."
    elif profile == "laptop":
        tail = (
            f"The study file's main protocol, {main_protocol}, is NOT the one the rule picks "
            f"({chosen}) at the laptop profile, where the gate is defined: the study does "
            "not follow its own rule, and its results should be read with that in mind."
        )
    else:
        tail = (
            f"At this profile the rule picks {chosen}, while the study file keeps "
            f"{main_protocol}, decided by the gate at the laptop profile (the gate is "
            "defined there; smaller or larger models may pass or fail it differently)."
        )
    return f"{steps}. {tail}"


def ladder_sentence(
    gate: pd.DataFrame, rung: str | None, spec_rung: str | None, profile: str, plans: bool = True
) -> str:
    """What a task's ladder (:func:`~jepa_geometry.study.decisions.gate.lever_choice`) found, and
    whether the study file runs at the rung it picks (``None``: no rung passed / the file
    names none for this profile). A study that does not plan (``plans`` false) follows the
    rule when no rung passes; it then trains its arms at the rung it names."""
    reasons = _rung_reasons(gate)
    if reasons is None:  # one reason for every rung
        rates = ", ".join(
            f"{lever} {rate.split(' ')[0]} %"
            for lever, rate in zip(gate["lever"], gate["lewm (%)"], strict=True)
        )
        steps = (
            "no rung can pass at this profile: with its few outcomes per arm, no success rate "
            f"gives the power to detect an arm that succeeds {POWER_RATIO:g}x as often as LeWM "
            f"(LeWM at each rung: {rates})"
        )
    else:
        steps = "; then ".join(f"{lever}: {why}" for lever, why in reasons)
    return f"{steps}. {_ladder_conclusion(rung, spec_rung, profile, plans)}"


def _rung_reasons(gate: pd.DataFrame) -> list[tuple[str, str]] | None:
    """Each rung of a ladder tried and why it passed or not, in order; None when no rung has
    the power to pass (one reason for all of them)."""
    if "powered" in gate.columns and not gate["powered"].any():
        return None
    return [(r.lever, r.reason) for r in gate.itertuples()]


def _ladder_conclusion(rung: str | None, spec_rung: str | None, profile: str, plans: bool) -> str:
    """Whether the study file runs at the rung the ladder picks (:func:`ladder_sentence`)."""
    if profile == "laptop" and rung is None and not plans:
        tail = (
            "No rung passes within the budget, and the study file does not plan: it trains "
            f"and measures the arms at {spec_rung or 'the profile as it stands'}, and no arm "
            "is compared by planning on this task at this profile."
        )
    elif profile != "laptop":
        tail = (
            f"At this profile the rule picks {rung or 'no rung'}; the study file runs "
            f"{spec_rung or 'as profiled'} here (the ladder is defined at the laptop "
            "profile)."
        )
    elif rung is not None and rung == spec_rung:
        tail = f"The study runs at the rung the rule picks, {rung}."
    elif rung is None and spec_rung is None:
        tail = (
            "No rung passes within the budget, yet the study file plans as profiled: the "
            "rule says its arms should not be compared by planning, so read its results "
            "with that in mind."
        )
    else:
        tail = (
            f"The study file's rung, {spec_rung or 'as profiled'}, is NOT the one the rule "
            f"picks ({rung or 'none passes'}) "
            "at the laptop profile, where the ladder is defined: read its results with "
            "that in mind."
        )
    return tail


def choice_sentence(
    spec: Any, profile: str, chosen: str | None, rung: Any, gate: pd.DataFrame
) -> str:
    """The gate's sentence for a study page: :func:`ladder_sentence` for a task with a
    ladder (a ``rung`` was sought), :func:`gate_sentence` for the others."""
    if "lever" in gate.columns:
        return ladder_sentence(
            gate, rung.name if rung else None, spec.settings.get(profile), profile, plans=spec.plans
        )
    return gate_sentence(gate, str(chosen), spec.main_protocol, profile)


def choice_markdown(
    spec: Any, profile: str, chosen: str | None, rung: Any, gate: pd.DataFrame
) -> str:
    """:func:`choice_sentence` as a page shows it: for a ladder whose rungs each have their
    reason, one line per rung tried, in order, then the conclusion; otherwise the sentence."""
    reasons = _rung_reasons(gate) if "lever" in gate.columns else None
    if reasons is None:
        return f"**In this run** {choice_sentence(spec, profile, chosen, rung, gate)}"
    rungs = "\n".join(f"- *{lever}*: {why}" for lever, why in reasons)
    end = _ladder_conclusion(
        rung.name if rung else None, spec.settings.get(profile), profile, spec.plans
    )
    return f"**In this run** the ladder tried, in order:\n\n{rungs}\n\n{end}"


GATE_KEY_COLUMNS = (
    "lever",
    "outcome",
    "lewm (%)",
    "random (%)",
    "paired lewm - random",
    "discriminates",
)
"""The columns a reader of a gate table looks for first: the rung, what the gate decided and
the two rates it decided on (a page shows them before the settings and costs)."""


def gate_style(gate: pd.DataFrame) -> Any:
    """The gate's table as shown on a page: :data:`GATE_KEY_COLUMNS` first, task and sentence
    dropped, rates in percent, arms and protocols by their display names."""
    formats = {
        "solved at start": "{:.1%}",
        "lewm hard": "{:.1%}",
        "random hard": "{:.1%}",
        "train (min)": "{:.1f}",
        "collect (min)": "{:.1f}",
    }
    table = gate.drop(columns=["task", "reason", "gap", "powered"], errors="ignore")
    first = [c for c in GATE_KEY_COLUMNS if c in table]
    table = table[first + [c for c in table if c not in first]]
    out = shown(table, cells=["protocol"])
    formats = {named(k): v for k, v in formats.items() if k in table}
    return out.style.format(formats, na_rep="").hide(axis="index")
