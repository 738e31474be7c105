"""A CPU emulation of what Hopper's FP8 tensor cores do to a GEMM's sums, for the tests of the FP8 error bound
(tests/test_fp8_bound.py). Test-only: the library judges kernels against FP64 references and never emulates
one; this is what the bound (contracts/correctness.py, accumulation_unit_roundoff) was derived and is tested
against.

The model, per output element:
  - every product of two FP8 values is exact (e4m3 x e4m3 has at most 8 significant bits);
  - the wgmma instruction takes k in steps of MMA_K = 32: the accumulator and the step's 32 products are
    aligned to the largest of their exponents and each is truncated toward zero to FRACTION_BITS = 13 bits
    below that leading bit (an e8m13 accumulator, ~14 significant bits: DeepSeek-V3's report, section 3.3.2;
    Khattak and Mikaitis, "Accurate models of NVIDIA tensor cores", arXiv 2512.07004), then summed exactly;
  - a promoting kernel (CUTLASS's MainloopSm90TmaGmmaWarpSpecializedFP8, mma_promotion_interval 4 = 128 of k;
    cuBLASLt without fast accumulation; DeepGEMM) starts a fresh accumulator every `promote_every` of k and
    adds it into an FP32 register sum; a fast-accumulation kernel never does (promote_every=None);
  - the epilogue multiplies the FP32 sum by fl32(alpha * scale_a * scale_b) and rounds to the output dtype
    (block scales: each interval's sum times its two block scales, into the FP32 sum, as DeepGEMM does).
Sums are in the quantized (FP8) domain, as the kernel's are.

Checked against the H200 (experiments/studies/fp8/h200/gpu-tests-bdb73fd): at 1024^3, uniform, seed
1428195294, bf16 out, with the GPU's scales (gpu_scales below) the promoting model writes C = -0.1015625 at
(775, 844), the element cuBLASLt and CUTLASS both wrote, and puts 347 elements outside the old strict bound
(the GPU: 355, same worst element). (The GPU's scales there were amax * fl32(1/448), torch's CUDA division by a
Python scalar; quantize.py now divides by a tensor, correctly rounded on both devices: tests/test_fp8_bound.py
rebuilds that draw.) Truncating only the step's sum (not each aligned term) gives -0.0952 there
and 6 elements: the per-term alignment is what the hardware does.

emulate() takes whole outputs or a sub-block of rows and columns (`rows`, `cols`); it works on chunks of 64
rows, a (64, n, 33) FP64 temporary each.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch

from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import PrecisionContract, Scaling
from gemmcompare.contracts.quantize import BLOCK, dequantize, quantize
from gemmcompare.dtypes import DTYPE_INFO

MMA_K = 32  # the k of one FP8 wgmma
FRACTION_BITS = 13  # bits the tensor core keeps below the leading bit of a step's largest term
PROMOTE_EVERY = 128  # CUTLASS's mma_promotion_interval (4) x MMA_K


def aligned_sum(terms: torch.Tensor, fraction_bits: int = FRACTION_BITS) -> torch.Tensor:
    """The sum over the last dimension after aligning every term to the largest one's exponent and truncating
    each toward zero to `fraction_bits` bits below that leading bit. FP64 in and out, exact otherwise."""
    largest = terms.abs().amax(-1, keepdim=True)
    _, exp = torch.frexp(largest)  # largest in [2^(exp-1), 2^exp)
    unit = torch.where(largest > 0, torch.ldexp(torch.ones_like(largest), exp - 1 - fraction_bits),
                       torch.ones_like(largest))
    return (torch.trunc(terms / unit) * unit).sum(-1)


def emulate(operands, contract: PrecisionContract, promote_every: int | None = PROMOTE_EVERY,
            rows=None, cols=None, fraction_bits: int = FRACTION_BITS, chunk: int = 64) -> torch.Tensor:
    """The output (FP64 holding values of the contract's output dtype) an FP8 tensor-core GEMM writes for the
    operands of a draw (run.inputs.make_draw on the CPU), for rows x cols of it (all by default).
    promote_every: k per promotion to FP32 (a multiple of MMA_K), or None for fast accumulation."""
    if promote_every is not None and promote_every % MMA_K:
        raise ValueError(f"promote_every must be a multiple of {MMA_K}, got {promote_every}")
    scaling = contract.scaling
    if scaling is Scaling.BLOCK and (promote_every is None or BLOCK % promote_every):
        raise ValueError(f"block scales need promotion every {BLOCK} of k or a divisor of it")
    m, n = operands.a.shape[0], operands.b.shape[1]
    rows = torch.arange(m) if rows is None else torch.as_tensor(rows)
    cols = torch.arange(n) if cols is None else torch.as_tensor(cols)
    qa, qb = operands.a.double()[rows], operands.b.double()[:, cols]
    sa, sb = operands.scale_a.double(), operands.scale_b.double()
    if scaling is Scaling.BLOCK:  # (rows, k blocks) and (k blocks, cols)
        block_a = sa[rows]
        block_b = sb.repeat_interleave(BLOCK, dim=1)[:, :n][:, cols]
        epilogue = torch.full((1, 1), float(contract.alpha), dtype=torch.float64)
    else:
        scale_a = sa[rows] if sa.shape[0] > 1 else sa  # (rows or 1, 1)
        scale_b = sb[:, cols] if sb.shape[1] > 1 else sb  # (1, cols or 1)
        epilogue = _f32(_f32(contract.alpha * scale_a) * scale_b)
    k = qa.shape[1]
    out = torch.empty(len(rows), len(cols), dtype=torch.float64)
    for r0 in range(0, len(rows), chunk):
        a = qa[r0:r0 + chunk]
        total = torch.zeros(a.shape[0], len(cols), dtype=torch.float64)
        acc = torch.zeros_like(total)
        for k0 in range(0, k, MMA_K):
            k1 = min(k0 + MMA_K, k)
            products = a[:, None, k0:k1] * qb[k0:k1, :].T[None, :, :]  # exact in FP64
            acc = aligned_sum(torch.cat([acc[..., None], products], dim=-1), fraction_bits)
            if promote_every is not None and (k1 % promote_every == 0 or k1 == k):
                if scaling is Scaling.BLOCK:
                    blk = k0 // BLOCK
                    acc = _f32(_f32(block_a[r0:r0 + chunk, blk:blk + 1] * block_b[blk:blk + 1, :]) * acc)
                total = _f32(total + acc)
                acc = torch.zeros_like(acc)
        out[r0:r0 + chunk] = _f32(total + acc)
    return _f32(epilogue * out).to(DTYPE_INFO[contract.c].torch_dtype).double()


def _f32(x: torch.Tensor) -> torch.Tensor:
    """x rounded to FP32 (to nearest even), kept in FP64."""
    return x.float().double()


def sampled_draw(fixture: str, m: int, n: int, k: int, contract: PrecisionContract, seed: int, rows, cols):
    """(operands, refs): a draw as run.inputs.make_draw makes it on the CPU (the whole A and B drawn and
    quantized: the scales see all of them), with the references of the rows x cols sub-block only (an FP64
    reference of a whole 4096^3 problem takes minutes on two cores). `operands` has a, b, scale_a, scale_b."""
    originals = corr.make_inputs(fixture, m, n, k, contract, seed, "cpu")
    ops, values = {}, {}
    for which, dtype in (("a", contract.a), ("b", contract.b)):
        q, scale = quantize(originals[which], dtype, contract.scaling, which)
        ops[which], ops[f"scale_{which}"] = q, scale
        values[which] = dequantize(q, scale, contract.scaling, which)
    rows, cols = torch.as_tensor(rows), torch.as_tensor(cols)
    sub = {"a": values["a"][rows], "b": values["b"][:, cols]}
    refs = corr.compute_references({"a": originals["a"][rows], "b": originals["b"][:, cols]}, sub, contract)
    return SimpleNamespace(**ops), refs
