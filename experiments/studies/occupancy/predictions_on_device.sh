#!/usr/bin/env bash
# The device half of issue 18, about 5 minutes on the lent H200 (16 cores). From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/occupancy/predictions_on_device.sh
# 1. occupancy of every hand-written and CUTLASS kernel (experiments/studies/occupancy/occupancy_kernels.yaml): each kernel's
#    own NAME_occupancy query (cudaOccupancyMaxActiveBlocksPerMultiprocessor on the launch it would make)
#    against gemmcompare.model.occupancy on the inputs a run records;
# 2. the GPU test of the same check on three kernels.
# Writes $OUT/occupancy.csv, occupancy.md, run.log, gpu_test.log and predictions_on_device.tgz (the probe sources,
# without their .so); prints the short table last. nvidia-cutlass comes as a carried wheel in .whl/ (DEVICE.md).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
step run 250 python3 experiments/studies/occupancy/occupancy_on_device.py "$W" --budget 190
find "$W" -name "*.so" -delete  # the probe libraries: not packed
cp "$W/occupancy.csv" "$W/occupancy.md" "$OUT/" 2>/dev/null
step gpu_test 60 python3 -m pytest -q -m gpu tests/test_gpu_occupancy.py
tail -n 3 "$OUT/gpu_test.log"
tail -n 60 "$OUT/run.log"
