"""What each command does: read its options, call the library, print the result.

The command line only parses and prints: every computation is a library call. A command takes
its profile with the ``--set`` overrides checked whole before any work (:func:`_profile_of`),
its build workers when it runs (:func:`_workers`), and a log line per finished unit when no
bar is drawn (:func:`_log`); it returns the process's exit status.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import yaml

from jepa_geometry import cluster
from jepa_geometry.artifacts import (
    get_or_build,
    repo_root,
)
from jepa_geometry.book.evidence import (
    EvidenceError,
    evidence_pages,
    export_evidence,
    glued_comparison,
    incomplete_in_data,
    over_budget,
    sample_check,
)
from jepa_geometry.book.evidence_compare import DIFFERENT, combine
from jepa_geometry.book.html import build_html, notebook_html
from jepa_geometry.book.run import (
    build_book,
    cost_statement,
    experiment_output,
    run_chapter,
    run_experiment,
)
from jepa_geometry.book.toc import book_pages, resolve_page
from jepa_geometry.envs import TASKS
from jepa_geometry.envs.collect import build_dataset, check_task_episodes
from jepa_geometry.envs.dataset import dataset_artifact
from jepa_geometry.envs.episodes import FILENAME
from jepa_geometry.extensions import kappa, scaling
from jepa_geometry.jobs import default_workers
from jepa_geometry.planning.ceiling import CEILING
from jepa_geometry.planning.evaluator import evaluate_arm, summary_text
from jepa_geometry.profiles import Profile, load_profile
from jepa_geometry.study.build import build_study
from jepa_geometry.study.decisions.gate import lever_choice, protocol_choice
from jepa_geometry.study.spec import StudySpec, load_study, task_ladder
from jepa_geometry.wm.arms import check_arms, objective_file
from jepa_geometry.wm.checkpoint import MODEL_FILE
from jepa_geometry.wm.training import native_bf16, train_world_model
from jepa_geometry.wm.user_objective import (
    OBJECTIVE_SUFFIX,
    canonical,
    is_objective_file,
    load_term,
)


def _workers(given: int | None) -> int:
    """``--workers`` or ``--jobs`` as given, else :func:`~jepa_geometry.jobs.default_workers`.

    The default is read when the command runs, not when the parser is built: a bad
    ``$JEPA_GEOMETRY_WORKERS`` then stops in the command's one line, and only the commands
    that start jobs read it."""
    return default_workers() if given is None else given


def _log(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Where a build says what it finished, one short line each, when it draws no bar (its
    stderr is not a terminal, as a background build's log, or ``--quiet``); else None. Without
    it such a log would stay empty until the command ended: half an hour for a laptop study."""
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


def cmd_profile(args: argparse.Namespace) -> int:
    profile = _profile_of(args, args.name)
    print(yaml.safe_dump(profile.to_dict(), sort_keys=False), end="")
    return 0


def cmd_collect(args: argparse.Namespace) -> int:
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
    return spec.with_arms([_arm_of(args, a) for a in args.arms.split(",")])


def cmd_train(args: argparse.Namespace) -> int:
    profile = _profile_of(args)
    args.arm = _arm_of(args, args.arm)
    _note_precision(profile)
    art = train_world_model(args.task, args.arm, args.seed, profile, dict(args.weight or []))
    print(json.dumps(art.manifest().get("summary", {}), indent=2))
    print(f"model: {art.path / MODEL_FILE}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    res = evaluate_arm(
        args.task,
        args.arm if args.arm == CEILING else _arm_of(args, args.arm),
        args.seed,
        _profile_of(args),
        solver=args.solver,
        tier=args.tier,
        protocol=args.protocol,
        temperature=args.temperature,
        n_pairs=args.pairs,
        weights=dict(args.weight or []) or None,
        subset=args.subset,
    )
    print(summary_text(res))
    return 0


