"""How much work a GEMM is, and how much of it a kernel actually executes.

Useful work is 2*M*N*K FLOPs per batch (one multiply and one add per inner-loop step). A kernel that
pads M, N, K up to tile multiples (the lab's WMMA kernel pads to 16) executes more: report both, and
compute useful-work TFLOP/s from the logical count only.

The intensity helpers are load models, not measurements: `tile_intensity` counts the operand bytes one
tile loads per K step, which is what reuse on chip buys; it says nothing about what caches then do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..dtypes import DTYPE_INFO
from ..problems import GemmProblem

# Bytes per element of each operand spelling the project uses: the dtype table's, and 'tf32' (a math mode
# whose operands are FP32 in memory).
ELEMENT_BYTES: dict[str, int] = {**{d.value: info.itemsize for d, info in DTYPE_INFO.items()}, "tf32": 4}


def element_bytes(dtype) -> int:
    """Bytes per element of a dtype given as a spelling ('f16', 'bf16', 'f32', 'tf32', 'f64') or anything
    with such a `.value` (gemmcompare.dtypes.DType)."""
    key = str(getattr(dtype, "value", dtype)).lower()
    try:
        return ELEMENT_BYTES[key]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {sorted(ELEMENT_BYTES)}") from None


def pad_to_multiple(value: int, multiple: int) -> int:
    """The smallest multiple of `multiple` that is >= value (value itself when multiple is 1)."""
    if value < 0 or multiple < 1:
        raise ValueError(f"cannot pad {value} to a multiple of {multiple}")
    return -(-value // multiple) * multiple


@dataclass(frozen=True)
class GemmWork:
    """Logical and executed work of one problem under one padding rule."""

    m: int
    n: int
    k: int
    batch: int
    padded_m: int
    padded_n: int
    padded_k: int
    logical_flops: int  # 2*M*N*K*batch: the useful work every rate is computed from
    executed_flops: int  # 2*Mp*Np*Kp*batch: what a padding kernel's instructions actually do

    @property
    def padding_overhead(self) -> float:
        """Extra executed work as a fraction of the useful work (0.373 means 37.3% more)."""
        return self.executed_flops / self.logical_flops - 1.0

    @property
    def useful_fraction(self) -> float:
        """Share of the executed work that is useful."""
        return self.logical_flops / self.executed_flops


def gemm_work(problem: GemmProblem, pad_to: tuple[int, int, int] = (1, 1, 1)) -> GemmWork:
    """Logical and executed FLOPs of `problem` for a kernel that pads (m, n, k) to multiples of `pad_to`."""
    pm, pn, pk = (pad_to_multiple(v, p) for v, p in zip((problem.m, problem.n, problem.k), pad_to))
    return GemmWork(
        m=problem.m, n=problem.n, k=problem.k, batch=problem.batch,
        padded_m=pm, padded_n=pn, padded_k=pk,
        logical_flops=problem.flops,
        executed_flops=2 * pm * pn * pk * problem.batch,
    )


def unique_bytes(problem: GemmProblem, a_dtype, b_dtype, c_dtype) -> int:
    """Fewest bytes the GEMM must move: each input read once and the output written once (a lower bound
    for a cold, standalone call; beta = 0, so C is not read)."""
    return problem.unique_bytes(element_bytes(a_dtype), element_bytes(b_dtype), element_bytes(c_dtype))


def scalar_operand_bytes(problem: GemmProblem, dtype) -> int:
    """Operand demand of one-output-per-thread code: every output loads one A and one B element per k and
    stores itself once, s*M*N*(2K+1) bytes. Per-thread demand, not HBM traffic (requests merge, caches hit)."""
    s = element_bytes(dtype)
    return s * problem.m * problem.n * (2 * problem.k + 1) * problem.batch


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """FLOP per byte."""
    if bytes_moved <= 0:
        raise ValueError("intensity needs a positive byte count")
    return flops / bytes_moved


def tile_intensity(rows: int, cols: int, element_size: int) -> float:
    """FLOP per operand byte of a rows x cols output tile fed one K step at a time:
    2*rows*cols / (s*(rows + cols)). It holds at every level of the hierarchy: a block tile's global->shared
    panels (the seed's 'panel intensity'), a warp tile's shared->register fragments, a thread's register tile.
    Stores, partial tiles and caches are outside it."""
    if rows < 1 or cols < 1 or element_size < 1:
        raise ValueError("a tile needs positive rows, cols and element size")
    return 2 * rows * cols / (element_size * (rows + cols))


def panel_intensity(bm: int, bn: int, element_size: int) -> float:
    """A block tile's panel-load intensity, 2*BM*BN / (s*(BM + BN)) FLOP per byte (see tile_intensity)."""
    return tile_intensity(bm, bn, element_size)


def panel_intensity_with_store(bm: int, bn: int, k: int, in_size: int, out_size: int) -> float:
    """Panel intensity of one full output tile over the whole K loop, counting its final store:
    2*BM*BN*K / (s_in*K*(BM + BN) + s_out*BM*BN). For the lab's 16x16 FP16 WMMA tile with an FP32 store this
    is 8K/(K + 16): 4 at K = 16, approaching 8 as K grows."""
    flops = 2 * bm * bn * k
    return flops / (in_size * k * (bm + bn) + out_size * bm * bn)


def ideal_square_intensity(n: int, dtype) -> float:
    """Unique-byte intensity of an n x n x n GEMM with every operand in `dtype`: 2n^3 / (3 s n^2) = 2n/(3s)."""
    return 2 * n / (3 * element_bytes(dtype))


def tiles_along(extent: int, tile: int) -> int:
    """How many tiles of size `tile` cover `extent` (a ragged last tile counts as one)."""
    return math.ceil(extent / tile)
