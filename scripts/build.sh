#!/usr/bin/env bash
# Configures (once) and builds schedsim into build/. Incremental: a second run with no
# change does nothing. Extra arguments go to the CMake configure step.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCHEDSIM_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSCHEDSIM_BUILD_TESTS=ON "$@" >&2
fi
cmake --build "$build" -j "$(nproc)" >&2
