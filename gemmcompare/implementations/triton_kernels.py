"""The Triton GEMM behind `library.triton_matmul`: Triton's tutorial matmul (grouped tile order, one FP32
accumulator per tile, masked K tail: the tile loop of triton_tile.py), generic in strides, with a fused
alpha/beta epilogue and the tutorial's autotuning list plus one Hopper-sized tile.

Imported only where it runs (the measuring worker, or a test under TRITON_INTERPRET=1): it needs triton.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .triton_tile import describe  # noqa: F401  (the row names the chosen configuration)
from .triton_tile import accumulate_tile, config, grouped_tile, tile_grid

# Triton's tutorial list (03-matrix-multiplication.py, CUDA), plus 256x128x64 for Hopper's larger shared
# memory. The autotuner benchmarks every entry once per key, in prepare, outside any timed region.
CONFIGS = [
    config(128, 256, 64, 3, 8),
    config(256, 128, 64, 3, 8),
    config(64, 256, 32, 4, 4),
    config(128, 128, 32, 4, 4),
    config(128, 64, 32, 4, 4),
    config(64, 128, 32, 4, 4),
    config(128, 32, 32, 4, 4),
    config(64, 32, 32, 5, 2),
    config(32, 64, 32, 5, 2),
]


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  stride_ab, stride_bb, stride_cb,  # batch strides (0 for one matrix): the grid's axis 1 is the batch
                  alpha, beta,
                  A_ROW: tl.constexpr, B_ROW: tl.constexpr,  # only part of the autotuning key: strides carry the layout
                  SCALE: tl.constexpr, HAS_BETA: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """C = alpha * A @ B + beta * C; A is M x K, B is K x N, C is M x N, any strides; batch matrix
    program_id(1) of each, its batch stride apart (64-bit: a batch may pass 2^31 elements)."""
    batch = tl.program_id(1).to(tl.int64)
    a_ptr += batch * stride_ab
    b_ptr += batch * stride_bb
    c_ptr += batch * stride_cb
    pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = accumulate_tile(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n,
                          BLOCK_M, BLOCK_N, BLOCK_K, PROMOTE=False)  # f16/bf16 operands, FP32 accumulation

    if SCALE:
        acc = acc * alpha
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    if HAS_BETA:
        acc += beta * tl.load(c_ptrs, mask=c_mask, other=0.0).to(tl.float32)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


# The autotuned entry. The key adds the layout and the epilogue to the shape (triton adds the dtypes);
# restore_value puts C back after each trial, so that beta != 0 reads the same C0 in every trial.
matmul_autotuned = triton.autotune(
    configs=CONFIGS, key=["M", "N", "K", "A_ROW", "B_ROW", "SCALE", "HAS_BETA"], restore_value=["c_ptr"],
)(matmul_kernel)


def _arguments(a, b, c, alpha: float, beta: float) -> tuple[tuple, dict]:
    """The kernel's runtime arguments and its layout and epilogue flags, for a, b, c as torch tensors: matrices,
    or batches of them (3-D: batch x rows x cols, each with its batch stride)."""
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batch_strides = (a.stride(0), b.stride(0), c.stride(0)) if a.dim() == 3 else (0, 0, 0)
    args = (a, b, c, m, n, k, a.stride(-2), a.stride(-1), b.stride(-2), b.stride(-1), c.stride(-2), c.stride(-1),
            *batch_strides, float(alpha), float(beta))
    flags = dict(A_ROW=a.stride(-1) == 1, B_ROW=b.stride(-1) == 1, SCALE=alpha != 1.0, HAS_BETA=beta != 0.0)
    return args, flags


def launch(a, b, c, alpha: float, beta: float, kernel=None, **meta) -> None:
    """Enqueue C = alpha * a @ b + beta * c on torch's current stream (a, b, c 2-D, or 3-D batches of matrices:
    one launch, the batch the grid's second axis). `kernel` defaults to the autotuned
    entry; pass `matmul_kernel` and BLOCK_M/BLOCK_N/BLOCK_K/GROUP_M in `meta` for one fixed config."""
    args, flags = _arguments(a, b, c, alpha, beta)
    batch = a.shape[0] if a.dim() == 3 else 1
    (kernel or matmul_autotuned)[tile_grid(a.shape[-2], b.shape[-1], batch)](*args, **flags, **meta)


def precompile(a, b, c, alpha: float, beta: float) -> int:
    """Compile every configuration at once, in threads (ptxas runs outside the GIL), before the autotuner
    benchmarks them; it would compile them one after another. Returns how many compiled here; one that
    failed is left to the autotuner, which compiles it again and skips what cannot run."""
    from concurrent.futures import ThreadPoolExecutor

    import torch

    args, flags = _arguments(a, b, c, alpha, beta)
    triton.runtime.driver.active.get_current_target()  # the driver is set up lazily: once, here, not in 9 threads

    def one(cfg) -> bool:
        try:
            with torch.cuda.device(a.device):  # the current device is per thread
                matmul_kernel.warmup(*args, grid=(1,), **flags, **cfg.all_kwargs())
            return True
        except Exception:  # noqa: BLE001 - see above
            return False

    with ThreadPoolExecutor(max_workers=len(CONFIGS)) as pool:
        return sum(pool.map(one, CONFIGS))

