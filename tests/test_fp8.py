"""FP8 contracts on the CPU: dtypes, contracts and their validation, quantization with scales against an
independent NumPy rounding, the references, and the fp8_accumulation fixture against simulated accumulators."""

from __future__ import annotations

import math
import re
import textwrap

import numpy as np
import pytest
import torch

from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Order, PrecisionContract, Scaling
from gemmcompare.contracts.quantize import dequantize, quantize, saturate_cast, scale_shape
from gemmcompare.dtypes import DTYPE_INFO, DType
from gemmcompare.implementations import FIXED
from gemmcompare.paths import EXTENSIONS_DIR
from gemmcompare.problems import GemmProblem
from gemmcompare.runner.inputs import make_draw

E4M3_TN = BUILTIN_CONTRACTS["e4m3_f32out_f32acc_tn_tensor"]


# -- an independent FP8 rounding in NumPy (ml_dtypes is not installed) ----------------------------------

def fp8_grid(exp_bits: int, man_bits: int, fmax: float) -> np.ndarray:
    """Every non-negative finite value of an FP8 format (IEEE-like, bias 2^(e-1)-1), up to fmax."""
    bias = 2 ** (exp_bits - 1) - 1
    vals = {0.0}
    for m in range(1, 2**man_bits):  # subnormals
        vals.add(m / 2**man_bits * 2.0 ** (1 - bias))
    for e in range(1 - bias, bias + 2):
        for m in range(2**man_bits):
            v = (1 + m / 2**man_bits) * 2.0**e
            if v <= fmax:
                vals.add(v)
    return np.array(sorted(vals))


GRIDS = {DType.E4M3: fp8_grid(4, 3, 448.0), DType.E5M2: fp8_grid(5, 2, 57344.0)}


def np_round_fp8(x: np.ndarray, dtype: DType) -> np.ndarray:
    """Round to nearest (ties to the even significand) with saturation, by searching the value grid."""
    grid = GRIDS[dtype]
    ax = np.minimum(np.abs(x.astype(np.float64)), grid[-1])
    hi = np.clip(np.searchsorted(grid, ax), 1, len(grid) - 1)
    lo = hi - 1
    dlo, dhi = ax - grid[lo], grid[hi] - ax
    pick = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))  # even code on ties
    return np.sign(x) * grid[pick]


def np_quantize(x: np.ndarray, dtype: DType, scaling: str, which: str):
    """The quantization convention written out in NumPy: groups, amax, scale = amax / max, saturating round."""
    fmax = GRIDS[dtype][-1]
    rows, cols = x.shape
    if scaling == "tensor":
        groups = np.zeros_like(x, dtype=int)
    elif scaling == "rowcol":
        groups = np.repeat(np.arange(rows)[:, None], cols, 1) if which == "a" else np.repeat(np.arange(cols)[None, :], rows, 0)
    else:
        r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        groups = r * 10**6 + c // 128 if which == "a" else (r // 128) * 10**6 + c // 128
    scale = np.zeros_like(x, dtype=np.float32)
    for gid in np.unique(groups):
        sel = groups == gid
        amax = np.float32(np.abs(x[sel]).max())
        scale[sel] = np.float32(amax / np.float32(fmax)) if amax > 0 else np.float32(1.0)
    q = np_round_fp8((x.astype(np.float32) / scale).astype(np.float32), dtype)
    return q, scale


# -- dtypes and contracts ------------------------------------------------------------------------------

def test_fp8_dtype_table_and_abi_codes():
    e4, e5 = DTYPE_INFO[DType.E4M3], DTYPE_INFO[DType.E5M2]
    assert (e4.torch_dtype, e4.unit_roundoff, e4.max_finite, e4.itemsize) == (torch.float8_e4m3fn, 2.0**-4, 448.0, 1)
    assert (e5.torch_dtype, e5.unit_roundoff, e5.max_finite, e5.itemsize) == (torch.float8_e5m2, 2.0**-3, 57344.0, 1)
    assert torch.finfo(torch.float8_e4m3fn).max == e4.max_finite and torch.finfo(torch.float8_e5m2).max == e5.max_finite
    header = (EXTENSIONS_DIR / "include" / "gemmcompare" / "gemm_abi.h").read_text()
    codes = dict((name, int(v)) for name, v in re.findall(r"GC_(\w+) = (\d+)", header.split("gc_dtype {")[1].split("}")[0]))
    for dt, info in DTYPE_INFO.items():
        assert codes[dt.name] == info.abi_code, dt


