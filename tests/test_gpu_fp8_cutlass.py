"""CUTLASS SM90 FP8 configurations (kernel template sm90_fp8) on the GPU, under the FP8 contracts (issue 26).

1. Through the harness (parent.Runner, as `gemmcompare run`): a promoting entry and a fast-accumulation entry,
   e4m3 per-tensor scales, bf16 out, strict and _fastacc contracts, 1024^3 and 4096^3, beside
   library.cublaslt_fp8. Every row that runs must PASS (uniform and fp8_accumulation fixtures); the fast entry
   under the strict contract is a SKIP that says why.
2. The accumulation mapping, judged directly (as tests/test_gpu_fp8.py judges cuBLASLt): on the
   fp8_accumulation fixture with an f32 output, the promoting kernel PASSes the strict contract and the
   fast-accumulation kernel, prepared under the strict contract against its own ContractSupport (a canary:
   the planner never does this), FAILs it, and PASSes the _fastacc contract.
3. Block scales (scaling block, CUTLASS's FP8BlockScaledAccum mainloop): through the harness, the blockwise
   entry under e4m3_bf16out_f32acc_tn_block and _block_fastacc at 1024^3, 4096^3 and two awkward shapes
   (tails along m, n and k, a partial last scale block, k not a multiple of 16 or of 4 blocks), on the normal
   and adversarial fixtures, whose block scales differ from block to block (a wrong scale mapping FAILs
   them: tests/test_cutlass_fp8.py shows it on the CPU), and fp8_accumulation; every row must PASS. Judged
   directly, with f32 out, it PASSes the strict block contract on the fp8_accumulation fixture (promotion
   every 128 of K, scaled).
"""

from __future__ import annotations

import pytest

from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.cutlass.catalog import lookup
from gemmcompare.implementations.cutlass import CutlassKernel
from gemmcompare.problems import GemmProblem
from gemmcompare.runner import parent
from gemmcompare.runner.inputs import make_draw
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

PROMOTE, FAST = "sm90_fp8_coop_128x128x128_c1x1", "sm90_fp8_coop_128x256x128_c1x1_fastacc"
STRICT, FASTACC = "e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_tensor_fastacc"

SPEC = f"""\
name: fp8_cutlass_gpu
problems: [{{m: 1024, n: 1024, k: 1024}}, {{m: 4096, n: 4096, k: 4096}}]
contracts: [{STRICT}, {FASTACC}]
implementations:
  - library.cublaslt_fp8
  - cutlass: {{config: {PROMOTE}}}
  - cutlass: {{config: {FAST}}}
baseline: library.cublaslt_fp8
correctness: {{fixtures: [uniform]}}
timing: {{row_timeout_s: 60}}
"""


