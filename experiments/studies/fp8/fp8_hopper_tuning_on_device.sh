#!/usr/bin/env bash
# hopper.fp8 at its best against cuBLASLt (issue 26), in one device call of about 4 minutes:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/fp8/fp8_hopper_tuning_on_device.sh
# 1. `gemmcompare run experiments/studies/fp8/fp8_hopper_tuning.yaml` (cold build of the 8 tuned candidates and the fixed rows,
#    then every row measured; the tuned row raced per problem and measured afresh). Its folder and store come back
#    in OUT/fp8_hopper_tuning_on_device.tgz, its table in OUT/run.log (RUN_LIMIT_S, default 300 s).
# 2. tests/test_gpu_fp8_hopper.py (every scale shape and output type, and the fp8_accumulation fixture), which
#    checks the kernel's other paths after a change to its loop. Log: OUT/pytest_fp8_hopper.log (TEST_LIMIT_S, 180 s).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
step run "${RUN_LIMIT_S:-300}" python3 -m gemmcompare run experiments/studies/fp8/fp8_hopper_tuning.yaml \
  --store "$W/g.db" --runs-dir "$W/runs" --no-progress
step pytest_fp8_hopper "${TEST_LIMIT_S:-180}" python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu_fp8_hopper.py
grep -E "passed|failed" "$OUT/pytest_fp8_hopper.log" | tail -2
grep -E "^  [0-9]+x|tuned|phases" "$OUT/run.log" | cut -c1-170
