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
# The self-contained wheel (scripts/build_wheel.sh, about 20 s with the build's ccache
# objects) for tests/python/test_wheel.py, which installs it into a fresh venv.
# SCHEDSIM_TEST_WHEEL=0 leaves it out (that test then skips, saying so); a failed wheel
# build is reported and the test skips rather than stopping the suite.
if [[ "${SCHEDSIM_TEST_WHEEL:-1}" == 1 && -z "${SCHEDSIM_WHEEL:-}" ]]; then
  if SCHEDSIM_WHEEL_ISOLATION=0 CXX="${CXX:-/usr/bin/c++}" "$root/scripts/build_wheel.sh" "$root/build-wheel" >&2; then
    wheels=("$root"/build-wheel/dist/schedsim-*.whl)
    export SCHEDSIM_WHEEL="${wheels[0]}"
  else
    echo "schedsim test: warning: scripts/build_wheel.sh failed; python/test_wheel will skip" >&2
  fi
fi
cd "${SCHEDSIM_BUILD_DIR:-$root/build}"
ctest -j "$(nproc)" --output-on-failure
