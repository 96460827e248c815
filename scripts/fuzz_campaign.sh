#!/usr/bin/env bash
# The longer fuzz campaign (docs/reliability.md): every fuzz target for SECONDS (default
# 600) each, from the seed corpus plus what earlier campaigns found (kept in
# build-sanitize/tests/fuzz/corpus/), on JOBS parallel workers per target (default 1).
# Prints one line per target: executions, corpus size, crashes saved. New crash inputs
# land in build-sanitize/tests/fuzz/artifacts/; copy each into tests/fuzz/regressions/NAME/
# and add a Catch2 test (tests/traces/test_fuzz_regressions.cpp) once it is fixed.
# Usage: scripts/fuzz_campaign.sh [SECONDS] [JOBS] [TARGET-NAME-REGEX]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-600}"
jobs="${2:-1}"
only="${3:-.}"
build="${SCHEDSIM_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
SCHEDSIM_FUZZ_SECONDS=5 "$root/scripts/sanitize.sh" -R '^$' >/dev/null  # builds, runs nothing
fuzz="$build/tests/fuzz"
mkdir -p "$fuzz/artifacts" "$fuzz/run" "$fuzz/logs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
printf "%-24s %12s %8s %8s\n" target executions corpus crashes
run() {  # name binary format
  local name=$1 bin=$2 format=$3
  [[ "$name" =~ $only ]] || return 0
  local seeds=("$root/tests/fuzz/corpus/$name")
  [ -d "$root/tests/fuzz/regressions/$name" ] && seeds+=("$root/tests/fuzz/regressions/$name")
  mkdir -p "$fuzz/corpus/$name"
  local before log=$fuzz/logs/$name.log
  before=$(ls "$fuzz/artifacts" | grep -c "^$name-" || true)
  (cd "$fuzz/run" && SCHEDSIM_FUZZ_FORMAT=$format "$fuzz/$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -jobs="$jobs" -workers="$jobs" -artifact_prefix="$fuzz/artifacts/$name-" "$fuzz/corpus/$name" "${seeds[@]}" >"$log" 2>&1) || true
  # With -jobs the statistics are in fuzz-N.log files of the working folder.
  local execs
  execs=$(cat "$log" "$fuzz"/run/fuzz-*.log 2>/dev/null | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
  rm -f "$fuzz"/run/fuzz-*.log
  printf "%-24s %12s %8s %8s\n" "$name" "$execs" "$(ls "$fuzz/corpus/$name" | wc -l)" \
    "$(( $(ls "$fuzz/artifacts" | grep -c "^$name-" || true) - before ))"
}
for f in schedsim itp tiresias philly helios acme pai-tasks openb-pods swf gavel csv; do run "trace-$f" fuzz_trace_reader "$f"; done
run inventory-pai-machines fuzz_inventory pai-machines
run inventory-openb-nodes fuzz_inventory openb-nodes
run signal-csv fuzz_signal_csv ""
run config fuzz_config ""
run throughputs fuzz_throughputs ""
