"""Adding a planner is one file, planning/solver.py (README, *Adding a planner*).

The test copies the library, writes a toy planner into the copy's ``planning/solver.py`` the way
the README says (a factory in ``SOLVERS``, an entry in ``STUDY_SOLVERS``) and nothing else, and
in a fresh process sees a study plan it at the smoke profile: its cells at every tier, planned
on a trained LeWM with their own cache keys, named in the book's tables by the entry's name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.library_copy import PACKAGE, copy_library, differences, run_with_copy

FACTORY = '''

def _shooting(common: dict[str, Any], spec: SolverSpec) -> Any:
    """Random shooting: one round of CEM's samples, the best candidates' mean."""
    from stable_worldmodel.solver import CEMSolver

    return CEMSolver(**{**common, "n_steps": 1})

'''

RUN = """
import math
from jepa_geometry.planning.solver import SOLVER_NAMES, STUDY_SOLVERS
from jepa_geometry.profiles import load_profile
from jepa_geometry.study.cells import evaluate_arms, plan_cells

assert SOLVER_NAMES["shooting"] == "random shooting" and "shooting" in STUDY_SOLVERS
cells = [c for c in plan_cells(["goal25_budget50"]) if c.solver == "shooting"]
assert [c.tier for c in cells] == ["T1", "T2", "T3", "T4", "T5"], cells
profile = load_profile("smoke")
episodes, timing = evaluate_arms(
    "tworoom", ["lewm"], profile, cells[:1], temperature=math.nan, seeds=[0], progress=False
)
assert set(episodes.solver) == {"shooting"} and set(episodes.arm) == {"lewm", "random"}
assert len(episodes[episodes.arm == "lewm"]) == profile.eval.episodes
print("toy planner: planned by the study")
"""


@pytest.mark.slow
def test_a_new_planner_is_one_entry_in_the_solver_module(tmp_path: Path) -> None:
    copy = copy_library(tmp_path)
    solver = copy / "planning" / "solver.py"
    text = solver.read_text()
    anchor = "\nSOLVERS: dict["
    registry = '    "mppi": _mppi,\n'
    study = '    "mppi": StudySolver("mppi", "MPPI", temperature="t_star"),\n'
    assert text.count(anchor) == text.count(registry) == text.count(study) == 1
    text = text.replace(anchor, FACTORY + anchor)
    text = text.replace(registry, registry + '    "shooting": _shooting,\n')
    text = text.replace(
        study, study + '    "shooting": StudySolver("shooting", "random shooting"),\n'
    )
    solver.write_text(text)
    assert differences(PACKAGE, copy) == {"planning/solver.py"}
    said = run_with_copy(tmp_path, RUN)
    assert "toy planner: planned by the study" in said
