"""`hopper.grouped_fp8` on the GPU (an H100/H200: sm_90a), through the harness, beside the loop of cuBLASLt's
block-scaled FP8 calls: every group of every problem PASSes the per-group check under 1x128 / 128x128 block scales
(C poisoned with NaN first, each group judged against its own FP64 references from the dequantized inputs, and the
fp8_accumulation and fp8_scales fixtures the runner adds, so a kernel that skips a group, writes into another group's
rows, takes another group's scale_b, or keeps the tensor core's ~14-bit sums over all of K FAILs) -- empty groups
first, between and last, groups below one tile, N off the tile and off a scale block, Zipf-skewed routing, more
tiles than SMs, K shorter than one k block and a K tail inside the last one, every group empty -- at the default
tile and at 64-row tiles with one consumer, each without and with the overlapped promotion (overlap 1), and at the
128x256 tile promoted per 128-column half (N = 1008 and 384 leave its last half past N), BF16 and FP32 out. Runs on
the device machine (marker `gpu`); prints each row's time and % of the loop.

Passed on an H100 at 1969e37 (experiments/studies/gpu-tests/h100/grouped-fp8-1969e37/), before the fp8_scales
fixture existed, with it at 4e87cbd (h100/fp8-scales-4e87cbd/), and with overlap 1 and the TMA-store epilogue at
6ca041b (logs in moe-shapes/h100/fp8-6ca041b/), before the 128x256 tile."""

from __future__ import annotations

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: hopper_grouped_fp8_gpu
problems:
  - grouped: {n: 256, k: 512, m: [64, 0, 5, 130, 12, 200, 1, 96]}     # an empty group, groups below one tile
  - grouped: {n: 1008, k: 1024, m: [0, 300, 0, 1, 127, 128, 129, 0]}  # empty first/between/last; N off the tile
  - grouped: {n: 512, k: 1024, routing: {tokens: 256, top_k: 4, experts: 32, distribution: {zipf: 1.2}, seed: 2}}
  - grouped: {n: 2048, k: 1024, routing: {tokens: 4096, top_k: 8, experts: 64, distribution: balanced}}  # > 132 tiles
  - grouped: {n: 256, k: 16, m: [3, 0, 70]}                            # K shorter than one k block
  - grouped: {n: 256, k: 512, m: [0, 0, 0, 0]}                         # every group empty: nothing to write
  - grouped: {n: 384, k: 4112, m: [1000]}                              # one group, a K tail in its last k block
contracts: [e4m3_bf16out_f32acc_tn_block, e4m3_f32out_f32acc_tn_block]
implementations:
  - library.cublaslt_fp8_loop
  - hopper.grouped_fp8
  - hopper.grouped_fp8: {block: [64, 128, 128], consumers: 1}
  - hopper.grouped_fp8: {overlap: 1}                                   # two partial sets taking turns
  - hopper.grouped_fp8: {block: [64, 128, 128], consumers: 1, overlap: 1}
  - hopper.grouped_fp8: {block: [128, 256, 128], stages: 4}           # promoted per 128-column half
baseline: library.cublaslt_fp8_loop
correctness: {fixtures: [uniform]}   # + fp8_accumulation (every FP8 contract) and fp8_scales (grouped)
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
"""
PROBLEMS, CONTRACTS = 7, 2


def test_hopper_grouped_fp8_passes_every_group_beside_the_cublaslt_loop(tmp_path):
    out = Runner(parse_spec(SPEC, "hopper_grouped_fp8_gpu.yaml"), RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache")).run()
    assert_complete(out)
    mine = [r for r in out.rows if r.implementation.startswith("hopper.grouped_fp8")]
    assert len(mine) == 5 * PROBLEMS * CONTRACTS
    bad = [f"{r.implementation} {r.problem} {r.contract}: {r.status.value} {r.reason}" for r in mine
           if r.status is not Status.PASS]
    assert not bad, "\n".join(bad)
    # the loop is the reference point, not what is tested: none of its rows may FAIL (its SKIPs say why: bf16 out
    # only with block scales)
    loop = [r for r in out.rows if r.implementation == "library.cublaslt_fp8_loop"]
    assert all(r.status in (Status.PASS, Status.SKIP) for r in loop), [
        (r.problem, r.contract, r.status.value, r.reason) for r in loop if r.status is not Status.PASS]
    for r in mine:
        pct = f"{r.pct_of_baseline:6.1f}% of the loop" if r.pct_of_baseline else ""
        print(f"{r.implementation[:60]:60s} {r.contract:30s} {r.problem:45s} {r.median_ms:9.4f} ms {pct}")
