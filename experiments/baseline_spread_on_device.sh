#!/usr/bin/env bash
# cuBLAS's process-to-process spread on an H200, in one device call of about 4 minutes:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/baseline_spread_on_device.sh
# Builds SPEC (default experiments/baseline_spread.yaml; the decode kernel), then runs it RUNS times (default 6),
# each run a fresh process, back to back; BUDGET_S (default 300) bounds it all, and a run is not started with under 20 s left.
# Comes back: OUT/spread.tgz (run folders, store, logs), OUT/steps.txt; prints per problem and implementation the
# medians of every run and their spread (max / min - 1), from experiments/spread_table.py.
set -u
OUT=${OUT:?set OUT}
W=/tmp/baseline-spread; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/device_env.sh
END=$(( $(date +%s) + ${BUDGET_S:-300} ))
echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)" | tee "$OUT/steps.txt"
SPEC=${SPEC:-experiments/baseline_spread.yaml}
step build 200 python3 -m gemmcompare build "$SPEC" --no-progress
for i in $(seq 1 "${RUNS:-6}"); do
  step "run_$i" 120 python3 -m gemmcompare run "$SPEC" --store "$W/g.db" \
    --runs-dir "$W/runs" --no-progress
done
tar czf "$OUT/spread.tgz" -C "$W" runs g.db 2>/dev/null
python3 experiments/spread_table.py "$W"/runs/*/
