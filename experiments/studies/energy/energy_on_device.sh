#!/usr/bin/env bash
# Issue 42's energy receipt, in one device call on an H200 (about 8 minutes with a cold build; on an H100 a run
# takes 205-230 s, so use two calls there, SHAPES=4096x4096x4096 then SHAPES=8192x8192x8192):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/energy/energy_on_device.sh
# 1. `gemmcompare build experiments/energy.yaml` (the CUTLASS rows and the Hopper kernels, BUILD_LIMIT_S, 240 s).
# 2. The spec run twice (BF16 and FP8 at 4096^3 and 8192^3: cuBLAS / cuBLASLt, CUTLASS, hopper.best / hopper.fp8,
#    each row's joules per GEMM with its CI, power, GFLOP/J and clocks), each in its own run folder.
# 3. `gemmcompare compare` of the two: the energy verdict beside the time verdict (SAME expected for one commit).
#    SHAPES=4096x4096x4096 runs one size only (`gemmcompare run --shapes`), where a device call cannot hold both.
# 4. (ENERGY_TEST=1) tests/test_gpu_energy.py: the known-energy check (counter against integrated power samples
#    within 5%) and a real row's energy.
# Comes back: OUT/energy_on_device.tgz (both run folders with receipts and the store, the comparison), the logs, and
# the tables printed last (experiments/studies/fp8/fp8_study_table.py on each run: per row its time, % of the
# contract's library row, mJ per GEMM with its CI and GFLOP/J, then where the ranking by energy differs from time's).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
SPEC=experiments/energy.yaml
step build "${BUILD_LIMIT_S:-240}" python3 -m gemmcompare build "$SPEC" --no-progress
test_s=0; [ -n "${ENERGY_TEST:-}" ] && test_s=70
half=$(( ($(left) - test_s - 40) / 2 ))  # 30 s kept for compare (fe28d79: 17 s were left, too few)
shapes=(); [ -n "${SHAPES:-}" ] && shapes=(--shapes "$SHAPES")
for i in 1 2; do
  step "run$i" "$half" python3 -m gemmcompare run "$SPEC" --store "$W/g.db" --runs-dir "$W/runs$i" --no-progress \
    "${shapes[@]}"
done
step compare 60 python3 -m gemmcompare compare "$W/runs1" "$W/runs2" --store "$W/g.db" --out "$W/compare" --no-progress
[ -n "${ENERGY_TEST:-}" ] && step pytest_energy "$test_s" python3 -m pytest -m gpu -q -s -p no:cacheprovider \
  tests/test_gpu_energy.py
for i in 1 2; do
  echo "== run $i (experiments/studies/fp8/fp8_study_table.py) =="
  python3 experiments/studies/fp8/fp8_study_table.py "$W/runs$i" 2>&1 | tail -n 40
done
echo "== compare (run 1 -> run 2) =="
tail -n 30 "$OUT/compare.log" | cut -c1-200
