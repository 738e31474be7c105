#!/usr/bin/env bash
# The GPU work of issue 19 (Python, Triton and torch.compile rows), in one call on the lent H200 (6-7.5 min).
# From the repository root on the device machine, with $OUT the folder that comes back:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/python-kernels/python_kernels_on_device.sh
# 1. the worked example, experiments/python_kernels/python_kernels.yaml: my_triton_gemm PASSES the eight
#    capstone cases; wrong_k_tail FAILS where K % 32 != 0 (16x16x16, 16x8x16, 611x613x617) with the numbers
#    (that run exits 1, as it should);
# 2. experiments/triton_and_compile.yaml: cuBLAS, library.triton_matmul and library.torch_compile at 4096^3
#    and 8192^3, f16/bf16 in, f32 or same-dtype out, with % of cuBLAS;
# 3. the GPU tests of the family, tests/test_gpu_python.py (planted callables);
# then OUT/summary.txt (the table printed last), OUT/steps.txt (exit code and seconds of each step),
# OUT/env.txt, each step's log OUT/NAME.log and OUT/python_kernels_on_device.tgz (the store, the run folders with
# their reports). Every step runs under `timeout` (SIGINT first: a run keeps its finished rows and says it was
# interrupted), each given at most what is left of a 410 s budget (BUDGET_S; 30 s more for the summary).
# No CUTLASS needed. The commit comes from GEMMCOMPARE_GIT_COMMIT, as for every receipt.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
[ -n "${BUDGET_S:-}" ] || END=$(( $(date +%s) + 410 ))  # this study's default budget
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

run=(python3 -m gemmcompare run --store "$W/gemmcompare.db" --runs-dir "$W/runs" --no-progress)
step python_kernels 150 "${run[@]}" experiments/python_kernels/python_kernels.yaml
tail -n 5 "$OUT/python_kernels.log" 2>/dev/null
step triton_and_compile 270 "${run[@]}" experiments/triton_and_compile.yaml
tail -n 5 "$OUT/triton_and_compile.log" 2>/dev/null
step gpu_tests 200 python3 -m pytest -q -m gpu tests/test_gpu_python.py
tail -n 5 "$OUT/gpu_tests.log" 2>/dev/null

timeout 20 python3 - "$W/gemmcompare.db" >"$OUT/summary.txt" 2>&1 <<'EOF'
import sys

from gemmcompare.store import Store

store = Store(sys.argv[1])
runs = store.conn.execute("SELECT run_id, name, status FROM runs ORDER BY started_at").fetchall()
for run_id, name, status in runs:
    df = store.results(run_id)
    print(f"\n{name} {run_id} ({status}): " + ", ".join(f"{n} {s}" for s, n in df.status.value_counts().items()))
    print(f"{'problem':<14} {'contract':<22} {'implementation':<24} {'status':<6} {'ms':>8} {'TFLOP/s':>8} "
          f"{'%cuBLAS':>7} {'build s':>7}  what ran / why")
    for r in df.sort_values(["problem", "contract", "implementation"]).itertuples():
        t = r.timing if isinstance(r.timing, dict) else {}
        what = t.get("triton_config") or t.get("inductor_kernels") or t.get("launch") or ""
        if r.status != "PASS":
            what = (r.reason or "").replace("\n", " ")[:160]
        num = lambda v, f: "" if v is None or v != v else format(v, f)  # noqa: E731
        print(f"{r.problem:<14} {r.contract:<22} {r.implementation[:24]:<24} {r.status:<6} {num(r.median_ms, '.4f'):>8} "
              f"{num(r.tflops, '.1f'):>8} {num(r.pct_of_baseline, '.1f'):>7} {num(r.build_seconds, '.1f'):>7}  {what}")
EOF
note "summary exit $?"
echo "=== done in $SECONDS s"
cat "$OUT/summary.txt"
