#!/bin/bash
# Submits a schedsim sweep to Slurm as an array of SHARDS tasks plus a collecting job that
# starts when the array has ended (however it ended).
#   experiments/slurm/submit_sweep.sh GRID OUT SHARDS [sbatch options for both jobs...]
#   experiments/slurm/submit_sweep.sh grid.yaml results/sweep 16 --partition=cpu --cpus-per-task=8
# Prints the two job ids. SCHEDSIM (default build/schedsim) is passed on to the jobs.
set -euo pipefail
if [ $# -lt 3 ] || ! [[ $3 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 GRID OUT SHARDS [sbatch options...]  (SHARDS: a positive integer)" >&2
  exit 2
fi
grid=$1 out=$2 shards=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
vars="ALL,GRID=$grid,OUT=$out,SCHEDSIM=${SCHEDSIM:-build/schedsim}"
array=$(sbatch --parsable --array="0-$((shards - 1))" --export="$vars" "$@" "$here/sweep_array.sbatch")
array=${array%%;*}  # --parsable prints JOBID or JOBID;CLUSTER
collect=$(sbatch --parsable --dependency="afterany:$array" --export="$vars" "$@" "$here/sweep_collect.sbatch")
echo "array job ${array} (${shards} shards), collecting job ${collect%%;*}: tables in $out/sweep.csv and summary.csv"
