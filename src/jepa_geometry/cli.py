"""``jepa-geometry``: the command line of the book.

    jepa-geometry profile laptop            # print a validated profile
    jepa-geometry book --profile smoke      # execute every chapter into book/chapters/
    jepa-geometry chapter chapters/ch01_metric_leverage.md out.ipynb -p profile smoke

The other subcommands (``collect``, ``train``, ``plan``) are contributed by the modules that
own them: each module in :data:`COMMAND_MODULES` defines ``register_cli(subparsers)``, which
adds its subparser and keeps heavy imports inside the handler.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys
from pathlib import Path

import yaml

from .profiles import DEFAULT_PROFILE, PROFILES, ProfileError, load_profile

COMMAND_MODULES: tuple[str, ...] = (
    "jepa_geometry.data",
    "jepa_geometry.training",
    "jepa_geometry.planning",
)


def _parse_param(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    name, raw = text.split("=", 1)
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw  # a bare string
    return name.strip(), value


def _cmd_profile(args: argparse.Namespace) -> int:
    prof = load_profile(args.name)
    print(yaml.safe_dump(prof.to_dict(), sort_keys=False), end="")
    return 0


def _cmd_book(args: argparse.Namespace) -> int:
    from .book import build_book

    build_book(args.profile, force=args.force, only=args.only or None)
    return 0


def _cmd_chapter(args: argparse.Namespace) -> int:
    from .book import run_chapter

    run = run_chapter(Path(args.source), Path(args.output), dict(args.param or []))
    print(f"{run.name}: {run.seconds:.1f} s -> {run.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jepa-geometry", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    sp = sub.add_parser("profile", help="print a validated run profile")
    sp.add_argument("name", choices=PROFILES)
    sp.set_defaults(func=_cmd_profile)

    sb = sub.add_parser("book", help="execute every chapter with papermill into book/chapters/")
    sb.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE)
    sb.add_argument("--force", action="store_true", help="re-execute chapters even if unchanged")
    sb.add_argument("--only", nargs="*", metavar="CHAPTER", help="run only these chapters")
    sb.set_defaults(func=_cmd_book)

    sc = sub.add_parser("chapter", help="execute one chapter with validated parameters")
    sc.add_argument("source")
    sc.add_argument("output")
    sc.add_argument("-p", "--param", type=_parse_param, action="append", metavar="NAME=VALUE")
    sc.set_defaults(func=_cmd_chapter)

    for name in COMMAND_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register_cli(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ProfileError, ValueError, RuntimeError) as e:
        print(f"jepa-geometry: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
