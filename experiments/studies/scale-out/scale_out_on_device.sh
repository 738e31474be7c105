#!/usr/bin/env bash
# Issue 17 on a two-GPU machine, in one call of at most ~9 minutes. From the repository root:
#   bash experiments/studies/scale-out/scale_out_on_device.sh [OUT]        (OUT defaults to $OUT, the device tool's folder)
# Builds the CUTLASS SM90 sweep once (timed apart), then measures it four ways, each into its own store:
#   one.db      --gpus 0                      one GPU
#   two.db      --gpus all                    one worker per GPU, groups from one queue
#   shard0/1.db --shard 0/2 and 1/2 at once   one per GPU (CUDA_VISIBLE_DEVICES), then `merge` -> merged.db
#   cluster.db  --cluster local --gpus all    the Dask engine, one Dask worker per GPU
# then the GPU tests of tests/test_gpu_scale.py, and compares the passes (experiments/studies/scale-out/compare_passes.py):
# rows per second in the measuring phase, statuses, each row's % of cuBLAS against the one-GPU run.
# Wheels in .whl/ (nvidia-cutlass, dask, distributed and what they need beyond the image) are installed
# into .pydeps/ first. Everything comes back as OUT/results.tgz, OUT/summary.txt and OUT/summary.json.
# SCALE_SPEC and SCALE_SHAPES (MxNxK,...) replace the spec and its problems in every pass alike.
set -u
out=${1:-${OUT:?give OUT}}
mkdir -p "$out"
spec=${SCALE_SPEC:-experiments/cutlass_sm90_sweep.yaml}
start=$(date +%s)
deadline=$((start + 530))  # the call's 10 minutes, less the packing and some margin

PIP_LOG="$out/pip.log" source experiments/studies/device_env.sh
export NCCL_NVLS_ENABLE=0
gc="python3 -m gemmcompare"

# step NAME LIMIT CMD...: run CMD under `timeout`, never past the deadline; log to OUT/NAME.log
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - $(date +%s)))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 5 ]; then
    echo "skip $name: no time left" | tee -a "$out/steps.txt"
    return 124
  fi
  local t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(( $(date +%s) - t0 )) s (limit $limit s): $*" | tee -a "$out/steps.txt"
  return $rc
}

{
  echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)"
  nvidia-smi -L
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  python3 -c "import dask, distributed; print('dask', dask.__version__, 'distributed', distributed.__version__)"
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

common=(--no-report --no-progress --runs-dir "$out/runs" ${SCALE_SHAPES:+--shapes "$SCALE_SHAPES"})
step build 240 $gc build "$spec" --no-progress
step one 170 $gc run "$spec" --gpus 0 --store "$out/one.db" "${common[@]}"
step two 120 $gc run "$spec" --gpus all --store "$out/two.db" "${common[@]}"
# one shard per GPU, at once; on a one-GPU machine (a trial of this script) one after the other on GPU 0
second_gpu=1 together="&"
[ "$(nvidia-smi -L | wc -l)" -lt 2 ] && second_gpu=0 together=";"
step shards 150 bash -c "
  CUDA_VISIBLE_DEVICES=0 $gc run $spec --shard 0/2 --store $out/shard0.db ${common[*]} >$out/shard0.log 2>&1 $together
  CUDA_VISIBLE_DEVICES=$second_gpu $gc run $spec --shard 1/2 --store $out/shard1.db ${common[*]} >$out/shard1.log 2>&1 &
  wait"
step merge 60 $gc merge "$out/runs/merged-shards" "$out/shard0.db" "$out/shard1.db" --store "$out/merged.db"
step cluster 150 $gc run "$spec" --cluster local --gpus all --store "$out/cluster.db" "${common[@]}"
step gpu_tests 200 python3 -m pytest -q -m gpu tests/test_gpu_scale.py -p no:cacheprovider --durations=5

nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv >>"$out/machine.txt" 2>&1
python3 experiments/studies/scale-out/compare_passes.py "$out" >"$out/summary.txt" 2>&1
mkdir -p "$out/runs"
tar czf "$out/results.tgz" -C "$out" runs $(cd "$out" && ls *.db *.log *.txt 2>/dev/null)
rm -rf "$out/runs" "$out"/*.db "$out"/*.log "$out/machine.txt" "$out/steps.txt"  # all of it is in results.tgz
echo "total $(( $(date +%s) - start )) s"
cat "$out/summary.txt"
