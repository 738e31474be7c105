#!/usr/bin/env bash
# FP8 on Hopper (issue 26), in one device call (under 4 minutes on an H200; no nvcc build but cuBLAS's binding):
#   OUT=/path bash experiments/studies/fp8/fp8_on_device.sh
# 1. tests/test_gpu_fp8.py: library.cublaslt_fp8 PASSes its strict and fast-accumulation contracts, and a
#    fast-accumulation canary judged under the strict contract FAILs the fp8_accumulation fixture (the
#    numbers are printed: `-s`). Log: $OUT/pytest_fp8.log.
# 2. gemmcompare run experiments/fp8.yaml, its cuBLAS rows only (--only: the Python FP8 rows are
#    experiments/studies/fp8/fp8_python_on_device.sh's; the CUTLASS FP8 rows need builds and
#    nvidia-cutlass; experiments/studies/fp8/fp8_cutlass_on_device.sh runs them). Run folder and log: $OUT/fp8.tgz.
# Prints last (experiments/studies/fp8/fp8_study_table.py): per shape, each contract's TFLOP/s, and the FP8 rows' speed-up over
# the BF16 cuBLAS row (a cross-contract ratio: the report's % of baseline is within one contract).
set -u
OUT=${OUT:?set OUT}
W=/tmp/fp8-work; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/studies/device_env.sh
timeout 110 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_fp8.py >"$OUT/pytest_fp8.log" 2>&1
echo "pytest exit $?" >>"$OUT/pytest_fp8.log"
timeout 200 python3 -m gemmcompare run experiments/fp8.yaml --only '^library\.(cublas|cublaslt_fp8)$' --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress >"$W/run.log" 2>&1
echo "run exit $?" >>"$W/run.log"
tar czf "$OUT/fp8.tgz" -C "$W" runs run.log
echo "== GPU test (pytest_fp8.log) =="
grep -E "canary|FAIL|passed|failed|exit" "$OUT/pytest_fp8.log" | cut -c1-220 | tail -25
echo "== run (run.log tail) =="
tail -n 12 "$W/run.log" | cut -c1-160
echo "== each row as % of cuBLASLt under its contract, then FP8 over BF16 (experiments/studies/fp8/fp8_study_table.py) =="
python3 experiments/studies/fp8/fp8_study_table.py "$W/runs"
