#!/usr/bin/env bash
# A sweep through the Dask engine on Slurm: one allocation of GPU nodes, a Dask scheduler on the first,
# one Dask worker per GPU (each shown its GPU alone), and `gemmcompare run --cluster` driving them.
#   sbatch --nodes=2 --gres=gpu:4 --ntasks-per-node=4 examples/slurm_dask.sh SPEC OUT
# Needs `pip install 'gemmcompare[cluster]'` in the environment every node uses.
#SBATCH --job-name=gemmcompare-dask
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
set -euo pipefail
spec=$1
out=${2:-sweep-out}
mkdir -p "$out"
host=$(hostname)
dask scheduler --port 8786 --no-dashboard >"$out/scheduler.log" 2>&1 &
sleep 5
# One task per GPU: Slurm sets SLURM_LOCALID 0..3 on each node; the worker sees that GPU alone. Dask
# workers are daemonic by default, and a daemonic process may not start gemmcompare's measuring child.
srun --output="$out/worker-%N-%t.log" bash -c '
  export CUDA_VISIBLE_DEVICES=$SLURM_LOCALID DASK_DISTRIBUTED__WORKER__DAEMON=False
  exec dask worker tcp://'"$host"':8786 --nworkers 1 --nthreads 1 --name "$(hostname)-gpu$SLURM_LOCALID"' &
sleep 20
gemmcompare run "$spec" --cluster "tcp://$host:8786" --store "$out/gemmcompare.db" --runs-dir "$out/runs"
kill %1 %2
