#!/bin/bash
# ctest: the Slurm templates of experiments/slurm/ run as Slurm would run them, with the
# SLURM_* variables set by hand and stand-ins for srun and sbatch on PATH.
# 1. sweep_array.sbatch as a 3-task array (--array=5-7): the shards' tables equal one
#    plain sweep's, whatever order the tasks finish in; a task outside the range exits 2.
# 2. sweep_collect.sbatch reruns a run the array lost and rewrites the same tables.
# 3. submit_sweep.sh submits the array with --array=0-(SHARDS-1) and the collecting job
#    with --dependency=afterany:ARRAY_JOB.
# 4. train_seeds.sbatch with 2 tasks: task i trains seed SEED0+i into OUT/seed<seed>, and
#    its learning curve equals a direct `schedsim train --set train.seed=<seed>` run
#    (skipped, with the reason, when the build has no LibTorch).
# 5. train_distributed.sbatch with 2 concurrent tasks (skipped without c10d/Gloo): one
#    agent, its curve's steps, updates and episodes equal a one-process run's with the
#    same num_envs, and only task 0 wrote.
#   test_slurm_templates.sh SCHEDSIM_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
cli=$1 src=$2 work=$3
slurm=$src/experiments/slurm
rm -rf "$work" && mkdir -p "$work/bin" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

