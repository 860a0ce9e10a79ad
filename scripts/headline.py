"""Per task, the headline cell of a built study, from the cache, without rendering a page: each
arm's success under the task's main protocol with CEM at tier T1 (3 seeds x the evaluation
pairs at laptop) and its paired difference against LeWM, with 95 % intervals: chapter 6's
``success_table`` and ``paired_table`` for that cell, and the task's entry of
``study/previous_builds.yaml`` where it has one (chapter 6's criterion for a changed build).

    JEPA_GEOMETRY_DATA=<cache> .venv/bin/python scripts/headline.py --profile laptop \
        --tasks tworoom reacher

A closing note quotes it as each task's study lands, before chapter 8 gathers every task.
Tasks whose study is not planned in the cache are listed as missing.
"""

from __future__ import annotations

import argparse

from jepa_geometry.envs import TASKS
from jepa_geometry.profiles import PROFILES, load_profile
from jepa_geometry.study import load
from jepa_geometry.study.cells import paired_table, success_table
from jepa_geometry.study.regression import previous_build_check
from jepa_geometry.study.spec import BASELINE

CELL = {"solver": "cem", "budget": "T1"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="laptop", choices=PROFILES)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    args = parser.parse_args()
    studies = load.load_studies(load_profile(args.profile), args.tasks, require_planned=True)
    for task, st in studies.studies.items():
        eps = st.episodes
        cell = eps[
            (eps.protocol == st.spec.main_protocol)
            & (eps.solver == CELL["solver"])
            & (eps.budget == CELL["budget"])
        ]
        if cell.empty:  # a gated task whose gate did not pass plans nothing
            print(f"## {task}: no planned cell under {st.spec.main_protocol}, CEM T1")
            continue
        rates = success_table(cell).set_index("arm")
        diffs = paired_table(cell).set_index("arm")
        print(f"## {task} ({st.spec.main_protocol}, CEM T1, {int(rates['n'].iloc[0])} pairs)")
        for arm in st.spec.arms:
            r = rates.loc[arm]
            line = f"  {arm:14s} {100 * r.rate:5.1f} % [{100 * r.low:5.1f}, {100 * r.high:5.1f}]"
            if arm != BASELINE:
                d = diffs.loc[arm]
                line += (
                    f"   {arm} - {BASELINE} {100 * d['diff']:+5.1f} pp "
                    f"[{100 * d.low:+5.1f}, {100 * d.high:+5.1f}]"
                )
            print(line)
        previous = previous_build_check(eps, task, args.profile)
        if len(previous):
            print(previous.to_string(index=False))
    for task, why in studies.missing.items():
        print(f"missing: {task}: {why}")


if __name__ == "__main__":
    main()
