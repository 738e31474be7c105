#!/usr/bin/env bash
# FP8 at the limit (issue 43) on an H200, in one device call (not yet run: written without a GPU):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/fp8/fp8_limit_on_device.sh
# 1. The GPU tests of what issue 43 added (log OUT/pytest_fp8_limit.log; TEST_LIMIT_S, default 240 s):
#    hopper.fp8's `accumulation: fast` through the harness and on the accumulation canary
#    (tests/test_gpu_fp8_hopper.py), the Triton FP8 list's tuned row and every entry on the canary
#    (tests/test_gpu_fp8_python.py -k "tuned or listed").
# 2. `gemmcompare run experiments/studies/fp8/fp8_limit.yaml` (RUN_LIMIT_S, default 300 s): the cold builds (17
#    CUTLASS FP8 entries under the per-tensor contracts, 10 hopper.fp8 candidates: 13 before the TMA-store
#    epilogue's buffers took 32 KB of shared memory), the races and every row; its folder and store come back in
#    OUT/fp8_limit_on_device.tgz, the table in OUT/run.log.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
step pytest_fp8_limit "${TEST_LIMIT_S:-240}" python3 -m pytest -m gpu -q -s -p no:cacheprovider \
  tests/test_gpu_fp8_hopper.py tests/test_gpu_fp8_python.py -k "fast_accumulation or tuned_triton or listed"
step run "${RUN_LIMIT_S:-300}" python3 -m gemmcompare run experiments/studies/fp8/fp8_limit.yaml \
  --store "$W/g.db" --runs-dir "$W/runs" --no-progress
grep -E "passed|failed" "$OUT/pytest_fp8_limit.log" | tail -2
grep -E "^  [0-9]+x|tuned|phases" "$OUT/run.log" | cut -c1-170
