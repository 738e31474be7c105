"""The fp8_scales fixture on the CPU: every row/column, block, batched matrix and group gets scales of its own, so
that a kernel that applies a scale other than its own FAILs (under uniform data every block's scale is about
1/448 and such a kernel passed: tests/test_gpu_grouped_fp8_own.py's planted group-0-scales kernel did on an H100),
while an honest kernel PASSes; and the runner adds the fixture where a scale can be borrowed."""

import pytest
import torch

from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Scaling
from gemmcompare.contracts.quantize import dequantize
from gemmcompare.grouped import GroupedProblem
from gemmcompare.problems import GemmProblem
from gemmcompare.runner.inputs import make_draw

BLOCK = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"]
ROWCOL = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_rowcol"]
TENSOR = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_tensor"]
SETTINGS = corr.CorrectnessSettings()


def _product(a, sa, b, sb, scaling):
    """An FP8 GEMM's output with the given scales: the dequantized product in FP64, rounded to BF16."""
    return (dequantize(a, sa, scaling, "a") @ dequantize(b, sb, scaling, "b")).to(torch.bfloat16)


def _judge(c, draw, p, contract, fixture):
    return corr.check_output(c, draw.refs, contract, SETTINGS, p.k, fixture, draw.seed)


def test_values_stay_in_minus_one_to_one_and_every_block_has_a_magnitude_of_its_own():
    g = corr.make_inputs("fp8_scales", 256, 384, 512, BLOCK, 3, "cpu")
    a, b = g["a"], g["b"]
    assert a.abs().max() < 1 and b.abs().max() < 1
    amax_b = b.abs().reshape(4, 128, 3, 128).amax(dim=(1, 3))  # B's 128x128 blocks
    assert amax_b.max() / amax_b.min() > 4  # scales differ by powers of two, not by sampling noise
    assert len({round(v, 3) for v in amax_b.flatten().tolist()}) > 3
    amax_rows = a.abs().amax(dim=1)
    assert amax_rows.max() / amax_rows.min() > 4  # row scales differ too (rowcol)
    again = corr.make_inputs("fp8_scales", 256, 384, 512, BLOCK, 3, "cpu")
    assert again["a"].equal(a) and again["b"].equal(b)  # reproducible from the seed


@pytest.mark.parametrize("contract, borrow, hidden_by_uniform", [
    (BLOCK, lambda sa, sb: (sa, sb[:1, :1].expand_as(sb)), True),     # block (0, 0)'s scale_b everywhere
    (BLOCK, lambda sa, sb: (sa[:, :1].expand_as(sa), sb), False),     # k block 0's scale_a for every k block
    (ROWCOL, lambda sa, sb: (sa, sb[:, :1].expand_as(sb)), True),     # column 0's scale for every column
    (ROWCOL, lambda sa, sb: (sa[:1].expand_as(sa), sb), True),        # row 0's scale for every row
])
def test_a_dense_kernel_that_borrows_a_scale_fails_fp8_scales(contract, borrow, hidden_by_uniform):
    """hidden_by_uniform: under uniform data the borrowed scale is within a part in a thousand of the right one
    (amax over 16384 or 512 uniform values), and the kernel passed. (An A block holds 128 values: their amax
    varies by a few percent, which uniform data already catches.)"""
    p = GemmProblem(64, 384, 512)
    for fixture in ("uniform", "fp8_scales"):
        d = make_draw(fixture, p, contract, 9, "cpu")
        ops = d.operands
        assert _judge(_product(ops.a, ops.scale_a, ops.b, ops.scale_b, contract.scaling), d, p, contract,
                      fixture).passed
        sa, sb = borrow(ops.scale_a, ops.scale_b)
        verdict = _judge(_product(ops.a, sa, ops.b, sb, contract.scaling), d, p, contract, fixture)
        if fixture == "fp8_scales":
            assert not verdict.passed and "outside the bound" in verdict.message
        elif hidden_by_uniform:
            assert verdict.passed, verdict.message


def _grouped_product(draw, p, scale_b_of):
    """C of a grouped FP8 block problem, group g computed with scale_b_of(g)'s block scales."""
    ops = draw.operands
    out = torch.zeros(p.m, p.n, dtype=torch.bfloat16)
    for g in range(p.groups):
        lo, hi = p.offsets[g], p.offsets[g + 1]
        if hi > lo:
            out[lo:hi] = _product(ops.a[lo:hi], ops.scale_a[lo:hi], ops.b[g], ops.scale_b[scale_b_of(g)],
                                  Scaling.BLOCK)
    return out


def test_a_grouped_kernel_that_reads_group_0s_scales_fails_fp8_scales():
    p = GroupedProblem(256, 512, (64, 0, 5, 130, 12))
    d = make_draw("fp8_scales", p, BLOCK, 4, "cpu")
    assert _judge(_grouped_product(d, p, lambda g: g), d, p, BLOCK, "fp8_scales").passed
    verdict = _judge(_grouped_product(d, p, lambda g: 0), d, p, BLOCK, "fp8_scales")
    assert not verdict.passed and "group" in verdict.message
    u = make_draw("uniform", p, BLOCK, 4, "cpu")  # what the GPU test saw: uniform data hides it
    assert _judge(_grouped_product(u, p, lambda g: 0), u, p, BLOCK, "uniform").passed


def test_the_runner_adds_fp8_scales_where_a_scale_can_be_borrowed():
    dense, batched = GemmProblem(64, 64, 64), GemmProblem(64, 64, 64, batch=3)
    grouped = GroupedProblem(64, 64, (3, 0, 5))
    given = ("uniform",)
    assert corr.fixtures_to_check(given, TENSOR, dense) == ("uniform", "fp8_accumulation")
    for contract, p in ((TENSOR, batched), (TENSOR, grouped), (ROWCOL, dense), (BLOCK, dense), (BLOCK, grouped)):
        assert corr.fixtures_to_check(given, contract, p) == ("uniform", "fp8_accumulation", "fp8_scales")
    assert corr.fixtures_to_check(("fp8_scales",), BLOCK, dense) == ("fp8_scales", "fp8_accumulation")
    assert corr.fixtures_to_check(given, BUILTIN_CONTRACTS["f32_strict_nn"], dense) == ("uniform", "low_bits")
    assert corr.fixtures_to_check(given, BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"], grouped) == ("uniform",)


@pytest.mark.parametrize("name, promote_every", [
    ("e4m3_bf16out_f32acc_tn_block", 128), ("e4m3_bf16out_f32acc_tn_block_fastacc", 128),
    ("e4m3_bf16out_f32acc_tn_rowcol", 128), ("e4m3_bf16out_f32acc_tn_rowcol_fastacc", None),
    ("e4m3_f32out_f32acc_tn_tensor", 128), ("e4m3_f32out_f32acc_tn_tensor_fastacc", None),
])
def test_honest_tensor_core_kernels_pass_fp8_scales(name, promote_every):
    """The emulated Hopper FP8 tensor core (tests/fp8_emulation.py: ~14-bit accumulation, promotion every 128 of
    K where the kernel promotes) is within the bound on the new fixture: its magnitudes (2^-6 to 1 in one row
    or column) widen nothing the bound does not cover."""
    from fp8_emulation import emulate

    contract = BUILTIN_CONTRACTS[name]
    p = GemmProblem(48, 256, 1024)
    d = make_draw("fp8_scales", p, contract, 12, "cpu")
    c = emulate(d.operands, contract, promote_every)
    verdict = _judge(c, d, p, contract, "fp8_scales")
    assert verdict.passed and verdict.worst_bound_ratio < 0.5, verdict.message