def test_builtin_fp8_contracts():
    c = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block_fastacc"]
    assert (c.a, c.b, c.c, c.acc, c.scaling, c.fast_accum) == (DType.E4M3, DType.E4M3, DType.BF16, DType.F32, Scaling.BLOCK, True)
    assert (c.order_a, c.order_b) == (Order.ROW, Order.COL)
    for out in ("bf16", "f16", "f32"):
        for scaling in ("tensor", "rowcol", "block"):
            for twin in ("", "_fastacc"):
                assert f"e4m3_{out}out_f32acc_tn_{scaling}{twin}" in BUILTIN_CONTRACTS
        assert f"e5m2_{out}out_f32acc_tn_tensor" in BUILTIN_CONTRACTS
    assert "e4m3_bf16out_f32acc_tn_tensor_aligned" in BUILTIN_CONTRACTS
    assert not any(n.startswith("e4m3") and "_tn_" not in n for n in BUILTIN_CONTRACTS)  # K-major only
    d = c.as_dict()
    assert d["scaling"] == "block" and d["fast_accum"] is True
    assert "scaling block, fast accumulation allowed" in c.describe()
    # fast accumulation widens the accumulator's rounding unit to ~14 bits; strict stays FP32's
    assert c.product_unit_roundoff == 2.0**-14 and BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"].product_unit_roundoff == 2.0**-24


def test_non_fp8_contracts_unchanged():
    """Receipts, python/custom declarations and peaks read as_dict() and describe(): unchanged for old contracts."""
    d = BUILTIN_CONTRACTS["f16_f32acc_tn"].as_dict()
    assert list(d) == ["name", "a", "b", "c", "acc", "math", "order_a", "order_b", "order_c", "alpha", "beta",
                       "epilogue", "storage"]
    for name, contract in BUILTIN_CONTRACTS.items():
        if not contract.is_fp8:
            assert "scaling" not in contract.as_dict() and "scaling" not in contract.describe(), name


def test_contract_rules():
    with pytest.raises(ValueError, match="scaling 'tensor' applies to FP8"):
        PrecisionContract("x", DType.F16, DType.F16, DType.F32, DType.F32, scaling=Scaling.TENSOR)
    with pytest.raises(ValueError, match="fast_accum applies to FP8"):
        PrecisionContract("x", DType.BF16, DType.BF16, DType.F32, DType.F32, fast_accum=True)
    with pytest.raises(ValueError, match="needs a scaling"):
        PrecisionContract("x", DType.E4M3, DType.E4M3, DType.BF16, DType.F32)
    with pytest.raises(ValueError, match="write bf16, f16 or f32"):
        PrecisionContract("x", DType.E4M3, DType.E4M3, DType.E4M3, DType.F32, scaling=Scaling.TENSOR)
    with pytest.raises(ValueError, match="both inputs in FP8"):
        PrecisionContract("x", DType.E4M3, DType.F16, DType.F32, DType.F32, scaling=Scaling.TENSOR)
    # a column-major A is a sound FP8 contract: implementations that need K-major operands SKIP it
    nn = PrecisionContract("x", DType.E4M3, DType.E4M3, DType.BF16, DType.F32, order_a=Order.COL, scaling=Scaling.TENSOR)
    assert nn.layout == "nn"


def _validate(tmp_path, contracts_yaml: str, impls: str = "[library.cublas]"):
    from gemmcompare.spec import SpecError, load_spec

    path = tmp_path / "s.yaml"
    path.write_text(f"name: t\nproblems: [{{m: 64, n: 64, k: 256}}]\ncontracts:\n{textwrap.indent(contracts_yaml, '  ')}\n"
                    f"implementations: {impls}\n")
    try:
        return load_spec(path), ""
    except SpecError as e:
        return None, str(e)


