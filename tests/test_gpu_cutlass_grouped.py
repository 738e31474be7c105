"""CUTLASS's pointer-array grouped GEMM (kernel template sm90_grouped, cutlass_configs/sm90_grouped.yaml) on the GPU
(an H100/H200: sm_90a), through the harness, beside torch's grouped GEMM: every group of every problem PASSes the
per-group check (C poisoned with NaN first, each group judged against its own FP64 references). The problems are
hopper.grouped's (tests/test_gpu_hopper_grouped.py): empty groups first, between and last, groups below one tile,
Ms that are not multiples of the tile, N not a multiple of the tile, Zipf-skewed routing, 128 experts, more tiles
than SMs, K shorter than one k tile, every group empty, a K tail; and a masked problem, which these
configurations SKIP (contiguous layout only). One configuration of each kind: cooperative 128x128, cooperative
128x256 on a 2x1 cluster, ping-pong 64x128; BF16 in and out, and FP16 in with an FP32 out.

The blockwise FP8 configuration is tests/test_gpu_grouped_fp8.py's. Runs on the device machine (marker `gpu`); prints
each row's time and % of torch's (with -s). Passed on an H100 at f060c2b (experiments/studies/gpu-tests/h100/grouped-f060c2b/)."""

from __future__ import annotations

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec
from gpu_expectations import GROUPED_EDGE_PROBLEMS, assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: cutlass_grouped_gpu
problems:
""" + GROUPED_EDGE_PROBLEMS + """\
  - grouped: {n: 256, k: 512, m: [64, 0, 5, 130], layout: masked}     # a SKIP: contiguous layout only
contracts: [bf16_bf16out_f32acc_tn, f16_f32acc_tn]
implementations:
  - library.torch_grouped_mm
  - cutlass: {config: sm90_grouped_coop_128x128x64_c1x1}
  - cutlass: {config: sm90_grouped_coop_128x256x64_c2x1}
  - cutlass: {config: sm90_grouped_pp_64x128x64_c1x1}
baseline: library.torch_grouped_mm
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
"""
CONTIGUOUS_PROBLEMS, CONTRACTS, CONFIGS = 8, 2, 3


def test_cutlass_grouped_passes_every_group_beside_torch(tmp_path):
    exp = parse_spec(SPEC, "cutlass_grouped_gpu.yaml")
    out = Runner(exp, RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False,
                                 cache_dir=tmp_path / "cache")).run()
    assert_complete(out)
    mine = [r for r in out.rows if r.implementation.startswith("cutlass.")]
    ran = [r for r in mine if r.status is not Status.SKIP]
    assert len(ran) == CONFIGS * CONTRACTS * CONTIGUOUS_PROBLEMS, len(ran)
    bad = [f"{r.implementation} {r.problem} {r.contract}: {r.status.value} {r.reason}" for r in ran
           if r.status is not Status.PASS]
    assert not bad, "\n".join(bad)
    skipped = [r for r in mine if r.status is Status.SKIP]
    assert skipped and all("masked" in r.problem and "contiguous layout only" in r.reason for r in skipped), [
        (r.implementation, r.problem, r.reason) for r in skipped]
    torch_rows = [r for r in out.rows if r.implementation == "library.torch_grouped_mm"]
    assert all(r.status in (Status.PASS, Status.SKIP) for r in torch_rows), [
        (r.problem, r.contract, r.status.value, r.reason) for r in torch_rows if r.status is not Status.PASS]
    for r in ran:
        pct = f"{r.pct_of_baseline:6.1f}% of torch" if r.pct_of_baseline else ""
        print(f"{r.implementation:<90} {r.problem:<44} {r.contract:<24} {(r.median_ms or 0) * 1e3:9.2f} us {pct}")

