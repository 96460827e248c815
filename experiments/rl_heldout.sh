#!/usr/bin/env bash
# Held-out comparison of trained agents with every registered heuristic: runs
# `schedsim compare` on SCENARIO for each seed in SEEDS (never training seeds: those start
# at train.train_seed_start, 1000 in rl_train.yaml) with --policies all,rl:CKPT...,
# then prints each policy's mean JCT averaged over the seeds, best first.
#   experiments/rl_heldout.sh results/heldout "1 2 3 4 5 6 7 8" experiments/agents/default.pt
# Environment: SCHEDSIM (the binary, default build/schedsim), SCENARIO (default
# experiments/configs/rl_default.yaml).
set -euo pipefail
out="$1"; seeds="$2"; shift 2
bin="${SCHEDSIM:-build/schedsim}"
scenario="${SCENARIO:-experiments/configs/rl_default.yaml}"
policies="all"
for c in "$@"; do policies="$policies,rl:$c"; done
for s in $seeds; do
  "$bin" compare "$scenario" --seed "$s" --policies "$policies" --quiet --out "$out/seed_$s"
done
# policy -> mean over seeds of mean JCT (hours)
awk -F, 'FNR > 1 { sum[$1] += $3; n[$1] += 1 }
         END { for (p in sum) printf "%-40s %.4f\n", p, sum[p] / n[p] / 3600 }' "$out"/seed_*/comparison.csv | sort -k2 -g | tee "$out/mean_jct_h.txt"
