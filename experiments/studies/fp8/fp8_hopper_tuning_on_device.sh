#!/usr/bin/env bash
# hopper.fp8 at its best against cuBLASLt (issue 26), in one device call of about 4 minutes:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/fp8/fp8_hopper_tuning_on_device.sh
# 1. `gemmcompare run experiments/studies/fp8/fp8_hopper_tuning.yaml` (cold build of the 8 tuned candidates and the fixed rows,
#    then every row measured; the tuned row raced per problem and measured afresh). Its folder comes back in
#    OUT/fp8_tuning.tgz, its table in OUT/run.log.
# 2. tests/test_gpu_fp8_hopper.py (every scale shape and output type, and the fp8_accumulation fixture), which
#    checks the kernel's other paths after a change to its loop. Log: OUT/pytest_fp8_hopper.log.
set -u
OUT=${OUT:?set OUT}
W=/tmp/fp8-tuning; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/studies/device_env.sh
export GEMMCOMPARE_CACHE_DIR=${GEMMCOMPARE_CACHE_DIR:-/tmp/gc-fp8-cache}
echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)" | tee "$OUT/steps.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >>"$OUT/steps.txt" 2>&1
t0=$(date +%s)
timeout --kill-after=10 ${RUN_LIMIT_S:-300} python3 -m gemmcompare run experiments/studies/fp8/fp8_hopper_tuning.yaml \
  --store "$W/g.db" --runs-dir "$W/runs" --no-progress >"$OUT/run.log" 2>&1
echo "run exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
tar czf "$OUT/fp8_tuning.tgz" -C "$W" runs g.db 2>/dev/null
t0=$(date +%s)
timeout --kill-after=10 ${TEST_LIMIT_S:-180} python3 -m pytest -m gpu -q -s -p no:cacheprovider \
  tests/test_gpu_fp8_hopper.py >"$OUT/pytest_fp8_hopper.log" 2>&1
echo "tests exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
grep -E "passed|failed" "$OUT/pytest_fp8_hopper.log" | tail -2
grep -E "^  [0-9]+x|tuned|phases" "$OUT/run.log" | cut -c1-170
