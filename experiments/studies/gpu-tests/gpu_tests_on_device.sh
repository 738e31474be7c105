#!/usr/bin/env bash
# The GPU-marked tests on a GPU machine, with their log kept. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/gpu-tests/gpu_tests_on_device.sh [PYTEST_ARGS...]
# (default: every GPU test under tests/). Log: $OUT/pytest_gpu.log, under GPU_TESTS_LIMIT (default 560 s; and no
# later than the runner's BUDGET_S). A call's 10 minutes hold about half of the suite when the build cache is
# cold, so pass test files to split it across calls. GPU_TESTS_PER_FILE=1: one pytest per argument (a file or a
# node id), each under GPU_TESTS_FILE_LIMIT (default 120 s) with its failures' tracebacks in its own log in the
# packed work folder, so a call cut short keeps the details of every target that ended.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
[ $# -eq 0 ] && set -- tests
if [ -n "${GPU_TESTS_PER_FILE:-}" ]; then
  i=0
  for target in "$@"; do
    i=$((i + 1)); name=pytest_${i}_$(basename "${target%%::*}" .py)
    step "$name" "${GPU_TESTS_FILE_LIMIT:-120}" python3 -m pytest -m gpu -v -rs -p no:cacheprovider --tb=short \
      --durations=5 "$target"
    [ -f "$OUT/$name.log" ] || continue  # not run: too little time left (steps.txt says so)
    mv "$OUT/$name.log" "$W/"
    grep -E "^(FAILED|ERROR)|passed|failed" "$W/$name.log" | tail -n 6
  done
  exit 0
fi
step pytest_gpu "${GPU_TESTS_LIMIT:-560}" python3 -m pytest -m gpu -v -rs -p no:cacheprovider --durations=0 "$@"
grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|exit" "$OUT/pytest_gpu.log" | tail -40
