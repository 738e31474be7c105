#!/usr/bin/env bash
# A sweep as a Slurm job array, no engine: task i measures shard i of N on one GPU into its own store,
# and a merge job, started when every task has ended, joins them into one run.
#   sbatch --array=0-3 examples/slurm_array.sh experiments/cutlass_sm90_sweep.yaml sweep-out
# (the array's size is the shard count: --array=0-(N-1)). Run from the repository root, on a shared
# file system; the build cache is shared too, so the first task to build an extension builds it for all.
#SBATCH --job-name=gemmcompare-shard
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=16
#SBATCH --time=01:00:00
#SBATCH --output=%x-%A_%a.out
set -euo pipefail
spec=$1
out=${2:-sweep-out}
count=${SLURM_ARRAY_TASK_COUNT:?submit as an array: sbatch --array=0-3 ...}
index=${SLURM_ARRAY_TASK_ID:?}
export GEMMCOMPARE_CACHE_DIR=${GEMMCOMPARE_CACHE_DIR:-$PWD/.gemmcompare-cache}
mkdir -p "$out"
# exit 1 means some rows FAIL (a verdict, not a broken shard): the array goes on to the merge either way
gemmcompare run "$spec" --shard "$index/$count" --store "$out/shard$index.db" --runs-dir "$out/runs" \
  --no-report --no-progress || echo "shard $index/$count: gemmcompare exited $?"

# The last task submits the merge, to run once every task of the array has ended (afterany: a failed
# shard still leaves its rows, and merge then says which shard is missing or incomplete).
if [ "$index" -eq $((count - 1)) ]; then
  sbatch --dependency=afterany:"$SLURM_ARRAY_JOB_ID" --job-name=gemmcompare-merge --output="$out/merge.out" \
    --wrap="gemmcompare merge '$out/merged' $(for i in $(seq 0 $((count - 1))); do printf "'%s' " "$out/shard$i.db"; done) --store '$out/merged.db' && gemmcompare report '$out/merged'"
fi