def test_spec_fp8_contract_definitions(tmp_path):
    exp, err = _validate(tmp_path, "- e4m3_bf16out_f32acc_tn_rowcol_fastacc\n"
                                   "- {name: mine, a: e4m3, c: bf16, layout: nn}\n"
                                   "- {name: mine2, a: e5m2, c: f32, scaling: block, fast_accum: true}")
    assert exp is not None, err
    mine = {c.name: c for c in exp.contracts}
    assert mine["mine"].scaling is Scaling.TENSOR and not mine["mine"].fast_accum  # FP8 defaults to per tensor
    assert mine["mine2"].scaling is Scaling.BLOCK and mine["mine2"].fast_accum
    _, err = _validate(tmp_path, "- {name: bad, a: f16, c: f32, scaling: block}")
    assert "contracts[0].scaling" in err and "FP8 (e4m3/e5m2) inputs only" in err
    _, err = _validate(tmp_path, "- {name: bad, a: e4m3, c: bf16, scaling: blok}")
    assert "contracts[0].scaling" in err and "block" in err
    _, err = _validate(tmp_path, "- {name: bad, a: e4m3, c: bf16, fast_accum: 3}")
    assert "fast_accum must be true or false" in err
    _, err = _validate(tmp_path, "- {name: bad, a: e4m3, c: e4m3}")
    assert "FP8 contracts write bf16, f16 or f32 outputs" in err


# -- quantization ---------------------------------------------------------------------------------------

def test_numpy_grid_agrees_with_torch_on_representable_values():
    for dt in (DType.E4M3, DType.E5M2):
        grid = GRIDS[dt]
        vals = np.concatenate([grid, -grid])
        t = torch.tensor(vals, dtype=torch.float32).to(DTYPE_INFO[dt].torch_dtype).double().numpy()
        assert np.array_equal(t, vals)
        assert len(grid) == (127 if dt is DType.E4M3 else 124)  # 126 (or 123) positive finite values and 0


def test_saturation():
    x = torch.tensor([500.0, 1e6, -1e6, 448.0, 449.0, -3e38])
    assert saturate_cast(x, DType.E4M3).float().tolist() == [448.0, 448.0, -448.0, 448.0, 448.0, -448.0]
    y = torch.tensor([60000.0, 1e30, -1e30])
    assert saturate_cast(y, DType.E5M2).float().tolist() == [57344.0, 57344.0, -57344.0]


@pytest.mark.parametrize("scaling", ["tensor", "rowcol", "block"])
@pytest.mark.parametrize("dtype", [DType.E4M3, DType.E5M2])
def test_quantize_matches_numpy(scaling, dtype):
    g = torch.Generator().manual_seed(3)
    m, n, k = 37, 131, 300  # k and n not multiples of 128: partial last blocks
    a = torch.randn(m, k, generator=g) * torch.logspace(-3, 2, k)[None, :]  # a wide dynamic range along k
    b = torch.randn(k, n, generator=g) * 7
    a[5, :] = 0.0  # an all-zero row: scale 1, not a division by zero
    for which, x in (("a", a), ("b", b)):
        q, scale = quantize(x, dtype, Scaling(scaling), which)
        assert tuple(scale.shape) == scale_shape(Scaling(scaling), which, m, n, k)
        assert scale.dtype == torch.float32 and q.dtype == DTYPE_INFO[dtype].torch_dtype
        want_q, want_scale = np_quantize(x.numpy(), dtype, scaling, which)
        deq = dequantize(q, scale, Scaling(scaling), which).numpy()
        assert np.array_equal(q.double().numpy(), want_q), (which, scaling)
        assert np.array_equal(deq, want_q * want_scale.astype(np.float64)), (which, scaling)
        # the largest element of every group lands on the format's maximum
        assert float(q.double().abs().max()) == DTYPE_INFO[dtype].max_finite


def test_block_scales_partial_last_block():
    m, n, k = 3, 130, 300  # k blocks: 128, 128, 44; n blocks: 128, 2
    a = torch.full((m, k), 0.5)
    a[1, 290] = 9.0  # in the last, partial block of row 1
    qa, sa = quantize(a, DType.E4M3, Scaling.BLOCK, "a")
    assert sa.shape == (3, 3)
    assert sa[1, 2] == pytest.approx(9.0 / 448) and sa[1, 0] == pytest.approx(0.5 / 448)
    assert sa[0, 2] == pytest.approx(0.5 / 448)
    b = torch.full((k, n), 0.25)
    b[299, 129] = -4.0  # the corner block (k 256..299, n 128..129)
    qb, sb = quantize(b, DType.E4M3, Scaling.BLOCK, "b")
    assert sb.shape == (3, 2)
    assert sb[2, 1] == pytest.approx(4.0 / 448) and sb[2, 0] == pytest.approx(0.25 / 448)
    assert sb[0, 1] == pytest.approx(0.25 / 448)
    assert float(qb[299, 129].float()) == -448.0