def cmd_study(args: argparse.Namespace) -> int:
    workers = _workers(args.workers)
    spec = _arms_of(args, load_study(args.task))
    base = _profile_of(args)
    profile = spec.profile(base)  # the study's rung of its ladder, if any
    print(_study_cost(spec, base, workers), flush=True)  # before any work, as book and chapter
    if args.dry_run:
        return 0
    _note_precision(profile)
    stages = build_study(spec, profile, workers, progress=not args.quiet, say=_log(args))
    print(stages.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    print(f"total: {stages.seconds.sum() / 60:.1f} min with {workers} workers")
    return 0


def _study_cost(spec: StudySpec, base: Profile, workers: int) -> str:
    """What ``study`` is about to build, before it builds anything: the grid's dry run of the
    study (:func:`~jepa_geometry.cluster.dry_run`), what no command has built yet in
    core-hours and in wall time with this machine's ``workers`` jobs at once
    (:func:`~jepa_geometry.cluster.cost_line`), or that the cache holds all of it."""
    units = cluster.dry_run([spec], base, reads_only=True)
    return (
        f"{spec.task} study (profile={base.name}): {cluster.cost_line(units, workers)} "
        f"(estimated as `jepa-geometry grid --tasks {spec.task} --dry-run --profile "
        f"{base.name}`)"
    )


def cmd_kappa(args: argparse.Namespace) -> int:
    workers = _workers(args.workers)
    base = _profile_of(args)
    _note_precision(base)
    stages = cluster.build_here(kappa.GRID, base, workers, progress=not args.quiet, log=_log(args))
    print(stages.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    measured = kappa.measured_cost(kappa.KAPPA_SWEEP, base)
    print(measured.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    print(f"measured: {measured['measured seconds'].sum() / 60:.1f} min of work")
    return 0


def cmd_scaling(args: argparse.Namespace) -> int:
    workers = _workers(args.workers)
    base = _profile_of(args)
    if args.dry_run:
        spec = scaling.load_scaling()
        units = scaling.stated_units(spec, base)
        print(scaling.cost_statement(units, spec, base.name))
        print(units.to_string(index=False, float_format=lambda x: f"{x:.0f}"))
        return 0
    _note_precision(base)
    # the cost is stated and kept (scaling.stated_units) before any model trains
    stages = cluster.build_here(
        scaling.GRID, base, workers, progress=not args.quiet, log=_log(args)
    )
    print(stages.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    return 0


EXTENSIONS: dict[str, cluster.Extension] = {
    "kappa": kappa.GRID,
    "scaling": scaling.GRID,
}
"""The studies ``jepa-geometry grid --with`` runs beside the task studies."""


def _grid_cores(args: argparse.Namespace) -> int:
    """The jobs a local grid runs at once: ``--max-parallel``, else one per core
    (:func:`~jepa_geometry.cluster.run_grid`'s default)."""
    return _workers(args.max_parallel)


def _grid_cost(units: pd.DataFrame, args: argparse.Namespace) -> str:
    """The dry run's units to run in core-hours and, for the local executor, in wall time on
    the cores it would use (:func:`_grid_cores`); on SLURM the queue sets the wall time, so
    only the core-hours are said. The summary's hours are each unit's own: "2.62 h" there
    read as the time a build takes here, which on two cores is about half."""
    if args.executor == "local":
        return f"grid: {cluster.cost_line(units, _grid_cores(args), 'the')}"
    todo = units[~units["cached"]]
    return (
        f"grid: {len(todo)} of the {len(units)} units are not in the cache: about "
        f"{cluster.core_hours(todo)} of work (the hours above are each unit's own, on the cpus "
        "its kind asks for; on SLURM the queue sets the wall time)"
    )


def cmd_grid(args: argparse.Namespace) -> int:
    profile = _profile_of(args)
    specs = [_arms_of(args, load_study(t)) for t in args.tasks]
    extensions = [EXTENSIONS[name] for name in dict.fromkeys(args.extensions)]
    fmt = {"float_format": lambda x: f"{x:.2f}", "index": False}
    decisions = not args.without_decisions
    if args.dry_run:
        units = cluster.dry_run(specs, profile, extensions, decisions)
        if args.units:
            print(units.to_string(**fmt))
        print(cluster.dry_run_summary(units).to_string(**fmt))
        print(_grid_cost(units, args))
        said = cluster.decisions_statement(units, _grid_cores(args))
        if said:
            print(said)
        if units.attrs["left_out"]:
            print(
                f"not counted: dinowm of {', '.join(units.attrs['left_out'])} (the DINOv2 "
                f"file dinowm.dinov2_weights={profile.dinowm.dinov2_weights!r} is missing)"
            )
        headline = cluster.headline_statement(units, profile)
        if headline:  # the units the study files' headline seeds add, and what they cost
            print(units.attrs["headline"].to_string(**fmt))
            print(headline)
        for line in cluster.share_objectives(specs, Path(args.folder), copy=False)[1]:
            print(line)  # where a run's jobs read each objective file (nothing copied yet)
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
        decisions=decisions,
    )
    print(cluster.grid_summary(result).to_string(index=False))
    bad = result[result.status.isin(["failed", "blocked"])]
    for _, r in bad.iterrows():
        print(f"{r.status}: {r.unit}: {r.error}" + (f" (log: {r.log})" if r.log else ""))
    return 1 if len(bad) else 0


def cmd_gate(args: argparse.Namespace) -> int:
    profile = _profile_of(args)
    _note_precision(profile)
    if task_ladder(args.task):
        lever, rows = lever_choice(args.task, profile, progress=not args.quiet)
        chosen = lever.name if lever else "none: no rung passes"
    else:
        chosen, rows = protocol_choice(args.task, profile, progress=not args.quiet)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(rows.drop(columns=["task"]).to_string(index=False))
    print(f"{args.task}: {chosen}")
    return 0


def cmd_book(args: argparse.Namespace) -> int:
    jobs = _workers(args.jobs)
    _note_precision(load_profile(args.profile))
    build_book(
        args.profile, force=args.force, only=args.only or None, progress=not args.quiet, jobs=jobs
    )
    return 0


def cmd_html(args: argparse.Namespace) -> int:
    return build_html(quiet=not args.verbose)


def cmd_chapter(args: argparse.Namespace) -> int:
    params = dict(args.param or [])
    cost = cost_statement(resolve_page(args.chapter), params)
    if cost:
        print(cost, flush=True)  # before the kernel starts, as study and book do
    if args.dry_run:  # the cost, and where the run would write, and stop
        if not cost:
            print(f"{args.chapter}: reads no study; its kernel builds what its cells need")
        if not args.output:
            print(f"would write: {experiment_output(args.chapter, params)}")
        return 0
    if args.output:  # an explicit notebook: run there, with the current cache
        page = resolve_page(args.chapter)
        run = run_chapter(
            page.source, Path(args.output), {**page.parameters, **params}, progress=True
        )
    else:  # the book's run, or a run folder of its own when parameters differ
        run = run_experiment(args.chapter, params)
    print(f"{run.name}: {run.seconds:.1f} s")
    print(f"notebook: {run.output}")
    print(f"html:     {notebook_html(run.output)}  (open it in a browser)")
    return 0


def cmd_evidence(args: argparse.Namespace) -> int:
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
        found = glued_comparison(root, args.profile, args.only)
        for line in found.shown():
            print(f"{DIFFERENT}  {line}")
        pages = len(set(args.only)) if args.only else len(book_pages(root))
        print(found.summary(f"the glued values of {pages} page(s)"))
        return 1 if found.outcome == DIFFERENT else 0
    files = sample_check(root, args.task, args.profile, progress=not args.quiet)
    for f in files:
        path, c = f"{f.artifact}/{f.file}", f.comparison
        if c.outcome == DIFFERENT:
            print("\n".join(f"{DIFFERENT}  {line}" for line in c.shown()))
        elif c.uncompared:
            print(f"uncompared  {path}: no committed copy here (dvc pull)")
        else:
            print(f"{c.outcome:<9}  {path}" + (f": {c.largest}" if c.largest else ""))
    found = combine(f.comparison for f in files)
    print(found.summary(f"the {len(files)} rebuilt files"))
    return 1 if found.outcome == DIFFERENT else 0
