"""A loss term of the reader's own, read from a Python file and summed with an arm's terms.

A reader who wants to test an idea of their own writes one function in a file::

    def term(z, z_hat, q, step):
        '''z: (B, T, D) embeddings of the batch's frames; z_hat: (B, T-1, D) teacher-forced
        predictions of z[:, 1:]; q: (B, T, q_dim) task state of the frames; step: the
        optimizer step (0-based). Returns a scalar tensor, or (scalar, {name: scalar}).'''

and names the file as a component of an arm (``lewm+mine.py``, ``scale+path/to/mine.py``,
:mod:`.arms`). The term's value is added to the arm's loss as it is (its weight is the file's
business), and the diagnostics it returns are logged beside the other terms, every
``log_every`` steps, as ``objective.<name>``.

The file's sha256 is part of the key of every model trained with it (and so of every planning
cell and measurement of that model, which name the model's key): an edited file never reuses
a model trained with an earlier version. Everything that can be wrong with a file (missing,
not Python, no ``term``, a ``term`` that cannot take the four arguments, a value that is not a
finite scalar) stops with one line naming the file and what was wrong, before the first step
or at it.

The value must also be a tensor computed from ``z`` or ``z_hat`` through autograd: a value
with no gradient to either (``loss.detach()``, ``loss.item()``, a Python number, a constant
tensor) adds nothing to the gradients, so the arm would train as the arm without the term
while its key and log name the file. The first step checks it (one backward through the term
alone, :func:`_check_gradient`) and stops in one line; later steps are not checked, to cost
nothing. A term that is off at some steps returns ``0 * z.sum()`` there, not a constant.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import math
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from jepa_geometry.artifacts import repo_root

TERM = "term"
"""The name of the function an objective file defines."""
SIGNATURE = "term(z, z_hat, q, step)"
OBJECTIVE_SUFFIX = ".py"


class ObjectiveFileError(ValueError):
    """An objective file is missing, cannot be loaded, or its term returns a bad value."""


@dataclass(frozen=True)
class UserTerm:
    """One loaded objective file: where it is, the sha256 of its bytes, and its ``term``."""

    path: Path
    sha256: str
    term: Callable

    @property
    def name(self) -> str:
        """The file's stem: the term's name in model names and logs."""
        return self.path.stem


def is_objective_file(component: str) -> bool:
    """Whether an arm component names an objective file (it ends in ``.py``)."""
    return component.strip().endswith(OBJECTIVE_SUFFIX)


def resolve(path: str | Path) -> Path:
    """The absolute path of an objective file: a relative path is read from the repository
    root (the folder holding ``data.dvc``) when run inside the repository, else from the working
    directory, so a command, a page's kernel (which runs in ``chapters/``) and a cluster job
    read the same file."""
    p = Path(path).expanduser()
    if p.is_absolute():
        return Path(os.path.normpath(p))
    root = repo_root()
    return Path(os.path.normpath((root or Path.cwd()) / p))


def canonical(path: str | Path, cwd: Path | None = None) -> str:
    """The spelling of an objective file in an arm name: relative to the repository root
    when inside it (the same on every clone), else absolute; ``cwd`` reads a relative
    ``path`` from that folder instead (a command line's paths are the user's)."""
    p = Path(path).expanduser()
    full = Path(os.path.normpath(cwd / p)) if cwd is not None and not p.is_absolute() else p
    full = resolve(full)
    root = repo_root()
    if root is not None and full.is_relative_to(root):
        return full.relative_to(root).as_posix()
    return full.as_posix()


def check_name(path: str | Path, reserved: tuple[str, ...]) -> None:
    """Fail unless the file's stem can name a model (a Python identifier, not a built-in
    arm of ``reserved``): it becomes part of the model's artifact name."""
    stem = Path(path).name.removesuffix(OBJECTIVE_SUFFIX)
    if not stem.isidentifier() or stem in reserved:
        raise ObjectiveFileError(
            f"objective file {path}: its name {stem!r} names the model, so it must be a Python "
            f"identifier and not one of {', '.join(reserved)}; rename the file"
        )


def file_sha256(path: str | Path) -> str:
    """The sha256 of an objective file's bytes (one line naming the file when unreadable)."""
    full = resolve(path)
    try:
        return hashlib.sha256(full.read_bytes()).hexdigest()
    except FileNotFoundError:
        read_as = "" if str(full) == str(path) else f" (read as {full})"
        raise ObjectiveFileError(f"objective file {path}: not found{read_as}") from None
    except OSError as e:
        raise ObjectiveFileError(f"objective file {path}: cannot be read ({e.strerror})") from None


_LOADED: dict[tuple[Path, str], UserTerm] = {}


