#!/usr/bin/env bash
# The GPU-marked tests on a GPU machine, with their log kept. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/gpu-tests/gpu_tests_on_device.sh [PYTEST_ARGS...]
# (default: every GPU test under tests/). Log: $OUT/pytest_gpu.log, under GPU_TESTS_LIMIT (default 560 s; and no
# later than the runner's BUDGET_S). A call's 10 minutes hold about half of the suite when the build cache is
# cold, so pass test files to split it across calls.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
[ $# -eq 0 ] && set -- tests
step pytest_gpu "${GPU_TESTS_LIMIT:-560}" python3 -m pytest -m gpu -v -rs -p no:cacheprovider --durations=0 "$@"
grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|exit" "$OUT/pytest_gpu.log" | tail -40
