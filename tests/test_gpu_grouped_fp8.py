"""Grouped problems under FP8 contracts on the GPU (an H100/H200): the loop of cuBLASLt FP8 calls
(`library.cublaslt_fp8_loop`) PASSes every group under per-tensor, row/column and 1x128/128x128 block scales;
torch's scaled grouped GEMM PASSes the per-tensor and row/column ones (block scales are its SKIP); CUTLASS's
blockwise grouped configuration PASSes the block-scaled ones. Empty groups, groups below one tile and a masked
problem among them; a Qwen3 down projection's K = 768 (block scales padded for cuBLASLt). Runs on the device
machine (marker `gpu`); passed on an H100 at f060c2b, the block rows' padding included
(experiments/studies/gpu-tests/h100/grouped-f060c2b/), and with K = 768 at 1969e37 (h100/grouped-fp8-1969e37/),
both before the fp8_scales fixture existed; with it, passed at 4e87cbd (h100/fp8-scales-4e87cbd/)."""

from __future__ import annotations

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: grouped_fp8_gpu
problems:
  - grouped: {n: 256, k: 512, m: [64, 0, 5, 130, 12, 200, 1, 96]}
  - grouped: {n: 512, k: 1024, routing: {tokens: 256, top_k: 4, experts: 32, distribution: {zipf: 1.2}, seed: 2}}
  - grouped: {n: 256, k: 512, m: [64, 0, 5, 130], layout: masked}
  - grouped: {n: 256, k: 768, m: [64, 0, 5]}   # 6 k blocks: the loop pads B's block scales to 8 (not yet run)
contracts: [e4m3_bf16out_f32acc_tn_tensor, e4m3_bf16out_f32acc_tn_rowcol, e4m3_bf16out_f32acc_tn_block]
implementations:
  - library.cublaslt_fp8_loop
  - library.torch_grouped_mm
  - cutlass: {config: sm90_grouped_fp8_blockwise_coop_128x128x128_c1x1}
baseline: library.cublaslt_fp8_loop
correctness: {fixtures: [uniform]}   # + fp8_accumulation (every FP8 contract) and fp8_scales (grouped)
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
"""
MASKED = "g4 n256 k512 m64,0,5,130 masked c256"


def test_grouped_fp8_rows_pass_every_group(tmp_path):
    out = Runner(parse_spec(SPEC, "grouped_fp8_gpu.yaml"), RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache")).run()
    assert_complete(out)
    wrong = []
    for r in out.rows:
        block = r.contract.endswith("_block")
        if r.implementation == "library.cublaslt_fp8_loop":
            want = Status.PASS
        elif r.implementation == "library.torch_grouped_mm":
            want = Status.SKIP if block or r.problem == MASKED else Status.PASS
        else:  # CUTLASS's blockwise grouped kernel: block scales, contiguous layout
            want = Status.PASS if block and r.problem != MASKED else Status.SKIP
        if r.status is not want:
            wrong.append(f"{r.implementation} {r.problem} {r.contract}: expected {want.value}, got "
                         f"{r.status.value} {r.reason}")
    assert not wrong, "\n".join(wrong)
    loop = [r for r in out.rows if r.implementation == "library.cublaslt_fp8_loop"]
    assert len(loop) == 12 and all("cuBLASLt FP8 calls (one per non-empty group" in r.notes for r in loop)
