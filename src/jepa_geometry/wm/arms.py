"""The arms of the studies: named sums of the loss terms, and the papers' default weights.

An *arm* is one training configuration of the shared world model (the papers call them
arms): ``lewm``, ``scale``, ``aux``, ``anisowm``, or a sum such as ``scale+anisowm``
(which neither paper tried); ``scale-halfq`` is SCALE trained on half of q (its ablation).
``dinowm`` is SCALE's fourth arm, a different model (a frozen pretrained patch encoder).
A component ending in ``.py`` is the reader's own loss term, read from that file
(:mod:`.user_objective`): ``lewm+mine.py`` is LeWM plus the term, ``scale+mine.py`` SCALE plus
it; at most one file per arm. Its name is parsed into loss components (:func:`parse_arm`) and
weighted per task (:func:`arm_weights`); the loss terms themselves live in :mod:`.losses`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jepa_geometry.envs import TASKS, q_indices, task_class
from jepa_geometry.wm.user_objective import canonical, check_name, file_sha256, is_objective_file

ARMS: tuple[str, ...] = ("lewm", "scale", "aux", "anisowm")
DINOWM = "dinowm"
"""DINO-WM (SCALE's fourth arm): a frozen pretrained patch encoder and a patch-token
predictor (:mod:`.dinowm`); a model of its own, so it neither sums with the other arms nor has
their loss terms (no SIGReg, no q)."""
LAMBDAREG_ARMS: tuple[str, ...] = ("anisowm", "scale+anisowm")
"""Arms whose objective has ΛReg, and so log the target variances ``lambda_v``."""


WEIGHT_NAMES: tuple[str, ...] = (
    "sigreg",
    "scale",
    "aux",
    "kappa",
    "bound",
    "alpha_lr",
    "alpha_warmup",
)
LAMBDAREG_BOUNDS: tuple[str, ...] = ("clamp", "tanh", "project")
"""How ΛReg keeps cond Λ <= κ (:class:`~jepa_geometry.wm.losses.LambdaReg`). ``clamp`` is our
reconstruction of the published description (AnisoWM bounds α to ±½ log κ without saying
whether by a hard clamp or a smooth squashing; we chose the clamp, book: rec-lambdareg), and
the book calls it "the published form" for short; the others are our declared variants (book:
rec-lambdareg-variants)."""
LAMBDAREG_SETTINGS: tuple[str, ...] = ("bound", "alpha_lr", "alpha_warmup")


HALF_Q_SUFFIX = "-halfq"
"""An arm name ending in this suffix (``scale-halfq``, ``aux-halfq``) trains its q terms on
SCALE's half of q (``envs.q_indices(task, "half")``) and keeps every other setting of the
full-q arm, as SCALE's half-q ablation does (its Table of half-q arms, §6 of the paper)."""
Q_TERMS: tuple[str, ...] = ("scale", "aux")  # the components that read q


def q_variant(arm: str) -> str:
    """``"half"`` for an arm named with :data:`HALF_Q_SUFFIX`, else ``"full"``."""
    if not isinstance(arm, str):
        raise ValueError(f"arm must be a non-empty string like 'scale+anisowm', got {arm!r}")
    return "half" if arm.strip().endswith(HALF_Q_SUFFIX) else "full"


def parse_arm(arm: str) -> tuple[str, ...]:
    """Canonical components of an arm name: ``"anisowm+scale"`` -> ``("scale", "anisowm")``.

    ``lewm`` is the base every arm shares, so it is dropped from sums. A
    :data:`HALF_Q_SUFFIX` is not a component (see :func:`q_variant`); it needs a q term.
    """
    if not isinstance(arm, str) or not arm:
        raise ValueError(f"arm must be a non-empty string like 'scale+anisowm', got {arm!r}")
    if arm.strip() == DINOWM:
        return (DINOWM,)
    if DINOWM in [p.strip() for p in arm.split("+")]:
        raise ValueError(f"arm {arm!r}: {DINOWM} is a model of its own and sums with no arm")
    half = q_variant(arm) == "half"
    body = arm.strip().removesuffix(HALF_Q_SUFFIX) if half else arm
    parts = [p.strip() for p in body.split("+")]
    files = [p for p in parts if is_objective_file(p)]
    bad = [p for p in parts if p not in ARMS and p not in files]
    if bad:
        raise ValueError(
            f"unknown arm component(s) {bad} in {arm!r}; valid: {', '.join(ARMS)}, "
            f"sums of them such as 'scale+anisowm', and a loss term of your own as a file "
            f"such as 'lewm+mine.py'"
        )
    if len(files) > 1:
        raise ValueError(f"arm {arm!r}: at most one objective file per arm, got {files}")
    for f in files:
        check_name(f, (*ARMS, DINOWM))
    comps = tuple(m for m in ARMS if m in parts and m != "lewm")
    if half and not set(comps) & set(Q_TERMS):
        raise ValueError(
            f"arm {arm!r}: {HALF_Q_SUFFIX!r} needs a term that reads q ({', '.join(Q_TERMS)})"
        )
    comps += tuple(canonical(f) for f in files)
    return comps or ("lewm",)


def arm_name(arm: str) -> str:
    """The canonical spelling of an arm, used in artifact keys (``scale-halfq`` keeps its
    suffix, so the key records which q the model was trained on). An objective file is
    spelled relative to the repository root (:func:`~.user_objective.canonical`)."""
    comps = parse_arm(arm)
    return "+".join(comps) + (HALF_Q_SUFFIX if q_variant(arm) == "half" else "")


def objective_file(arm: str) -> str | None:
    """The objective file of an arm (canonical spelling), or None for the built-in arms."""
    files = [c for c in parse_arm(arm) if is_objective_file(c)]
    return files[0] if files else None


def arm_label(arm: str) -> str:
    """The arm as artifact names and keys record it: :func:`arm_name` with an objective file
    named by its stem alone (``examples/objectives/variance_match.py`` ->
    ``variance_match``), so a model's name and key do not depend on where the file lies; the
    file's content is in the key by its sha256 (:func:`objective_key`)."""
    name = arm_name(arm)
    path = objective_file(arm)
    return name if path is None else name.replace(path, Path(path).stem)


def key_arm(arm: str) -> str:
    """The arm a planning cell's key records: as given for the built-in arms (the keys written
    before objective files existed spell it so) and :func:`arm_label` for an arm with a file."""
    return arm if objective_file(arm) is None else arm_label(arm)


def objective_key(arm: str) -> dict[str, str] | None:
    """What a model's key records of the arm's objective file: its name and the sha256 of its
    bytes (read now), or None for the built-in arms (their keys have no such field)."""
    path = objective_file(arm)
    return None if path is None else {"file": Path(path).name, "sha256": file_sha256(path)}


@dataclass(frozen=True)
class ObjectiveWeights:
    """The weights of one arm's loss terms (absent terms are None)."""

    sigreg: float  # λ_sig, on SIGReg or on ΛReg for anisowm
    scale: float | None = None  # SCALE's λ
    aux: float | None = None  # Aux's w
    kappa: float | None = None  # ΛReg's condition bound
    # ΛReg variants where AnisoWM is silent (None: our reading of the paper, clamp, x1, no warm-up)
    bound: str | None = None  # one of LAMBDAREG_BOUNDS
    alpha_lr: float | None = None  # α's learning rate as a multiple of the model's
    alpha_warmup: float | None = None  # optimizer steps with α frozen (Λ = I)

    def as_dict(self) -> dict[str, float]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


LEWM_SIGREG_WEIGHT = 0.09
"""LeWM's SIGReg weight λ_sig (set at batch 128 with 1,024 directions), every arm's default."""
DEFAULT_KAPPA = 2.0
"""AnisoWM's condition bound κ on Λ (§3), the ``anisowm`` arm's default; the κ sweep varies it."""


def arm_weights(
    arm: str,
    task: str,
    sigreg_weight: float = LEWM_SIGREG_WEIGHT,
    overrides: dict[str, float] | None = None,
) -> ObjectiveWeights:
    """The papers' default weights for ``arm`` on ``task``, with optional overrides.

    Defaults: λ_sig :data:`LEWM_SIGREG_WEIGHT`; SCALE λ 0.1 (Reacher 0.15); Aux w 0.3 / 0.4 /
    0.1 / 0.1 / 0.1 for Push-T / Reacher / Cube / Two-Room / PointMaze; κ = 2. ΛReg arms also
    take the declared variants ``bound`` (:data:`LAMBDAREG_BOUNDS`), ``alpha_lr`` and
    ``alpha_warmup``, unset by default (our reconstruction of the published form: a hard clamp,
    α at the model's learning rate, no warm-up; book: rec-lambdareg). An override of a term
    the arm does not use, or of an unknown name, is an error rather than silently ignored.
    """
    comps = parse_arm(arm)
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid: {', '.join(TASKS)}")
    if comps == (DINOWM,):
        if overrides:
            raise ValueError(f"arm {DINOWM!r} has no weights to override, got {overrides}")
        return ObjectiveWeights(sigreg=0.0)  # prediction only: no SIGReg, no q
    q_indices(task, q_variant(arm))  # a half-q arm on a task without a half of q fails here
    w: dict[str, float | None] = {"sigreg": sigreg_weight}
    facts = task_class(task)
    w["scale"] = facts.scale_weight if "scale" in comps else None
    w["aux"] = facts.aux_weight if "aux" in comps else None
    w["kappa"] = DEFAULT_KAPPA if "anisowm" in comps else None
    for name, value in (overrides or {}).items():
        if name not in WEIGHT_NAMES:
            raise ValueError(f"unknown weight {name!r}; valid: {', '.join(WEIGHT_NAMES)}")
        if w.get(name) is None and not (name in LAMBDAREG_SETTINGS and "anisowm" in comps):
            used = [k for k, v in w.items() if v is not None]
            raise ValueError(
                f"arm {arm_name(arm)!r} has no {name!r} term; its weights: {', '.join(used)}"
            )
        if name == "bound":
            if value not in LAMBDAREG_BOUNDS:
                raise ValueError(
                    f"ΛReg bound must be one of {', '.join(LAMBDAREG_BOUNDS)}, got {value!r}"
                )
            w[name] = value
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"weight {name!r} must be a number >= 0, got {value!r}")
        if name == "alpha_lr" and value <= 0:
            raise ValueError(f"alpha_lr must be a number > 0, got {value!r}")
        if name == "alpha_warmup" and value != int(value):
            raise ValueError(f"alpha_warmup must be a whole number of steps, got {value!r}")
        w[name] = float(value)
    if w["kappa"] is not None and w["kappa"] < 1:
        raise ValueError(f"kappa must be >= 1 (1 = isotropic), got {w['kappa']}")
    return ObjectiveWeights(**w)


def check_arms(arms: Sequence[str]) -> list[str]:
    """Canonical names of a non-empty list of distinct arms (each checked by :func:`parse_arm`)."""
    if isinstance(arms, str) or not arms:
        raise ValueError(f"arms must be a non-empty list of arm names, got {arms!r}")
    names = [arm_name(a) for a in arms]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate arms in {names}")
    return names
