#!/usr/bin/env bash
# The gemv kernel on an H200, in one device call of about 7 minutes:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/gemv_probe_on_device.sh
# 1. tests/test_gpu_decode.py (decode and gemv rows PASS at decode shapes and awkward ones; the M = 5 SKIP);
# 2. builds experiments/gemv_probe{,_flush,_rotate}.yaml (one build: the same implementations) and runs them in
#    turn, L2 evicted, flushed, rotated, then the evicted one again on the pick cache (the rerun);
# 3. prints per problem the medians side by side (experiments/studies/llm-shapes/l2_policy_table.py) and the rerun's moves.
# BUDGET_S (default 560) bounds it all. Comes back: OUT/steps.txt, OUT/probe.tgz (run folders under
# runs/<policy>/: evict, flush, rotate, evict_rerun; the store, the pick cache, every step's log), OUT/table.txt.
set -u
OUT=${OUT:?set OUT}
W=/tmp/gemv-probe; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/studies/device_env.sh
export GEMMCOMPARE_CACHE_DIR=$W/cache
END=$(( $(date +%s) + ${BUDGET_S:-560} ))
echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)" | tee "$OUT/steps.txt"
step gpu_tests 200 python3 -m pytest -q -s -p no:cacheprovider tests/test_gpu_decode.py
step build 240 python3 -m gemmcompare build experiments/studies/llm-shapes/gemv_probe.yaml --no-progress
run() {  # NAME SPEC
  step "$1" 150 python3 -m gemmcompare run "$2" --store "$W/g.db" --runs-dir "$W/runs/$1" --no-progress --no-report
}
run evict experiments/studies/llm-shapes/gemv_probe.yaml
run flush experiments/studies/llm-shapes/gemv_probe_flush.yaml
run rotate experiments/studies/llm-shapes/gemv_probe_rotate.yaml
run evict_rerun experiments/studies/llm-shapes/gemv_probe.yaml
python3 experiments/studies/llm-shapes/l2_policy_table.py evict="$W/runs/evict" flush="$W/runs/flush" rotate="$W/runs/rotate" \
  evict_rerun="$W/runs/evict_rerun" > "$OUT/table.txt" 2>&1
cp "$W/cache/picks.sqlite" "$W/picks.sqlite" 2>/dev/null
mv "$OUT"/*.log "$W/" 2>/dev/null
tar czf "$OUT/probe.tgz" -C "$W" runs g.db picks.sqlite $(cd "$W" && ls *.log) 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
grep -E "passed|failed|error" "$W/gpu_tests.log" | tail -3
cat "$OUT/table.txt"
