"""``jepa-geometry``: the command line of the book.

    jepa-geometry profile laptop                       # print a validated profile
    jepa-geometry collect --task tworoom               # collect (or find) a dataset
    jepa-geometry train --task tworoom --arm scale  # train (or find) one world model
    jepa-geometry plan --task tworoom --arm scale --solver icem --budget T3
    jepa-geometry plan --task cube --arm ceiling --pairs 50  # the simulator as the model
    jepa-geometry study tworoom --workers 2            # build a task's whole study (cached)
    jepa-geometry study tworoom --arms lewm,scale,lewm+mine.py  # with a loss term of yours
    jepa-geometry scaling --dry-run                    # the scaling study's cost and cuts
    jepa-geometry grid --profile paper --tasks all --executor slurm --partition gpu --dry-run
    jepa-geometry book --profile smoke                 # execute every chapter into book/chapters/
    jepa-geometry chapter chapters/ch01_metric_leverage.md out.ipynb -p profile smoke
    jepa-geometry evidence export                      # commit what the built book read
    jepa-geometry evidence diff                        # rendered values against committed ones
    jepa-geometry evidence check --task tworoom        # rebuild a sample, compare its sha256

Every command that reads or builds an artifact takes ``--profile`` and the same
``--set KEY=VALUE`` profile overrides, so a model trained with an override can be planned
with it. The command line only parses and prints: every computation is a library call.
"""

from __future__ import annotations

import argparse
import ast
import errno
import json
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from jepa_geometry.artifacts import (
    data_root,
    get_or_build,
    pin_cache_paths,
    repo_root,
    use_profile_cache,
)
from jepa_geometry.book.evidence import (
    EvidenceError,
    evidence_pages,
    export_evidence,
    glued_differences,
    incomplete_in_data,
    over_budget,
    sample_check,
)
from jepa_geometry.book.html import build_html
from jepa_geometry.book.parameters import ChapterError
from jepa_geometry.book.run import build_book, cost_statement, run_chapter, run_experiment
from jepa_geometry.book.toc import book_pages, chapter_listing, resolve_page
from jepa_geometry.envs import TASKS
from jepa_geometry.envs.collect import build_dataset, check_task_episodes
from jepa_geometry.envs.dataset import dataset_artifact
from jepa_geometry.envs.episodes import FILENAME
from jepa_geometry.jobs import default_workers
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import evaluate_arm, summary_text
from jepa_geometry.planning.protocol import PROTOCOLS
from jepa_geometry.planning.solver import SOLVERS, TIERS
from jepa_geometry.profiles import DEFAULT_PROFILE, PROFILES, Profile, ProfileError, load_profile
from jepa_geometry.study import cluster, kappa, scaling
from jepa_geometry.study.build import build_study
from jepa_geometry.study.rules.gate import LADDERS, lever_choice, protocol_choice
from jepa_geometry.study.spec import StudySpec, available_studies, load_study
from jepa_geometry.wm.arms import check_arms, objective_file
from jepa_geometry.wm.checkpoint import MODEL_FILE
from jepa_geometry.wm.training import native_bf16, train_world_model
from jepa_geometry.wm.user_objective import (
    OBJECTIVE_SUFFIX,
    canonical,
    is_objective_file,
    load_term,
)


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


def _workers(given: int | None) -> int:
    """``--workers`` or ``--jobs`` as given, else :func:`~jepa_geometry.jobs.default_workers`.

    The default is read when the command runs, not when the parser is built: a bad
    ``$JEPA_GEOMETRY_WORKERS`` then stops in the command's one line, and only the commands
    that start jobs read it."""
    return default_workers() if given is None else given


