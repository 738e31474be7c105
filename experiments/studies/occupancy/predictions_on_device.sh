#!/usr/bin/env bash
# The device half of issue 18, about 5 minutes on the lent H200 (16 cores). From the repository root:
#   GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/occupancy/predictions_on_device.sh
# 1. occupancy of every hand-written and CUTLASS kernel (experiments/studies/occupancy/occupancy_kernels.yaml): each kernel's
#    own NAME_occupancy query (cudaOccupancyMaxActiveBlocksPerMultiprocessor on the launch it would make)
#    against gemmcompare.model.occupancy on the inputs a run records;
# 2. the GPU test of the same check on three kernels.
# Writes $OUT/occupancy.csv, occupancy.md, run.log, gpu_test.log, nvidia-smi.txt and results.tgz (the probe
# sources); prints the short table last. nvidia-cutlass comes as a carried wheel in .whl/ (DEVICE.md).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source experiments/studies/device_env.sh
timeout 20 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv > "$OUT/nvidia-smi.txt" 2>&1
echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}" >> "$OUT/nvidia-smi.txt"
timeout 250 python3 experiments/studies/occupancy/occupancy_on_device.py "$OUT" --budget 190 > "$OUT/run.log" 2>&1
echo "occupancy_on_device exit $?" >> "$OUT/run.log"
timeout 60 python3 -m pytest -q -m gpu tests/test_gpu_occupancy.py > "$OUT/gpu_test.log" 2>&1
echo "gpu test exit $?" >> "$OUT/gpu_test.log"
tar czf "$OUT/results.tgz" -C "$OUT" --exclude="*.so" probes 2>/dev/null
rm -rf "$OUT/probes"
tail -n 3 "$OUT/gpu_test.log"
tail -n 60 "$OUT/run.log"
