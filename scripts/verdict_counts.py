"""The book's verdict labels at one profile, computed from its cache without rendering a page,
and the labels that changed between two such runs (issue 53: the smoke book's counts before and
after a change to the rule or the claims).

    JEPA_GEOMETRY_DATA=<cache> .venv/bin/python scripts/verdict_counts.py --profile smoke \
        --out before.csv
    .venv/bin/python scripts/verdict_counts.py --compare before.csv after.csv

Each row is one label as a page prints it: ``section`` is ``book`` (chapter 8's one family for
the whole book), ``page`` (a task's geometry page, chapter 7: its own family), ``kappa`` (the κ
sweep's claims), ``lens`` (chapter 8's cross-lens readings) or ``theory`` (chapters 1 and 3,
where this checkout has them). It reads only what the cache holds (task studies built by
``jepa-geometry grid --profile <p> --tasks all --with kappa``); the theory rows compute the 2-D
toy's runs at the profile if they are missing (seconds at smoke). Run it with any checkout's
interpreter: it uses only what the book's chapters call, and leaves out what a checkout lacks.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from jepa_geometry.book import tables
from jepa_geometry.planning import protocol
from jepa_geometry.profiles import Profile, load_profile
from jepa_geometry.study import load
from jepa_geometry.theory import toy2d
from jepa_geometry.verdict import across as verdicts
from jepa_geometry.verdict import claims, records, rule
from jepa_geometry.verdict.reference import reference_numbers

COLUMNS = ["section", "task", "paper", "claim", "verdict"]


def _rows(section: str, table: pd.DataFrame, label: str = "verdict") -> pd.DataFrame:
    t = table.rename(columns={label: "verdict"})
    t = t.assign(section=section, paper=t["paper"] if "paper" in t else "")
    t = t.assign(task=t["task"] if "task" in t else "")
    return t[COLUMNS]


def book_rows(studies: load.Studies) -> pd.DataFrame:
    """Chapter 8's verdict for the whole book, each task page's (chapter 7), and the lens."""
    failed = verdicts.failed_preconditions(studies)
    board = tables.geometry.dashboard(verdicts.book_items(studies), failed)
    parts = [_rows("book", board)]
    for task, st in studies.studies.items():
        items = records.paper_claims(
            task,
            st.episodes,
            st.geometry,
            main_protocol=st.spec.main_protocol,
            code_protocol=protocol.SCALE_PROTOCOL,
            timing=st.grid.timing,
        )
        mask = rule.tested([c for c, _ in items], failed.get(task, set()))
        page = rule.verdict_table(items, mask).assign(task=st.task)
        parts.append(_rows("page", page))
    lens = verdicts.lens_table(verdicts.lens_items(studies), failed)
    if len(lens):
        parts.append(_rows("lens", lens.assign(paper=claims.LENS), "reading"))
    return pd.concat(parts, ignore_index=True)


def kappa_rows(base: Profile) -> pd.DataFrame:
    view = tables.kappa.chapter_view(base)
    if not view.built:
        print(f"κ sweep: {view.missing}", file=sys.stderr)
        return pd.DataFrame(columns=COLUMNS)
    return _rows("kappa", view.verdicts)


def theory_rows(base: Profile) -> pd.DataFrame:
    """Chapters 1 and 3's verdict rows, where this checkout has them (issue 53 added them)."""
    theory = tables.theory
    if not hasattr(theory, "leverage_claim"):
        return pd.DataFrame(columns=COLUMNS)
    items = [theory.leverage_claim(base.theory.samples, base.theory.latent_dim, 0)]
    cfg = toy2d.toy_config(base, (4.0, 1.0), 30.0, kappa=4.0)
    x0, goal = toy2d.make_tasks(cfg.sigma, **toy2d.DEFAULT_TASKS)
    ref = toy2d.reference_regret(cfg.sigma, x0, goal, cfg.half_width)["normalized_regret"]
    runs = toy2d.toy_sweep(
        cfg,
        list(base.theory.toy_noise_levels),
        list(range(base.theory.toy_seeds)),
        ["sigreg", "lambdareg"],
        toy2d.DEFAULT_TASKS,
        progress=False,
    )
    paper = reference_numbers(table="aniso_fig1_regret")["value"].iloc[0]
    items += theory.toy_claims(runs, ref, paper)
    return _rows("theory", theory.theory_verdicts(items))


def counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Labels per section (rows) and label (columns)."""
    return pd.crosstab(rows["section"], rows["verdict"], margins=True, margins_name="all")


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Every (section, task, paper, claim) whose label differs, or which exists on one side
    only ("" on the other)."""
    keys = ["section", "task", "paper", "claim"]
    both = before.merge(after, on=keys, how="outer", suffixes=(" before", " after"))
    both = both.fillna("")
    return both[both["verdict before"] != both["verdict after"]].sort_values(keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--out", help="write every label here (CSV)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    pd.set_option("display.width", 200, "display.max_colwidth", 120, "display.max_rows", 500)
    if args.compare:
        before, after = (pd.read_csv(p, keep_default_na=False) for p in args.compare)
        for name, rows in (("before", before), ("after", after)):
            print(f"--- {name}\n{counts(rows).to_string()}\n")
        print(f"--- changed\n{compare(before, after).to_string(index=False)}")
        return
    base = load_profile(args.profile)
    studies = load.load_studies(base)
    print(f"tasks without a study: {load.missing_sentence(studies)}", file=sys.stderr)
    rows = pd.concat([book_rows(studies), kappa_rows(base), theory_rows(base)], ignore_index=True)
    if args.out:
        rows.to_csv(args.out, index=False)
    print(counts(rows).to_string())


if __name__ == "__main__":
    main()