def _log(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Where a build says what it finished, one short line each, when it draws no bar (its
    stderr is not a terminal, as a background build's log, or ``--quiet``); else None.
    Such a log used to stay empty until the command ended: half an hour for a laptop study."""
    if args.quiet or not sys.stderr.isatty():
        return lambda line: print(line, file=sys.stderr, flush=True)
    return None


def _profile_of(args: argparse.Namespace, name: str | None = None) -> Profile:
    """The profile ``--profile`` (or ``name``) with the ``--set`` overrides, checked whole
    before any work, the task names of ``data.task_episodes`` included."""
    profile = load_profile(name or args.profile, dict(args.set or []))
    check_task_episodes(profile)
    return profile


def _note_precision(profile: Profile) -> None:
    """One line on stderr when the profile trains in bf16 on a CPU that only emulates it."""
    if profile.train.precision == "bf16" and profile.cluster.device == "cpu" and not native_bf16():
        print(
            "jepa-geometry: note: this CPU has no native bfloat16 (AVX512-BF16 or AMX); the "
            f"{profile.name} profile trains in bf16, 5 to 14 times slower here than fp32 "
            "(README, Profiles)",
            file=sys.stderr,
        )


def _cmd_profile(args: argparse.Namespace) -> int:
    profile = _profile_of(args, args.name)
    print(yaml.safe_dump(profile.to_dict(), sort_keys=False), end="")
    return 0


def _cmd_collect(args: argparse.Namespace) -> int:
    profile = _profile_of(args)
    for task in TASKS if args.task == "all" else (args.task,):
        art = dataset_artifact(task, profile)
        t0 = time.perf_counter()
        get_or_build(
            art, lambda d, t=task: build_dataset(t, profile, d, args.workers), rebuild=args.force
        )
        man = art.manifest()
        mb = art.file(FILENAME).stat().st_size / 2**20
        print(
            f"{task}: {man.get('episodes')} episodes, {man.get('frames')} frames, {mb:.1f} MB, "
            f"collected in {man.get('collect_seconds')} s ({man.get('frames_per_second')} "
            f"frames/s, {man.get('workers')} workers); {time.perf_counter() - t0:.1f} s now"
        )
    return 0


def _arm_of(args: argparse.Namespace, arm: str) -> str:
    """``arm`` as the library reads it: a component naming ``--objective``'s file by its stem
    (``lewm+mine``) becomes the file, and every objective file is read from the working
    directory (the user's) and spelled canonically; each file is loaded and checked now, so a
    bad one stops in one line before any work."""
    given = getattr(args, "objective", None)
    stem = Path(given).name.removesuffix(OBJECTIVE_SUFFIX) if given else None
    parts = [given if stem is not None and p.strip() == stem else p for p in arm.split("+")]
    parts = [canonical(p.strip(), Path.cwd()) if is_objective_file(p) else p for p in parts]
    name = check_arms(["+".join(parts)])[0]
    if objective_file(name) is not None:
        load_term(objective_file(name))
    return name


def _arms_of(args: argparse.Namespace, spec: StudySpec) -> StudySpec:
    """The study ``spec`` with ``--arms`` instead of its file's arms, if given."""
    if args.arms is None:
        return spec
    return replace(spec, arms=tuple(_arm_of(args, a) for a in args.arms.split(",")))


def _cmd_train(args: argparse.Namespace) -> int:
    profile = _profile_of(args)
    args.arm = _arm_of(args, args.arm)
    _note_precision(profile)
    art = train_world_model(args.task, args.arm, args.seed, profile, dict(args.weight or []))
    print(json.dumps(art.manifest().get("summary", {}), indent=2))
    print(f"model: {art.path / MODEL_FILE}")
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    res = evaluate_arm(
        args.task,
        args.arm if args.arm == CEILING else _arm_of(args, args.arm),
        args.seed,
        _profile_of(args),
        solver=args.solver,
        budget=args.budget,
        protocol=args.protocol,
        temperature=args.temperature,
        episodes=args.episodes,
        weights=dict(args.weight or []) or None,
        pairs=args.pairs,
    )
    print(summary_text(res))
    return 0


def _cmd_study(args: argparse.Namespace) -> int:
    workers = _workers(args.workers)
    spec = _arms_of(args, load_study(args.task))
    profile = spec.profile(_profile_of(args))  # the study's rung of its ladder, if any
    _note_precision(profile)
    stages = build_study(spec, profile, workers, progress=not args.quiet, say=_log(args))
    print(stages.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    print(f"total: {stages.seconds.sum() / 60:.1f} min with {workers} workers")
    return 0


def _cmd_kappa(args: argparse.Namespace) -> int:
    workers = _workers(args.workers)
    base = _profile_of(args)
    _note_precision(base)
    kappa.build_sweep(base, kappa.KAPPA_SWEEP, workers, progress=not args.quiet)
    measured = kappa.measured_cost(kappa.KAPPA_SWEEP, base)
    print(measured.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    print(f"measured: {measured['measured seconds'].sum() / 60:.1f} min of work")
    return 0


def _cmd_scaling(args: argparse.Namespace) -> int:
    workers = _workers(args.workers)
    spec = scaling.load_scaling()
    base = _profile_of(args)
    units = scaling.stated_units(spec, base, state=not args.dry_run)
    print(scaling.cost_statement(units, spec, base.name))  # before any model trains
    if args.dry_run:
        print(units.to_string(index=False, float_format=lambda x: f"{x:.0f}"))
        return 0
    _note_precision(base)
    stages = scaling.build_scaling(spec, base, workers, progress=not args.quiet)
    print(stages.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    return 0


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


EXTENSIONS: dict[str, cluster.Extension] = {"kappa": kappa.GRID, "scaling": scaling.GRID}
"""The studies ``jepa-geometry grid --with`` runs beside the task studies."""


def _cmd_grid(args: argparse.Namespace) -> int:
    profile = _profile_of(args)
    specs = [_arms_of(args, load_study(t)) for t in args.tasks]
    extensions = [EXTENSIONS[name] for name in dict.fromkeys(args.extensions)]
    fmt = {"float_format": lambda x: f"{x:.2f}", "index": False}
    if args.dry_run:
        units = cluster.dry_run(specs, profile, extensions)
        if args.units:
            print(units.to_string(**fmt))
        print(cluster.dry_run_summary(units).to_string(**fmt))
        if units.attrs["left_out"]:
            print(
                f"not counted: dinowm of {', '.join(units.attrs['left_out'])} (the DINOv2 "
                f"file dinowm.dinov2_weights={profile.dinowm.dinov2_weights!r} is missing)"
            )
        return 0
    result = cluster.run_grid(
        specs,
        profile,
        args.executor,
        args.folder,
        args.max_parallel,
        args.partition,
        progress=not args.quiet,
        extensions=extensions,
        log=_log(args),
    )
    print(cluster.grid_summary(result).to_string(index=False))
    bad = result[result.status.isin(["failed", "blocked"])]
    for _, r in bad.iterrows():
        print(f"{r.status}: {r.unit}: {r.error}" + (f" (log: {r.log})" if r.log else ""))
    return 1 if len(bad) else 0


def _cmd_gate(args: argparse.Namespace) -> int:
    profile = _profile_of(args)
    _note_precision(profile)
    if args.task in LADDERS:
        lever, rows = lever_choice(args.task, profile, progress=not args.quiet)
        chosen = lever.name if lever else "none: no rung passes"
    else:
        chosen, rows = protocol_choice(args.task, profile, progress=not args.quiet)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(rows.drop(columns=["task"]).to_string(index=False))
    print(f"{args.task}: {chosen}")
    return 0


def _cmd_book(args: argparse.Namespace) -> int:
    jobs = _workers(args.jobs)
    _note_precision(load_profile(args.profile))
    build_book(
        args.profile, force=args.force, only=args.only or None, progress=not args.quiet, jobs=jobs
    )
    return 0


def _cmd_html(args: argparse.Namespace) -> int:
    return build_html(quiet=not args.verbose)


def _cmd_chapter(args: argparse.Namespace) -> int:
    params = dict(args.param or [])
    cost = cost_statement(resolve_page(args.chapter), params)
    if cost:
        print(cost, flush=True)  # before the kernel starts, as study and book do
    if args.output:  # an explicit notebook: run there, with the current cache
        page = resolve_page(args.chapter)
        run = run_chapter(
            page.source, Path(args.output), {**page.parameters, **params}, progress=True
        )
    else:  # the book's run, or a run folder of its own when parameters differ
        run = run_experiment(args.chapter, params)
    print(f"{run.name}: {run.seconds:.1f} s -> {run.output}")
    return 0


def _cmd_evidence(args: argparse.Namespace) -> int:
    root = repo_root()
    if root is None:
        raise RuntimeError("not inside the jepa-geometry repository (no data.dvc above cwd)")
    if args.only is not None and args.action not in ("export", "diff"):
        raise EvidenceError(f"--only goes with export or diff, not {args.action}")
    if args.action == "export":
        export = export_evidence(root, args.profile, only=args.only)
        print(export)
        breaches = over_budget(export.root)
        for line in breaches:
            print(f"over the evidence budget: {line}")
        return 1 if breaches else 0
    if args.action == "pushable":
        lacking = incomplete_in_data(root)
        if lacking:
            print(
                f"book: data/ lacks {len(lacking)} of the artifacts the book read, or their "
                f"heavy files (first: {lacking[0]}); data.dvc left as it is"
            )
            return 1
        return 0
    if args.action == "coverage":
        pages = evidence_pages(root, args.profile)
        total = len(book_pages(root))
        if len(pages) == total:
            print(
                f"evidence/{args.profile} holds every page's evidence ({total} pages): the "
                "book renders from it with nothing rebuilt"
            )
        else:
            print(
                f"evidence/{args.profile} holds the evidence of {len(pages)} of {total} "
                f"pages ({', '.join(pages) or 'none'}): those render with nothing "
                "rebuilt, the others build the artifacts they read"
            )
        return 0
    if args.action == "diff":
        lines = glued_differences(root, args.profile, args.only)
        print("\n".join(lines) if lines else "every glued value equals the committed one")
        return 1 if lines else 0
    files = sample_check(root, args.task, args.profile, progress=not args.quiet)
    for f in files:
        print(f"{'same' if f.same else 'DIFFERENT'}  {f.artifact}/{f.file}")
    bad = sum(not f.same for f in files)
    print(f"{len(files) - bad} of {len(files)} files rebuilt bit-identical to the evidence")
    return 1 if bad else 0


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jepa-geometry", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    sp = sub.add_parser("profile", help="print a validated run profile")
    sp.add_argument("name", choices=PROFILES)
    sp.add_argument("--set", type=_parse_assign, action="append", metavar="KEY=VALUE")
    sp.set_defaults(func=_cmd_profile)

    sc = sub.add_parser("collect", help="collect the offline dataset of a task (cached)")
    sc.add_argument("--task", required=True, choices=(*TASKS, "all"), help="task, or 'all'")
    _add_profile(sc)
    sc.add_argument(
        "--workers", type=_positive_int, default=None, help="collector processes (default: cores)"
    )
    sc.add_argument("--force", action="store_true", help="re-collect even if cached")
    sc.set_defaults(func=_cmd_collect)

    st = sub.add_parser("train", help="train (or fetch from the cache) one world model")
    _add_arm(st)
    _add_profile(st)
    st.set_defaults(func=_cmd_train)

    pl = sub.add_parser("plan", help="evaluate goal-reaching planning of a trained world model")
    _add_arm(pl, f", or {CEILING} (the simulator as the world model)")
    _add_profile(pl)
    pl.add_argument("--solver", default="cem", choices=SOLVERS)
    pl.add_argument("--budget", default="T1", choices=TIERS, help="compute tier")
    pl.add_argument("--protocol", default="profile", choices=("profile", *PROTOCOLS))
    pl.add_argument("--temperature", type=_positive_number, default=None, help="MPPI temperature")
    pl.add_argument(
        "--episodes",
        type=_positive_int,
        default=None,
        help="start/goal pairs (default: the profile's)",
    )
    pl.add_argument(
        "--pairs",
        type=_positive_int,
        default=None,
        help=f"{CEILING} only: plan a seeded subset of this many of the pairs (default: all)",
    )
    pl.set_defaults(func=_cmd_plan)

    sy = sub.add_parser(
        "study", help="build every dataset, model and planning cell of a task's study (cached)"
    )
    sy.add_argument("task", choices=available_studies())
    _add_study_arms(sy)
    _add_build(sy)
    sy.set_defaults(func=_cmd_study)

    sk = sub.add_parser(
        "kappa",
        help="AnisoWM's κ sweep (study.kappa): anisowm at κ in {1, 1.5, 2, 4, 8} on Two-Room "
        "and Push-T, planned on validation and evaluation pairs (cached; prints its cost first)",
    )
    _add_build(sk)
    sk.set_defaults(func=_cmd_kappa)

    sl = sub.add_parser(
        "scaling",
        help="build the scaling study (study/scaling.yaml): its cost and cuts are printed first",
    )
    sl.add_argument("--dry-run", action="store_true", help="print the rule's units and stop")
    _add_build(sl)
    sl.set_defaults(func=_cmd_scaling)

    sr = sub.add_parser(
        "grid",
        help="the task studies as jobs through submitit: SLURM or this machine "
        "(study.cluster); cached units are skipped, so a rerun submits only what is missing",
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
        help="where submitit keeps each job's pickles and logs",
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
    _add_study_arms(sr)
    sr.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_profile(sr)
    sr.set_defaults(func=_cmd_grid)

    sg = sub.add_parser(
        "gate",
        help="the gate before a task's study: its protocol, or for Push-T and Cube "
        "its ladder of levers (study.rules.gate)",
    )
    sg.add_argument("task", choices=TASKS)
    sg.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_profile(sg)
    sg.set_defaults(func=_cmd_gate)

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
    sb.set_defaults(func=_cmd_book)

    sx = sub.add_parser(
        "html",
        help="build the HTML book from the executed pages, with the banner of their profile",
    )
    sx.add_argument("--verbose", action="store_true", help="Jupyter Book's full output")
    sx.set_defaults(func=_cmd_html)

    se = sub.add_parser(
        "evidence",
        help="the committed evidence tree: export it, diff a render, check a sample",
        description=(
            "export: copy what the executed book read (manifests, small payloads, glued "
            "values) into evidence/<profile>/; diff: every glued value of the executed pages "
            "against the committed one; check: rebuild one dataset, model and planning cell "
            "of --task in an empty cache and compare their sha256 with the evidence; "
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
    se.set_defaults(func=_cmd_evidence)

    sh = sub.add_parser(
        "chapter",
        add_help=False,
        help="execute one chapter with validated parameters",
        description=(
            "Run a chapter (name such as ch02, ch02_isotropy_regret, or its path). Without "
            "OUTPUT, a run whose parameters differ from the chapter's defaults writes its "
            "notebook, figures and new artifacts to runs/<chapter>/<parameters>-<hash>/ and only "
            "reads the book's cache; with defaults it rebuilds the book's own page."
        ),
    )
    sh.formatter_class = argparse.RawDescriptionHelpFormatter
    sh.add_argument(
        "-h", "--help", action=_HelpWithChapters, nargs=0, help="this help, with every chapter"
    )
    sh.add_argument("chapter", help="chapter name (ch02, ch02_isotropy_regret) or path")
    sh.add_argument("output", nargs="?", help="write the executed notebook here instead")
    sh.add_argument("-p", "--param", type=_parse_assign, action="append", metavar="NAME=VALUE")
    sh.set_defaults(func=_cmd_chapter)
    return p


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


if __name__ == "__main__":
    sys.exit(main())
