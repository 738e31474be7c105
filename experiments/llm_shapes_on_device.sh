#!/usr/bin/env bash
# Issue 25's study on an H200 (not yet run: it needs about 20 minutes of device time, see docs/tuning.md):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/llm_shapes_on_device.sh
# 1. `gemmcompare build experiments/llm_shapes.yaml`, cold: every candidate of every tuned row (timed).
# 2. `gemmcompare run experiments/llm_shapes.yaml`: each tuned row races its candidates per problem and is then
#    measured afresh; its receipt's phases_s has the tuning seconds (`tuning_s`).
# 3. The same run again on the warm pick cache: no tuning seconds; the rows should land within 3 points.
# Prints last, per implementation: % of cuBLAS at every problem (prefill and decode apart), the geometric mean,
# and the decode rows' HBM bandwidth. Everything comes back as OUT/llm_shapes.tgz.
set -u
OUT=${OUT:?set OUT}
W=/tmp/llm-shapes; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/device_env.sh
export GEMMCOMPARE_CACHE_DIR=$W/cache
run_args=(--store "$W/g.db" --runs-dir "$W/runs" --no-progress)
t0=$(date +%s); timeout 900 python3 -m gemmcompare build experiments/llm_shapes.yaml --no-progress >"$W/build.log" 2>&1
echo "build exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$W/steps.txt"
for i in 1 2; do
  t0=$(date +%s); timeout 1200 python3 -m gemmcompare run experiments/llm_shapes.yaml "${run_args[@]}" >"$W/run_$i.log" 2>&1
  echo "run $i exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$W/steps.txt"
done
tar czf "$OUT/llm_shapes.tgz" -C "$W" runs g.db build.log run_1.log run_2.log steps.txt
python3 - "$W/runs" <<'PY' | tee "$OUT/summary.txt"
import glob, math, sys
import pandas as pd
for csv in sorted(glob.glob(f"{sys.argv[1]}/*/results.csv")):
    df = pd.read_csv(csv)
    ok = df[df.status == "PASS"]
    print(f"== {csv.split('/')[-2]}: {len(df)} rows, {len(ok)} PASS")
    for impl, g in ok.groupby("implementation"):
        pct = g.set_index(["m", "n", "k"]).pct_of_baseline
        pre, dec = pct[pct.index.get_level_values(0) >= 2048], pct[pct.index.get_level_values(0) < 2048]
        geo = math.exp(sum(math.log(v) for v in pct if v > 0) / max(len(pct), 1))
        print(f"{impl[:70]:<70} geomean {geo:6.1f}%  prefill min {pre.min():6.1f}%  decode min {dec.min():6.1f}%")
PY
