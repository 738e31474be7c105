"""The tile loop both Triton GEMMs share: the f16/bf16 one (triton_kernels.py, library.triton_matmul) and the
e4m3 one (triton_fp8_kernels.py, library.triton_fp8). Triton's tutorial matmul: one C tile per program, tiles
in grouped order, A's rows and B's columns walked along K in BLOCK_K steps, the K tail masked to zero, one FP32
accumulator. Each kernel keeps its own epilogue (alpha/beta; dequantization scales) and autotuning list.

Imported only where it runs (the measuring worker, or a test under TRITON_INTERPRET=1): it needs triton.
"""

from __future__ import annotations

import triton
import triton.language as tl


def config(bm: int, bn: int, bk: int, stages: int, warps: int, group_m: int = 8) -> triton.Config:
    """One autotuning configuration: a BLOCK_M x BLOCK_N tile, BLOCK_K of K per step, raster groups of GROUP_M."""
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group_m},
                         num_stages=stages, num_warps=warps)


def describe(config) -> str:
    """'BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3' for a triton.Config."""
    parts = [f"{key}={value}" for key, value in config.kwargs.items()]
    parts += [f"num_warps={config.num_warps}", f"num_stages={config.num_stages}"]
    return ", ".join(parts)


def tile_grid(m: int, n: int, batch: int = 1):
    """The launch grid of an m x n C: one program per tile of the configuration the launch runs (times the batch,
    the grid's second axis, for a batched launch)."""
    def grid(opts):
        return (triton.cdiv(m, opts["BLOCK_M"]) * triton.cdiv(n, opts["BLOCK_N"]), batch)
    return grid


@triton.jit
def grouped_tile(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """This program's C tile (pid_m, pid_n). Grouped order: GROUP_M row tiles share their B column tiles while
    those are in L2."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def accumulate_tile(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PROMOTE: tl.constexpr):
    """A (M x K) times B (K x N), any strides, over the rows and columns of tile (pid_m, pid_n): its FP32
    BLOCK_M x BLOCK_N accumulator. PROMOTE (FP8 operands): tl.dot's max_num_imprecise_acc=BLOCK_K, each step's
    products summed apart and added to the accumulator with an FP32 add; without it, tl.dot's default."""
    # Rows and columns past the edge wrap around (modulo) so loads need no M/N mask; the caller masks the store.
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
        if PROMOTE:
            acc = tl.dot(a, b, acc, max_num_imprecise_acc=BLOCK_K)  # promoted to FP32 every BLOCK_K
        else:
            acc = tl.dot(a, b, acc)  # f16/bf16: FP32 accumulation; FP8 on sm_90: no promotion over all of K
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc
