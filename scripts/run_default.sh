#!/usr/bin/env bash
# The main job: installs what is missing, builds, then runs the built-in default
# scenario under every registered policy and prints the comparison table. Outputs go to
# results/default/ (per-policy results.json and jobs.csv, comparison.csv/.md, and the
# JCT CDF figure jct_cdf.svg). Extra arguments go to `schedsim compare`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$root"
exec "${SCHEDSIM_BUILD_DIR:-$root/build}/schedsim" compare --out results/default "$@"
