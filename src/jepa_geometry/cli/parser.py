"""The command line's parser: every command, its options and how each option's text is read.

Each group of commands is added by a function of its own (:func:`build_parser` calls them in
the order ``--help`` lists the commands); an option's value is checked as it is read (a count
>= 1, a finite number > 0, a list of tasks with a study), so a bad one stops with argparse's
one line before anything runs. What each command does is :mod:`.commands`.
"""

from __future__ import annotations

import argparse
import ast
import math
from pathlib import Path
from typing import Any, TypeAlias

from jepa_geometry import cluster
from jepa_geometry.book.parameters import ChapterError
from jepa_geometry.book.toc import chapter_listing
from jepa_geometry.cli.commands import (
    EXTENSIONS,
    cmd_book,
    cmd_chapter,
    cmd_collect,
    cmd_evidence,
    cmd_gate,
    cmd_grid,
    cmd_html,
    cmd_kappa,
    cmd_plan,
    cmd_profile,
    cmd_scaling,
    cmd_study,
    cmd_train,
)
from jepa_geometry.envs import TASKS
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.protocol import PROTOCOLS
from jepa_geometry.planning.solver import SOLVERS, TIERS
from jepa_geometry.profiles import DEFAULT_PROFILE, PROFILES
from jepa_geometry.study.spec import available_studies

DESCRIPTION = "``jepa-geometry``: the command line of the book."
"""The first line of ``--help`` (and of the package's docstring, :mod:`jepa_geometry.cli`)."""


