#!/usr/bin/env bash
# Configures (once) and builds schedsim into build/ (SCHEDSIM_BUILD_DIR). Incremental: a
# second run with no change does nothing.
#   build.sh                  what scripts/run_default.sh runs: the `schedsim` command
#                             line and, in a build with LibTorch, the rl plugin it loads
#                             for the shipped agent; no test binaries
#   build.sh --all            everything (the test suites, the Python extension): test.sh
#   build.sh --print-targets  configures when needed, then prints the targets the build
#                             step would pass to `cmake --build` (one a line) and builds
#                             nothing (tests/cli/first_run.sh checks them)
# Other arguments go to the CMake configure step. The test suites stay ON in the
# configuration either way, so that run_default.sh and test.sh share one build folder
# without reconfiguring.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCHEDSIM_BUILD_DIR:-$root/build}"
what=cli
print_only=0
configure_args=()
for arg in "$@"; do
  case "$arg" in
    --all) what=all ;;
    --print-targets) print_only=1 ;;
    *) configure_args+=("$arg") ;;
  esac
done
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSCHEDSIM_BUILD_TESTS=ON \
    ${configure_args[@]+"${configure_args[@]}"} >&2
fi
targets=()
if [ "$what" = cli ]; then
  targets=(schedsim)
  # Only a build with LibTorch has the plugin target (rl/CMakeLists.txt).
  if ninja -C "$build" -t query schedsim_rl_plugin >/dev/null 2>&1; then
    targets+=(schedsim_rl_plugin)
  fi
else
  targets=(all)
fi
if [ "$print_only" = 1 ]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >&2
