"""The correctness contract on the CPU: references, the tolerance rule, fixtures."""

import math

import torch

from gemmcompare.contracts.correctness import (
    CorrectnessSettings, References, check_output, compute_references, make_inputs, round_to,
)
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS

F16 = BUILTIN_CONTRACTS["f16_f32acc_tn"]
F32 = BUILTIN_CONTRACTS["f32_strict_tt"]
S = CorrectnessSettings()


def refs_for(a32, b32, contract):
    originals = {"a": a32, "b": b32}
    rounded = {"a": round_to(a32, contract.a), "b": round_to(b32, contract.b)}
    return rounded, compute_references(originals, rounded, contract)


def test_seed000_cancellation_passes_against_rounded_reference():
    # A=[1.0001, 1], B=[1, -1]: FP16 rounds 1.0001 to 1, so the rounded-input product is exactly 0.
    a = torch.tensor([[1.0001, 1.0]])
    b = torch.tensor([[1.0], [-1.0]])
    rounded, refs = refs_for(a, b, F16)
    c = (rounded["a"].float() @ rounded["b"].float())  # what a correct FP16-input kernel computes
    res = check_output(c, refs, F16, S, k=2, fixture="uniform")
    assert res.passed
    assert res.max_abs_err == 0.0
    assert math.isclose(res.max_rel_err_orig, 1.0, rel_tol=1e-6)  # 100% against the original inputs


def test_zero_writing_kernel_fails():
    inp = make_inputs("uniform", 33, 17, 40, F16, seed=1, device="cpu")
    rounded, refs = refs_for(inp["a"], inp["b"], F16)
    res = check_output(torch.zeros(33, 17), refs, F16, S, k=40, fixture="uniform")
    assert not res.passed and "outside the bound" in res.message


def test_unwritten_output_nan_poison_fails():
    inp = make_inputs("uniform", 16, 16, 16, F32, seed=2, device="cpu")
    rounded, refs = refs_for(inp["a"], inp["b"], F32)
    c = rounded["a"].double() @ rounded["b"].double()
    c = c.float()
    c[:, -1] = float("nan")  # skipped the last column
    res = check_output(c, refs, F32, S, k=16, fixture="uniform")
    assert not res.passed and res.nonfinite == 16 and "non-finite" in res.message


def test_correct_fp32_result_passes_and_small_perturbation_fails():
    inp = make_inputs("normal", 64, 48, 300, F32, seed=3, device="cpu")
    rounded, refs = refs_for(inp["a"], inp["b"], F32)
    c = rounded["a"] @ rounded["b"]  # FP32 accumulation
    assert check_output(c, refs, F32, S, k=300, fixture="normal").passed
    bad = c.clone()
    bad[5, 7] += 1e-2 * max(1.0, abs(float(bad[5, 7])))
    assert not check_output(bad, refs, F32, S, k=300, fixture="normal").passed


def test_exact_integers_require_bit_exact():
    inp = make_inputs("exact_integers", 16, 8, 16, F16, seed=4, device="cpu")
    rounded, refs = refs_for(inp["a"], inp["b"], F16)
    exact = (rounded["a"].double() @ rounded["b"].double()).float()
    assert check_output(exact, refs, F16, S, k=16, fixture="exact_integers").message == "bit-exact"
    off = exact.clone()
    off[0, 0] += 2 ** -10
    assert not check_output(off, refs, F16, S, k=16, fixture="exact_integers").passed


def test_fp16_accumulation_is_caught_by_fp32_contract():
    # Simulate an FP16 accumulator: round the running sum to FP16 after every step.
    m, n, k = 8, 8, 2048
    inp = make_inputs("uniform", m, n, k, F16, seed=5, device="cpu")
    rounded, refs = refs_for(inp["a"], inp["b"], F16)
    acc = torch.zeros(m, n, dtype=torch.float16)
    a, b = rounded["a"].float(), rounded["b"].float()
    for kk in range(k):
        acc = (acc.float() + a[:, kk:kk + 1] * b[kk:kk + 1, :]).half()
    res = check_output(acc.float(), refs, F16, S, k=k, fixture="uniform")
    assert not res.passed and res.worst_bound_ratio > 1


