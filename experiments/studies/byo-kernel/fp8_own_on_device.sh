#!/usr/bin/env bash
# Your own FP8 kernels beside cuBLASLt (experiments/byo_kernel/fp8_own.yaml), then the batched GPU tests
# (tests/test_gpu_batched.py), in one short call. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> BUDGET_S=200 bash experiments/studies/byo-kernel/fp8_own_on_device.sh
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
step fp8_own "$(left)" python3 -m gemmcompare run experiments/byo_kernel/fp8_own.yaml --store "$W/gemmcompare.db" \
  --runs-dir "$W/runs" --no-progress
grep -E "PASS|FAIL|SKIP|cublaslt|my_fp8" "$OUT/fp8_own.log" | tail -30
step gpu_batched "$(left)" python3 -m pytest -m gpu -q -rs -p no:cacheprovider tests/test_gpu_batched.py
tail -5 "$OUT/gpu_batched.log"
