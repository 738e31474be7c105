"""The Triton GEMM behind `library.triton_matmul`: Triton's tutorial matmul (grouped tile order, one FP32
accumulator per tile, masked K tail), generic in strides, with a fused alpha/beta epilogue and the
tutorial's autotuning list plus one Hopper-sized tile.

Imported only where it runs (the measuring worker, or a test under TRITON_INTERPRET=1): it needs triton.
"""

from __future__ import annotations

import triton
import triton.language as tl


def _config(bm: int, bn: int, bk: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                         num_stages=stages, num_warps=warps)


# Triton's tutorial list (03-matrix-multiplication.py, CUDA), plus 256x128x64 for Hopper's larger shared
# memory. The autotuner benchmarks every entry once per key, in prepare, outside any timed region.
CONFIGS = [
    _config(128, 256, 64, 3, 8),
    _config(256, 128, 64, 3, 8),
    _config(64, 256, 32, 4, 4),
    _config(128, 128, 32, 4, 4),
    _config(128, 64, 32, 4, 4),
    _config(64, 128, 32, 4, 4),
    _config(128, 32, 32, 4, 4),
    _config(64, 32, 32, 5, 2),
    _config(32, 64, 32, 5, 2),
]


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  alpha, beta,
                  A_ROW: tl.constexpr, B_ROW: tl.constexpr,  # only part of the autotuning key: strides carry the layout
                  SCALE: tl.constexpr, HAS_BETA: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """C = alpha * A @ B + beta * C; A is M x K, B is K x N, C is M x N, any strides."""
    # Grouped order: GROUP_M row tiles share their B column tiles while those are in L2.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # Rows and columns past the edge wrap around (modulo) so loads need no M/N mask; the store is masked.
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BLOCK_K)):
        # the K tail is masked to zero: zeros add nothing to the products
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - kt * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - kt * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)  # f16/bf16 operands, FP32 accumulation
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

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
    """The kernel's runtime arguments and its layout and epilogue flags, for a, b, c as torch tensors."""
    m, k = a.shape
    n = b.shape[1]
    args = (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            float(alpha), float(beta))
    flags = dict(A_ROW=a.stride(1) == 1, B_ROW=b.stride(1) == 1, SCALE=alpha != 1.0, HAS_BETA=beta != 0.0)
    return args, flags


def launch(a, b, c, alpha: float, beta: float, kernel=None, **meta) -> None:
    """Enqueue C = alpha * a @ b + beta * c on torch's current stream. `kernel` defaults to the autotuned
    entry; pass `matmul_kernel` and BLOCK_M/BLOCK_N/BLOCK_K/GROUP_M in `meta` for one fixed config."""
    m, n = a.shape[0], b.shape[1]
    args, flags = _arguments(a, b, c, alpha, beta)

    def grid(opts):
        return (triton.cdiv(m, opts["BLOCK_M"]) * triton.cdiv(n, opts["BLOCK_N"]),)

    (kernel or matmul_autotuned)[grid](*args, **flags, **meta)


def precompile(a, b, c, alpha: float, beta: float) -> int:
    """Compile every configuration at once, in threads (ptxas runs outside the GIL), before the autotuner
    benchmarks them; it would compile them one after another. Returns how many compiled here; one that
    failed is left to the autotuner, which compiles it again and skips what cannot run."""
    from concurrent.futures import ThreadPoolExecutor

    import torch

    args, flags = _arguments(a, b, c, alpha, beta)
    triton.runtime.driver.active.get_current_target()  # the driver is set up lazily: once, here, not in 9 threads

    def one(config) -> bool:
        try:
            with torch.cuda.device(a.device):  # the current device is per thread
                matmul_kernel.warmup(*args, grid=(1,), **flags, **config.all_kwargs())
            return True
        except Exception:  # noqa: BLE001 - see above
            return False

    with ThreadPoolExecutor(max_workers=len(CONFIGS)) as pool:
        return sum(pool.map(one, CONFIGS))


def describe(config) -> str:
    """'BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3' for a triton.Config."""
    parts = [f"{key}={value}" for key, value in config.kwargs.items()]
    parts += [f"num_warps={config.num_warps}", f"num_stages={config.num_stages}"]
    return ", ".join(parts)
