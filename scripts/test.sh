#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test on all cores.
# Tests that need ../shared/data report a skip with the reason when it is absent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${SCHEDSIM_BUILD_DIR:-$root/build}"
ctest -j "$(nproc)" --output-on-failure
