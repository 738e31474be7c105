#!/usr/bin/env bash
# Issue 17 on a two-GPU machine, in one call of at most ~9 minutes. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/scale-out/scale_out_on_device.sh
# Builds the CUTLASS SM90 sweep once (timed apart), then measures it four ways, each into its own store:
#   one.db      --gpus 0                      one GPU
#   two.db      --gpus all                    one worker per GPU, groups from one queue
#   shard0/1.db --shard 0/2 and 1/2 at once   one per GPU (CUDA_VISIBLE_DEVICES), then `merge` -> merged.db
#   cluster.db  --cluster local --gpus all    the Dask engine, one Dask worker per GPU
# then the GPU tests of tests/test_gpu_scale.py, and compares the passes (experiments/studies/scale-out/compare_passes.py):
# rows per second in the measuring phase, statuses, each row's % of cuBLAS against the one-GPU run.
# Wheels in .whl/ (nvidia-cutlass, dask, distributed and what they need beyond the image) are installed
# into .pydeps/ first (by the runner). Every step is cut at the runner's BUDGET_S (default 560 s). Comes back:
# OUT/scale_out_on_device.tgz (the stores, run folders, shard logs), each step's log OUT/NAME.log,
# OUT/machine.txt, OUT/steps.txt, OUT/summary.txt and OUT/summary.json.
# SCALE_SPEC and SCALE_SHAPES (MxNxK,...) replace the spec and its problems in every pass alike.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
spec=${SCALE_SPEC:-experiments/cutlass_sm90_sweep.yaml}
export NCCL_NVLS_ENABLE=0
GC="python3 -m gemmcompare"

{
  nvidia-smi -L
  python3 -c "import dask, distributed; print('dask', dask.__version__, 'distributed', distributed.__version__)"
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

common=(--no-report --no-progress --runs-dir "$W/runs" ${SCALE_SHAPES:+--shapes "$SCALE_SHAPES"})
step build 240 $GC build "$spec" --no-progress
step one 170 $GC run "$spec" --gpus 0 --store "$W/one.db" "${common[@]}"
step two 120 $GC run "$spec" --gpus all --store "$W/two.db" "${common[@]}"
# one shard per GPU, at once; on a one-GPU machine (a trial of this script) one after the other on GPU 0
second_gpu=1 together="&"
[ "$(nvidia-smi -L | wc -l)" -lt 2 ] && second_gpu=0 together=";"
step shards 150 bash -c "
  CUDA_VISIBLE_DEVICES=0 $GC run $spec --shard 0/2 --store $W/shard0.db ${common[*]} >$W/shard0.log 2>&1 $together
  CUDA_VISIBLE_DEVICES=$second_gpu $GC run $spec --shard 1/2 --store $W/shard1.db ${common[*]} >$W/shard1.log 2>&1 &
  wait"
step merge 60 $GC merge "$W/runs/merged-shards" "$W/shard0.db" "$W/shard1.db" --store "$W/merged.db"
step cluster 150 $GC run "$spec" --cluster local --gpus all --store "$W/cluster.db" "${common[@]}"
step gpu_tests 200 python3 -m pytest -q -m gpu tests/test_gpu_scale.py -p no:cacheprovider --durations=5

nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv >>"$OUT/machine.txt" 2>&1
python3 experiments/studies/scale-out/compare_passes.py "$W" >"$OUT/summary.txt" 2>&1
cp "$W/summary.json" "$OUT/" 2>/dev/null
echo "total $SECONDS s"
cat "$OUT/summary.txt"