def test_adversarial_overflows_fp16_partial_sums_but_fits_output():
    inp = make_inputs("adversarial", 64, 64, 256, F16, seed=6, device="cpu")
    rounded, refs = refs_for(inp["a"], inp["b"], F16)
    a = rounded["a"].double()
    assert float(a.abs().max()) >= 100
    partial = (a[:, :128] @ rounded["b"].double()[:128]).abs().max()
    assert partial > 65504  # an FP16 accumulator would overflow
    assert torch.isfinite(refs.rounded).all()
    good = (rounded["a"].float() @ rounded["b"].float())
    assert check_output(good, refs, F16, S, k=256, fixture="adversarial").passed


def test_bit_exact_to_fp16_output():
    c16 = BUILTIN_CONTRACTS["f16_f16out_f32acc_tn"]
    inp = make_inputs("exact_integers", 8, 8, 64, c16, seed=7, device="cpu")
    rounded, refs = refs_for(inp["a"], inp["b"], c16)
    out = (rounded["a"].float() @ rounded["b"].float()).half()
    assert check_output(out, refs, c16, S, k=64, fixture="exact_integers").passed


def test_fresh_seeds_differ():
    a = make_inputs("uniform", 4, 4, 4, F16, seed=1, device="cpu")["a"]
    b = make_inputs("uniform", 4, 4, 4, F16, seed=2, device="cpu")["a"]
    assert not torch.equal(a, b)


def _tf32(t):
    bits = t.view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)  # round to nearest TF32


def test_low_bits_catches_tf32_under_a_strict_contract_at_large_k():
    # on uniform data the sqrt(K)-scaled bound lets TF32 through at large K; low_bits does not
    k = 16384
    inp = make_inputs("low_bits", 32, 16, k, F32, seed=8, device="cpu")
    rounded, refs = refs_for(inp["a"], inp["b"], F32)
    assert check_output(rounded["a"] @ rounded["b"], refs, F32, S, k=k, fixture="low_bits").passed
    res = check_output(_tf32(rounded["a"]) @ _tf32(rounded["b"]), refs, F32, S, k=k, fixture="low_bits")
    assert not res.passed and res.worst_bound_ratio > 10
    tf = BUILTIN_CONTRACTS["f32_tf32_tt"]  # and TF32 is fine where the contract allows it
    rounded, refs = refs_for(inp["a"], inp["b"], tf)
    assert check_output(_tf32(rounded["a"]) @ _tf32(rounded["b"]), refs, tf, S, k=k, fixture="low_bits").passed


def test_exact_integers_with_fractional_alpha_falls_back_to_the_bound():
    import dataclasses

    c = dataclasses.replace(F16, name="scaled", alpha=0.1, beta=0.3)
    inp = make_inputs("exact_integers", 16, 16, 32, c, seed=9, device="cpu")
    assert torch.equal(inp["c0"], inp["c0"].round())  # C0 drawn from integers too
    rounded = {"a": round_to(inp["a"], c.a), "b": round_to(inp["b"], c.b), "c0": round_to(inp["c0"], c.c)}
    refs = compute_references(inp, rounded, c)
    out = (0.1 * (rounded["a"].float() @ rounded["b"].float()) + 0.3 * rounded["c0"].float())
    assert check_output(out, refs, c, S, k=32, fixture="exact_integers").passed


def test_adversarial_fits_an_fp16_accumulator_when_the_contract_has_one():
    c = BUILTIN_CONTRACTS["f16_f16acc_tn"]
    inp = make_inputs("adversarial", 64, 64, 256, c, seed=10, device="cpu")
    a = round_to(inp["a"], c.a).double()
    partial = (a[:, :128] @ round_to(inp["b"], c.b).double()[:128]).abs().max()
    assert partial < 65504
