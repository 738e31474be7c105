#!/usr/bin/env bash
# The decode kernel (M <= 16) on an H200: its GPU test, then experiments/decode.yaml. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/decode_on_device.sh
# 1. tests/test_gpu_decode.py: every decode row PASSes (decode shapes, K tails, every load width, splits 1 / auto
#    / 8; m = 17 a SKIP); prints each row's time, % of cuBLAS and B's streamed bandwidth.
# 2. `gemmcompare run experiments/decode.yaml`: defaults, every split and the tuned row against cuBLAS at the
#    8B and 70B decode shapes (BF16). Prints per row: time, % of cuBLAS, B bandwidth (N*K*2 bytes / time).
# On a build cache of its own, empty at first. Comes back: OUT/decode_on_device.tgz (run folder, store), the logs
# OUT/pytest.log and OUT/run.log, and the printed tables in OUT/summary.txt.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
export GEMMCOMPARE_CACHE_DIR=$W-cache  # empty (cold builds), outside W (not packed)
rm -rf "$GEMMCOMPARE_CACHE_DIR"
step pytest 480 python3 -m pytest -m gpu -s -q -p no:cacheprovider tests/test_gpu_decode.py
step run 900 python3 -m gemmcompare run experiments/decode.yaml --store "$W/g.db" --runs-dir "$W/runs" --no-progress
{
  cat "$OUT/steps.txt"
  grep -E "^decode\[|passed|failed|Error" "$OUT/pytest.log" | tail -120
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
