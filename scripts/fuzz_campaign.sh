#!/usr/bin/env bash
# The longer fuzz campaign (docs/reliability.md): every fuzz target for SECONDS (default
# 600) each, from the seed corpus plus what earlier campaigns found (kept in
# build-sanitize/tests/fuzz/corpus/), on JOBS parallel workers per target (default 1).
# Prints one line per target: executions, corpus size, crashes saved. New crash inputs
# land in build-sanitize/tests/fuzz/artifacts/; copy each into tests/fuzz/regressions/NAME/
# and add a Catch2 test (tests/traces/test_fuzz_regressions.cpp) once it is fixed.
# Usage: scripts/fuzz_campaign.sh [SECONDS] [JOBS] [TARGET-NAME-REGEX]
# With a regex, only the fuzz binaries of the matching targets are built (in the
# sanitize build's configuration, scripts/sanitize.sh), not the whole sanitize build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-600}"
jobs="${2:-1}"
only="${3:-.}"
build="${SCHEDSIM_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
# name binary format, one line per target
targets="$(for f in schedsim itp tiresias philly helios acme pai-tasks openb-pods swf gavel csv; do echo "trace-$f fuzz_trace_reader $f"; done
cat <<'LIST'
inventory-pai-machines fuzz_inventory pai-machines
inventory-openb-nodes fuzz_inventory openb-nodes
signal-csv fuzz_signal_csv -
config fuzz_config -
config-dict fuzz_config_dict -
throughputs fuzz_throughputs -
snapshot fuzz_snapshot -
LIST
)"
if [ "$only" = "." ]; then
  SCHEDSIM_FUZZ_SECONDS=5 "$root/scripts/sanitize.sh" -R '^$' >/dev/null  # builds, runs nothing
else
  if [ ! -f "$build/build.ninja" ]; then  # the configuration of scripts/sanitize.sh
    launcher=()
    if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
          -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" -DSCHEDSIM_SANITIZE=ON -DSCHEDSIM_FUZZ=ON \
          -DSCHEDSIM_WITH_TORCH=OFF -DSCHEDSIM_BUILD_PYTHON=OFF -DSCHEDSIM_BUILD_TESTS=ON "${launcher[@]}" >&2
  fi
  bins=$(echo "$targets" | awk -v re="$only" '$1 ~ re {print $2}' | sort -u)
  [ -n "$bins" ] || { echo "fuzz_campaign.sh: no target matches '$only'" >&2; exit 2; }
  # shellcheck disable=SC2086
  cmake --build "$build" -j "$(nproc)" --target $bins >&2
fi
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
  # One working folder per target: with -jobs each job writes fuzz-N.log there, and two
  # campaigns run side by side (different regexes) must not write the same file.
  mkdir -p "$fuzz/run/$name"
  (cd "$fuzz/run/$name" && SCHEDSIM_FUZZ_FORMAT=$format "$fuzz/$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -jobs="$jobs" -workers="$jobs" -artifact_prefix="$fuzz/artifacts/$name-" "$fuzz/corpus/$name" "${seeds[@]}" </dev/null >"$log" 2>&1) || true
  # With -jobs each job writes fuzz-N.log in the working folder and libFuzzer copies it
  # into its own output when the job exits: count the statistics in $log only (summing
  # both counted every execution twice).
  local execs
  execs=$(awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}' "$log")
  rm -f "$fuzz/run/$name"/fuzz-*.log
  printf "%-24s %12s %8s %8s\n" "$name" "$execs" "$(ls "$fuzz/corpus/$name" | wc -l)" \
    "$(( $(ls "$fuzz/artifacts" | grep -c "^$name-" || true) - before ))"
}
while read -r name bin format; do
  [ "$format" = "-" ] && format=""
  run "$name" "$bin" "$format"
done <<<"$targets"
