"""Every artifact key a profile's grid would build, one line each, sorted.

    .venv/bin/python scripts/list_keys.py --profile laptop > keys-laptop.txt

The listing covers the five task studies, their gates and ladders, the κ sweep and the scaling
study (``jepa-geometry grid --tasks all --with kappa scaling``): each unit's outputs as
``<kind>/<name>/<key>``. Two listings that are equal prove that a change computes the same
artifacts (a restructuring, a cost-model edit); a changed line names what it rebuilds. Units
that wait for a result not yet cached (a gate, the MPPI temperature, the ΛReg variant's
decision) have no outputs yet and
are not listed. Nothing is built or stated.
"""

from __future__ import annotations

import argparse

from jepa_geometry import cluster
from jepa_geometry.cli import EXTENSIONS
from jepa_geometry.profiles import PROFILES, load_profile
from jepa_geometry.study.spec import available_studies, load_study


def keys(profile_name: str) -> list[str]:
    """The sorted ``kind/name/key`` of every output of every unit of the full grid."""
    profile = load_profile(profile_name)
    specs = [load_study(t) for t in available_studies()]
    exts = list(EXTENSIONS.values())
    lines = {
        f"{a.kind}/{a.name}/{a.key}"
        for stage in cluster.STAGES
        for u in cluster.stage_units(stage, specs, profile, exts)
        for a in u.outputs
    }
    return sorted(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="laptop", choices=list(PROFILES))
    args = ap.parse_args()
    print("\n".join(keys(args.profile)))


if __name__ == "__main__":
    main()
