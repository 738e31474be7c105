#!/usr/bin/env bash
# One device call for issues 27 and 25 (session 10): the first-answer receipt (experiments/studies/first-contact/first_answer_on_device.sh,
# into OUT/fa, through the runner again) and the GPU tests of the new Hopper split-K step, the decode kernel and
# tuned rows, into OUT/gpu_tests.log. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/first-contact/split_k_and_first_answer_on_device.sh
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
OUT="$OUT/fa" BUDGET_S=$(left) bash experiments/studies/first-contact/first_answer_on_device.sh
export GEMMCOMPARE_CACHE_DIR=/tmp/gc-gpu-tests-cache
step gpu_tests 330 python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gpu_split_k.py \
  tests/test_gpu_decode.py tests/test_gpu_tuning.py
grep -E "passed|failed|error" "$OUT/gpu_tests.log" | tail -3
