#!/usr/bin/env bash
# The FP8 study (issue 26, experiments/fp8.yaml) on an H200 in one device call of under 10 minutes (needs
# nvidia-cutlass in .whl/, as every CUTLASS script):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/fp8/fp8_study_on_device.sh
# Steps, most important first, each cut at what is left of BUDGET_S (default 560 s; a run cut short by SIGINT
# keeps its measured rows):
# 1. `gemmcompare build experiments/fp8.yaml`, cold and timed (every CUTLASS FP8 entry, hopper.fp8's tuning
#    candidates and fixed rows, cuBLAS's binding).
# 2. `gemmcompare run experiments/fp8.yaml` without library.torch_compile_fp8 (its max-autotune took 3-69 s
#    per shape and contract on the H200: step 4 and experiments/studies/fp8/fp8_python_on_device.sh run it apart). Run folder:
#    runs/ in OUT/fp8_study_on_device.tgz.
# 3. tests/test_gpu_fp8_cutlass.py -k blockwise: CUTLASS's blockwise entries under the block contracts at odd
#    shapes and on every fixture (warm builds from step 1).
# 4. torch.compile of torch._scaled_mm at 4096^3 beside cuBLASLt, per-tensor strict and _fastacc, as time allows
#    (compile_runs/ in the same .tgz).
# ENERGY=1: step 2 measures each timed row's energy per GEMM too (`--energy`, 5-20 s a row: with ONLY=<regex>
# narrowing the rows, e.g. ONLY='^library\.cublaslt_fp8$|^cutlass|^hopper\.fp8'); the table then adds mJ per GEMM
# and where the ranking by energy differs from time's. SHAPES=<MxNxK,...> runs only those problems (`--shapes`),
# CONTRACTS=<name,...> only those contracts (`--contract`; an energy call at 8192^3 on an H100 held 5 of the 7);
# STUDY_ONLY=1 skips steps 3 and 4 (their receipts are the study's; an energy call needs the time for step 2), e.g.
#   ENERGY=1 STUDY_ONLY=1 SHAPES=4096x4096x4096,8192x8192x8192 ONLY='^library\.cublas|^cutlass|^hopper\.fp8' ...
# Prints last the study's table (experiments/studies/fp8/fp8_study_table.py).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
export GEMMCOMPARE_CACHE_DIR=/tmp/gc-fp8-study-cache
select_args=(--only "${ONLY:-^(?!library\.torch_compile_fp8$)}" ${SHAPES:+--shapes "$SHAPES"} ${CONTRACTS:+--contract "$CONTRACTS"})
step build 300 python3 -m gemmcompare build experiments/fp8.yaml "${select_args[@]}" --no-progress
tail -n 1 "$OUT/build.log"
step study "${STUDY_S:-330}" python3 -m gemmcompare run experiments/fp8.yaml "${select_args[@]}" \
  --store "$W/g.db" --runs-dir "$W/runs" --no-progress ${ENERGY:+--energy}
if [ -z "${STUDY_ONLY:-}" ]; then
step blockwise_tests 150 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_fp8_cutlass.py -k blockwise
step compile_fp8 200 python3 -m gemmcompare run experiments/fp8.yaml --only '^library\.(cublaslt_fp8|torch_compile_fp8)$' \
  --shapes 4096x4096x4096 --store "$W/c.db" --runs-dir "$W/compile_runs" --no-progress
grep -E "passed|failed" "$OUT/blockwise_tests.log" | tail -1
fi
grep -E "phases|^run " "$OUT/study.log" | cut -c1-300
python3 experiments/studies/fp8/fp8_study_table.py "$W/runs" 2>&1 | cut -c1-150
[ -d "$W/compile_runs" ] && python3 experiments/studies/fp8/fp8_study_table.py "$W/compile_runs" 2>&1 | head -8
