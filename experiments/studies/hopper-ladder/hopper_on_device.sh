#!/usr/bin/env bash
# One device call for the hand-written Hopper ladder (and the GPU test suite), as committed under
# experiments/studies/hopper-ladder/h200/. From the repository root on an sm_90a machine:
#   GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/hopper-ladder/hopper_on_device.sh OUT_DIR [gpu-tests] [ladder] [sanitize] [ladder8192x3]
# Builds once into a shared cache (GEMMCOMPARE_CACHE_DIR), runs each part under a timeout, keeps going
# when one fails, packs everything into OUT_DIR/hopper.tgz and prints a short table last.
set -u
out=$1; shift
parts=${*:-gpu-tests ladder sanitize}
mkdir -p "$out/runs"
source experiments/studies/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$out/nvidia-smi.txt"
gc="python3 -m gemmcompare"
for part in $parts; do
  case $part in
    gpu-tests)
      # the ladder's build first, then the GPU suite: nvcc on every core beside tests that time kernels
      # would load the host that launches them (until 642893c they ran side by side)
      timeout 240 $gc build experiments/hopper_ladder.yaml --no-progress > "$out/ladder_build.log" 2>&1
      timeout 330 python3 -m pytest -q -m gpu tests -p no:cacheprovider > "$out/gpu_tests.log" 2>&1
      echo "gpu-tests exit $?" | tee -a "$out/summary.txt" ;;
    ladder)
      timeout 330 $gc run experiments/hopper_ladder.yaml --store "$out/gemmcompare.db" --runs-dir "$out/runs" --no-progress \
        > "$out/ladder.log" 2>&1
      echo "ladder exit $?" | tee -a "$out/summary.txt" ;;
    ladder8192x3)
      for i in 1 2 3; do
        timeout 150 $gc run experiments/hopper_ladder.yaml --shapes 8192x8192x8192 --only 'cublas|hopper.best|cutlass' \
          --store "$out/gemmcompare.db" --runs-dir "$out/runs" --no-progress --no-report > "$out/ladder8192_$i.log" 2>&1
        echo "ladder8192 run $i exit $?" | tee -a "$out/summary.txt"
      done ;;
    sanitize)
      timeout 300 $gc sanitize experiments/hopper_ladder.yaml --shapes 611x613x616,512x512x512 --only 'hopper' \
        --log-dir "$out/sanitize" --json "$out/sanitize.json" --store "$out/sanitize.db" --runs-dir "$out/sanitize_runs" \
        --no-progress > "$out/sanitize.log" 2>&1
      echo "sanitize exit $?" | tee -a "$out/summary.txt" ;;
  esac
done
tar czf "$out/hopper.tgz" -C "$out" --exclude hopper.tgz . 2>/dev/null
echo "=== summary"; cat "$out/summary.txt"
echo "=== gpu tests"; tail -3 "$out/gpu_tests.log" 2>/dev/null
echo "=== sanitize"; tail -25 "$out/sanitize.log" 2>/dev/null
echo "=== ladder"; grep -E "^run |^  [0-9]+x" "$out/ladder.log" 2>/dev/null | grep -v " SKIP " | cut -c1-150 | tail -60
