#!/usr/bin/env bash
# Issue 25's torch.compile rows, and a CUTLASS raster x swizzle probe, on an H200 in one device call (~8 minutes):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/llm_compile_on_device.sh
# 1. experiments/studies/llm-shapes/llm_shapes_compile.yaml: torch.compile (max-autotune-no-cudagraphs, caches off: it compiles and
#    autotunes each of the 48 problems afresh, a few seconds each) beside cuBLAS, in one run.
# 2. experiments/studies/llm-shapes/llm_cutlass_raster_probe.yaml, with what is left: the study's prefill CUTLASS winners raced over
#    raster order x swizzle at the four prefill problems where tuned CUTLASS read under 98%.
# BUDGET_S (default 520) bounds both; each step is cut at what is left (SIGINT first: a run keeps its rows).
# Comes back: OUT/llm_compile_on_device.tgz (run folders compile/ and raster/, their stores), the steps' logs,
# OUT/steps.txt; prints per problem cuBLAS's time and each other row's % of it.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
[ -n "${BUDGET_S:-}" ] || END=$(( $(date +%s) + 520 ))  # this study's default budget
step compile 420 python3 -m gemmcompare run experiments/studies/llm-shapes/llm_shapes_compile.yaml --store "$W/compile.db" \
  --runs-dir "$W/compile" --no-progress
step raster 300 python3 -m gemmcompare run experiments/studies/llm-shapes/llm_cutlass_raster_probe.yaml --store "$W/raster.db" \
  --runs-dir "$W/raster" --no-progress
python3 experiments/studies/print_runs.py "$W"/compile/*/ "$W"/raster/*/
