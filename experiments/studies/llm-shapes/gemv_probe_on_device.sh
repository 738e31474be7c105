#!/usr/bin/env bash
# The gemv kernel on an H200, in one device call of about 7 minutes:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/gemv_probe_on_device.sh
# 1. tests/test_gpu_decode.py (decode and gemv rows PASS at decode shapes and awkward ones; the M = 5 SKIP);
# 2. builds experiments/studies/llm-shapes/gemv_probe.yaml once and runs it under each L2 policy of POLICIES in turn
#    (`gemmcompare run --l2 POLICY`; default "evict flush rotate"), then under the first one again on the pick
#    cache (the rerun, <first>_rerun);
# 3. prints per problem the medians side by side (experiments/studies/llm-shapes/l2_policy_table.py) and the rerun's moves.
# On a build and pick cache of its own, empty at first. BUDGET_S (default 560) bounds it all. Comes back:
# OUT/steps.txt, each step's log OUT/NAME.log, OUT/gemv_probe_on_device.tgz (run folders under runs/<policy>/:
# evict, flush, rotate, evict_rerun; the store, the pick cache), OUT/table.txt.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
export GEMMCOMPARE_CACHE_DIR=$W-cache  # empty (cold builds, no picks), outside W (not packed)
rm -rf "$GEMMCOMPARE_CACHE_DIR"
SPEC=experiments/studies/llm-shapes/gemv_probe.yaml
POLICIES=${POLICIES:-evict flush rotate}
step gpu_tests 200 python3 -m pytest -q -s -p no:cacheprovider tests/test_gpu_decode.py
step build 240 python3 -m gemmcompare build "$SPEC" --no-progress
run() {  # NAME POLICY
  step "$1" 150 python3 -m gemmcompare run "$SPEC" --l2 "$2" --store "$W/g.db" --runs-dir "$W/runs/$1" --no-progress \
    --no-report
}
groups=()
for p in $POLICIES; do run "$p" "$p"; groups+=("$p=$W/runs/$p"); done
read -r first _ <<<"$POLICIES"
run "${first}_rerun" "$first"; groups+=("${first}_rerun=$W/runs/${first}_rerun")
python3 experiments/studies/llm-shapes/l2_policy_table.py "${groups[@]}" > "$OUT/table.txt" 2>&1
cp "$GEMMCOMPARE_CACHE_DIR/picks.sqlite" "$W/picks.sqlite" 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
grep -E "passed|failed|error" "$OUT/gpu_tests.log" | tail -3
cat "$OUT/table.txt"
