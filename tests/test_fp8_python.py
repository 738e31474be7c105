"""library.triton_fp8 and library.torch_compile_fp8 on the CPU: which contracts they are planned under and the
reasons of their SKIPs, and the plumbing of their prepared objects (scales, output dtype, fast accumulation)
with Triton's launch and torch.compile replaced by stand-ins: neither is called here (no GPU)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from unittest import mock

import pytest
import torch

from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Order, PrecisionContract, Scaling
from gemmcompare.dtypes import DType
from gemmcompare.implementations import FIXED, PARAMETRIZED, instantiate
from gemmcompare.problems import GemmProblem
from gemmcompare.runner.inputs import make_draw

TRITON, COMPILE = "library.triton_fp8", "library.torch_compile_fp8"
P = GemmProblem(4096, 4096, 4096)


def make(name):
    """The row as a spec names it plainly (library.triton_fp8 is a family since its configuration list: issue 43)."""
    return FIXED[name]() if name in FIXED else instantiate(PARAMETRIZED[name], {})


def support(name, contract, problem=P):
    return make(name).supports(problem, BUILTIN_CONTRACTS[contract] if isinstance(contract, str) else contract)


@pytest.mark.parametrize("name", [TRITON, COMPILE])
@pytest.mark.parametrize("contract", ["e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_tensor_fastacc",
                                      "e4m3_f16out_f32acc_tn_tensor", "e4m3_f32out_f32acc_tn_tensor_fastacc",
                                      "e4m3_bf16out_f32acc_tn_rowcol", "e4m3_bf16out_f32acc_tn_rowcol_fastacc"])
def test_planned_under_per_tensor_and_rowcol_fp8_contracts(name, contract):
    s = support(name, contract)
    assert s, s.reason


@pytest.mark.parametrize("name, contract, words", [
    (TRITON, "bf16_bf16out_f32acc_tn", "FP8 contracts only (e4m3/e5m2 inputs with scales); library.triton_matmul runs"),
    (COMPILE, "f16_f32acc_tn", "FP8 contracts only (e4m3/e5m2 inputs with scales); library.torch_compile runs"),
    (TRITON, "e4m3_bf16out_f32acc_tn_block", "block scales (1x128 A, 128x128 B)"),
    (COMPILE, "e4m3_bf16out_f32acc_tn_block_fastacc", "block scales: this row compiles torch._scaled_mm"),
    (TRITON, "e5m2_bf16out_f32acc_tn_tensor", "e4m3 only"),
    (COMPILE, "e5m2_bf16out_f32acc_tn_tensor", "no e5m2 x e5m2"),
    (COMPILE, "e4m3_f32out_f32acc_tn_rowcol", "row-wise scaling writes bf16 only, not f32"),
])
def test_skips_say_why(name, contract, words):
    s = support(name, contract)
    assert not s and words in s.reason, (name, contract, s.reason if not s else "planned")


def test_rowcol_with_any_output_in_triton_only():
    """The Triton kernel applies row/column scales in its own epilogue; torch._scaled_mm's row-wise path is bf16 out."""
    assert support(TRITON, "e4m3_f32out_f32acc_tn_rowcol") and support(TRITON, "e4m3_f16out_f32acc_tn_rowcol_fastacc")
    assert not support(COMPILE, "e4m3_f16out_f32acc_tn_rowcol")


@pytest.mark.parametrize("name", [TRITON, COMPILE])
def test_layouts_other_than_tn_and_batches_skip(name):
    nn = PrecisionContract("x", DType.E4M3, DType.E4M3, DType.BF16, DType.F32, order_a=Order.COL, scaling=Scaling.TENSOR)
    s = support(name, nn)
    assert not s and "K-major" in s.reason and "nn" in s.reason
    s = support(name, "e4m3_bf16out_f32acc_tn_tensor", GemmProblem(256, 256, 256, batch=2))
    assert not s and "batched" in s.reason


def test_shape_rules():
    # torch._scaled_mm's k and n multiples of 16; the Triton kernel masks its K tail and takes any k and n
    s = support(COMPILE, "e4m3_bf16out_f32acc_tn_tensor", GemmProblem(4096, 4096, 4100))
    assert not s and "multiples of 16" in s.reason
    assert support(TRITON, "e4m3_bf16out_f32acc_tn_tensor", GemmProblem(611, 613, 617))
    s = support(TRITON, "e4m3_bf16out_f32acc_tn_tensor", GemmProblem(65536, 65536, 64))
    assert not s and "32-bit index type" in s.reason


def test_the_bf16_rows_point_at_their_fp8_twins():
    assert "library.triton_fp8" in support("library.triton_matmul", "e4m3_bf16out_f32acc_tn_tensor").reason
    assert "library.torch_compile_fp8" in support("library.torch_compile", "e4m3_bf16out_f32acc_tn_tensor").reason


def test_a_spec_plans_them_under_fp8_contracts_only(tmp_path):
    from gemmcompare.spec import load_spec

    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent("""\
        name: t
        problems: [{m: 1024, n: 1024, k: 1024}]
        contracts: [e4m3_bf16out_f32acc_tn_tensor, e4m3_bf16out_f32acc_tn_tensor_fastacc, bf16_bf16out_f32acc_tn]
        implementations: [library.cublaslt_fp8, library.triton_fp8, library.torch_compile_fp8, library.triton_matmul]
        baseline: library.cublaslt_fp8
        """))
    exp = load_spec(path)
    p = exp.problems[0].problem
    runs = {(impl.name, c.name) for c in exp.contracts for impl in exp.implementations_under(c) if impl.supports(p, c)}
    fp8 = {TRITON, COMPILE, "library.cublaslt_fp8"}
    assert runs == {(n, c) for n in fp8 for c in ("e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_tensor_fastacc")} \
        | {("library.triton_matmul", "bf16_bf16out_f32acc_tn")}


def test_fp8_spec_names_them():
    from gemmcompare.spec import load_spec

    names = [impl.name for impl in load_spec(Path(__file__).resolve().parents[1] / "experiments" / "fp8.yaml").implementations]
    assert TRITON in names and COMPILE in names


# -- the prepared objects, with stand-ins for Triton's launch and torch.compile ------------------------

def _draw(contract, shape=(48, 40, 96)):
    return make_draw("uniform", GemmProblem(*shape), BUILTIN_CONTRACTS[contract], 3, "cpu")


class _FakeKernels:
    """triton_fp8_kernels' launch, computed with torch on the CPU; records what it was handed."""
    CONFIGS = [None] * 8

    def __init__(self):
        self.calls = []
        self.fp8_matmul_autotuned = mock.Mock(best_config="BLOCK_M=128")

    def launch(self, a, b, c, scale_a, scale_b, alpha, rowcol, fast_accum):
        self.calls.append(dict(a=a, b=b, scale_a=scale_a, scale_b=scale_b, rowcol=rowcol, fast_accum=fast_accum))
        c.copy_((alpha * (a.double() @ b.double()) * (scale_a.double() * scale_b.double())).to(c.dtype))

    @staticmethod
    def describe(config):
        return str(config)


@pytest.mark.parametrize("contract", ["e4m3_f32out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_rowcol_fastacc"])
def test_triton_prepared_hands_the_kernel_the_scale_tensors_and_the_contracts_accumulation(contract):
    from gemmcompare.implementations import python_fp8

    c = BUILTIN_CONTRACTS[contract]
    draw = _draw(contract)
    fake = _FakeKernels()
    with mock.patch.dict("sys.modules", {"gemmcompare.implementations.triton_fp8_kernels": fake}):
        prepared = make(TRITON).prepare(GemmProblem(48, 40, 96), c, draw.operands, None)
    call = fake.calls[-1]
    assert call["scale_a"] is draw.operands.scale_a and call["scale_b"] is draw.operands.scale_b  # no host copy
    assert call["rowcol"] is (c.scaling is Scaling.ROWCOL) and call["fast_accum"] is c.fast_accum
    assert call["a"].stride() == (96, 1) and call["b"].stride() == (1, 96)  # tn: A row-major, B K-contiguous
    assert prepared.output().dtype is (torch.float32 if c.c is DType.F32 else torch.bfloat16)
    prepared.poison()
    prepared.launch()
    check = corr.check_output(prepared.output(), draw.refs, c, corr.CorrectnessSettings(), 96, "uniform", 3)
    assert check.passed, check.message
    assert ("promoted to FP32 every BLOCK_K" in prepared.notes) is not c.fast_accum
    assert "CANARY" not in prepared.notes

    class Canary(python_fp8.TritonFp8):
        def use_fast_accum(self, contract):
            return True

    with mock.patch.dict("sys.modules", {"gemmcompare.implementations.triton_fp8_kernels": fake}):
        canary = Canary().prepare(GemmProblem(48, 40, 96), c, draw.operands, None)
    assert fake.calls[-1]["fast_accum"] is True
    assert ("CANARY" in canary.notes) is not c.fast_accum


@pytest.mark.parametrize("contract", ["e4m3_f32out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_rowcol_fastacc"])
def test_compiled_prepared_calls_scaled_mm_with_the_contracts_scales_dtype_and_fast_accum(contract):
    """torch.compile replaced by the function itself and torch._scaled_mm by its definition in FP32 (the CPU's
    own _scaled_mm takes per-tensor scales only before torch 2.14): what is compiled, with which arguments, and
    a canary compiled apart from the honest row."""
    from gemmcompare.implementations import python_fp8

    c = BUILTIN_CONTRACTS[contract]
    draw = _draw(contract)
    calls = []

    def scaled_mm(a, b, *, scale_a, scale_b, out_dtype, use_fast_accum, **kw):
        calls.append(dict(kw, scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype, use_fast_accum=use_fast_accum))
        return ((a.float() * scale_a) @ (b.float() * scale_b)).to(out_dtype)

    class Canary(python_fp8.TorchCompileFp8):
        def use_fast_accum(self, contract):
            return not contract.fast_accum

    p = GemmProblem(48, 40, 96)
    with mock.patch.object(torch, "compile", lambda fn, **kw: fn), mock.patch.object(torch, "_scaled_mm", scaled_mm):
        prepared = FIXED[COMPILE]().prepare(p, c, draw.operands, None)
        assert calls[-1]["use_fast_accum"] is c.fast_accum and calls[-1]["out_dtype"] is prepared.output().dtype
        assert calls[-1]["scale_a"] is draw.operands.scale_a and calls[-1]["scale_b"] is draw.operands.scale_b
        canary = Canary().prepare(p, c, draw.operands, None)
        assert calls[-1]["use_fast_accum"] is not c.fast_accum  # its own compiled function, not the row's
    assert prepared.output().dtype is (torch.float32 if c.c is DType.F32 else torch.bfloat16)
    assert f"use_fast_accum={c.fast_accum}" in prepared.timing_fields["compiled"] and "CANARY" not in prepared.notes
    assert f"use_fast_accum={not c.fast_accum}" in canary.timing_fields["compiled"] and "CANARY" in canary.notes
    check = corr.check_output(prepared.output(), draw.refs, c, corr.CorrectnessSettings(), 96, "uniform", 3)
    assert check.passed, check.message
