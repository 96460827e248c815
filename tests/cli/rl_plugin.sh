#!/bin/sh
# The shape of LibTorch's loading (docs/benchmarks.md#start-up), not its speed:
#   deps    EXE PLUGIN           schedsim needs no libtorch/libc10, the plugin does, and
#                                the plugin exports one symbol
#   lazy    EXE SRC OUT          --version, policies and run load no LibTorch; a run with
#                                the rl policy loads the plugin and LibTorch
#   missing EXE SRC OUT PLUGIN   a schedsim without its plugin says where it looked, and
#                                runs with SCHEDSIM_RL_PLUGIN to the same bytes
#   install CMAKE BUILD SRC OUT  `cmake --install --component cli`: bin/schedsim finds
#                                lib/schedsim/libschedsim_rl_plugin.so
set -u
fail() { echo "FAIL: $*"; exit 1; }
mode=$1
shift
agent_args() { echo "--set workload.synthetic.num_jobs=20 --set policy=rl:$1/experiments/agents/default.pt"; }

case "$mode" in
deps)
  exe=$1 plugin=$2
  needed=$(readelf -d "$exe" | grep NEEDED) || fail "readelf -d $exe"
  echo "$needed" | grep -Ei 'torch|c10' && fail "$exe needs LibTorch directly"
  ldd "$exe" | grep -Ei 'torch|c10' && fail "$exe loads LibTorch through its dependencies"
  readelf -d "$plugin" | grep NEEDED | grep -q 'libtorch' || fail "$plugin does not need libtorch"
  # Only the entry point: the static libraries' copies inside stay private.
  exported=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TtWwVvDdBbRr]$/ && $3 !~ /^(_edata|_end|__bss_start|_init|_fini)$/ {print $3}')
  [ "$exported" = "schedsim_rl_plugin_api" ] || fail "$plugin exports more than schedsim_rl_plugin_api: $(echo "$exported" | head -5)"
  echo "ok: $exe needs $(echo "$needed" | wc -l) libraries, none of LibTorch; the plugin exports $exported"
  ;;
lazy)
  exe=$1 src=$2 out=$3
  rm -rf "$out" && mkdir -p "$out"
  for args in "--version" "policies" "run --quiet --out $out/run" "compare --quiet --policies fifo,sjf --out $out/compare"; do
    # shellcheck disable=SC2086
    LD_DEBUG=files "$exe" $args > "$out/log" 2>&1 || fail "schedsim $args: $(tail -3 "$out/log")"
    grep -E 'file=[^ ]*(libtorch|libc10|libschedsim_rl_plugin)' "$out/log" && fail "schedsim $args loaded LibTorch"
  done
  # shellcheck disable=SC2046
  LD_DEBUG=files "$exe" run --quiet $(agent_args "$src") --out "$out/rl" > "$out/log" 2>&1 || fail "schedsim run rl: $(tail -3 "$out/log")"
  grep -q 'file=[^ ]*libschedsim_rl_plugin.so .*dynamically loaded' "$out/log" || fail "run rl did not load the plugin"
  grep -q 'file=[^ ]*libtorch' "$out/log" || fail "run rl did not load libtorch"
  grep -q '"name": "rl"' "$out/rl/results.json" || fail "run rl: no rl policy in results.json"
  echo "ok: --version, policies, run and compare load no LibTorch; run with rl:default.pt loads the plugin and LibTorch"
  ;;
missing)
  exe=$1 src=$2 out=$3 plugin=$4
  rm -rf "$out" && mkdir -p "$out/bin"
  cp "$exe" "$out/bin/schedsim"
  # shellcheck disable=SC2046
  env -u SCHEDSIM_RL_PLUGIN "$out/bin/schedsim" run --quiet $(agent_args "$src") --out "$out/a" > "$out/err" 2>&1
  status=$?
  [ "$status" -eq 1 ] || fail "exit status $status, want 1: $(cat "$out/err")"
  want="schedsim: error: --set policy=rl:$src/experiments/agents/default.pt: policy: the rl policy needs LibTorch, which schedsim loads from its plugin libschedsim_rl_plugin.so: not found (tried $out/bin/libschedsim_rl_plugin.so, $out/lib/schedsim/libschedsim_rl_plugin.so); set SCHEDSIM_RL_PLUGIN to the plugin's file, or build it (cmake -DSCHEDSIM_WITH_TORCH=ON, target schedsim_rl_plugin)"
  [ "$(cat "$out/err")" = "$want" ] || fail "message: $(cat "$out/err")
want:    $want"
  # Commands without the rl policy do not notice.
  "$out/bin/schedsim" run --quiet --out "$out/plain" > "$out/err" 2>&1 || fail "run without the plugin: $(cat "$out/err")"
  # The variable: the same results as the build's schedsim with its plugin beside it.
  # shellcheck disable=SC2046
  SCHEDSIM_RL_PLUGIN=$plugin "$out/bin/schedsim" run --quiet $(agent_args "$src") --out "$out/b" > "$out/err" 2>&1 || fail "with SCHEDSIM_RL_PLUGIN: $(cat "$out/err")"
  # shellcheck disable=SC2046
  "$exe" run --quiet $(agent_args "$src") --out "$out/c" > "$out/err" 2>&1 || fail "build's schedsim: $(cat "$out/err")"
  for f in results.json jobs.csv; do cmp "$out/b/$f" "$out/c/$f" || fail "$f differs"; done
  echo "ok: the missing plugin is reported with the paths tried; SCHEDSIM_RL_PLUGIN finds it"
  ;;
install)
  cmake=$1 build=$2 src=$3 out=$4
  rm -rf "$out"
  "$cmake" --install "$build" --prefix "$out/prefix" --component cli > "$out.log" 2>&1 || fail "cmake --install: $(tail -3 "$out.log")"
  [ -x "$out/prefix/bin/schedsim" ] || fail "no bin/schedsim"
  [ -f "$out/prefix/lib/schedsim/libschedsim_rl_plugin.so" ] || fail "no lib/schedsim/libschedsim_rl_plugin.so"
  # shellcheck disable=SC2046
  env -u SCHEDSIM_RL_PLUGIN "$out/prefix/bin/schedsim" run --quiet $(agent_args "$src") --out "$out/run" > "$out/err" 2>&1 || fail "installed schedsim run rl: $(cat "$out/err")"
  grep -q '"name": "rl"' "$out/run/results.json" || fail "installed run: no rl policy in results.json"
  echo "ok: the installed schedsim runs the rl policy with lib/schedsim/libschedsim_rl_plugin.so"
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
