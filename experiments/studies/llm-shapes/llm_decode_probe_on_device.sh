#!/usr/bin/env bash
# Issue 25, before the study: the swapped CUTLASS kernels and hopper.split_k's dependent-launch reduction on an
# H200, in one device call (about 8 minutes):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/llm_decode_probe_on_device.sh
# 1. experiments/studies/llm-shapes/llm_decode_probe.yaml (the decode problems where the last study fell short; its build is cold):
#    tuned CUTLASS over the swapped kernels and the old decode winners, tuned hopper.split_k, cuBLAS.
# 2. tests/test_gpu_swap_ab.py: every swapped entry PASSes at decode, ragged and prefill shapes, two contracts.
# 3. tests/test_gpu_split_k.py, with what is left: the split-K step PASSes with its reduction launched as the
#    GEMM's programmatic dependent.
# BUDGET_S (default 520) bounds the three; each step is cut at what is left (SIGINT first: a run keeps its rows).
# Prints last: per problem, cuBLAS's time and each tuned row's % of it with its pick. Comes back: the steps' logs,
# OUT/steps.txt, OUT/llm_decode_probe_on_device.tgz (the run folder and store).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
[ -n "${BUDGET_S:-}" ] || END=$(( $(date +%s) + 520 ))  # this study's default budget
step probe 300 python3 -m gemmcompare run experiments/studies/llm-shapes/llm_decode_probe.yaml --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress
step pytest_swap_ab 200 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_swap_ab.py
step pytest_split_k 200 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_split_k.py
echo "== GPU tests =="
grep -hE "passed|failed|Error|error:" "$OUT/pytest_swap_ab.log" "$OUT/pytest_split_k.log" 2>/dev/null | tail -8
echo "== probe (probe.log tail) =="
grep -E "^run |phases|interrupted|Traceback|tuning" "$OUT/probe.log" | cut -c1-200 | tail -5
python3 experiments/studies/print_runs.py "$W"/runs/*/
