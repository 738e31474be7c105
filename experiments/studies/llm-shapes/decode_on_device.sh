#!/usr/bin/env bash
# The decode kernel (M <= 16) on an H200: its GPU test, then experiments/decode.yaml. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/decode_on_device.sh
# 1. tests/test_gpu_decode.py: every decode row PASSes (decode shapes, K tails, every load width, splits 1 / auto
#    / 8; m = 17 a SKIP); prints each row's time, % of cuBLAS and B's streamed bandwidth.
# 2. `gemmcompare run experiments/decode.yaml`: defaults, every split and the tuned row against cuBLAS at the
#    8B and 70B decode shapes (BF16). Prints per row: time, % of cuBLAS, B bandwidth (N*K*2 bytes / time).
# Everything comes back as OUT/decode.tgz (run folder, store, logs); the printed tables in OUT/summary.txt.
set -u
OUT=${OUT:?set OUT}
W=/tmp/decode-study; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/studies/device_env.sh
export GEMMCOMPARE_CACHE_DIR=$W/cache
t0=$(date +%s)
timeout 480 python3 -m pytest -m gpu -s -q -p no:cacheprovider tests/test_gpu_decode.py >"$W/pytest.log" 2>&1
echo "gpu test exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$W/steps.txt"
t0=$(date +%s)
timeout 900 python3 -m gemmcompare run experiments/decode.yaml --store "$W/g.db" --runs-dir "$W/runs" --no-progress \
  >"$W/run.log" 2>&1
echo "run exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$W/steps.txt"
tar czf "$OUT/decode.tgz" -C "$W" runs g.db pytest.log run.log steps.txt
{
  cat "$W/steps.txt"
  grep -E "^decode\[|passed|failed|Error" "$W/pytest.log" | tail -120
  python3 - "$W/runs" <<'PY'
import glob, sys
import pandas as pd
for csv in sorted(glob.glob(f"{sys.argv[1]}/*/results.csv")):
    df = pd.read_csv(csv)
    print(f"== {csv.split('/')[-2]}: {len(df)} rows, {(df.status == 'PASS').sum()} PASS, "
          f"not PASS: {sorted(set(df[df.status != 'PASS'].status))}")
    for _, r in df.sort_values(["n", "k", "m", "implementation"]).iterrows():
        if r.status != "PASS":
            print(f"{r.implementation[:52]:<52} {r.m}x{r.n}x{r.k:<6} {r.status} {str(r.reason)[:80]}")
            continue
        gbs = r.n * r.k * 2 / (r.median_ms * 1e-3) / 1e9
        print(f"{r.implementation[:52]:<52} {r.m}x{r.n}x{r.k:<6} {r.median_ms * 1e3:8.2f} us "
              f"{r.pct_of_baseline:6.1f}% of cuBLAS  B at {gbs:6.0f} GB/s")
PY
} | tee "$OUT/summary.txt"
