#!/usr/bin/env bash
# FP8 on Hopper (issue 26), in one device call (under 4 minutes on an H200; no nvcc build but cuBLAS's binding):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/fp8/fp8_on_device.sh
# 1. tests/test_gpu_fp8.py: library.cublaslt_fp8 PASSes its strict and fast-accumulation contracts, and a
#    fast-accumulation canary judged under the strict contract FAILs the fp8_accumulation fixture (the
#    numbers are printed: `-s`). Log: $OUT/pytest_fp8.log.
# 2. gemmcompare run experiments/fp8.yaml, its cuBLAS rows only (--only: the Python FP8 rows are
#    experiments/studies/fp8/fp8_python_on_device.sh's; the CUTLASS FP8 rows need builds and
#    nvidia-cutlass; experiments/studies/fp8/fp8_cutlass_on_device.sh runs them). Log: $OUT/fp8.log; run folder
#    and store: $OUT/fp8_on_device.tgz.
# Prints last (experiments/studies/fp8/fp8_study_table.py): per shape, each contract's TFLOP/s, and the FP8 rows' speed-up over
# the BF16 cuBLAS row (a cross-contract ratio: the report's % of baseline is within one contract).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
step pytest_fp8 110 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_fp8.py
step fp8 200 python3 -m gemmcompare run experiments/fp8.yaml --only '^library\.(cublas|cublaslt_fp8)$' --store "$W/g.db" \
  --runs-dir "$W/runs" --no-progress
echo "== GPU test (pytest_fp8.log) =="
grep -E "canary|FAIL|passed|failed|exit" "$OUT/pytest_fp8.log" | cut -c1-220 | tail -25
echo "== run (fp8.log tail) =="
tail -n 12 "$OUT/fp8.log" | cut -c1-160
echo "== each row as % of cuBLASLt under its contract, then FP8 over BF16 (experiments/studies/fp8/fp8_study_table.py) =="
python3 experiments/studies/fp8/fp8_study_table.py "$W/runs"
