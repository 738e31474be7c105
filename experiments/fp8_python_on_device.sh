#!/usr/bin/env bash
# The Python FP8 rows (issue 26: library.triton_fp8, library.torch_compile_fp8), in one device call (under
# 9 minutes on an H200; no nvcc build but cuBLAS's binding):
#   OUT=/path bash experiments/fp8_python_on_device.sh
# 1. tests/test_gpu_fp8_python.py: both rows PASS e4m3 per-tensor strict and _fastacc at 1024^3 and 4096^3
#    through the harness (block scales: SKIP rows), and on the fp8_accumulation fixture each PASSes the strict
#    contract while its fast-accumulation canary FAILs it (numbers printed: `-s`). Log: $OUT/pytest_fp8_python.log.
# 2. experiments/fp8.yaml at 4096^3 and 8192^3, the Python FP8 rows beside cuBLASLt and BF16 cuBLAS
#    (--shapes, --only: torch.compile's max-autotune over every shape would not fit one call).
#    Run folder and log: $OUT/fp8_python.tgz. Prints last: each row's TFLOP/s and % of cuBLASLt's FP8 row.
set -u
OUT=${OUT:?set OUT}
W=/tmp/fp8-python-work; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/device_env.sh
timeout -k 10 300 python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_fp8_python.py \
  >"$OUT/pytest_fp8_python.log" 2>&1
echo "pytest exit $?" >>"$OUT/pytest_fp8_python.log"
timeout -s INT -k 20 200 python3 -m gemmcompare run experiments/fp8.yaml --shapes 4096x4096x4096,8192x8192x8192 \
  --only '^library\.(cublas|cublaslt_fp8|triton_fp8|torch_compile_fp8)$' --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress >"$W/run.log" 2>&1
echo "run exit $?" >>"$W/run.log"
tar czf "$OUT/fp8_python.tgz" -C "$W" runs run.log
echo "== GPU test (pytest_fp8_python.log) =="
grep -E "canary|PASS|FAIL|SKIP|passed|failed|exit" "$OUT/pytest_fp8_python.log" | cut -c1-260 | tail -40
echo "== run (run.log tail) =="
tail -n 12 "$W/run.log" | cut -c1-160
echo "== FP8 rows (TFLOP/s; % of library.cublaslt_fp8 under the same contract) =="
python3 - "$W/runs" <<'PY'
import glob, sys
import pandas as pd
csvs = sorted(glob.glob(f"{sys.argv[1]}/**/results.csv", recursive=True))
if not csvs:
    sys.exit("no results.csv")
df = pd.read_csv(csvs[-1])
for (m, n, k, contract), g in df.groupby(["m", "n", "k", "contract"], sort=False):
    base = g[(g.implementation == "library.cublaslt_fp8") & (g.status == "PASS")].tflops
    ref = float(base.iloc[0]) if len(base) else float("nan")
    for _, r in g.iterrows():
        tail = f"{r.tflops:7.1f}  {100 * r.tflops / ref:5.0f}%" if r.status == "PASS" else str(r.reason)[:90]
        print(f"{m}x{n}x{k} {contract:<38} {r.implementation:<26} {r.status:<5} {tail}")
PY