def test_references_on_dequantized_values():
    d = make_draw("normal", GemmProblem(40, 50, 300), BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"], 7, "cpu")
    ops = d.operands
    qa, sa = ops.a.double().numpy(), ops.scale_a.double().numpy()
    qb, sb = ops.b.double().numpy(), ops.scale_b.double().numpy()
    deq_a = qa * np.repeat(sa, 128, axis=1)[:, :300]
    deq_b = qb * np.repeat(np.repeat(sb, 128, axis=0), 128, axis=1)[:300, :50]
    assert np.allclose(d.refs.rounded.numpy(), deq_a @ deq_b, rtol=1e-13, atol=1e-13)
    assert np.allclose(d.refs.magnitude.numpy(), np.abs(deq_a) @ np.abs(deq_b), rtol=1e-13)
    assert not np.allclose(d.refs.original.numpy(), d.refs.rounded.numpy(), rtol=1e-3)  # quantization costs
    # the scales are inputs like the others: a write into them is seen
    before = d.fingerprint()
    ops.scale_a[0, 0] *= 2
    assert not d.intact() and not d.unchanged_since(before)
    d.restore()
    assert d.intact()


# -- the error bound and the fixture that exposes a ~14-bit accumulator ----------------------------------

def _round_bits(x: np.ndarray, bits: int) -> np.ndarray:
    mant, exp = np.frexp(x)
    return np.ldexp(np.round(mant * 2.0**bits) / 2.0**bits, exp)


def simulate(draw, accumulator: str, promote_every: int | None = None, scaling: Scaling = Scaling.TENSOR) -> np.ndarray:
    """Each output's sum over k in order, in an FP32 accumulator or one keeping 14 significand bits (rounded
    after every add); `promote_every` sums blocks of k in a fresh accumulator added into FP32 (a strict kernel)."""
    ops = draw.operands
    a = dequantize(ops.a, ops.scale_a, scaling, "a").numpy()
    b = dequantize(ops.b, ops.scale_b, scaling, "b").numpy()
    m, k = a.shape
    total = np.zeros((m, b.shape[1]), np.float64)
    acc = np.zeros_like(total)
    for kk in range(k):
        p = np.outer(a[:, kk], b[kk, :]).astype(np.float32).astype(np.float64)
        acc = acc + p
        acc = acc.astype(np.float32).astype(np.float64) if accumulator == "f32" else _round_bits(acc, 14)
        if promote_every and (kk + 1) % promote_every == 0:
            total = (total + acc).astype(np.float32).astype(np.float64)
            acc = np.zeros_like(acc)
    return (total + acc).astype(np.float32)


# how far outside the strict bound a 14-bit accumulator lands: the fixture sits at the geometric mean of the
# strict and fast bounds, which lie about K/128 apart (the strict one allows 14 bits inside each interval)
@pytest.mark.parametrize("k,ratio", [(1024, 1.5), (16384, 8)])
def test_fp8_accumulation_fixture_exposes_a_14_bit_accumulator(k, ratio):
    strict, fast = E4M3_TN, BUILTIN_CONTRACTS["e4m3_f32out_f32acc_tn_tensor_fastacc"]
    settings = corr.CorrectnessSettings()
    p = GemmProblem(4, 6, k)
    draw = make_draw("fp8_accumulation", p, strict, 11, "cpu")
    assert make_draw("fp8_accumulation", p, fast, 11, "cpu").operands.a.equal(draw.operands.a)

    def judge(c, contract):
        return corr.check_output(torch.from_numpy(c), draw.refs, contract, settings, k, "fp8_accumulation")

    fast_acc = simulate(draw, "14bit")
    verdict = judge(fast_acc, strict)
    assert not verdict.passed and verdict.worst_bound_ratio > ratio, verdict.message
    assert "outside the bound" in verdict.message
    ok = judge(fast_acc, fast)
    assert ok.passed and ok.worst_bound_ratio < 0.5, ok.message
    for c in (simulate(draw, "f32"), simulate(draw, "14bit", promote_every=128)):
        ok = judge(c, strict)
        assert ok.passed and ok.worst_bound_ratio < 0.1, ok.message


def test_fp8_accumulation_on_uniform_data_is_within_the_strict_bound():
    """The fast bound is not needed on ordinary data at short K: random-sign errors cancel."""
    draw = make_draw("uniform", GemmProblem(4, 6, 512), E4M3_TN, 5, "cpu")
    c = simulate(draw, "f32")
    assert corr.check_output(torch.from_numpy(c), draw.refs, E4M3_TN, corr.CorrectnessSettings(), 512, "uniform").passed


def test_fp8_accumulation_product_sits_between_the_bounds():
    for k in (256, 1024, 4096, 16384):
        for out in (DType.F32, DType.BF16):
            loss = (k - 128) * corr.fp8_accumulation_product(k, out)
            rtol, lk = corr.TOLERANCES[out].rtol, math.sqrt(k)
            assert loss < rtol + 4 * 2.0**-14 * lk
            strict = rtol + 4 * corr.accumulation_unit_roundoff(E4M3_TN, k) * lk
            if k < 1024:  # two intervals: the strict bound allows nearly what the fast one does, honestly
                assert loss < strict, (k, out)
            elif out is DType.F32 or k >= 8192:  # below, a bf16 output rounds away more than the loss
                assert loss > (1.5 if k < 4096 else 1.9) * strict, (k, out)


# -- which rows run FP8 contracts ---------------------------------------------------------------------------

def test_library_rows_and_fp8_contracts():
    from gemmcompare.implementations import FIXED

    p = GemmProblem(4096, 4096, 4096)
    fp8_row, cublas, mm = FIXED["library.cublaslt_fp8"](), FIXED["library.cublas"](), FIXED["library.torch_matmul"]()
    for name in ("e4m3_bf16out_f32acc_tn_tensor", "e4m3_f32out_f32acc_tn_tensor_fastacc", "e4m3_bf16out_f32acc_tn_rowcol"):
        assert fp8_row.supports(p, BUILTIN_CONTRACTS[name]), name
    for row in (cublas, mm):
        s = row.supports(p, E4M3_TN)
        assert not s and "library.cublaslt_fp8" in s.reason
    s = fp8_row.supports(p, BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"])
    assert not s and "FP8 contracts only" in s.reason
    nn = PrecisionContract("x", DType.E4M3, DType.E4M3, DType.BF16, DType.F32, order_a=Order.COL, scaling=Scaling.TENSOR)
    s = fp8_row.supports(p, nn)
    assert not s and "K-major" in s.reason and "nn" in s.reason
    s = fp8_row.supports(p, BUILTIN_CONTRACTS["e4m3_f32out_f32acc_tn_rowcol"])
    assert not s and "bf16 only" in s.reason
    s = fp8_row.supports(p, BUILTIN_CONTRACTS["e5m2_bf16out_f32acc_tn_tensor"])
    assert not s and "e5m2 x e5m2" in s.reason
    s = fp8_row.supports(GemmProblem(4096, 4096, 4100), E4M3_TN)
    assert not s and "multiples of 16" in s.reason


def test_validate_fp8_spec_with_every_family(tmp_path):
    """Every family meets FP8 contracts with a SKIP and a reason, no traceback."""
    from gemmcompare.spec import load_spec

    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent("""\
        name: t
        problems: [{m: 256, n: 256, k: 512}]
        contracts: [e4m3_bf16out_f32acc_tn_tensor, e4m3_bf16out_f32acc_tn_block]
        implementations:
          - library.cublas
          - library.torch_matmul
          - library.cublaslt_fp8
          - library.triton_matmul
          - library.torch_compile
          - mma_sync
          - lab.wmma_staged
          - hopper.best
          - cutlass: {config: sm90_coop_128x256x64_c2x1}
        """))
    exp = load_spec(path)
    p = exp.problems[0].problem
    for contract in exp.contracts:
        for impl in exp.implementations_under(contract):
            s = impl.supports(p, contract)
            if impl.name == "library.cublaslt_fp8":
                assert s, s
            else:
                assert not s and s.reason, impl.name


# -- list and analyze -----------------------------------------------------------------------------------

def test_list_contracts_shows_fp8(capsys):
    from gemmcompare.cli import main

    assert main(["list", "--contracts"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("e4m3_bf16out_f32acc_tn_rowcol_fastacc:"))
    assert "A e4m3" in line and "scaling rowcol" in line and "fast accumulation allowed" in line


def test_fp8_peaks_and_analyze(tmp_path, capsys):
    import csv

    from gemmcompare.cli import main
    from gemmcompare.peaks import compute_class, peak_for

    assert compute_class(E4M3_TN) == "fp8_tensor" and compute_class(BUILTIN_CONTRACTS["f16_f32acc_tn"]) == "f16_tensor"
    assert peak_for("NVIDIA H200", E4M3_TN)[0] == 1979.0 and peak_for("NVIDIA H100 80GB HBM3", E4M3_TN)[0] == 1979.0
    assert peak_for("NVIDIA A100-SXM4-80GB", E4M3_TN) is None
    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nproblems: [{m: 4096, n: 4096, k: 4096}]\n"
                    "contracts: [e4m3_bf16out_f32acc_tn_tensor, bf16_bf16out_f32acc_tn]\n"
                    "implementations: [library.cublaslt_fp8, library.cublas]\n")
    out = tmp_path / "h200"
    assert main(["analyze", str(spec), "--device", "h200", "--out", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    rows = {(r["contract"], r["implementation"]): r for r in csv.DictReader(open(out / "rows.csv"))}
    fp8 = rows[("e4m3_bf16out_f32acc_tn_tensor", "library.cublaslt_fp8")]
    assert fp8["status"] == "PREDICTED"
    assert float(fp8["predicted_ms"]) == pytest.approx(2 * 4096**3 / 1979e12 * 1e3 + 0.004)
    assert rows[("bf16_bf16out_f32acc_tn", "library.cublaslt_fp8")]["status"] == "SKIP"
    out = tmp_path / "l4"
    assert main(["analyze", str(spec), "--device", "l4", "--out", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    rows = {(r["contract"], r["implementation"]): r for r in csv.DictReader(open(out / "rows.csv"))}
    assert "no FP8 peak for NVIDIA L4" in rows[("e4m3_bf16out_f32acc_tn_tensor", "library.cublaslt_fp8")]["reason"]


def test_block_scales_skip_fast_accumulation_and_pad_the_k_blocks_cublaslt_wants():
    """Seen on the H200 (torch 2.11): cuBLASLt refuses fast accumulation with 128x128 block scales (a SKIP that says
    so), and block scales over a K whose number of 128-blocks is not a multiple of 4 unless B's are padded: such K
    (4224: 33 blocks) is run, with the scales padded (block_scale_b_forms)."""
    impl = FIXED["library.cublaslt_fp8"]()
    if not impl.supports(GemmProblem(512, 640, 4608), BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"]):
        pytest.skip("the installed torch has no blockwise scaled_mm")
    fast = impl.supports(GemmProblem(512, 640, 4608), BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block_fastacc"])
    assert not fast and "fast accumulation with 128x128 block scales" in fast.reason
    assert impl.supports(GemmProblem(512, 640, 4224), BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"])
    assert impl.supports(GemmProblem(512, 640, 4224), BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_tensor"])


def test_b_block_scales_are_padded_to_a_multiple_of_four_k_blocks_in_both_forms_torch_has_checked():
    from gemmcompare.implementations.library_fp8 import block_scale_b_forms, first_accepted

    sb = torch.arange(33 * 5, dtype=torch.float32).reshape(33, 5)  # K = 4224: 33 k blocks; N = 640: 5 blocks
    full, view = block_scale_b_forms(sb)
    # torch 2.11's shape (36 x 5), outer-dim-major (strides (1, 36)); later releases' [33, 5] view of it
    assert full.shape == (36, 5) and full.stride() == (1, 36) and torch.equal(full[:33], sb)
    assert torch.equal(full[33:], torch.ones(3, 5))  # k blocks past K: never read into a product
    assert view.shape == (33, 5) and view.stride() == (1, 36) and view.data_ptr() == full.data_ptr()
    (only,) = block_scale_b_forms(sb[:32])  # 32 blocks need no padding: one form, as before (strides (1, 32))
    assert only.shape == (32, 5) and only.stride() == (1, 32) and torch.equal(only, sb[:32])
    tried = []

    def call(form):  # a torch that takes only the [kb, nb] view
        tried.append(tuple(form.shape))
        if form.shape[0] != 33:
            raise RuntimeError("scale_b must have shape 33 x 5")

    assert first_accepted([full, view], call) is view and tried == [(36, 5), (33, 5)]
    with pytest.raises(RuntimeError, match="must have shape"):  # neither taken: torch's own refusal, not a guess
        first_accepted([full, full], call)
    tried.clear()
    assert first_accepted([only], call) is only and not tried  # one form: nothing to choose, no launch
