#!/usr/bin/env bash
# One device call for the hand-written Hopper ladder (and the GPU test suite), as committed under
# experiments/studies/hopper-ladder/h200/. From the repository root on an sm_90a machine:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/hopper-ladder/hopper_on_device.sh [gpu-tests] [ladder] [sanitize] [ladder8192x3]
# (default: gpu-tests ladder sanitize). Builds once into a shared cache (GEMMCOMPARE_CACHE_DIR), runs each part
# as a step (a time limit each, never past the runner's BUDGET_S), keeps going when one fails; the stores, run
# folders and sanitize logs come back in OUT/hopper_on_device.tgz, each step's output in OUT/NAME.log; prints a
# short table last.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
parts=${*:-gpu-tests ladder sanitize}
for part in $parts; do
  case $part in
    gpu-tests)
      # the ladder's build first, then the GPU suite: nvcc on every core beside tests that time kernels
      # would load the host that launches them (until 642893c they ran side by side)
      step ladder_build 240 python3 -m gemmcompare build experiments/hopper_ladder.yaml --no-progress
      step gpu_tests 330 python3 -m pytest -q -m gpu tests -p no:cacheprovider ;;
    ladder)
      step ladder 330 python3 -m gemmcompare run experiments/hopper_ladder.yaml --store "$W/gemmcompare.db" \
        --runs-dir "$W/runs" --no-progress ;;
    ladder8192x3)
      for i in 1 2 3; do
        step "ladder8192_$i" 150 python3 -m gemmcompare run experiments/hopper_ladder.yaml --shapes 8192x8192x8192 \
          --only 'cublas|hopper.best|cutlass' --store "$W/gemmcompare.db" --runs-dir "$W/runs" --no-progress --no-report
      done ;;
    sanitize)
      step sanitize 300 python3 -m gemmcompare sanitize experiments/hopper_ladder.yaml --shapes 611x613x616,512x512x512 \
        --only 'hopper' --log-dir "$W/sanitize" --json "$OUT/sanitize.json" --store "$W/sanitize.db" \
        --runs-dir "$W/sanitize_runs" --no-progress ;;
    *) note "unknown part $part (gpu-tests, ladder, sanitize, ladder8192x3)" ;;
  esac
done
echo "=== steps"; cat "$OUT/steps.txt"
echo "=== gpu tests"; tail -3 "$OUT/gpu_tests.log" 2>/dev/null
echo "=== sanitize"; tail -25 "$OUT/sanitize.log" 2>/dev/null
echo "=== ladder"; grep -E "^run |^  [0-9]+x" "$OUT/ladder.log" 2>/dev/null | grep -v " SKIP " | cut -c1-150 | tail -60
