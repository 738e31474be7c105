#!/usr/bin/env bash
# CUTLASS SM90 FP8 configurations (kernel template sm90_fp8, issue 26) on an H200, in one device call (needs
# nvidia-cutlass in .whl/, as every CUTLASS script; budget: ~4 min of builds on 16 jobs, under 10 min in all):
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/fp8/fp8_cutlass_on_device.sh
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> TESTS=blockwise SPEC_RUN=0 bash experiments/studies/fp8/fp8_cutlass_on_device.sh   # step 1's block-scale tests only
# 1. tests/test_gpu_fp8_cutlass.py (TESTS: a pytest -k expression, default all): through the harness, the
#    promoting entry PASSes e4m3 per-tensor strict and _fastacc contracts at 1024^3 and 4096^3 and the
#    fast-accumulation entry PASSes _fastacc (SKIP under strict); judged directly on the fp8_accumulation fixture
#    (f32 out, 256x256x16384), promotion PASSes strict and fast accumulation FAILs it (the canary) and PASSes
#    _fastacc; the blockwise entry (scaling block) PASSes e4m3 block strict and _fastacc at 1024^3, 4096^3,
#    1000^3 and 77x1000x4224 on the uniform, normal, adversarial and fp8_accumulation fixtures, and strict with
#    f32 out on fp8_accumulation. Log: $OUT/pytest_fp8_cutlass.log (numbers: -s).
# 2. (SPEC_RUN=1, the default) gemmcompare run experiments/fp8.yaml (cuBLASLt, the CUTLASS entries, the tuned
#    sm90_fp8 row, ...; builds warm from step 1's cache). Log: $OUT/fp8_cutlass.log; run folder and store:
#    $OUT/fp8_cutlass_on_device.tgz.
# Prints last (experiments/studies/fp8/fp8_study_table.py): per shape and contract, each row's TFLOP/s and % of
# library.cublaslt_fp8 (nan where cuBLASLt is a SKIP: block scales with fast accumulation), then FP8 over BF16.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
TESTS=${TESTS:-}
SPEC_RUN=${SPEC_RUN:-1}
PYTEST_LIMIT=300; [ "$SPEC_RUN" = 0 ] && PYTEST_LIMIT=540
step pytest_fp8_cutlass $PYTEST_LIMIT python3 -m pytest -m gpu -v -s -rs -p no:cacheprovider tests/test_gpu_fp8_cutlass.py \
  ${TESTS:+-k "$TESTS"}
echo "== GPU test (pytest_fp8_cutlass.log) =="
grep -E "PASS|FAIL|SKIP|passed|failed|error|exit" "$OUT/pytest_fp8_cutlass.log" | cut -c1-240 | tail -40
[ "$SPEC_RUN" = 0 ] && exit 0
step fp8_cutlass 270 python3 -m gemmcompare run experiments/fp8.yaml --store "$W/g.db" --runs-dir "$W/runs" --no-progress
echo "== run (fp8_cutlass.log tail) =="
tail -n 12 "$OUT/fp8_cutlass.log" | cut -c1-160
echo "== each row as % of cuBLASLt under its contract, then FP8 over BF16 (experiments/studies/fp8/fp8_study_table.py) =="
python3 experiments/studies/fp8/fp8_study_table.py "$W/runs"