def test_fp8_cutlass_rows_pass_their_contracts_through_the_harness(tmp_path):
    runner = parent.Runner(parse_spec(SPEC, "fp8_cutlass.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False))  # the default build cache: judge() reuses it
    out = runner.run()
    rows = [r for r in out.rows if r.implementation.startswith("cutlass.")]
    for r in out.rows:
        print(f"{r.implementation[:90]:<90} {r.contract:<40} {r.problem:<16} {r.status.value:<5} "
              f"{(r.tflops or 0):7.1f} TFLOP/s {r.reason or ''}")
    assert_complete(out)
    promote = [r for r in rows if "_promote_" in r.implementation]
    fast = [r for r in rows if "_fastacc_" in r.implementation]
    assert len(promote) == 4 and all(r.status.value == "PASS" for r in promote), [(r.contract, r.reason) for r in promote]
    ran = [r for r in fast if r.contract == FASTACC]
    assert len(ran) == 2 and all(r.status.value == "PASS" for r in ran), [(r.problem, r.reason) for r in ran]
    skipped = [r for r in fast if r.contract == STRICT]
    assert skipped and all(r.status.value == "SKIP" and "fast accumulation" in r.reason for r in skipped)


def _built(impl):
    from gemmcompare.build.extension import BuildFailure, build_extensions, plan_extensions

    plan = plan_extensions([impl.build_request("sm_90a")])[0]
    ext = build_extensions([plan], progress=False)[plan.module_name]
    if isinstance(ext, BuildFailure):
        pytest.fail(f"{impl.name} did not build: {ext.message}")
    return ext


def judge(name, contract_name, shape=(256, 256, 16384), fixture="fp8_accumulation", seed=1, out="f32"):
    import torch

    entry = lookup(name)
    impl = CutlassKernel(entry.resolve({"out": out}), entry.name)
    contract = BUILTIN_CONTRACTS[contract_name]
    p = GemmProblem(*shape)
    draw = make_draw(fixture, p, contract, seed, "cuda")
    prepared = impl.prepare(p, contract, draw.operands, _built(impl))
    prepared.poison()
    prepared.launch()
    torch.cuda.synchronize()
    assert draw.intact()
    check = corr.check_output(prepared.output(), draw.refs, contract, corr.CorrectnessSettings(), p.k, fixture, seed)
    print(f"{impl.name} {p.label} {contract_name} {fixture}: {'PASS' if check.passed else 'FAIL'} "
          f"worst |C-R|/bound={check.worst_bound_ratio:.3g} max rel err={check.max_rel_err:.3g}; {check.message}")
    return check, impl.supports(p, contract)


def test_promotion_passes_strict_and_fast_accumulation_fails_it_on_the_exposing_fixture():
    strict, fast = "e4m3_f32out_f32acc_tn_tensor", "e4m3_f32out_f32acc_tn_tensor_fastacc"
    honest, ok = judge(PROMOTE, strict)
    assert ok and honest.passed and honest.worst_bound_ratio < 0.5, honest.message
    canary, planned = judge(FAST, strict)  # what the planner refuses: the fast kernel under the strict contract
    assert not planned
    assert not canary.passed and canary.worst_bound_ratio > 2, (
        f"the fast-accumulation kernel passed the strict bound: {canary.message}")
    allowed, ok = judge(FAST, fast)
    assert ok and allowed.passed, allowed.message


BLOCKWISE = "sm90_fp8_blockwise_coop_128x128x128_c1x1"
BLOCK, BLOCK_FASTACC = "e4m3_bf16out_f32acc_tn_block", "e4m3_bf16out_f32acc_tn_block_fastacc"

BLOCK_SPEC = f"""\
name: fp8_cutlass_blockwise_gpu
problems:
  - {{m: 1024, n: 1024, k: 1024}}
  - {{m: 4096, n: 4096, k: 4096}}
  - {{m: 1000, n: 1000, k: 1000}}   # m, n and k tails; k padded to 1008 (TMA's 16-byte rows), 8 scale blocks
  - {{m: 77, n: 1000, k: 4224}}     # a skinny m; 33 blocks of k (cuBLASLt: a SKIP, M is not a multiple of 4)
contracts: [{BLOCK}, {BLOCK_FASTACC}]
implementations:
  - library.cublaslt_fp8
  - cutlass: {{config: {BLOCKWISE}}}
baseline: library.cublaslt_fp8
correctness: {{fixtures: [uniform, normal, adversarial]}}   # + fp8_accumulation (every FP8 contract)
timing: {{row_timeout_s: 60}}
"""


def test_the_blockwise_entry_passes_block_contracts_through_the_harness(tmp_path):
    runner = parent.Runner(parse_spec(BLOCK_SPEC, "fp8_cutlass_blockwise.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False))
    out = runner.run()
    for r in out.rows:
        print(f"{r.implementation[:90]:<90} {r.contract:<40} {r.problem:<16} {r.status.value:<5} "
              f"{(r.tflops or 0):7.1f} TFLOP/s {r.reason or ''}")
    assert_complete(out)
    rows = [r for r in out.rows if r.implementation.startswith("cutlass.")]
    assert len(rows) == 8 and all("_blockwise_promote_" in r.implementation for r in rows)
    assert all(r.status.value == "PASS" for r in rows), [(r.contract, r.problem, r.reason) for r in rows]


def test_blockwise_promotion_passes_strict_on_the_exposing_fixture():
    check, ok = judge(BLOCKWISE, "e4m3_f32out_f32acc_tn_block")
    assert ok and check.passed and check.worst_bound_ratio < 0.5, check.message
