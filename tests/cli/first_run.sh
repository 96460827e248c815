#!/usr/bin/env bash
# The README's first command (scripts/run_default.sh), without running it (it would run
# setup.sh, which may call apt):
#   first_run.sh targets SOURCE_DIR BUILD_DIR   its build step builds the CLI (and the rl
#       plugin where the build has one) and nothing of the test suites or the Python
#       extension: checked on ninja's own list of what those targets need
#   first_run.sh progress SOURCE_DIR WORK_DIR   the progress lines of scripts/progress.sh:
#       a phase that fails prints its exit status, the last 30 lines of its log and the
#       log's path; one that succeeds prints one line per interval and "ok"
set -uo pipefail
mode=$1 src=$2 dir=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_contains() {  # TEXT NEEDLE WHAT
  case "$1" in *"$2"*) ;; *) printf 'FAIL: %s: missing %s in:\n%s\n' "$3" "$2" "$1" >&2; exit 1 ;; esac
}
expect_match() {  # TEXT EXTENDED_REGEX WHAT (elapsed times vary: "0 s" or "1 s")
  grep -qE -- "$2" <<<"$1" || { printf 'FAIL: %s: no line matches %s in:\n%s\n' "$3" "$2" "$1" >&2; exit 1; }
}
expect_absent() {  # TEXT NEEDLE WHAT
  case "$1" in *"$2"*) printf 'FAIL: %s: unexpected %s in:\n%s\n' "$3" "$2" "$1" >&2; exit 1 ;; esac
}

case "$mode" in
targets)
  if [ ! -f "$dir/build.ninja" ]; then echo "skipped: $dir is not a Ninja build"; exit 77; fi
  targets=$(SCHEDSIM_BUILD_DIR="$dir" bash "$src/scripts/build.sh" --print-targets) || fail "build.sh --print-targets failed"
  if ninja -C "$dir" -t query schedsim_rl_plugin >/dev/null 2>&1; then
    want=$'schedsim\nschedsim_rl_plugin'
  else
    want=schedsim
  fi
  [ "$targets" = "$want" ] || fail "build.sh --print-targets printed '$targets', expected '$want'"
  all=$(SCHEDSIM_BUILD_DIR="$dir" bash "$src/scripts/build.sh" --all --print-targets)
  [ "$all" = all ] || fail "build.sh --all --print-targets printed '$all', expected 'all'"
  # Everything those targets need (sources, objects, libraries), as paths relative to the
  # source or build folder: no test binary, test source, fuzz target or Python module.
  # shellcheck disable=SC2086
  needed=$(ninja -C "$dir" -t inputs $targets | sed -e "s|^$src/||" -e "s|^$dir/||") || fail "ninja -t inputs failed"
  [ -n "$needed" ] || fail "ninja -t inputs listed nothing for $targets"
  bad=$(grep -E '^(tests|python)/|schedsim_tests|fake_rl_plugin|(^|/)_schedsim' <<<"$needed" || true)
  [ -z "$bad" ] || fail "the first command's build step ($targets) would build:"$'\n'"$bad"
  # The check sees the test suites when they are asked for (the whole build has them).
  # (Here-strings, not pipes into grep -q: under pipefail the writer's SIGPIPE would fail.)
  all_inputs=$(ninja -C "$dir" -t inputs all) || fail "ninja -t inputs all failed"
  grep -q '^tests/CMakeFiles/schedsim_tests\.dir/' <<<"$all_inputs" ||
    fail "ninja -t inputs all lists no object of schedsim_tests: the check above proves nothing"
  echo "ok: build.sh builds $(echo $targets), none of the test suites"
  ;;
