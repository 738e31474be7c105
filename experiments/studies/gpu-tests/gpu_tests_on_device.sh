#!/usr/bin/env bash
# The GPU-marked tests on a GPU machine, with their log kept. From the repository root:
#   bash experiments/studies/gpu-tests/gpu_tests_on_device.sh [PYTEST_ARGS...]     (default: every GPU test under tests/)
# Log: $OUT/pytest_gpu.log (OUT defaults to /tmp/gpu-tests). A call's 10 minutes hold about half of the
# suite when the build cache is cold, so pass test files to split it across calls.
set -u
out=${OUT:-/tmp/gpu-tests}
mkdir -p "$out"
PIP_LOG="$out/pip.log" source experiments/studies/device_env.sh
[ $# -eq 0 ] && set -- tests
{
  echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)  pytest -m gpu $*"
  nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
} >"$out/pytest_gpu.log" 2>&1
timeout --kill-after=10 "${GPU_TESTS_LIMIT:-560}" \
  python3 -m pytest -m gpu -v -rs -p no:cacheprovider --durations=0 "$@" >>"$out/pytest_gpu.log" 2>&1
echo "pytest exit $?" >>"$out/pytest_gpu.log"
grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|exit" "$out/pytest_gpu.log" | tail -40
