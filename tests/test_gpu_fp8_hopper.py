"""hopper.fp8, the hand-written FP8 step of the Hopper ladder, on the GPU (issue 26). Runs on the device machine.

1. Through the harness: e4m3 and e5m2, tensor, row/column and block scales, bf16 and f32 out, strict and
   _fastacc contracts, at 1024^3, 4096^3 and an awkward 1000x1000x1000 (K % 16 != 0: TMA's 16-byte rows come
   from timed copies under tight storage; ragged tiles, a partial last scale block), beside
   library.cublaslt_fp8; the default tile, the 128x192 tile and the overlapped promotion (these two take no
   block scales: SKIPs that say why). Every other hopper.fp8 row must PASS (it promotes, so it is a strict kernel). Prints
   each row's TFLOP/s and % of cuBLASLt.
2. Judged directly on the fp8_accumulation fixture (f32 out, 256x256x16384, built to expose a ~14-bit
   accumulator): the promoting kernel PASSes the strict contract well inside its bound.
"""

from __future__ import annotations

import pytest

from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.implementations.registry import PARAMETRIZED, instantiate
from gemmcompare.problems import GemmProblem
from gemmcompare.runner import parent
from gemmcompare.runner.inputs import make_draw
from gemmcompare.spec import parse_spec

pytestmark = pytest.mark.gpu

SPEC = """\
name: fp8_hopper_gpu
problems: [{m: 1024, n: 1024, k: 1024}, {m: 4096, n: 4096, k: 4096}, {m: 1000, n: 1000, k: 1000}]
contracts: [e4m3_bf16out_f32acc_tn_tensor, e4m3_bf16out_f32acc_tn_tensor_fastacc, e5m2_f32out_f32acc_tn_tensor,
            e4m3_bf16out_f32acc_tn_rowcol, e4m3_f32out_f32acc_tn_block]
implementations:
  - library.cublaslt_fp8
  - hopper.fp8
  - hopper.fp8: {overlap: 1}
  - hopper.fp8: {block: [128, 192, 128], stages: 5}
baseline: library.cublaslt_fp8
correctness: {fixtures: [uniform]}
timing: {row_timeout_s: 60}
"""


def test_hopper_fp8_rows_pass_through_the_harness(tmp_path):
    runner = parent.Runner(parse_spec(SPEC, "fp8_hopper.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False))  # the default build cache: judge() reuses it
    out = runner.run()
    for r in out.rows:
        print(f"{r.implementation[:70]:<70} {r.contract:<40} {r.problem:<16} {r.status.value:<5} "
              f"{(r.tflops or 0):7.1f} TFLOP/s {(r.pct_of_baseline or 0):6.1f}% {r.reason or ''}")
    assert out.status == "complete"
    rows = [r for r in out.rows if r.implementation.startswith("hopper.fp8")]
    skipped = [r for r in rows if ("128x192" in r.implementation or "overlap=1" in r.implementation)
               and r.contract.endswith("_block")]
    ran = [r for r in rows if r not in skipped]
    assert len(ran) == 3 * 3 * 5 - 6 and all(r.status.value == "PASS" for r in ran), \
        [(r.implementation, r.problem, r.contract, r.status.value, r.reason) for r in ran if r.status.value != "PASS"]
    assert len(skipped) == 6 and all(r.status.value == "SKIP" for r in skipped)


def _built(impl):
    from gemmcompare.build.extension import BuildFailure, build_extensions, plan_extensions

    plan = plan_extensions([impl.build_request("sm_90a")])[0]
    ext = build_extensions([plan], progress=False)[plan.module_name]
    if isinstance(ext, BuildFailure):
        pytest.fail(f"{impl.name} did not build: {ext.message}")
    return ext


def test_promotion_passes_strict_on_the_exposing_fixture():
    import torch

    impl = instantiate(PARAMETRIZED["hopper.fp8"], {})
    contract = BUILTIN_CONTRACTS["e4m3_f32out_f32acc_tn_tensor"]
    p = GemmProblem(256, 256, 16384)
    draw = make_draw("fp8_accumulation", p, contract, 1, "cuda")
    prepared = impl.prepare(p, contract, draw.operands, _built(impl))
    prepared.poison()
    prepared.launch()
    torch.cuda.synchronize()
    assert draw.intact()
    check = corr.check_output(prepared.output(), draw.refs, contract, corr.CorrectnessSettings(), p.k,
                              "fp8_accumulation", 1)
    print(f"{impl.name} {p.label} fp8_accumulation: {'PASS' if check.passed else 'FAIL'} "
          f"worst |C-R|/bound={check.worst_bound_ratio:.3g} max rel err={check.max_rel_err:.3g}; {check.message}")
    assert check.passed and check.worst_bound_ratio < 0.5, check.message
