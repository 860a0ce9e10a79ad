#!/usr/bin/env bash
# The headline claims' added training seeds (README, "Five seeds for the headline claims"),
# built task by task from a worktree whose study files carry every planned `headline_seeds`
# field, each task's evidence exported as it lands. Run it from that worktree, with its own
# .venv and the cache outside every checkout, in the background:
#
#   git worktree add ../seeds <commit> && cd ../seeds && make venv   # set the planned fields
#   export JEPA_GEOMETRY_DATA=/srv/jepa-geometry/seeds               # absolute, outside
#   export JEPA_GEOMETRY_READ_ONLY=$PWD/evidence/laptop              # the evidence behind it
#   nohup scripts/build_headline_seeds.sh reacher pusht > ../seeds.log 2>&1 &
#
# Per task: `study` (the dataset's frames, the added models, their CEM cells), then the
# dataset's committed manifest adopted where the bytes are the committed ones (a task whose
# dataset differs stops here: its added seeds would train on other bytes than the first
# three), then the task's two pages, which measure the added models' geometry, then their
# export. `study`, not `grid --tasks`: the grid also plans gate cells the evidence lacks.
set -euo pipefail
: "${JEPA_GEOMETRY_DATA:?set JEPA_GEOMETRY_DATA to an absolute cache folder outside the checkout}"
: "${JEPA_GEOMETRY_READ_ONLY:?set JEPA_GEOMETRY_READ_ONLY to the evidence/laptop folder of this worktree}"
BIN=${BIN:-.venv/bin}
[ $# -gt 0 ] || { echo "usage: $0 TASK [TASK ...] (tworoom reacher pointmaze pusht)" >&2; exit 2; }

stamp() { printf '%s %s\n' "$(date -u +%FT%TZ)" "$*"; }

for task in "$@"; do
  case $task in
    tworoom | reacher | pointmaze | pusht) ;;
    *) echo "unknown task $task; valid: tworoom reacher pointmaze pusht" >&2; exit 2 ;;
  esac
  stamp "$task: study"
  "$BIN/jepa-geometry" study "$task" --profile laptop --quiet
  "$BIN/python" scripts/adopt_committed_manifests.py --kind datasets
  stamp "$task: pages"
  "$BIN/jepa-geometry" book --profile laptop --quiet --jobs 1 \
    --only "ch06_${task}_planning" "ch07_${task}_geometry"
  "$BIN/jepa-geometry" evidence export --only "ch06_${task}_planning" "ch07_${task}_geometry"
  stamp "$task: exported"
done