progress)
  rm -rf "$dir" && mkdir -p "$dir" || fail "cannot create $dir"
  # shellcheck source=../../scripts/progress.sh
  source "$src/scripts/progress.sh"
  log="$dir/logs/build.log"

  # A failing phase: 40 lines of output, then exit status 3.
  fake_failing_build() {
    for i in $(seq 1 40); do echo "[$i/40] Building CXX object step$i.o"; done
    echo "step40.cpp:7:3: error: expected ';'" >&2
    return 3
  }
  err=$(SCHEDSIM_VERBOSE=0 phase_run "[2/3] build" "configuring" "$log" fake_failing_build 2>&1 >/dev/null)
  rc=$?
  [ "$rc" = 3 ] || fail "phase_run returned $rc for a command that exits 3"
  expect_contains "$err" "[2/3] build: configuring (log: $log)" "start line"
  expect_match "$err" "^\\[2/3\\] build: failed \\(exit status 3 after [0-9] s\\); the last 30 lines of $log:\$" "failure line"
  expect_contains "$err" $'\n'"  | [12/40] Building CXX object step12.o"$'\n' "tail"
  expect_contains "$err" $'\n'"  | step40.cpp:7:3: error: expected ';'"$'\n' "tail"
  expect_absent "$err" "step11.o" "tail (more than 30 lines)"
  expect_contains "$err" "[2/3] build: full log: $log" "log path"
  [ "$(wc -l <"$log")" = 41 ] || fail "$log has $(wc -l <"$log") lines, expected all 41"
  [ "$(grep -c '^  | ' <<<"$err")" = 30 ] || fail "the tail is not 30 lines"

  # A phase that succeeds, not on a terminal: plain progress lines (here every line: the
  # interval is 0 s), then "ok" with the compiler warnings counted.
  fake_build() {
    echo "-- Configuring done"
    for i in 1 2 3 4; do echo "[$i/4] Building CXX object step$i.o"; done
    echo "sim/a.cpp:3:9: warning: unused variable 'x' [-Wunused-variable]"
  }
  err=$(SCHEDSIM_PROGRESS_INTERVAL_S=0 phase_run "[2/3] build" "configuring" "$log" fake_build 2>&1 >/dev/null) ||
    fail "phase_run failed for a command that succeeds"
  expect_match "$err" "^\\[2/3\\] build: configuring, [0-9] s\$" "configure status"
  expect_match "$err" "^\\[2/3\\] build: 3/4 \\(75%\\), [0-9] s\$" "step status"
  expect_match "$err" "^\\[2/3\\] build: ok \\([0-9] s; 1 compiler warnings, see $log\\)\$" "ok line"
  expect_absent "$err" "Building CXX" "quiet output"
  # SCHEDSIM_VERBOSE=1: the raw output too.
  err=$(SCHEDSIM_VERBOSE=1 phase_run "[2/3] build" "configuring" "$log" fake_build 2>&1 >/dev/null) ||
    fail "phase_run failed in verbose mode"
  expect_contains "$err" $'\n'"[4/4] Building CXX object step4.o"$'\n' "verbose output"
  expect_match "$err" "^\\[2/3\\] build: ok \\([0-9] s; 1 compiler warnings" "verbose ok line"
  # On a terminal (a pseudo-terminal from util-linux's script, when installed): one line
  # rewritten in place ("\r", erase to the end of the line), no plain progress lines.
  if command -v script >/dev/null 2>&1; then
    tty_out=$(FR_SRC="$src" FR_LOG="$dir/logs/tty.log" script -qec 'bash -c "source \"\$FR_SRC/scripts/progress.sh\"; f() { echo \"[1/2] Building a.o\"; echo \"[2/2] Building b.o\"; }; phase_run \"[2/3] build\" starting \"\$FR_LOG\" f"' /dev/null) ||
      fail "phase_run on a terminal failed"
    expect_contains "$tty_out" $'\r\033[K[2/3] build: 2/2 (100%), ' "terminal line"
    expect_contains "$tty_out" $'\r\033[K[2/3] build: ok (' "terminal ok line"
    expect_absent "$tty_out" "(log: $dir" "terminal start line"
    expect_absent "$tty_out" "Building" "terminal quiet output"
  fi
  echo "ok: progress lines, failure tail and log path"
  ;;
*)
  fail "unknown mode $mode (targets or progress)"
  ;;
esac
