#!/usr/bin/env bash
# cuBLAS's process-to-process spread on an H200, in one device call of about 4 minutes:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/baseline_spread_on_device.sh
# Builds SPECS (space-separated; default SPEC, default experiments/studies/llm-shapes/baseline_spread.yaml; the decode kernel), then
# runs each RUNS times (default 6), each run a fresh process, the specs interleaved (run 1 of every spec, then
# run 2, ...) so that a drift of the machine touches them alike; BUDGET_S (default 300) bounds it all, and a run is
# not started with under 20 s left.
# Comes back: OUT/spread.tgz (run folders under runs/<spec stem>/, store, logs), OUT/steps.txt; prints per spec,
# problem and implementation the medians of every run and their spread (max / min - 1), from
# experiments/studies/llm-shapes/spread_table.py, and with several specs their side-by-side medians (experiments/studies/llm-shapes/l2_policy_table.py).
set -u
OUT=${OUT:?set OUT}
W=/tmp/baseline-spread; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/studies/device_env.sh
END=$(( $(date +%s) + ${BUDGET_S:-300} ))
echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)" | tee "$OUT/steps.txt"
SPECS=${SPECS:-${SPEC:-experiments/studies/llm-shapes/baseline_spread.yaml}}
for spec in $SPECS; do step "build_$(basename "$spec" .yaml)" 200 python3 -m gemmcompare build "$spec" --no-progress; done
for i in $(seq 1 "${RUNS:-6}"); do
  for spec in $SPECS; do
    stem=$(basename "$spec" .yaml)
    step "${stem}_run_$i" 120 python3 -m gemmcompare run "$spec" --store "$W/g.db" \
      --runs-dir "$W/runs/$stem" --no-progress
  done
done
tar czf "$OUT/spread.tgz" -C "$W" runs g.db 2>/dev/null
groups=()
for spec in $SPECS; do
  stem=$(basename "$spec" .yaml)
  echo "== $stem"; python3 experiments/studies/llm-shapes/spread_table.py "$W/runs/$stem"/*/
  groups+=("$stem=$W/runs/$stem")
done
[ "${#groups[@]}" -gt 1 ] && python3 experiments/studies/llm-shapes/l2_policy_table.py "${groups[@]}"
true
