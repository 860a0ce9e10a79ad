#!/usr/bin/env bash
# The laptop book built part by part, each part's evidence exported as soon as it lands, so a
# build longer than one sitting (about 12 hours on 2 cores from nothing) can stop anywhere
# and resume from the cache. Run it from a git worktree at a fixed commit, with its own .venv
# and the cache outside every checkout, in the background:
#
#   git worktree add ../build <commit> && cd ../build && make venv
#   export JEPA_GEOMETRY_DATA=/srv/jepa-geometry/data-laptop   # absolute, outside checkouts
#   nohup scripts/build_laptop.sh > ../build-laptop.log 2>&1 &
#
# Each part: the task's grid units on this machine (the dataset, the gate or ladder, every
# model, planning cell and geometry), then its two pages, then `evidence export --only` for
# them; commit evidence/laptop after each "exported:" line of the log. A finished part costs
# seconds on the next run (everything is cached). PARTS=... builds only those parts.
set -euo pipefail
: "${JEPA_GEOMETRY_DATA:?set JEPA_GEOMETRY_DATA to an absolute cache folder outside the checkout}"
BIN=${BIN:-.venv/bin}
PARTS=${PARTS:-"tworoom reacher pointmaze pusht cube kappa theory across scaling objective"}

stamp() { printf '%s %s\n' "$(date -u +%FT%TZ)" "$*"; }

pages_of() {
  case $1 in
    cube) echo ch06_cube_gate ch07_cube_geometry ;;
    tworoom | reacher | pointmaze | pusht) echo "ch06_$1_planning ch07_$1_geometry" ;;
    kappa) echo "" ;;
    theory) echo ch01_metric_leverage ch02_isotropy_regret ch03_prediction_vs_planning ch04_tasks ch05_world_model ;;
    across) echo ch08_across ;;
    scaling) echo ch09_scaling ;;
    objective) echo ch10_own_objective ;;  # builds its own units: the new arm's, on Two-Room
    *) echo "unknown part $1; valid: $PARTS" >&2; exit 2 ;;
  esac
}

for part in $PARTS; do
  stamp "part $part: start"
  case $part in
    tworoom | reacher | pointmaze | pusht | cube)
      "$BIN/jepa-geometry" grid --profile laptop --tasks "$part" --executor local --quiet ;;
    kappa) "$BIN/jepa-geometry" kappa --profile laptop --quiet ;;
    scaling) "$BIN/jepa-geometry" scaling --profile laptop --quiet ;;
  esac
  pages=$(pages_of "$part")
  if [ -n "$pages" ]; then
    # one page at a time, each with every core (a page that finds a unit missing builds it
    # with its own pool)
    # shellcheck disable=SC2086
    "$BIN/jepa-geometry" book --profile laptop --quiet --jobs 1 --only $pages
    # shellcheck disable=SC2086
    if "$BIN/jepa-geometry" evidence export --profile laptop --only $pages; then
      stamp "exported: $pages"
    else
      stamp "exported over the evidence budget (above): $pages"
    fi
  fi
  stamp "part $part: done"
done
