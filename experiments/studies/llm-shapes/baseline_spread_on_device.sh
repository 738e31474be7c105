#!/usr/bin/env bash
# cuBLAS's process-to-process spread on an H200, in one device call of about 4 minutes:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/baseline_spread_on_device.sh
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> POLICIES="flush evict rotate" bash experiments/studies/llm-shapes/baseline_spread_on_device.sh
# Builds SPECS (space-separated; default SPEC, default experiments/studies/llm-shapes/baseline_spread.yaml; the decode
# kernel), then runs each RUNS times (default 6), each run a fresh process, under each L2 policy of POLICIES
# (space-separated `gemmcompare run --l2` policies: flush, evict, rotate, warm; default none: the spec's own
# timing.l2), the runs interleaved (run 1 of every spec and policy, then run 2, ...) so that a drift of the machine
# touches them alike; BUDGET_S (default 300) bounds it all, and a run is not started with under 20 s left.
# Each spec and policy is a group, <spec stem>_<policy> (or <spec stem> without POLICIES).
# Comes back: OUT/baseline_spread_on_device.tgz (run folders under runs/<group>/, the store), each step's log
# OUT/<group>_run_<i>.log, OUT/steps.txt; prints per group, problem and implementation the medians of every run and
# their spread (max / min - 1), from experiments/studies/llm-shapes/spread_table.py, and with several groups their
# side-by-side medians (experiments/studies/llm-shapes/l2_policy_table.py).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
[ -n "${BUDGET_S:-}" ] || END=$(( $(date +%s) + 300 ))  # this study's default budget
SPECS=${SPECS:-${SPEC:-experiments/studies/llm-shapes/baseline_spread.yaml}}
POLICIES=${POLICIES:-}
for spec in $SPECS; do step "build_$(basename "$spec" .yaml)" 200 python3 -m gemmcompare build "$spec" --no-progress; done
groups=()  # GROUP|SPEC|POLICY (no POLICY: the spec's own)
for spec in $SPECS; do
  stem=$(basename "$spec" .yaml)
  if [ -z "$POLICIES" ]; then groups+=("$stem|$spec|"); else for p in $POLICIES; do groups+=("${stem}_$p|$spec|$p"); done; fi
done
for i in $(seq 1 "${RUNS:-6}"); do
  for g in "${groups[@]}"; do
    IFS='|' read -r group spec p <<<"$g"
    step "${group}_run_$i" 120 python3 -m gemmcompare run "$spec" ${p:+--l2 "$p"} --store "$W/g.db" \
      --runs-dir "$W/runs/$group" --no-progress
  done
done
labels=()
for g in "${groups[@]}"; do
  group=${g%%|*}
  echo "== $group"
  ls -d "$W/runs/$group"/*/ >/dev/null 2>&1 || { echo "(no run folder)"; continue; }
  python3 experiments/studies/llm-shapes/spread_table.py "$W/runs/$group"/*/
  labels+=("$group=$W/runs/$group")
done
[ "${#labels[@]}" -gt 1 ] && python3 experiments/studies/llm-shapes/l2_policy_table.py "${labels[@]}"
true
