#!/usr/bin/env bash
# The main job: installs what is missing, builds, then runs the built-in default
# scenario under every registered policy and prints the comparison table. Outputs go to
# results/default/ (per-policy results.json and jobs.csv, comparison.csv/.md, and the
# JCT CDF figure jct_cdf.svg). Extra arguments go to that `schedsim compare`. Then, when
# built with LibTorch, it compares the shipped RL agent with every policy on
# experiments/configs/rl_default.yaml (results/rl_default/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$root"
bin="${SCHEDSIM_BUILD_DIR:-$root/build}/schedsim"
"$bin" compare --out results/default "$@"
# The learned scheduler: the shipped PPO agent against every heuristic on the RL scenario
# (heterogeneous GPUs, physics on; held-out workload seed 1). Needs a build with LibTorch.
if "$bin" policies | grep -qx rl; then
  echo
  "$bin" compare experiments/configs/rl_default.yaml --policies all,rl:experiments/agents/default.pt --out results/rl_default
fi
