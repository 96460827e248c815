#!/bin/sh
# Rewrites tests/golden/<policy>.csv (the jobs.csv of tests/golden/scenario.yaml) and
# tests/golden/oracle/<policy>.csv (the same with information: oracle) for every
# registered policy, with the built CLI. Run after an intended change of a
# policy's behaviour, and review the diff before committing it.
#   scripts/regen_golden.sh [path/to/schedsim]   (default: build/schedsim)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-"$root/build/schedsim"}
[ -x "$cli" ] || { echo "regen_golden.sh: $cli not found; build first (cmake --build build)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# `schedsim policies` prints each name at the start of a line, its details indented.
# `rl` needs a checkpoint: its golden is the shipped agent's test (tests/rl/).
for policy in $("$cli" policies | grep -v '^[[:space:]]' | grep -vx rl); do
  "$cli" run "$root/tests/golden/scenario.yaml" --set "policy=$policy" --out "$tmp/$policy" --quiet
  cp "$tmp/$policy/jobs.csv" "$root/tests/golden/$policy.csv"
  echo "tests/golden/$policy.csv"
  # The same under information: oracle (the clairvoyant behaviour of old): the anchor that
  # shows the information model changed nothing when a scenario asks for the truth.
  mkdir -p "$root/tests/golden/oracle"
  "$cli" run "$root/tests/golden/scenario.yaml" --set "policy=$policy" --set information=oracle --out "$tmp/oracle-$policy" --quiet
  cp "$tmp/oracle-$policy/jobs.csv" "$root/tests/golden/oracle/$policy.csv"
  echo "tests/golden/oracle/$policy.csv"
done
