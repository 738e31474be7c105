#!/usr/bin/env bash
# hopper.fp8 (the hand-written FP8 step, issue 26) on an H200, in one short device call (about 2 minutes: one
# hopper extension of two FP8 configurations, its binding, the test):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/fp8/fp8_hopper_on_device.sh
# Runs tests/test_gpu_fp8_hopper.py with -s: through the harness, e4m3/e5m2 per-tensor, bf16/f32 out, strict and
# _fastacc, at 1024^3, 4096^3 and 1000^3 beside library.cublaslt_fp8 (each row's status, TFLOP/s and % of
# cuBLASLt printed), and the promoting kernel judged on the fp8_accumulation fixture. Log: OUT/pytest_fp8_hopper.log.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
export GEMMCOMPARE_CACHE_DIR=/tmp/gc-fp8-hopper-cache
step pytest_fp8_hopper "${TEST_LIMIT_S:-180}" python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu_fp8_hopper.py
grep -E "hopper.fp8|cublaslt" "$OUT/pytest_fp8_hopper.log" | cut -c1-200 | head -40
grep -E "passed|failed" "$OUT/pytest_fp8_hopper.log" | tail -2
