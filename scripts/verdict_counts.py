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

from jepa_geometry import envs
from jepa_geometry.book import tables
from jepa_geometry.profiles import Profile, load_profile
from jepa_geometry.study import load
from jepa_geometry.theory import toy2d
from jepa_geometry.verdict import across as verdicts
from jepa_geometry.verdict import claims, rule
from jepa_geometry.verdict.reference import reference_numbers

COLUMNS = ["section", "task", "paper", "claim", "family", "verdict"]
KEYS = ["section", "task", "paper", "claim"]


def _rows(section: str, table: pd.DataFrame, label: str = "verdict") -> pd.DataFrame:
    t = table.rename(columns={label: "verdict"})
    t = t.assign(section=section, paper=t["paper"] if "paper" in t else "")
    t = t.assign(task=t["task"] if "task" in t else "", family=t.get("family", ""))
    return t[COLUMNS]


def book_rows(studies: load.Studies) -> pd.DataFrame:
    """Chapter 8's verdict for the whole book, each task page's (chapter 7), and the lens."""
    failed = verdicts.failed_preconditions(studies)
    board = tables.geometry.dashboard(verdicts.book_items(studies), failed)
    pages = verdicts.page_labels(studies)
    codes = {envs.task_title(t): t for t in studies.studies}  # a page is named by its task's code
    parts = [_rows("book", board), _rows("page", pages.assign(task=pages["task"].map(codes)))]
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


RENAMED = {"not tested (precondition failed)": rule.NOT_TESTED}
"""Labels whose words changed with issue 66 and mean the same where they still apply."""


def why(row: pd.Series) -> str:
    """Why a label changed with issue 66's rule, from the two labels and the claim (the rule's
    changes in the order a reader checks them)."""
    old, new, claim = row["verdict before"], row["verdict after"], row["claim"]
    if new == rule.BY_CONSTRUCTION:
        return "holds by construction: the planner runs the same networks for every arm"
    if old == "not tested (precondition failed)":
        return "a premise (LeWM near-isotropic, Λ selected) is read beside the claim, not a gate"
    if new == rule.BELOW_RESOLUTION:
        return "the paper's effect is below the smallest effect this run detects"
    if "every" in claim or "all four" in claim:
        return "in every cell: the sign in each cell, as the paper counts it"
    if "rollout error" in claim:
        return "rollout error's minimum effect is 5 % of LeWM's level, not 0.01"
    if old == "reproduced":
        return "t-interval over training seeds (the seed mean's t tail at 3 seeds)"
    if new == "reproduced":
        return "Holm within the paper's primary or secondary family, not over every claim"
    return "t-interval over training seeds, and Holm within the claim's family"


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Every (section, task, paper, claim) whose label differs (a renamed label counts as the
    same), or which exists on one side only ("" on the other), with :func:`why`."""
    both = before[[*KEYS, "verdict"]].merge(
        after[[*KEYS, "verdict"]], on=KEYS, how="outer", suffixes=(" before", " after")
    )
    both = both.fillna("")
    changed = both[both["verdict before"].replace(RENAMED) != both["verdict after"]]
    return changed.assign(why=changed.apply(why, axis=1)).sort_values(KEYS)


def family_counts(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Chapter 8's book verdict per paper and family (the families of ``after``, which
    ``before`` may not record), label counts before and after, one row per (paper, family,
    when)."""
    fam = after[after["section"] == "book"].set_index(KEYS)["family"]
    parts = []
    for when, rows in (("before", before), ("after", after)):
        book = rows[rows["section"] == "book"]
        book = book.assign(family=[fam.get(tuple(k), "") for k in book[KEYS].to_numpy()])
        t = pd.crosstab([book["paper"], book["family"]], book["verdict"].replace(RENAMED))
        parts.append(t.assign(when=when).set_index("when", append=True))
    out = pd.concat(parts).fillna(0).astype(int)
    return out.sort_index(level=[0, 1, 2], ascending=[True, True, False]).reset_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--out", help="write every label here (CSV)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--markdown", help="with --compare: write the changed labels here")
    args = parser.parse_args()
    pd.set_option("display.width", 200, "display.max_colwidth", 120, "display.max_rows", 500)
    if args.compare:
        before, after = (pd.read_csv(p, keep_default_na=False) for p in args.compare)
        for name, rows in (("before", before), ("after", after)):
            print(f"--- {name}\n{counts(rows).to_string()}\n")
        changed = compare(before, after)
        families = family_counts(before, after)
        print(f"--- changed\n{changed.to_string(index=False)}")
        print(f"--- chapter 8 by paper and family\n{families.to_string(index=False)}")
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(families.to_markdown(index=False) + "\n\n")
                f.write(changed.drop(columns="paper").to_markdown(index=False) + "\n")
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
