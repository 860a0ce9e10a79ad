"""``jepa-geometry``: the command line of the book.

    jepa-geometry profile laptop                       # print a validated profile
    jepa-geometry collect --task tworoom               # collect (or find) a dataset
    jepa-geometry train --task tworoom --arm scale  # train (or find) one world model
    jepa-geometry plan --task tworoom --arm scale --solver icem --tier T3
    jepa-geometry plan --task cube --arm ceiling --subset 50  # the simulator as the model
    jepa-geometry study tworoom --workers 2            # build a task's whole study (cached)
    jepa-geometry study tworoom --arms lewm,scale,lewm+mine.py  # with a loss term of yours
    jepa-geometry scaling --dry-run                    # the scaling study's cost and cuts
    jepa-geometry grid --profile paper --tasks all --executor slurm --partition gpu --dry-run
    jepa-geometry book --profile smoke                 # execute every chapter into book/chapters/
    jepa-geometry chapter chapters/ch01_metric_leverage.md out.ipynb -p profile smoke
    jepa-geometry evidence export                      # commit what the built book read
    jepa-geometry evidence diff                        # rendered values against committed ones
    jepa-geometry evidence check --task tworoom        # rebuild a sample, compare its files

Every command that reads or builds an artifact takes ``--profile`` and the same
``--set KEY=VALUE`` profile overrides, so a model trained with an override can be planned
with it. The command line only parses and prints: every computation is a library call.

* :mod:`.parser`: every command and its options (:func:`build_parser`);
* :mod:`.commands`: what each command does (a library call and what it prints);
* this module: :func:`main`, which runs a command and turns what the machine refuses (a full
  disk, a folder not writable) and an interruption into one line and an exit status;
  ``python -m jepa_geometry.cli`` runs it (:mod:`.__main__`).
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from jepa_geometry.artifacts import data_root, pin_cache_paths, use_profile_cache
from jepa_geometry.cli.commands import EXTENSIONS
from jepa_geometry.cli.parser import build_parser
from jepa_geometry.profiles import ProfileError

DISK_FAULTS = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS)
"""What the machine, not the command, refuses: a full disk, a quota, a folder this user may
not write, a read-only filesystem. The command stops with one line naming the place; what it
had finished is in the cache, and a half-written artifact is a temporary folder the next build
removes, never used."""


def disk_fault(e: OSError) -> str:
    """The one line of an :data:`DISK_FAULTS` error: the place (the file, else the cache) and
    what to do, without the traceback that says nothing more."""
    path = Path(e.filename) if e.filename else data_root()
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"no space left on {path} ({e.strerror[:1].lower()}{e.strerror[1:]}); free some "
            "and run the same command again: it resumes from what it finished"
        )
    if e.errno == errno.EROFS:
        return f"{path} is on a read-only filesystem; run where this user may write"
    folder = path if path.is_dir() else path.parent
    return (
        f"{folder} is not writable by this user (uid {os.getuid()}): building here needs "
        "write permission on it; ask its owner for group write permission (README: A cache a "
        "group shares) or set $JEPA_GEOMETRY_DATA to a cache of your own"
    )


def quiet_after_interrupt() -> None:
    """Silences what an interruption makes a chapter's kernel client report, from the signal
    on: papermill's "Kernel died while waiting for execute reply" (the page's kernel gets the
    same Ctrl-C and may end first) and asyncio's report of each task the client left, with its
    traceback (about 140 lines). The command's one line says all there is to say."""
    for name in ("papermill", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that interrupt a command: it ends its jobs, says so in one line and exits with
128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM), as a shell reports them."""


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    pin_cache_paths()  # one cache, whatever the working directory of a kernel or job
    if isinstance(getattr(args, "profile", None), str):  # its own cache unless told otherwise
        use_profile_cache(args.profile)
    interrupted: list[int] = []

    def on_interrupt(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        quiet_after_interrupt()
        raise KeyboardInterrupt

    # SIGTERM (kill, a service manager, a container stop) reaches the command alone, not its
    # build jobs or page kernels: handled as Ctrl-C, the command ends them before it exits
    previous = {sig: signal.signal(sig, on_interrupt) for sig in STOP_SIGNALS}
    try:
        return args.func(args)
    except (ProfileError, ValueError, RuntimeError) as e:
        if not interrupted:
            print(f"jepa-geometry: error: {e}", file=sys.stderr)
            return 2
        # else the error of a pool whose jobs the same Ctrl-C ended: an interruption
    except OSError as e:
        if not interrupted:
            if e.errno not in DISK_FAULTS:
                raise
            print(f"jepa-geometry: error: {disk_fault(e)}", file=sys.stderr)
            return 2
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    quiet_after_interrupt()
    print(
        f"jepa-geometry: {args.command} interrupted; what it finished is in the cache, and "
        "the same command resumes from there",
        file=sys.stderr,
    )
    return 128 + (interrupted[0] if interrupted else signal.SIGINT)


__all__ = [
    "DISK_FAULTS",
    "EXTENSIONS",
    "STOP_SIGNALS",
    "build_parser",
    "disk_fault",
    "main",
    "quiet_after_interrupt",
]
