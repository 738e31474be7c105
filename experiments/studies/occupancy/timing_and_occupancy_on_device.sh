#!/usr/bin/env bash
# One device call for the sixth session's checks (issues 14 and 18), from the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/occupancy/timing_and_occupancy_on_device.sh
# 1. the small-kernel study (experiments/studies/honest-numbers/small_kernel_timing.py measure, under ncu, report): every method
#    against ncu's gpu__time_duration, CUPTI + the H200's launch window among them (launch_window.py);
# 2. `gemmcompare profile` of cuBLAS 256^3..4096^3: events, CUPTI and do_bench (their own process) against ncu;
# 3. experiments/studies/occupancy/occupancy_on_device.py: every hand-written (lab, mma_sync, the Hopper ladder) and CUTLASS
#    kernel's occupancy query against the model.
# Lands in $OUT/timing_and_occupancy_on_device.tgz (small/, profile.json, occupancy/ without its probes), each
# step's log $OUT/NAME.log and $OUT/steps.txt; prints tables last.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
mkdir -p "$W/small" "$W/occupancy"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
step small_measure 150 python3 experiments/studies/honest-numbers/small_kernel_timing.py measure "$W/small"
step small_ncu 90 "$NCU" --clock-control none --cache-control none --profile-from-start off \
  --metrics gpu__time_duration.sum --csv --log-file "$W/small/ncu.csv" \
  python3 experiments/studies/honest-numbers/small_kernel_timing.py ncu "$W/small"
step small_report 30 python3 experiments/studies/honest-numbers/small_kernel_timing.py report "$W/small"
step profile 120 python3 -m gemmcompare profile experiments/studies/timing/timing_check.yaml --only '^library\.cublas$' \
  --shapes 256x256x256,1024x1024x1024,2048x2048x2048,4096x4096x4096 --launches 10 --json "$W/profile.json"
LEFT=$(left)
step occupancy $(( LEFT > 60 ? LEFT - 30 : 30 )) python3 experiments/studies/occupancy/occupancy_on_device.py "$W/occupancy" \
  --budget $(( LEFT > 150 ? LEFT - 120 : 30 ))
rm -rf "$W/occupancy/probes"  # the probe sources and libraries: not packed
cut -c1-330 "$W/small/small_kernel_timing.md" | head -14
tail -n 6 "$OUT/profile.log"
tail -n 3 "$OUT/occupancy.log"
cat "$OUT/steps.txt"
