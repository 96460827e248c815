#!/usr/bin/env bash
# The main job: installs what is missing, builds, then runs the built-in default
# scenario under every registered policy and prints the comparison table. Outputs go to
# results/default/ (per-policy results.json and jobs.csv, comparison.csv/.md, and the
# JCT CDF figure jct_cdf.svg). Extra arguments go to that `schedsim compare`. Then, when
# built with LibTorch, it compares the shipped RL agent with every policy on
# experiments/configs/rl_default.yaml (results/rl_default/).
# The package and build phases show one progress line each (scripts/progress.sh); their
# full output goes to results/logs/setup.log and results/logs/build.log.
# SCHEDSIM_VERBOSE=1 shows that output as well.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=progress.sh
source "$root/scripts/progress.sh"
build="${SCHEDSIM_BUILD_DIR:-$root/build}"
bin="$build/schedsim"
logs=results/logs

phase_run "[1/3] packages" "checking" "$logs/setup.log" "$root/scripts/setup.sh"

# ccache, when installed, as in test.sh: a later clean rebuild (or test.sh's build of the
# test suites' shared objects) reuses the objects. CMake reads these at the first configure.
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
fi
if [ ! -x "$bin" ]; then
  # Measured on a fresh clone (README, under the first command): 7m12s on 2 shared cores
  # with an empty compiler cache, 22 s with a warm one.
  echo "[2/3] build: the first build (schedsim, and the rl plugin with LibTorch) takes about 7 minutes" \
       "on 2 cores with an empty compiler cache, less with more cores or a warm ccache" >&2
fi
phase_run "[2/3] build" "starting" "$logs/build.log" "$root/scripts/build.sh"

echo "[3/3] compare: every policy on the built-in scenario (results/default/)" >&2
"$bin" compare --out results/default "$@"
# The learned scheduler: the shipped PPO agent against every heuristic on the RL scenario
# (heterogeneous GPUs, physics, bursty arrivals, loss spikes; held-out workload seed 1),
# including the heterogeneity-aware variants (fastest-type placement) and a figure.
# Needs a build with LibTorch.
if "$bin" policies | grep -qx rl; then
  echo
  echo "[3/3] compare: the shipped RL agent and every policy on experiments/configs/rl_default.yaml (results/rl_default/)" >&2
  variants=()
  for p in sjf srtf slurm-easy; do variants+=(--policy "{name: $p, placement: fastest_type}"); done
  "$bin" compare experiments/configs/rl_default.yaml --policies all,rl:experiments/agents/default.pt "${variants[@]}" --out results/rl_default
  "$bin" report results/rl_default > /dev/null && echo "figures: results/rl_default/report/ (jct_cdf.png, report.md)" ||
    echo "(no PNG figures: schedsim report needs python3 with matplotlib and pandas; jct_cdf.svg is there)"
fi
