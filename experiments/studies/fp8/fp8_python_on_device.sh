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
#    3-69 s per shape and contract, measured). Log: $OUT/fp8_python.log; run folder and store:
#    $OUT/fp8_python_on_device.tgz. Prints last: each row's TFLOP/s and % of cuBLASLt's FP8 row
#    (experiments/studies/fp8/fp8_study_table.py).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
[ -n "${BUDGET_S:-}" ] || END=$(( $(date +%s) + 540 ))  # this study's default budget
if [ "${LAB_BUILD:-0}" = 1 ]; then
  cache=$GEMMCOMPARE_CACHE_DIR
  export GEMMCOMPARE_CACHE_DIR=/tmp/gc-lab-cache
  step lab_build_cold 120 python3 -m gemmcompare build experiments/lab_ladder.yaml --no-progress
  for i in 1 2 3; do step lab_build_cached_$i 20 python3 -m gemmcompare build experiments/lab_ladder.yaml --no-progress; done
  export GEMMCOMPARE_CACHE_DIR=$cache
fi
step pytest_fp8_python 300 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_fp8_python.py \
  ${TESTS:+-k "$TESTS"}
step fp8_python 400 python3 -m gemmcompare run experiments/fp8.yaml --shapes "${SHAPES:-4096x4096x4096,8192x8192x8192}" \
  --only '^library\.(cublas|cublaslt_fp8|triton_fp8|torch_compile_fp8)$' --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress
echo "== GPU test (pytest_fp8_python.log) =="
grep -E "canary|PASS|FAIL|SKIP|passed|failed" "$OUT/pytest_fp8_python.log" | cut -c1-260 | tail -20
echo "== run (fp8_python.log tail) =="
grep -E "^run |phases|interrupted|Traceback" "$OUT/fp8_python.log" | cut -c1-200
[ -d "$W/runs" ] && python3 experiments/studies/fp8/fp8_study_table.py "$W/runs" 2>&1 | head -40