cat > base.yaml <<'YAML'
seed: 7
cluster:
  nodes:
    - {count: 1, type: V100, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 30
    arrival: {process: poisson, mean_interarrival_s: 60}
    duration_s: {dist: exponential, mean: 600}
    gpus: {1: 0.6, 2: 0.2, 4: 0.2}
policy: fifo
YAML
printf 'scenario: base.yaml\nparameters:\n  workload.synthetic.arrival.mean_interarrival_s: [30, 90]\npolicies: [fifo]\nseeds: 2\n' > grid.yaml

"$cli" sweep grid.yaml --out plain --jobs 1 2>/dev/null >/dev/null

array_task() {  # ID [STEP]: runs one array task of --array=5-7[:STEP]
  env SLURM_ARRAY_TASK_ID=$1 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_MAX=7 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=${2:-1} \
      SLURM_CPUS_PER_TASK=1 GRID=grid.yaml OUT=sharded SCHEDSIM="$cli" bash "$slurm/sweep_array.sbatch"
}
for id in 7 5 6; do
  array_task $id > "task$id.out" 2>&1 || { cat "task$id.out"; fail "array task $id failed"; }
done
grep -q "shard 2/3: 1 of them" task7.out || fail "task 7 did not run shard 2/3 (run 2 of 0..3)"
grep -q "shard 0/3: 2 of them" task5.out || fail "task 5 did not run shard 0/3 (runs 0 and 3)"
grep -q "tables not written" task7.out || fail "the first shard to finish wrote the tables"
grep -q "tables in sharded/sweep.csv" task6.out || fail "the last shard did not write the tables"
for t in sweep.csv summary.csv; do cmp plain/$t sharded/$t || fail "sharded $t differs from the plain sweep's"; done
[ "$(ls sharded/runs | wc -l)" = 4 ] || fail "expected 4 run folders"
if array_task 6 2 > bad.out 2>&1; then fail "an array task off the range's step did not fail"; fi
grep -q "is not in a range A-B\[:step\]" bad.out || fail "no clear message for an array task off the range"

# The collecting job reruns what the array lost, then writes the same tables.
victim=$(ls sharded/runs | head -1)
rm -r "sharded/runs/$victim" sharded/sweep.csv
env SLURM_CPUS_PER_TASK=2 GRID=grid.yaml OUT=sharded SCHEDSIM="$cli" bash "$slurm/sweep_collect.sbatch" > collect.out 2>&1 || { cat collect.out; fail "collect failed"; }
grep -q "sweep: 4 runs, 3 already done, 1 to run on 2 worker process(es)" collect.out || fail "collect did not resume"
for t in sweep.csv summary.csv; do cmp plain/$t sharded/$t || fail "collected $t differs"; done

# submit_sweep.sh, with an sbatch that records its arguments.
cat > bin/sbatch <<'SH'
#!/bin/bash
n=$(( $(cat sbatch.count 2>/dev/null || echo 0) + 1 )); echo $n > sbatch.count
printf '%s\n' "$@" > "sbatch.$n.args"
echo "$((1000 + n));cluster"
SH
chmod +x bin/sbatch
PATH="$work/bin:$PATH" bash "$slurm/submit_sweep.sh" grid.yaml results/s 4 --partition=cpu > submit.out
grep -qx -- "--array=0-3" sbatch.1.args || fail "the array is not --array=0-3"
grep -qx -- "--partition=cpu" sbatch.1.args || fail "extra sbatch options not passed on"
grep -q "sweep_array.sbatch$" sbatch.1.args || fail "the array job is not sweep_array.sbatch"
grep -qx -- "--dependency=afterany:1001" sbatch.2.args || fail "the collecting job does not depend on the array job"
grep -q "sweep_collect.sbatch$" sbatch.2.args || fail "the second job is not sweep_collect.sbatch"
grep -q "GRID=grid.yaml,OUT=results/s" sbatch.2.args || fail "GRID and OUT not exported"

# train_seeds.sbatch with an srun that runs the command once per task, as Slurm does.
tiny=(--set train.total_steps=200 --set train.num_envs=2 --set train.input_baseline=0 --set train.eval_episodes=1 --set workload.synthetic.num_jobs=30)
if ! "$cli" train "$src/experiments/configs/rl_train.yaml" "${tiny[@]}" --set train.seed=4 --out direct --quiet > direct.out 2>&1; then
  if grep -q "this build has no LibTorch" direct.out; then
    echo "OK: sweep templates checked; train_seeds.sbatch skipped: this build has no LibTorch"
    exit 0
  fi
  cat direct.out; fail "direct training failed"
fi
cat > bin/srun <<'SH'
#!/bin/bash
for ((i = 0; i < SLURM_NTASKS; i++)); do SLURM_PROCID=$i "$@" || exit 1; done
SH
chmod +x bin/srun
env PATH="$work/bin:$PATH" SLURM_NTASKS=2 SLURM_CPUS_PER_TASK=2 CONFIG="$src/experiments/configs/rl_train.yaml" OUT=trained SEED0=3 \
    SCHEDSIM="$cli" TRAIN_ARGS="${tiny[*]}" bash "$slurm/train_seeds.sbatch" > train.out 2>&1 || { cat train.out; fail "train_seeds.sbatch failed"; }
for s in 3 4; do [ -f trained/seed$s/checkpoint.pt ] || fail "no trained/seed$s/checkpoint.pt"; done
cmp direct/learning_curve.csv trained/seed4/learning_curve.csv || fail "task 1's learning curve differs from a direct run with train.seed=4"
if cmp -s trained/seed3/learning_curve.csv trained/seed4/learning_curve.csv; then fail "seeds 3 and 4 trained identically"; fi

# train_distributed.sbatch: srun starts the tasks at once (they meet in all-reduces).
cat > bin/srun <<'SH'
#!/bin/bash
pids=()
for ((i = 0; i < SLURM_NTASKS; i++)); do SLURM_PROCID=$i SLURM_LOCALID=$i "$@" & pids+=($!); done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done; exit $rc
SH
"$cli" train "$src/experiments/configs/rl_train.yaml" "${tiny[@]}" --out single --quiet > single.out 2>&1 || { cat single.out; fail "one-process training failed"; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + $$ % 20000)))
if env PATH="$work/bin:$PATH" SLURM_NTASKS=2 SLURM_CPUS_PER_TASK=1 SLURM_JOB_ID=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port     CONFIG="$src/experiments/configs/rl_train.yaml" OUT=dist SCHEDSIM="$cli" TRAIN_ARGS="${tiny[*]}"     bash "$slurm/train_distributed.sbatch" > dist.out 2>&1; then
  [ -f dist/policy.ts ] || fail "train_distributed.sbatch wrote no policy.ts"
  cmp <(cut -d, -f1-3 single/learning_curve.csv) <(cut -d, -f1-3 dist/learning_curve.csv) ||
    fail "the distributed run's steps/updates/episodes differ from one process with the same num_envs"
  dist_note="train_distributed.sbatch trains one agent with 2 tasks"
elif grep -q "this build has no distributed training" dist.out; then
  dist_note="train_distributed.sbatch skipped: this build has no c10d/Gloo"
else
  cat dist.out; fail "train_distributed.sbatch failed"
fi
echo "OK: sweep shards equal one sweep; collect resumes; submit_sweep.sh chains the jobs; train_seeds.sbatch trains seed SEED0+SLURM_PROCID; $dist_note"