def _parse_assign(text: str) -> tuple[str, Any]:
    """``name=value`` with the value read as a Python literal (a bare word stays a string)."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    name, raw = text.split("=", 1)
    try:
        return name.strip(), ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return name.strip(), raw


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _positive_number(text: str) -> float:
    """A finite number > 0 (``float`` alone would take ``inf`` and ``nan``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def _add_profile(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE)
    p.add_argument(
        "--set",
        type=_parse_assign,
        action="append",
        metavar="KEY=VALUE",
        help="override a profile value (e.g. --set train.steps=200)",
    )


def _add_build(p: argparse.ArgumentParser) -> None:
    """The options of a command that builds into the cache: workers, quiet and the profile."""
    p.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="parallel one-thread build jobs (default: one per core, or $JEPA_GEOMETRY_WORKERS); "
        "no result depends on it",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_profile(p)


def _study_tasks(text: str) -> list[str]:
    """``all`` or a comma-separated list of tasks with a study file."""
    have = available_studies()
    tasks = have if text == "all" else [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in tasks if t not in have]
    if bad or not tasks:
        raise argparse.ArgumentTypeError(
            f"unknown study task(s) {bad or text!r}; valid: all, {', '.join(have)}"
        )
    twice = sorted({t for t in tasks if tasks.count(t) > 1})
    if twice:
        raise argparse.ArgumentTypeError(
            f"{', '.join(twice)} given more than once in {text!r}; each task once, valid: "
            f"all, {', '.join(have)}"
        )
    return tasks


def _add_objective(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--objective",
        metavar="PATH",
        help="a Python file defining your own loss term, term(z, z_hat, q, step) (README: "
        "Try your own objective); an arm names it as a component, by its path "
        "(lewm+path/mine.py) or, with this option, by its stem (lewm+mine)",
    )


def _add_study_arms(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--arms",
        metavar="A,B,...",
        help="build these arms instead of the study file's (comma-separated, lewm among "
        "them), e.g. lewm,scale,lewm+mine.py: a loss term of your own beside LeWM and SCALE",
    )
    _add_objective(p)


def _add_arm(p: argparse.ArgumentParser, also: str = "") -> None:
    p.add_argument("--task", required=True, choices=TASKS)
    p.add_argument(
        "--arm",
        required=True,
        help=f"arm: lewm, scale, aux, anisowm, a sum (a+b), or one with a loss term of your "
        f"own as a file (lewm+mine.py){also}",
    )
    _add_objective(p)
    p.add_argument("--seed", type=int, default=0, help="training seed of the world model")
    p.add_argument(
        "--weight",
        type=_parse_assign,
        action="append",
        metavar="NAME=VALUE",
        help="override a loss weight: sigreg, scale, aux or kappa (e.g. --weight kappa=4)",
    )


class _HelpWithChapters(argparse.Action):
    """``chapter --help``: the help with every chapter and its parameters, read from the
    chapters only when asked for (the other commands never read them)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        try:
            parser.epilog = chapter_listing()
        except ChapterError as e:
            parser.epilog = f"(no chapters listed: {e})"
        parser.print_help()
        parser.exit()


Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``add_subparsers`` returns: each ``_add_*`` function below adds its commands to it."""


def _add_run_commands(sub: Subcommands) -> None:
    """The one-off commands: ``profile``, and ``collect``, ``train`` and ``plan`` of one task."""
    sp = sub.add_parser("profile", help="print a validated run profile")
    sp.add_argument("name", choices=PROFILES)
    sp.add_argument("--set", type=_parse_assign, action="append", metavar="KEY=VALUE")
    sp.set_defaults(func=cmd_profile)

    sc = sub.add_parser("collect", help="collect the offline dataset of a task (cached)")
    sc.add_argument("--task", required=True, choices=(*TASKS, "all"), help="task, or 'all'")
    _add_profile(sc)
    sc.add_argument(
        "--workers", type=_positive_int, default=None, help="collector processes (default: cores)"
    )
    sc.add_argument("--force", action="store_true", help="re-collect even if cached")
    sc.set_defaults(func=cmd_collect)

    st = sub.add_parser("train", help="train (or fetch from the cache) one world model")
    _add_arm(st)
    _add_profile(st)
    st.set_defaults(func=cmd_train)

    pl = sub.add_parser("plan", help="evaluate goal-reaching planning of a trained world model")
    _add_arm(pl, f", or {CEILING} (the simulator as the world model)")
    _add_profile(pl)
    pl.add_argument("--solver", default="cem", choices=list(SOLVERS))
    pl.add_argument("--tier", default="T1", choices=TIERS, help="the compute budget tier")
    pl.add_argument("--protocol", default="profile", choices=("profile", *PROTOCOLS))
    pl.add_argument("--temperature", type=_positive_number, default=None, help="MPPI temperature")
    pl.add_argument(
        "--pairs",
        type=_positive_int,
        default=None,
        help="start/goal pairs (default: the profile's)",
    )
    pl.add_argument(
        "--subset",
        type=_positive_int,
        default=None,
        help=f"{CEILING} only: plan a seeded subset of this many of the pairs (default: all)",
    )
    pl.set_defaults(func=cmd_plan)


def _add_study_commands(sub: Subcommands) -> None:
    """The commands that build a whole study into the cache: ``study`` (a task's), ``kappa``
    (AnisoWM's κ sweep) and ``scaling`` (the scaling study)."""
    sy = sub.add_parser(
        "study", help="build every dataset, model and planning cell of a task's study (cached)"
    )
    sy.add_argument("task", choices=available_studies())
    sy.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the study still has to build (core-hours, and wall time with the "
        "workers on this machine) and stop",
    )
    _add_study_arms(sy)
    _add_build(sy)
    sy.set_defaults(func=cmd_study)

    sk = sub.add_parser(
        "kappa",
        help="AnisoWM's κ sweep (extensions.kappa): anisowm at κ in {1, 1.5, 2, 4, 8} on "
        "Two-Room and Push-T, planned on validation and evaluation pairs (cached; prints its cost "
        "first)",
    )
    _add_build(sk)
    sk.set_defaults(func=cmd_kappa)

    sl = sub.add_parser(
        "scaling",
        help="build the scaling study (extensions/scaling/scaling.yaml): its cost and cuts are "
        "printed first",
    )
    sl.add_argument("--dry-run", action="store_true", help="print the rule's units and stop")
    _add_build(sl)
    sl.set_defaults(func=cmd_scaling)


def _add_grid_command(sub: Subcommands) -> None:
    """``grid``: the task studies (and ``--with`` the extensions) as jobs through submitit."""
    sr = sub.add_parser(
        "grid",
        help="the task studies as jobs through submitit: SLURM or this machine "
        "(cluster); cached units are skipped, so a rerun submits only what is missing",
    )
    sr.add_argument(
        "--tasks",
        type=_study_tasks,
        default="all",
        help="all (default) or a comma-separated list of tasks with a study",
    )
    sr.add_argument(
        "--executor",
        choices=cluster.EXECUTORS,
        default="local",
        help="local: jobs on this machine; slurm: sbatch through submitit",
    )
    sr.add_argument("--partition", help="SLURM partition (slurm only)")
    sr.add_argument(
        "--max-parallel",
        type=_positive_int,
        default=None,
        help="jobs at once (default: one per core locally, unlimited on SLURM)",
    )
    sr.add_argument(
        "--folder",
        type=Path,
        default=Path("runs") / "grid",
        help="where submitit keeps each job's pickles and logs (shared with the jobs), and the "
        "copies of objective files they read",
    )
    sr.add_argument(
        "--dry-run",
        action="store_true",
        help="list the units, their estimated device-hours and what is cached",
    )
    sr.add_argument(
        "--with",
        dest="extensions",
        nargs="+",
        choices=list(EXTENSIONS),
        default=[],
        help="run these studies beside the task studies' grid: kappa (AnisoWM's κ sweep, "
        "chapter 8), scaling (chapter 9); each states its cost before the first stage",
    )
    sr.add_argument("--units", action="store_true", help="with --dry-run: every unit")
    sr.add_argument(
        "--without-decisions",
        action="store_true",
        help="leave out the book's decisions (SIGReg's strength and the ΛReg variants, models "
        "trained on Two-Room for the geometry pages): a study without a ΛReg arm, such as a "
        "reader's arm beside lewm and scale, needs none of them",
    )
    _add_study_arms(sr)
    sr.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_profile(sr)
    sr.set_defaults(func=cmd_grid)


def _add_gate_command(sub: Subcommands) -> None:
    """``gate``: the gate before a task's study, its protocol or its ladder of levers."""
    sg = sub.add_parser(
        "gate",
        help="the gate before a task's study: its protocol, or for Push-T and Cube "
        "its ladder of levers (study.decisions.gate)",
    )
    sg.add_argument("task", choices=TASKS)
    sg.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_profile(sg)
    sg.set_defaults(func=cmd_gate)


def _add_book_commands(sub: Subcommands) -> None:
    """The book: ``book`` (every chapter), ``html``, ``evidence`` (the committed evidence tree) and
    ``chapter`` (one chapter, with parameters)."""
    sb = sub.add_parser("book", help="execute every chapter with papermill into book/chapters/")
    sb.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE)
    sb.add_argument("--force", action="store_true", help="re-execute chapters even if unchanged")
    sb.add_argument("--only", nargs="*", metavar="CHAPTER", help="run only these chapters")
    sb.add_argument("--quiet", action="store_true", help="no progress bars from the chapters")
    sb.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        help="pages executed side by side (default: one per core); no number depends on it",
    )
    sb.set_defaults(func=cmd_book)

    sx = sub.add_parser(
        "html",
        help="build the HTML book from the executed pages, with the banner of their profile",
    )
    sx.add_argument("--verbose", action="store_true", help="Jupyter Book's full output")
    sx.set_defaults(func=cmd_html)

    se = sub.add_parser(
        "evidence",
        help="the committed evidence tree: export it, diff a render, check a sample",
        description=(
            "export: copy what the executed book read (manifests, small payloads, glued "
            "values) into evidence/<profile>/; diff: every glued value of the executed pages "
            "against the committed one; check: rebuild one dataset, model and planning cell "
            "of --task in an empty cache and compare their files with the evidence (diff and "
            "check say identical, equal: discrete values exactly and floats within the stated "
            "tolerance, both exit 0, or different, exit 1); "
            "pushable: whether data/ holds every artifact the book read with its heavy files "
            "(make data-push versions data/ only then); coverage: which pages the evidence "
            "holds"
        ),
    )
    se.add_argument("action", choices=("export", "diff", "check", "pushable", "coverage"))
    se.add_argument(
        "--only",
        nargs="+",
        metavar="PAGE",
        help="export, diff: these pages only (an export adds them to the tree and removes nothing)",
    )
    se.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE)
    se.add_argument(
        "--task",
        choices=available_studies(),
        default="tworoom",
        help="check: the task whose sample is rebuilt",
    )
    se.add_argument("--quiet", action="store_true", help="no progress bars")
    se.set_defaults(func=cmd_evidence)

    sh = sub.add_parser(
        "chapter",
        add_help=False,
        help="execute one chapter with validated parameters",
        description=(
            "Run a chapter (name such as ch02, ch02_isotropy_regret, or its path). Without "
            "OUTPUT, a run whose parameters differ from the chapter's defaults writes its "
            "notebook and figures to runs/<chapter>/<task>-[<file>-<sha>-]<parameters>-<hash>/ "
            "(a version of an objective file by its content) and its artifacts to the "
            "profile's cache, the one train, study and grid use; with defaults it rebuilds "
            "the book's own page."
        ),
    )
    sh.formatter_class = argparse.RawDescriptionHelpFormatter
    sh.add_argument(
        "-h", "--help", action=_HelpWithChapters, nargs=0, help="this help, with every chapter"
    )
    sh.add_argument("chapter", help="chapter name (ch02, ch02_isotropy_regret) or path")
    sh.add_argument("output", nargs="?", help="write the executed notebook here instead")
    sh.add_argument("-p", "--param", type=_parse_assign, action="append", metavar="NAME=VALUE")
    sh.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the run still has to build (core-hours, and wall time with its build "
        "jobs on this machine) and where its notebook would go, and stop",
    )
    sh.set_defaults(func=cmd_chapter)


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: one subcommand per command, in the order ``--help`` lists
    them (:func:`_add_run_commands`, :func:`_add_study_commands`, :func:`_add_grid_command`,
    :func:`_add_gate_command`, :func:`_add_book_commands`)."""
    p = argparse.ArgumentParser(prog="jepa-geometry", description=DESCRIPTION)
    sub = p.add_subparsers(dest="command", required=True)
    _add_run_commands(sub)
    _add_study_commands(sub)
    _add_grid_command(sub)
    _add_gate_command(sub)
    _add_book_commands(sub)
    return p
