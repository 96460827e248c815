#!/usr/bin/env bash
# Held-out comparison of trained agents with the heuristics: runs `schedsim compare` on
# SCENARIO for each seed in SEEDS (never training seeds: those start at
# train.train_seed_start, 1000 in rl_train.yaml) with every registered heuristic (their
# default placement), the heterogeneity-aware variants (fastest_type placement) of the
# queue policies, and rl:CKPT for each checkpoint given; then prints each policy's mean JCT
# averaged over the seeds, best first.
#   experiments/rl_heldout.sh results/heldout "1 2 3 4 5 6 7 8" experiments/agents/default.pt
# Environment: SCHEDSIM (the binary, default build/schedsim), SCENARIO (default
# experiments/configs/rl_default.yaml).
set -euo pipefail
out="$1"; seeds="$2"; shift 2
bin="${SCHEDSIM:-build/schedsim}"
scenario="${SCENARIO:-experiments/configs/rl_default.yaml}"
policies="all"
for c in "$@"; do policies="$policies,rl:$c"; done
variants=()
for p in fifo sjf srtf las gittins tiresias slurm-easy; do variants+=(--policy "{name: $p, placement: fastest_type}"); done
for s in $seeds; do
  "$bin" compare "$scenario" --seed "$s" --policies "$policies" "${variants[@]}" --quiet --out "$out/seed_$s"
done
# policy -> mean over seeds of mean JCT (hours); labels may be quoted (they can hold commas)
python3 - "$out" <<'PY' | tee "$out/mean_jct_h.txt"
import csv, glob, os, sys
sums, counts = {}, {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "seed_*", "comparison.csv"))):
    for row in csv.DictReader(open(path)):
        sums[row["policy"]] = sums.get(row["policy"], 0.0) + float(row["mean_jct_s"])
        counts[row["policy"]] = counts.get(row["policy"], 0) + 1
for p in sorted(sums, key=lambda p: sums[p] / counts[p]):
    print(f"{p:<45} {sums[p] / counts[p] / 3600:.4f}")
PY
