#!/usr/bin/env bash
# The Python FP8 rows (issue 26: library.triton_fp8, library.torch_compile_fp8) on an H200, in one device call
# (no nvcc build but cuBLAS's binding):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/fp8/fp8_python_on_device.sh
# Knobs: TESTS (a pytest -k expression for tests/test_gpu_fp8_python.py; default all), SHAPES (the run's
# --shapes; default 4096^3 and 8192^3), BUDGET_S (default 540 s: each step is cut at what is left, SIGINT
# first, and a run cut short keeps its rows), LAB_BUILD=1 (first, a cold then three fully cached builds of
# experiments/lab_ladder.yaml, issue 27's cached-build goal).
# 1. tests/test_gpu_fp8_python.py: both rows PASS e4m3 per-tensor strict and _fastacc at 1024^3 and 4096^3
#    through the harness (block scales: SKIP rows), and on the fp8_accumulation fixture each PASSes the strict
#    contract while its fast-accumulation canary FAILs it (numbers printed: `-s`). Log: $OUT/pytest_fp8_python.log.
# 2. experiments/fp8.yaml at SHAPES, the Python FP8 rows beside cuBLASLt (torch.compile's max-autotune takes
#    3-69 s per shape and contract, measured). Run folder and log: $OUT/fp8_python.tgz. Prints last: each row's
#    TFLOP/s and % of cuBLASLt's FP8 row (experiments/studies/fp8/fp8_study_table.py).
set -u
OUT=${OUT:?set OUT}
W=/tmp/fp8-python-work; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/studies/device_env.sh
END=$(( $(date +%s) + ${BUDGET_S:-540} ))
echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)" | tee "$OUT/steps.txt"
if [ "${LAB_BUILD:-0}" = 1 ]; then
  python3 -m compileall -q gemmcompare  # the bytecode a pip install writes (the device sets PYTHONDONTWRITEBYTECODE)
  export GEMMCOMPARE_CACHE_DIR=/tmp/gc-lab-cache
  step lab_build_cold 120 python3 -m gemmcompare build experiments/lab_ladder.yaml --no-progress
  for i in 1 2 3; do step lab_build_cached_$i 20 python3 -m gemmcompare build experiments/lab_ladder.yaml --no-progress; done
  export GEMMCOMPARE_CACHE_DIR=/tmp/gemmcompare-cache
fi
step pytest_fp8_python 300 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_fp8_python.py \
  ${TESTS:+-k "$TESTS"}
step fp8_python 400 python3 -m gemmcompare run experiments/fp8.yaml --shapes "${SHAPES:-4096x4096x4096,8192x8192x8192}" \
  --only '^library\.(cublas|cublaslt_fp8|triton_fp8|torch_compile_fp8)$' --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress
tar czf "$OUT/fp8_python.tgz" -C "$W" runs g.db 2>/dev/null
echo "== GPU test (pytest_fp8_python.log) =="
grep -E "canary|PASS|FAIL|SKIP|passed|failed" "$OUT/pytest_fp8_python.log" | cut -c1-260 | tail -20
echo "== run (fp8_python.log tail) =="
grep -E "^run |phases|interrupted|Traceback" "$OUT/fp8_python.log" | cut -c1-200
[ -d "$W/runs" ] && python3 experiments/studies/fp8/fp8_study_table.py "$W/runs" 2>&1 | head -40
