"""The Triton FP8 GEMM behind `library.triton_fp8`: e4m3 A (M x K) and B (K x N, K-contiguous: tn) through
`tl.dot` on Hopper's FP8 tensor cores, FP32 accumulator, the dequantization scales read from their device
tensors inside the kernel and applied in the epilogue (per tensor, or per row of A and column of B).

Accumulation. On sm_90 Triton's default for an FP8 `tl.dot` is max_num_imprecise_acc = 2^30
(backends/nvidia/compiler.py): the wgmma accumulator takes every product of all of K at the tensor cores'
own (~14-bit) alignment, never promoted. FAST_ACCUM=False passes max_num_imprecise_acc=BLOCK_K instead: each
tl.dot accumulates its BLOCK_K (<= 128) products into a fresh partial sum that is then added to the FP32
accumulator with an FP32 add (Triton's WGMMA lowering), the promotion interval CUTLASS's FP8 mainloop uses.
The K loop is the one library.triton_matmul runs (triton_tile.py); the scales are this kernel's epilogue.

Imported only where it runs (the measuring worker): it needs triton.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .triton_fp8_configs import CONFIGS as LISTED
from .triton_tile import describe  # noqa: F401  (the row names the chosen configuration)
from .triton_tile import accumulate_tile, config, grouped_tile, tile_grid

# The configuration list (triton_fp8_configs.py, with where each entry comes from): BLOCK_K <= 128, so that a
# strict contract's promotion interval (one tl.dot) is at most 128 of K. The plain row's autotuner benchmarks
# every entry once per key, in prepare; a `config:` row runs one (launch_fixed).
CONFIGS = [config(c.block_m, c.block_n, c.block_k, c.stages, c.warps, c.group_m) for c in LISTED]


@triton.jit
def fp8_matmul_kernel(a_ptr, b_ptr, c_ptr, scale_a_ptr, scale_b_ptr, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, stride_sa, stride_sb,
                      alpha,
                      ROWCOL: tl.constexpr, FAST_ACCUM: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """C = alpha * (scale_a * scale_b) * (A_q @ B_q); scales (1, 1) each, or (M, 1) and (1, N) when ROWCOL."""
    pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    # FAST_ACCUM: sm_90's default, no promotion over all of K; else promoted to FP32 every BLOCK_K
    acc = accumulate_tile(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n,
                          BLOCK_M, BLOCK_N, BLOCK_K, PROMOTE=not FAST_ACCUM)

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if ROWCOL:
        sa = tl.load(scale_a_ptr + offs_cm * stride_sa, mask=offs_cm < M, other=0.0)
        sb = tl.load(scale_b_ptr + offs_cn * stride_sb, mask=offs_cn < N, other=0.0)
        acc = acc * (alpha * sa[:, None] * sb[None, :])
    else:  # two scalars, read inside the launch: a restored or rotated input is seen
        acc = acc * (alpha * tl.load(scale_a_ptr) * tl.load(scale_b_ptr))
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


# The autotuned entry; triton adds the dtypes (C's among them) to the key. C is written whole: no restore.
fp8_matmul_autotuned = triton.autotune(configs=CONFIGS, key=["M", "N", "K", "ROWCOL", "FAST_ACCUM"])(fp8_matmul_kernel)


def launch(a, b, c, scale_a, scale_b, alpha: float, rowcol: bool, fast_accum: bool, fixed=None) -> None:
    """Enqueue C = alpha * scale_a * scale_b * (a @ b) on torch's current stream (a: m x k, b: k x n views):
    autotuned over CONFIGS, or with the one configuration `fixed` (a triton_fp8_configs.TritonFp8Config)."""
    m, k = a.shape
    n = b.shape[1]
    args = (a, b, c, scale_a, scale_b, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
            c.stride(1), scale_a.stride(0), scale_b.stride(1), float(alpha))
    if fixed is None:
        fp8_matmul_autotuned[tile_grid(m, n)](*args, ROWCOL=rowcol, FAST_ACCUM=fast_accum)
        return
    fp8_matmul_kernel[tile_grid(m, n)](*args, ROWCOL=rowcol, FAST_ACCUM=fast_accum, BLOCK_M=fixed.block_m,
                                       BLOCK_N=fixed.block_n, BLOCK_K=fixed.block_k, GROUP_M=fixed.group_m,
                                       num_warps=fixed.warps, num_stages=fixed.stages)