def load_term(path: str | Path) -> UserTerm:
    """The objective file at ``path``, loaded and checked (cached per path and content).

    The file is executed as a module of its own; it must define a callable :data:`TERM` that
    accepts ``(z, z_hat, q, step)``. A file that fails to import stops in one line with the
    error and its line in the file.
    """
    full = resolve(path)
    if full.suffix != OBJECTIVE_SUFFIX:
        raise ObjectiveFileError(f"objective file {path}: must be a Python file ending in .py")
    digest = file_sha256(path)
    if (full, digest) in _LOADED:
        return _LOADED[(full, digest)]
    spec = importlib.util.spec_from_file_location(f"jepa_geometry_objective_{digest[:16]}", full)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        where = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
        raise ObjectiveFileError(
            f"objective file {path}: cannot be loaded{where or _line_in(full)}: "
            f"{type(e).__name__}: {e}"
        ) from None
    fn = getattr(module, TERM, None)
    if not callable(fn):
        raise ObjectiveFileError(f"objective file {path}: defines no function {SIGNATURE}")
    try:
        inspect.signature(fn).bind(None, None, None, 0)
    except TypeError as e:
        raise ObjectiveFileError(
            f"objective file {path}: {TERM} must accept {SIGNATURE} ({e})"
        ) from None
    except ValueError:  # no signature to read (a builtin): called as it is
        pass
    out = UserTerm(full, digest, fn)
    _LOADED[(full, digest)] = out
    return out


def _line_in(path: Path) -> str:
    """`` (line N)``: the last line of ``path`` in the traceback of the exception being
    handled, where the file's own code raised it; empty otherwise."""
    frames = traceback.extract_tb(sys.exc_info()[2])
    lines = [f.lineno for f in frames if f.filename == str(path)]
    return f" (line {lines[-1]})" if lines else ""


def _scalar(value: object, what: str, path: Path, step: int, check: bool) -> torch.Tensor:
    """``value`` as a 0-d floating tensor, or one line naming the file and what it returned."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = torch.tensor(float(value))
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        kind = str(value.dtype) if isinstance(value, torch.Tensor) else type(value).__name__
        raise ObjectiveFileError(
            f"objective file {path}: {what} must be a scalar float tensor, got {kind}"
        )
    if value.dim() != 0:
        raise ObjectiveFileError(
            f"objective file {path}: {what} must be a scalar (shape ()), got shape "
            f"{tuple(value.shape)}; reduce it, e.g. with .mean()"
        )
    if check and not math.isfinite(float(value.detach())):
        raise ObjectiveFileError(
            f"objective file {path}: {what} is {float(value.detach())} at step {step}"
        )
    return value


_GRADIENT_FIX = (
    "the arm would train as if without the term; compute the value from z or z_hat with torch "
    "operations (a term off at some steps returns 0 * z.sum() there)"
)


def _check_gradient(
    path: Path, value: torch.Tensor, z: torch.Tensor, z_hat: torch.Tensor, step: int
) -> None:
    """Stop unless ``value`` reaches ``z`` or ``z_hat`` through autograd: a value without a
    path to them (a ``.detach()``, a constant) changes the loss but none of its gradients, so
    the model would train as the arm without the term under the term's name. One backward
    through the term's own graph (it stops at ``z`` and ``z_hat``; the graph is kept for the
    step's backward), run at the first step only."""
    inputs = [t for t in (z, z_hat) if t.requires_grad]
    reached = (
        value.requires_grad
        and bool(inputs)
        and any(
            g is not None
            for g in torch.autograd.grad(value, inputs, retain_graph=True, allow_unused=True)
        )
    )
    if not reached:
        raise ObjectiveFileError(
            f"objective file {path}: {SIGNATURE} returned a value with no gradient to z or "
            f"z_hat at step {step} (a .detach() or a constant tensor?); {_GRADIENT_FIX}"
        )


def call_term(
    user: UserTerm,
    z: torch.Tensor,
    z_hat: torch.Tensor,
    q: torch.Tensor,
    step: int,
    check: bool,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The term's value on one batch and its diagnostics (detached), checked for their form
    (the value a tensor, not a Python number); with ``check`` also that every value is finite
    and that the value has a gradient to ``z`` or ``z_hat`` (the first step of a run, where
    autograd records: later steps are checked where they are logged, without a
    synchronisation or a backward of their own per step)."""
    try:
        out = user.term(z, z_hat, q, step)
    except Exception as e:
        raise ObjectiveFileError(
            f"objective file {user.path}: {TERM} raised at step {step}{_line_in(user.path)}: "
            f"{type(e).__name__}: {e}"
        ) from None
    diagnostics: dict = {}
    if isinstance(out, tuple):
        if len(out) != 2 or not isinstance(out[1], dict):
            raise ObjectiveFileError(
                f"objective file {user.path}: {TERM} must return a scalar or (scalar, dict of "
                f"diagnostics), got a tuple of {len(out)}"
            )
        out, diagnostics = out
    if isinstance(out, int | float) and not isinstance(out, bool):
        raise ObjectiveFileError(
            f"objective file {user.path}: {SIGNATURE} returned a Python {type(out).__name__} at "
            f"step {step}, not a tensor (an .item() or float()?), so it has no gradient to z or "
            f"z_hat; {_GRADIENT_FIX}"
        )
    value = _scalar(out, f"{TERM}'s value", user.path, step, check)
    if check:
        _check_gradient(user.path, value, z, z_hat, step)
    diag = {}
    for name, v in diagnostics.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ObjectiveFileError(
                f"objective file {user.path}: diagnostic names must be identifiers, got {name!r}"
            )
        diag[name] = _scalar(v, f"diagnostic {name!r}", user.path, step, check).detach()
    return value, diag
