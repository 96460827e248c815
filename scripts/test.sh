#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test on all cores.
# Tests that need ../shared/data report a skip with the reason when it is absent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
# ccache for the build (CMake reads this at the first configure) and for the pip-install
# test, which then reuses the build's objects (paths relative to the checkout).
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
fi
"$root/scripts/build.sh" --all
cd "${SCHEDSIM_BUILD_DIR:-$root/build}"
ctest -j "$(nproc)" --output-on-failure
