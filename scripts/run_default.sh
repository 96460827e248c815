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
# (heterogeneous GPUs, physics, bursty arrivals, loss spikes; held-out workload seed 1),
# including the heterogeneity-aware variants (fastest-type placement) and a figure.
# Needs a build with LibTorch.
if "$bin" policies | grep -qx rl; then
  echo
  variants=()
  for p in sjf srtf slurm-easy; do variants+=(--policy "{name: $p, placement: fastest_type}"); done
  "$bin" compare experiments/configs/rl_default.yaml --policies all,rl:experiments/agents/default.pt "${variants[@]}" --out results/rl_default
  "$bin" report results/rl_default > /dev/null && echo "figures: results/rl_default/report/ (jct_cdf.png, report.md)" ||
    echo "(no PNG figures: schedsim report needs python3 with matplotlib and pandas; jct_cdf.svg is there)"
fi
