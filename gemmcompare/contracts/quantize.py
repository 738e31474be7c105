"""FP8 quantization with scales: FP32 inputs -> FP8 values and the FP32 scales that dequantize them.

Convention (the one torch._scaled_mm and cuBLASLt use): a scale is a *dequantization* scale,
    x ~= q * scale,    scale = amax / fp8_max,    q = saturate(x / scale) cast to FP8,
with amax the largest |x| of the scale's group (a group of zeros gets scale 1). The largest element of each
group lands on +-fp8_max; `saturate` clamps to +-fp8_max before the cast, since torch's float8 cast does not
saturate by itself in every version (e4m3fn has no infinity: an unclamped 449 would become NaN).

Groups, by the contract's scaling (precision.Scaling), for A (m x k) and B (k x n), logical shapes:
    tensor : scale_a (1, 1),                 scale_b (1, 1)
    rowcol : scale_a (m, 1),                 scale_b (1, n)
    block  : scale_a (m, ceil(k/128)),       scale_b (ceil(k/128), ceil(n/128))   (DeepSeek-V3: 1x128 of A,
             128x128 of B; a last partial block is the remainder of k, or of n)
The scales are FP32 and row-major in these logical shapes; an implementation that needs another layout
(cuBLASLt's blockwise scales are outer-dim-major) makes its own copy, outside timing.
"""

from __future__ import annotations

from ..dtypes import DTYPE_INFO, DType
from ..lazy import torch
from .precision import Scaling

BLOCK = 128  # the DeepSeek-V3 block: 1 x 128 of A, 128 x 128 of B


def blocks(v: int) -> int:
    """How many BLOCKs cover v (the last one partial)."""
    return -(-v // BLOCK)


def scale_shape(scaling: Scaling, which: str, m: int, n: int, k: int) -> tuple[int, int]:
    """The logical shape of scale_a ('a') or scale_b ('b') for an m x n x k problem."""
    if scaling is Scaling.TENSOR:
        return (1, 1)
    if scaling is Scaling.ROWCOL:
        return (m, 1) if which == "a" else (1, n)
    if scaling is Scaling.BLOCK:
        return (m, blocks(k)) if which == "a" else (blocks(k), blocks(n))
    raise ValueError(f"no scales for scaling {scaling.value!r}")


def group_amax(x: torch.Tensor, scaling: Scaling, which: str) -> torch.Tensor:
    """amax of |x| per scale group, in the scale's shape (FP32). x is A (m x k) or B (k x n), logical."""
    ax = x.abs().float()
    if scaling is Scaling.TENSOR:
        return ax.amax().reshape(1, 1)
    if scaling is Scaling.ROWCOL:
        return ax.amax(dim=1, keepdim=True) if which == "a" else ax.amax(dim=0, keepdim=True)
    if scaling is Scaling.BLOCK:
        rows, cols = ax.shape
        if which == "a":  # 1 x 128 along k (the columns of A)
            padded = torch.nn.functional.pad(ax, (0, blocks(cols) * BLOCK - cols))  # zeros: no effect on amax
            return padded.reshape(rows, blocks(cols), BLOCK).amax(dim=2)
        padded = torch.nn.functional.pad(ax, (0, blocks(cols) * BLOCK - cols, 0, blocks(rows) * BLOCK - rows))
        return padded.reshape(blocks(rows), BLOCK, blocks(cols), BLOCK).amax(dim=(1, 3))
    raise ValueError(f"no scales for scaling {scaling.value!r}")


def expand_scale(scale: torch.Tensor, scaling: Scaling, which: str, shape: tuple[int, int]) -> torch.Tensor:
    """The scale of every element of an operand of `shape` (broadcastable; blocks repeated and cropped)."""
    if scaling is not Scaling.BLOCK:
        return scale
    rows, cols = shape
    if which == "a":
        return scale.repeat_interleave(BLOCK, dim=1)[:, :cols]
    return scale.repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)[:rows, :cols]


def quantize(x: torch.Tensor, dtype: DType, scaling: Scaling, which: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(q, scale): x (FP32, logical A or B) quantized to the FP8 `dtype` with saturation, and its FP32
    dequantization scales (x ~= q * scale)."""
    fmax = DTYPE_INFO[dtype].max_finite
    amax = group_amax(x, scaling, which)
    # divided by a tensor, not the Python float: torch's CUDA kernel multiplies by the reciprocal of a scalar
    # divisor (amax * fl(1/448), one unit in the last place off at times), the CPU divides; a tensor divisor
    # is an IEEE division on both, so a draw's scales are the same bits everywhere (counter_random.py)
    scale = torch.where(amax > 0, amax / torch.full_like(amax, fmax), torch.ones_like(amax)).float()
    scaled = x.float() / expand_scale(scale, scaling, which, tuple(x.shape))
    return saturate_cast(scaled, dtype), scale


def saturate_cast(x: torch.Tensor, dtype: DType) -> torch.Tensor:
    """x cast to `dtype` (round to nearest even) after clamping to its largest finite value."""
    fmax = DTYPE_INFO[dtype].max_finite
    return x.clamp(-fmax, fmax).to(DTYPE_INFO[dtype].torch_dtype)


def dequantize(q: torch.Tensor, scale: torch.Tensor, scaling: Scaling, which: str) -> torch.Tensor:
    """The values an FP8 operand stands for, in FP64: q * its scale (exact: an FP8 value times an FP32
    scale fits FP64's significand)."""
    return q.double() * expand_scale(scale.double(), scaling, which, tuple(q.shape))
