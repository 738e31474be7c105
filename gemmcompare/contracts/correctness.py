"""The correctness contract: fixtures, the two FP64 references, and the element-wise pass rule.

Inputs are drawn in FP32 (the "original" precision) and rounded to the contract's input dtype. Two
references, both accumulated in FP64 on the inputs' device:
  (1) rounded-input reference R  = alpha * A_r @ B_r (+ beta * C0) [+ bias, relu]  -- judges the kernel;
  (2) original-input reference R2 = the same on the unrounded FP32 inputs          -- reported only:
      it shows what input quantization costs.

Pass rule, for every element (every element is checked; any non-finite output fails):

    |C - R| <= atol + rtol * |R| + c * u * L(K) * (|alpha| * (|A_r| @ |B_r|) + |beta| * |C0|)

u is the unit roundoff of the accumulator (TF32's when the math mode lets the multiply round FP32
operands to TF32), L(K) = sqrt(K) (default: errors of a long sum grow like a random walk) or K (the
worst-case bound), c = 4 by default. atol and rtol come from TOLERANCES, keyed by the output dtype:
they cover the final rounding of C to its storage type. On the exact_integers fixture (with integer
alpha and beta) the result must match the rounded-input reference rounded to C's dtype bit for bit. The
low_bits fixture, added to every strict-FP32 contract, makes TF32 operand rounding systematic, so that a
kernel that uses TF32 under a strict contract fails at any K (random-sign errors of uniform data grow
like sqrt(K), slower than the bound's |A|.|B| term).

FP8 contracts: A and B are quantized with their scales (quantize.py); "rounded" above means dequantized
(each FP8 value times its scale), so R and |A_r| @ |B_r| are FP64 on exactly the values the kernel is given.
u is 2^-14 where the contract allows fast accumulation (precision.FAST_ACCUM_UNIT_ROUNDOFF: Hopper's FP8
accumulator keeps about 14 bits) and, under a strict contract, 2^-24 + 2^-14 * min(K, 128) / K: the kernel
still accumulates with ~14 bits inside each promotion interval of 128 (accumulation_unit_roundoff says
why). The fp8_accumulation fixture, added to every FP8 contract, exposes a kernel that never promotes under
a strict contract; exact_integers is not judged bit for bit under FP8 (its dequantization scale amax/448 is
not a power of two).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from ..dtypes import DTYPE_INFO, DType
from ..lazy import torch  # imported on first use: validating a spec needs no torch
from .precision import FAST_ACCUM_UNIT_ROUNDOFF, Epilogue, Math, PrecisionContract, Scaling

FIXTURES = ("uniform", "normal", "exact_integers", "adversarial", "low_bits", "fp8_accumulation", "fp8_scales")

# Added to every strict-FP32 contract's fixtures by the runner: a kernel that rounds FP32 operands to TF32
# (or anything coarser) cannot pass it, at any K.
STRICT_F32_FIXTURE = "low_bits"
# Added to every FP8 contract's fixtures: a ~14-bit (fast) accumulator fails it under a strict contract.
FP8_FIXTURE = "fp8_accumulation"
# Added to FP8 contracts where a kernel could read a scale that is not its own (row/column and block scales, and
# every batched or grouped problem: a scale per matrix or group): each scale's values get their own magnitude.
FP8_SCALES_FIXTURE = "fp8_scales"


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


# Keyed by the output dtype: rtol is twice the output's unit roundoff (the final rounding of C, with a
# margin of one more rounding), atol covers results that land in the output's subnormal range.
TOLERANCES: dict[DType, Tolerance] = {
    DType.F64: Tolerance(atol=1e-12, rtol=2 * 2.0**-53),
    DType.F32: Tolerance(atol=1e-6, rtol=2 * 2.0**-24),
    DType.F16: Tolerance(atol=1e-5, rtol=2 * 2.0**-11),
    DType.BF16: Tolerance(atol=1e-5, rtol=2 * 2.0**-8),
}


@dataclass(frozen=True)
class CorrectnessSettings:
    fixtures: tuple[str, ...] = ("uniform",)
    seed: int | None = None  # None: a fresh seed every run (recorded with the row)
    c: float = 4.0
    length_factor: str = "sqrt"  # 'sqrt' or 'linear'
    check_timed_output: bool = True

    def length(self, k: int) -> float:
        return math.sqrt(k) if self.length_factor == "sqrt" else float(k)


def tolerance_formula() -> str:
    return "|C - R| <= atol + rtol*|R| + c * u_acc * L(K) * (|alpha|*(|A|.|B|) + |beta|*|C0|)"


# The k a strict FP8 kernel sums on the tensor core before promoting to FP32: CUTLASS's mma_promotion_interval
# (4 wgmma k-steps of 32), DeepSeek-V3's and DeepGEMM's interval; Triton's strict rows promote every BLOCK_K <= 128.
PROMOTION_K = 128


def promotion_unit_roundoff(k: int) -> float:
    """What a strict FP8 contract's u_acc adds to FP32's at this K: the tensor core's ~14 bits, over the share of
    |A|.|B| one promotion interval holds (accumulation_unit_roundoff says why)."""
    return FAST_ACCUM_UNIT_ROUNDOFF * min(k, PROMOTION_K) / max(k, 1)


def accumulation_unit_roundoff(contract: PrecisionContract, k: int) -> float:
    """u_acc of the bound: the contract's product_unit_roundoff, and under a strict FP8 contract what the
    tensor core's accumulation inside each promotion interval adds to it.

    A strict FP8 kernel (CUTLASS's promoting mainloop, cuBLASLt without fast accumulation, DeepGEMM) still
    accumulates on the tensor core with ~14 significant bits (e8m13, truncated), but only for PROMOTION_K of
    k at a time: then the partial sum is added into an FP32 register and a fresh one starts. So the 14-bit
    errors are relative to partial sums of one interval, which the interval's share of |A|.|B| bounds, not
    to the running sum over all of K, which a fast-accumulating kernel's are relative to (and |A|.|B| bounds).
    The fast bound's term c * 2^-14 * L(K) * |A|.|B| therefore becomes c * 2^-14 * L(K) * |A|.|B| *
    min(K, 128) / K, on top of the FP32 adds' c * 2^-24 * L(K) * |A|.|B|. Measured (H200, bdb73fd): at 1024^3
    (uniform, bf16 out) cuBLASLt and CUTLASS's promoting kernel both wrote |C-R| = 0.0061 at an element whose
    FP32 bound was 0.00264 (|A|.|B| = 246): FP32 alone does not describe them; here the bound there is 0.24.
    The fp8_accumulation fixture's fast-accumulation loss (0.0039 of |R| at K = 16384, f32 out) stays 14x
    outside the strict bound (2.7e-4) and 8x inside the fast one (0.031). tests/test_fp8_bound.py checks
    both against an emulation of the tensor core (tests/fp8_emulation.py)."""
    u = contract.product_unit_roundoff
    if contract.is_fp8 and not contract.fast_accum:
        u += promotion_unit_roundoff(k)
    return u


def describe_tolerance(settings: CorrectnessSettings, contract: PrecisionContract, k: int) -> dict[str, Any]:
    """Everything needed to recompute a verdict by hand; stored with each row and printed in reports."""
    tol = TOLERANCES[contract.c]
    u = accumulation_unit_roundoff(contract, k)
    lk = settings.length(k)
    lf = f"sqrt({k})" if settings.length_factor == "sqrt" else str(k)
    if u == contract.product_unit_roundoff:
        u_text = f"2^{math.log2(u):.0f}"
    else:  # strict FP8: FP32 adds plus the tensor core's ~14 bits inside each promotion interval
        u_text = (f"(2^{math.log2(contract.product_unit_roundoff):.0f} + 2^{math.log2(FAST_ACCUM_UNIT_ROUNDOFF):.0f}"
                  f" * {min(k, PROMOTION_K)}/{k})")
    return {
        "rule": tolerance_formula(),
        "atol": tol.atol,
        "rtol": tol.rtol,
        "c": settings.c,
        "u_acc": u,
        "length_factor": settings.length_factor,
        "L(K)": lk,
        "length_term": settings.c * u * lk,
        "length_term_text": f"{settings.c:g} * {u_text} * {lf} = {settings.c * u * lk:.3e}",
        "output_dtype": contract.c.value,
        "bit_exact_fixtures": [] if contract.is_fp8 else ["exact_integers"],
    }


# ---------------------------------------------------------------------------------------------------
# Fixtures


def fresh_seed() -> int:
    return int.from_bytes(os.urandom(4), "little") & 0x7FFFFFFF


def batch_seed(seed: int, index: int) -> int:
    """The seed of matrix `index` of a batched draw: `seed` itself for matrix 0 (the 2-D problem's draw), and
    distinct for every index (an odd multiplier is a bijection modulo 2^31), so no two matrices are equal."""
    return (seed + index * 0x9E3779B1) & 0x7FFFFFFF


def fixtures_to_check(fixtures: tuple[str, ...], contract: PrecisionContract, problem) -> tuple[str, ...]:
    """The spec's fixtures and those every row of this contract and problem is judged on besides: low_bits under
    strict FP32 (no silent TF32, at any K), fp8_accumulation under FP8 (no silent fast accumulation under a strict
    contract), and fp8_scales where a kernel could borrow a scale (row/column or block scales, or a scale per
    batched matrix or group)."""
    extra = []
    if contract.a is DType.F32 and contract.math is Math.STRICT:
        extra.append(STRICT_F32_FIXTURE)
    if contract.is_fp8:
        extra.append(FP8_FIXTURE)
        if contract.scaling is not Scaling.TENSOR or problem.is_grouped or problem.batch > 1:
            extra.append(FP8_SCALES_FIXTURE)
    return fixtures + tuple(f for f in extra if f not in fixtures)


def make_inputs(fixture: str, m: int, n: int, k: int, contract: PrecisionContract, seed: int,
                device: torch.device | str) -> dict[str, torch.Tensor]:
    """FP32 originals of A (m x k), B (k x n), and, when the contract needs them, C0 (m x n) and the
    bias (n). Drawn on `device` by a counter-based generator (counter_random.py): the same seed gives the
    same bits on the CPU and on every GPU."""
    from .counter_random import CounterRandom

    g = CounterRandom(seed, device)
    if fixture == "uniform":  # symmetric uniform in [-1, 1)
        a = g.uniform((m, k)) * 2 - 1
        b = g.uniform((k, n)) * 2 - 1
    elif fixture == "normal":
        a = g.normal((m, k))
        b = g.normal((k, n))
    elif fixture == "exact_integers":  # small integers: exact in every input dtype, and every partial
        a = g.integers(-2, 3, (m, k), torch.float32)  # sum stays exact in FP32 (|sum| <= 4K)
        b = g.integers(-2, 3, (k, n), torch.float32)
    elif fixture == "adversarial":
        a, b = _adversarial(m, n, k, contract, g)
    elif fixture == "low_bits":
        a, b = _low_bits(m, n, k, contract, g)
    elif fixture == "fp8_accumulation":
        a, b = fp8_accumulation(m, n, k, contract, g)
    elif fixture == "fp8_scales":
        a, b = fp8_scales(m, n, k, g)
    else:
        raise ValueError(f"unknown fixture {fixture!r}; expected one of {FIXTURES}")
    out = {"a": a, "b": b}
    if contract.beta != 0.0:
        if fixture == "exact_integers":  # keeps beta * C0 exact too
            out["c0"] = g.integers(-2, 3, (m, n), torch.float32)
        else:
            out["c0"] = g.uniform((m, n)) * 2 - 1
    if contract.epilogue is Epilogue.BIAS_RELU:
        out["bias"] = g.uniform((n,)) * 2 - 1
    return out


def _adversarial(m, n, k, contract, g):
    """Edge values: large magnitudes whose partial sums overflow an FP16 accumulator (65504) but cancel
    to a small exact result, subnormals, and the rest uniform.

    The first eighth of A's rows hold +L in the first half of k and -L in the second; the first eighth
    of B's columns hold +L. Those outputs cancel to at most L^2 (odd k), while their partial sums reach
    L^2 * k / 2. L is chosen so that every output still fits the output dtype.
    """
    a = g.uniform((m, k)) * 2 - 1
    b = g.uniform((k, n)) * 2 - 1
    big = 100.0
    if contract.c in (DType.F16,):  # keep |big row . ordinary column| <= L*k below f16's maximum
        big = min(big, 30000.0 / k)
    if contract.acc in (DType.F16,):  # an honest FP16 accumulator must not overflow: partials L^2 k/2
        big = min(big, (60000.0 / k) ** 0.5)
    rows, cols = max(1, m // 8), max(1, n // 8)
    half = k // 2
    a[:rows, :half] = big
    a[:rows, half:] = -big
    b[:, :cols] = big
    # subnormals of f16 (min normal 6.1e-5) sprinkled through the ordinary part
    sub = g.uniform((m, k)) < 0.02
    a[sub & (torch.arange(m, device=a.device)[:, None] >= rows)] = 3.0e-6
    subb = g.uniform((k, n)) < 0.02
    b[subb & (torch.arange(n, device=b.device)[None, :] >= cols)] = -6.0e-8
    return a, b


def _low_bits(m, n, k, contract, g):
    """FP32 operands in [1, 2) whose 13 mantissa bits below TF32's 10 hold 0x0FFF: just under half a TF32
    step, so rounding to TF32 (to nearest or by truncation) lowers every operand, and every product, by
    about 2^-11 relative. All positive, the errors add up instead of cancelling: ~7e-4 of |R| against a
    strict-FP32 bound of 4 * 2^-24 * sqrt(K) of it. For other input dtypes it is plain uniform data."""
    if contract.a is not DType.F32:
        return g.uniform((m, k)) * 2 - 1, g.uniform((k, n)) * 2 - 1

    def pattern(t):
        bits = (t + 1.0).view(torch.int32)
        return ((bits & ~0x1FFF) | 0x0FFF).view(torch.float32)

    return pattern(g.uniform((m, k))), pattern(g.uniform((k, n)))


def fp8_accumulation_product(k: int, out: DType) -> float:
    """The small product 2^-j of the fp8_accumulation fixture at this K and output dtype (see there)."""
    tol = TOLERANCES[out]
    lk = math.sqrt(k)
    # the default bounds (c = 4, sqrt(K)) relative to |R| ~ |A|.|B| ~ 1, strict (accumulation_unit_roundoff)
    strict = tol.rtol + 4 * (2.0**-24 + promotion_unit_roundoff(k)) * lk
    fast = tol.rtol + 4 * FAST_ACCUM_UNIT_ROUNDOFF * lk
    target = math.sqrt(strict * fast)  # the total loss sits between the two bounds, far from both
    j = -math.floor(math.log2(target / max(k - BLOCK_K, 1)))
    return 2.0 ** -min(max(j, 19), 22)


BLOCK_K = 128  # the k-block a promoting kernel sums in a fresh accumulator (DeepSeek-V3's interval, CUTLASS's)


def fp8_accumulation(m, n, k, contract, g):
    """Exposes a ~14-bit accumulator (fast accumulation on Hopper's FP8 tensor cores).

    Every output is one large product followed by K - 128 small ones of the same sign: A's column 0 is
    +-1 (a random sign per row), B's row 0 is 1; the rest of the first k-block of 128 is zero (a kernel that
    promotes partial sums to FP32 every 128 or fewer k sums that block alone); from k = 128 on, every product
    is +-2^-j (A 2^-ceil(j/2), B 2^-floor(j/2): exact in e4m3 and e5m2 after their scales). An accumulator
    that holds the large partial sum keeps ~14 bits of it: each 2^-j, j >= 19, lies below half its last bit
    and is lost, all in one direction, so the error is (K-128) * 2^-j. FP32 keeps every one (j <= 22: two
    units in the last place of 1). j is chosen (fp8_accumulation_product) so that this loss lies between the
    strict and the fast-accumulation bounds, at the geometric mean. With bf16/f16 outputs the output rounding
    (rtol 2^-7 for bf16) exceeds the loss below K ~ 8k: there the verdict is, honestly, PASS for both.
    """
    j = -round(math.log2(fp8_accumulation_product(k, contract.c)))
    sign = g.integers(0, 2, (m, 1), torch.float32) * 2 - 1
    a = torch.zeros(m, k, device=g.device)
    b = torch.zeros(k, n, device=g.device)
    a[:, :1] = sign
    b[0, :] = 1.0
    if k > BLOCK_K:
        a[:, BLOCK_K:] = sign * 2.0 ** -((j + 1) // 2)
        b[BLOCK_K:, :] = 2.0 ** -(j // 2)
    return a, b


SCALE_SPREAD = 4  # fp8_scales: each factor is 2^-e, e drawn from 0..SCALE_SPREAD - 1


def fp8_scales(m, n, k, g):
    """Exposes a kernel that applies a scale other than its own (another row's, column's, block's, group's).

    Uniform values (in [-1, 1)), each times a power of two drawn for its row and 1x128 block of K (A), or its column
    and 128x128 block (B): 2^-(e1 + e2), e1 and e2 each from 0 to SCALE_SPREAD - 1. So every row/column and
    block amax, and with it every row/column and block scale, is its own (scales of neighbours differ by up to
    64x), and so are a batched matrix's or a group's (each matrix draws with its own seed). Under uniform data
    every 128x128 block's amax is about 1 and its scale about 1/448: a kernel that read group 0's block scales
    for every group, or one block's for its neighbours, was right to within a part in ten thousand and passed.
    Values stay within [-1, 1): no output dtype nears its overflow."""
    def factor(shape):  # 2^-e, e in 0..SCALE_SPREAD - 1
        return torch.pow(2.0, -g.integers(0, SCALE_SPREAD, shape, torch.float32))

    kb, nb = -(-k // BLOCK_K), -(-n // BLOCK_K)
    spread_k = lambda t, dim: t.repeat_interleave(BLOCK_K, dim=dim)  # noqa: E731  (one factor per 128 of k)
    a = (g.uniform((m, k)) * 2 - 1) * factor((m, 1)) * spread_k(factor((m, kb)), 1)[:, :k]
    b_block = spread_k(spread_k(factor((kb, nb)), 0), 1)[:k, :n]
    b = (g.uniform((k, n)) * 2 - 1) * factor((1, n)) * b_block
    return a, b


def round_to(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    return t.to(DTYPE_INFO[dtype].torch_dtype)


# ---------------------------------------------------------------------------------------------------
# References


@dataclass
class References:
    """FP64, m x n; batch x m x n for a batched problem (matrix i: the references of its own 2-D draw); laid out
    as C is for a grouped problem (sum(M) x n stacked, or groups x capacity x n masked: padding rows zero)."""

    rounded: torch.Tensor  # from the rounded inputs: judges
    original: torch.Tensor  # from the FP32 originals: reported
    magnitude: torch.Tensor  # |alpha| * (|A_r| @ |B_r|) + |beta| * |C0|
    grouped: Any = None  # the GroupedProblem (grouped.py) whose groups these are; None for a dense problem


def compute_references(originals: dict[str, torch.Tensor], rounded: dict[str, torch.Tensor],
                       contract: PrecisionContract) -> References:
    """Both references, accumulated in FP64 on the inputs' device."""

    def ref(a, b, c0, bias):
        r = contract.alpha * (a.double() @ b.double())
        if c0 is not None and contract.beta != 0.0:
            r += contract.beta * c0.double()
        if contract.epilogue is Epilogue.BIAS_RELU:
            r = torch.relu(r + bias.double()[None, :])
        return r

    bias = originals.get("bias")  # the bias is FP32 on both paths
    # the rounded operands in FP64 once, for the judging reference and the magnitude (an expert's weights are
    # tens of millions of elements, and an MoE fixture converts 256 of them)
    a64, b64 = rounded["a"].double(), rounded["b"].double()
    r1 = ref(a64, b64, rounded.get("c0"), bias)
    r2 = ref(originals["a"], originals["b"], originals.get("c0"), bias)
    mag = abs(contract.alpha) * (a64.abs() @ b64.abs())
    if rounded.get("c0") is not None and contract.beta != 0.0:
        mag += abs(contract.beta) * rounded["c0"].double().abs()
    return References(r1, r2, mag)


# ---------------------------------------------------------------------------------------------------
# The check


@dataclass
class CheckResult:
    fixture: str
    passed: bool
    message: str
    max_abs_err: float
    max_rel_err: float
    max_abs_err_orig: float
    max_rel_err_orig: float
    worst_bound_ratio: float
    bad_elements: int
    nonfinite: int
    seed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def check_output(c: torch.Tensor, refs: References, contract: PrecisionContract, settings: CorrectnessSettings,
                 k: int, fixture: str, seed: int | None = None, row_chunk: int = 2048) -> CheckResult:
    """Judge output C (logical m x n, any strides) against the rounded-input reference, element-wise.
    Batched references (batch x m x n): every matrix of C is judged against its own (check_batched); grouped
    ones every group (check_grouped)."""
    if refs.grouped is not None:
        return check_grouped(c, refs, contract, settings, k, fixture, seed, row_chunk)
    if refs.rounded.dim() == 3:
        return check_batched(c, refs, contract, settings, k, fixture, seed, row_chunk)
    tol = TOLERANCES[contract.c]
    length_term = settings.c * accumulation_unit_roundoff(contract, k) * settings.length(k)
    # bit for bit only where every step is exact: integer inputs (and C0), integer alpha and beta
    bit_exact = (fixture == "exact_integers" and float(contract.alpha).is_integer()
                 and float(contract.beta).is_integer() and not contract.is_fp8)
    m, n = refs.rounded.shape
    if tuple(c.shape) != (m, n):
        return CheckResult(fixture, False, f"output has shape {tuple(c.shape)}, expected {(m, n)}",
                           math.inf, math.inf, math.inf, math.inf, math.inf, m * n, 0, seed)
    max_abs = max_rel = max_abs2 = max_rel2 = worst = 0.0
    bad = nonfinite = 0
    first_bad = first_nonfinite = None
    for r0 in range(0, m, row_chunk):  # chunked: FP64 temporaries of a whole 8192^2 output are 0.5 GB each
        cc = c[r0:r0 + row_chunk].double()
        r1 = refs.rounded[r0:r0 + row_chunk]
        r2 = refs.original[r0:r0 + row_chunk]
        finite = torch.isfinite(cc)
        nf = int((~finite).sum())
        if nf:
            nonfinite += nf
            if first_nonfinite is None:
                i, j = (~finite).nonzero()[0].tolist()
                first_nonfinite = (r0 + i, j, float(cc[i, j]))
        if bit_exact:
            target = round_to(r1, contract.c).double()
            bound = torch.zeros_like(r1)
        else:
            target = r1
            bound = tol.atol + tol.rtol * r1.abs() + length_term * refs.magnitude[r0:r0 + row_chunk]
        diff = (cc - target).abs()
        diff = torch.where(finite, diff, torch.zeros_like(diff))
        over = diff > bound
        nb = int(over.sum())
        if nb:
            bad += nb
            if first_bad is None:
                flat = torch.where(over, diff - bound, torch.full_like(diff, -1.0)).argmax()
                i, j = divmod(int(flat), n)
                first_bad = (r0 + i, j, float(cc[i, j]), float(target[i, j]), float(diff[i, j]), float(bound[i, j]))
        if not bit_exact:
            ratio = diff / bound
            worst = max(worst, float(ratio.max()))
        elif nb:
            worst = math.inf
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, _max_rel(diff, r1))
        d2 = torch.where(finite, (cc - r2).abs(), torch.zeros_like(diff))
        max_abs2 = max(max_abs2, float(d2.max()))
        max_rel2 = max(max_rel2, _max_rel(d2, r2))
    passed = bad == 0 and nonfinite == 0
    if passed:
        message = "bit-exact" if bit_exact else f"within bound (worst |C-R|/bound = {worst:.3g})"
    else:
        parts = []
        if nonfinite:
            i, j, v = first_nonfinite
            parts.append(f"{nonfinite} non-finite outputs of {m * n} (first at ({i},{j}) = {v}): "
                         f"unwritten (NaN poison survived) or overflowed")
        if bad:
            i, j, cv, rv, dv, bv = first_bad
            kind = "not bit-exact" if bit_exact else "outside the bound"
            parts.append(f"{bad} of {m * n} elements {kind}; worst at ({i},{j}): C={cv:.9g}, R={rv:.9g}, "
                         f"|C-R|={dv:.3g}, bound={bv:.3g}")
        message = "; ".join(parts)
    return CheckResult(fixture, passed, message, max_abs, max_rel, max_abs2, max_rel2, worst, bad, nonfinite, seed)


def check_batched(c: torch.Tensor, refs: References, contract: PrecisionContract, settings: CorrectnessSettings,
                  k: int, fixture: str, seed: int | None = None, row_chunk: int = 2048) -> CheckResult:
    """Every matrix of a batched C (batch x m x n) judged by the 2-D rule against its own references; one
    result: the worst errors over the batch, the counts summed, and the failing matrices named (a kernel
    that computes matrix 0 only, writes one matrix into another's place or skips the last one fails)."""
    shape = tuple(refs.rounded.shape)
    batch, m, n = shape
    if tuple(c.shape) != shape:
        return CheckResult(fixture, False, f"output has shape {tuple(c.shape)}, expected {shape}",
                           math.inf, math.inf, math.inf, math.inf, math.inf, batch * m * n, 0, seed)
    results = [check_output(c[i], References(refs.rounded[i], refs.original[i], refs.magnitude[i]), contract,
                            settings, k, fixture, seed, row_chunk) for i in range(batch)]
    failed = [(i, r) for i, r in enumerate(results) if not r.passed]
    if failed:
        named = ", ".join(str(i) for i, _ in failed[:8]) + (f" (+{len(failed) - 8} more)" if len(failed) > 8 else "")
        i, first = failed[0]
        message = f"{len(failed)} of {batch} matrices fail (batch index {named}); matrix {i}: {first.message}"
    else:
        worst = max(r.worst_bound_ratio for r in results)
        message = results[0].message if all(r.message == results[0].message for r in results) else \
            f"within bound (worst |C-R|/bound = {worst:.3g})"
        message = f"all {batch} matrices {message}"
    top = lambda field: max(getattr(r, field) for r in results)  # noqa: E731
    return CheckResult(fixture, not failed, message, top("max_abs_err"), top("max_rel_err"), top("max_abs_err_orig"),
                       top("max_rel_err_orig"), top("worst_bound_ratio"), sum(r.bad_elements for r in results),
                       sum(r.nonfinite for r in results), seed)


def check_grouped(c: torch.Tensor, refs: References, contract: PrecisionContract, settings: CorrectnessSettings,
                  k: int, fixture: str, seed: int | None = None, row_chunk: int = 2048) -> CheckResult:
    """Every group of a grouped C judged by the 2-D rule against its own references: group g's rows (offsets[g]
    .. offsets[g+1] stacked, or its first M_g rows masked). An empty group has no rows to judge but is listed
    as judged; in the masked layout every group's padding rows (all of an empty group's) must still hold the NaN
    poison, so a write there (another group's rows, past a group's count) fails, as does a group left unwritten
    (its poison survives in its rows), a group written with another's product, or its rows computed wrongly.
    One result: the worst errors over the groups, the counts summed, the failing groups named."""
    p = refs.grouped
    shape = tuple(refs.rounded.shape)
    if tuple(c.shape) != shape:
        return CheckResult(fixture, False, f"output has shape {tuple(c.shape)}, expected {shape}",
                           math.inf, math.inf, math.inf, math.inf, math.inf, math.prod(shape), 0, seed)
    passed = _check_grouped_at_once(c, refs, contract, settings, k, fixture, seed, row_chunk)
    if passed is not None:
        return passed
    return _check_group_by_group(c, refs, contract, settings, k, fixture, seed, row_chunk)


def _check_grouped_at_once(c: torch.Tensor, refs: References, contract: PrecisionContract,
                           settings: CorrectnessSettings, k: int, fixture: str, seed: int | None,
                           row_chunk: int) -> CheckResult | None:
    """check_grouped's result when every group passes, from one pass over all groups' rows; None otherwise.
    The rule is element-wise and the same for every group (one K), so all groups pass exactly when their rows,
    judged as one matrix, do; the worst errors over the groups are that matrix's, and the counts its sums. Group by
    group, every group costs its own dozen host round trips (one per reduction read back), up to 256 a layer: the
    MoE study's checks took 29 s of a 145 s part on the H200 (f0b7480), its timing 13 s. A failure is named
    group by group (_check_group_by_group)."""
    p = refs.grouped
    if not any(p.ms):
        return None  # no rows: the group-by-group wording ("no rows to write")
    if p.layout == "masked":
        counts = torch.tensor(p.ms, device=c.device)
        valid = torch.arange(p.capacity, device=c.device)[None, :] < counts[:, None]  # groups x capacity
        if bool((~torch.isnan(c) & ~valid[..., None]).any()):  # a number in some group's padding
            return None
        rows = lambda t: t[valid]  # noqa: E731  (groups x capacity x n -> the valid rows, stacked)
    else:
        rows = lambda t: t  # noqa: E731
    whole = check_output(rows(c), References(rows(refs.rounded), rows(refs.original), rows(refs.magnitude)),
                         contract, settings, k, fixture, seed, row_chunk)
    if not whole.passed:
        return None
    empty = sum(1 for m in p.ms if not m)
    judged = f"all {p.groups} groups" + (f" ({empty} empty)" if empty else "")
    whole.message = f"{judged} {whole.message}"
    return whole


def _check_group_by_group(c: torch.Tensor, refs: References, contract: PrecisionContract,
                          settings: CorrectnessSettings, k: int, fixture: str, seed: int | None,
                          row_chunk: int) -> CheckResult:
    """check_grouped one group at a time: each group's own result, the failing groups named in order."""
    p = refs.grouped
    masked = p.layout == "masked"
    offsets = p.offsets
    results, failures = [], []  # failures: (group, message)
    for g, mg in enumerate(p.ms):
        rows = (lambda t: t[g, :mg]) if masked else (lambda t: t[offsets[g]:offsets[g + 1]])  # noqa: E731
        if mg:
            r = check_output(rows(c), References(rows(refs.rounded), rows(refs.original), rows(refs.magnitude)),
                             contract, settings, k, fixture, seed, row_chunk)
            results.append(r)
            if not r.passed:
                failures.append((g, r.message))
        if masked and mg < p.capacity:
            written = int((~torch.isnan(c[g, mg:])).sum())
            if written:
                failures.append((g, f"{written} padding elements written (rows {mg}..{p.capacity - 1} of a group of "
                                    f"M={mg} must keep the NaN poison)"))
    empty = sum(1 for m in p.ms if not m)
    judged = f"all {p.groups} groups" + (f" ({empty} empty)" if empty else "")
    if failures:
        groups = list(dict.fromkeys(g for g, _ in failures))
        named = ", ".join(map(str, groups[:8])) + (f" (+{len(groups) - 8} more)" if len(groups) > 8 else "")
        g, first = failures[0]
        message = f"{len(groups)} of {p.groups} groups fail (group {named}); group {g} (M={p.ms[g]}): {first}"
    elif not results:
        message = f"{judged}: no rows to write"
    else:
        worst = max(r.worst_bound_ratio for r in results)
        same = all(r.message == results[0].message for r in results)
        message = f"{judged} " + (results[0].message if same else f"within bound (worst |C-R|/bound = {worst:.3g})")
    top = lambda field: max((getattr(r, field) for r in results), default=0.0)  # noqa: E731
    return CheckResult(fixture, not failures, message, top("max_abs_err"), top("max_rel_err"),
                       top("max_abs_err_orig"), top("max_rel_err_orig"), top("worst_bound_ratio"),
                       sum(r.bad_elements for r in results), sum(r.nonfinite for r in results), seed)


def _max_rel(diff: torch.Tensor, ref: torch.Tensor) -> float:
    nz = ref != 0
    if not bool(nz.any()):
        return 0.0
    return float((diff[nz] / ref[nz].abs()).max())
