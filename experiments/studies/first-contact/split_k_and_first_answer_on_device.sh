#!/usr/bin/env bash
# One device call for issues 27 and 25 (session 10): the first-answer receipt (experiments/studies/first-contact/first_answer_on_device.sh,
# into OUT/fa) and the GPU tests of the new Hopper split-K step, the decode kernel and tuned rows, into
# OUT/gpu_tests.log. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/first-contact/split_k_and_first_answer_on_device.sh
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/fa"
bash experiments/studies/first-contact/first_answer_on_device.sh "$OUT/fa"
PIP_LOG=/tmp/pip-gpu-tests.log source experiments/studies/device_env.sh
export GEMMCOMPARE_CACHE_DIR=/tmp/gc-gpu-tests-cache
t0=$(date +%s)
timeout --kill-after=10 330 python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu_split_k.py \
  tests/test_gpu_decode.py tests/test_gpu_tuning.py >"$OUT/gpu_tests.log" 2>&1
echo "gpu tests exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/gpu_tests.log"
grep -E "passed|failed|error" "$OUT/gpu_tests.log" | tail -3
