#!/usr/bin/env bash
# FP8 on Hopper (issue 26), in one device call (under 4 minutes on an H200; no nvcc build but cuBLAS's binding):
#   OUT=/path bash experiments/fp8_on_device.sh
# 1. tests/test_gpu_fp8.py: library.cublaslt_fp8 PASSes its strict and fast-accumulation contracts, and a
#    fast-accumulation canary judged under the strict contract FAILs the fp8_accumulation fixture (the
#    numbers are printed: `-s`). Log: $OUT/pytest_fp8.log.
# 2. gemmcompare run experiments/fp8.yaml, its cuBLAS rows only (--only: the Python FP8 rows are
#    experiments/fp8_python_on_device.sh's; the CUTLASS FP8 rows need builds and
#    nvidia-cutlass; experiments/fp8_cutlass_on_device.sh runs them). Run folder and log: $OUT/fp8.tgz.
# Prints last: per shape, each contract's TFLOP/s and the FP8 rows' speed-up over the BF16 cuBLAS row
# (a cross-contract ratio, computed here from results.csv: the report's % of baseline is within one contract).
set -u
OUT=${OUT:?set OUT}
W=/tmp/fp8-work; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/device_env.sh
timeout 110 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_fp8.py >"$OUT/pytest_fp8.log" 2>&1
echo "pytest exit $?" >>"$OUT/pytest_fp8.log"
timeout 200 python3 -m gemmcompare run experiments/fp8.yaml --only '^library\.(cublas|cublaslt_fp8)$' --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress >"$W/run.log" 2>&1
echo "run exit $?" >>"$W/run.log"
tar czf "$OUT/fp8.tgz" -C "$W" runs run.log
echo "== GPU test (pytest_fp8.log) =="
grep -E "canary|FAIL|passed|failed|exit" "$OUT/pytest_fp8.log" | cut -c1-220 | tail -25
echo "== run (run.log tail) =="
tail -n 12 "$W/run.log" | cut -c1-160
echo "== FP8 vs BF16 (TFLOP/s; x = over bf16_bf16out_f32acc_tn library.cublas) =="
python3 - "$W/runs" <<'PY'
import glob, sys
import pandas as pd
csvs = sorted(glob.glob(f"{sys.argv[1]}/**/results.csv", recursive=True))
if not csvs:
    sys.exit("no results.csv")
df = pd.read_csv(csvs[-1])
df = df[df.status == "PASS"]
for (m, n, k), g in df.groupby(["m", "n", "k"], sort=False):
    bf16 = g[g.contract == "bf16_bf16out_f32acc_tn"].tflops
    base = float(bf16.iloc[0]) if len(bf16) else float("nan")
    print(f"{m}x{n}x{k}: bf16 cublas {base:7.1f}")
    for _, r in g[g.contract != "bf16_bf16out_f32acc_tn"].iterrows():
        print(f"    {r.contract:<40} {r.tflops:7.1f}  x{r.tflops / base:4.2f}")
PY
