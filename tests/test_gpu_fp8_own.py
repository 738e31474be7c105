"""A user's own FP8 kernels on the GPU (Hopper, or Ada for everything but the receipt's speed), judged beside
library.cublaslt_fp8 through the harness (parent.Runner, as `gemmcompare run`), under the e4m3 per-tensor bf16-out
contract and its _fastacc twin (docs/fp8.md, "Your own FP8 kernel"):

- custom.my_fp8_gemm (experiments/byo_kernel/my_fp8_gemm.cu, general C ABI, FP32 accumulation promoted every 128
  of K) and python.my_fp8_matmul (my_fp8_matmul.py, called with scale_a=, scale_b=) PASS every row;
- custom.my_fp8_gemm_unpromoted (-DNO_PROMOTION: a 14-bit accumulator over all of K, declared `promote` all the
  same) FAILs the strict contract on the accumulation canary (256x256x16384, fp8_accumulation) and PASSes its
  _fastacc twin, and PASSes both on uniform data at 1024^3 (there no bound can tell);
- custom.my_fp8_gemm_no_scales (-DIGNORE_SCALES) FAILs every row;
- an entry declaring `accumulation: fast` is a SKIP under the strict contract, and runs (PASS) the _fastacc one.

The receipt run (speed at 4096^3 and 2048x7168x4096) is the spec itself:
    gemmcompare run experiments/byo_kernel/fp8_own.yaml
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmcompare.runner import parent
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

BYO = Path(__file__).resolve().parents[1] / "experiments" / "byo_kernel"
STRICT, FAST = "e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_tensor_fastacc"
CANARY, SQUARE = "256x256x16384", "1024x1024x1024"
GEMM = "sources: [my_fp8_gemm.cu], entry: my_fp8_gemm, abi: general, arch: sm_89, contract: " + STRICT

SPEC = f"""\
name: fp8_own_gpu
problems:
  - {{name: canary, m: 256, n: 256, k: 16384, fixtures: [fp8_accumulation], time: false}}
  - {{m: 1024, n: 1024, k: 1024, fixtures: [uniform]}}
contracts: [{STRICT}, {FAST}]
implementations:
  - library.cublaslt_fp8
  - custom: {{name: my_fp8_gemm, {GEMM}, scalings: [tensor, rowcol, block]}}
  - custom: {{name: my_fp8_gemm_unpromoted, {GEMM}, scalings: [tensor, rowcol], flags: [-DNO_PROMOTION]}}
  - custom: {{name: my_fp8_gemm_no_scales, {GEMM}, scalings: [tensor], flags: [-DIGNORE_SCALES]}}
  - custom: {{name: my_fp8_gemm_declared_fast, {GEMM}, scalings: [tensor], accumulation: fast, flags: [-DNO_PROMOTION]}}
  - python: {{name: my_fp8_matmul, callable: "my_fp8_matmul.py:matmul", contract: {STRICT}, scalings: [tensor, rowcol]}}
baseline: library.cublaslt_fp8
timing: {{l2: flush, max_ms: 100}}
"""

# (implementation, contract, problem) -> the verdict; every pair not listed PASSes
EXPECTED = {
    ("custom.my_fp8_gemm_unpromoted", STRICT, CANARY): "FAIL",
    **{("custom.my_fp8_gemm_no_scales", c, p): "FAIL" for c in (STRICT, FAST) for p in (CANARY, SQUARE)},
    **{("custom.my_fp8_gemm_declared_fast", STRICT, p): "SKIP" for p in (CANARY, SQUARE)},
}


def test_own_fp8_kernels_are_judged_beside_cublaslt(tmp_path):
    out = parent.Runner(parse_spec(SPEC, str(BYO / "fp8_own_gpu.yaml"), base_dir=BYO), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False)).run()
    for r in out.rows:
        print(f"{r.implementation:<34} {r.contract:<40} {r.problem:<16} {r.status.value:<5} "
              f"{(r.tflops or 0):7.1f} TFLOP/s {r.reason or ''}")
    assert_complete(out)
    got = {(r.implementation, r.contract, r.problem): r for r in out.rows}
    assert len(got) == 6 * 2 * 2
    wrong = [(key, r.status.value, r.reason) for key, r in got.items() if r.status.value != EXPECTED.get(key, "PASS")]
    assert not wrong, wrong
    skip = got[("custom.my_fp8_gemm_declared_fast", STRICT, CANARY)]
    assert "accumulation: fast" in skip.reason and "_fastacc twin allows it" in skip.reason
    lost = got[("custom.my_fp8_gemm_unpromoted", STRICT, CANARY)]
    assert "outside the bound" in lost.reason, lost.reason
