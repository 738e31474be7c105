"""The Triton grouped GEMM behind `library.triton_grouped`: every group of a grouped problem (grouped.py) in one
persistent launch, as Triton's grouped-GEMM tutorial (08-grouped-gemm.py) schedules it, over gemmcompare's
storage instead of the tutorial's pointer arrays.

The tile space is every group's C tiles one after the other (group 0's ceil(M_0/BLOCK_M) x ceil(N/BLOCK_N), then
group 1's, ...; an empty group has none). Program p computes tiles p, p + programs, p + 2*programs, ...: walking
the groups in order, it keeps the count of tiles before the current group and computes every tile of its own that
falls in that group. Group g's A rows start at row starts[g] of the stacked A (the contiguous layout's offsets,
or g * capacity in the masked layout) and it has counts[g] of them; its B is the g-th [N, K] weight. Loads of
rows or columns past the group's edge wrap round inside the group (modulo, as the tutorial's dense kernel does:
no load mask, never another group's rows); the store is masked to the group's own rows, so padding rows (masked
layout) and other groups are never written.

Imported only where it runs (the measuring worker, or a test under TRITON_INTERPRET=1): it needs triton.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .triton_tile import describe  # noqa: F401  (the row names the chosen configuration)


def _config(bm: int, bn: int, bk: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_stages=stages, num_warps=warps)


# The tutorial's tiles (128x128x32, 64x64x32 ... for its A100/H100 runs) and Hopper-sized ones (the dense
# row's 128x256x64 and 256x128x64 need 8 warps); small tiles for decode-sized groups of a few rows.
CONFIGS = [
    _config(128, 128, 64, 3, 8),
    _config(128, 256, 64, 3, 8),
    _config(128, 128, 32, 4, 4),
    _config(64, 128, 64, 4, 4),
    _config(64, 64, 64, 4, 4),
    _config(32, 128, 64, 4, 4),
]


@triton.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, starts_ptr, counts_ptr, G, N, K, M_TOTAL,
                          stride_am, stride_ak, stride_bg, stride_bk, stride_bn, stride_cm, stride_cn,
                          alpha, beta,
                          SCALE: tl.constexpr, HAS_BETA: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C_g = alpha * A_g @ B_g + beta * C_g for every group g; A and C stacked (row strides stride_am, stride_cm),
    B groups x K x N (any strides). M_TOTAL (the rows of all groups) only keys the autotuner."""
    tile = tl.program_id(0)
    programs = tl.num_programs(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    before = 0  # tiles of the groups before g
    for g in range(0, G):
        start = tl.load(starts_ptr + g).to(tl.int64)
        m = tl.load(counts_ptr + g)
        tiles = tl.cdiv(m, BLOCK_M) * tiles_n
        while tile >= before and tile < before + tiles:
            local = tile - before
            pid_m = local // tiles_n
            pid_n = local % tiles_n
            rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # within the group
            cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            # past the edge, loads wrap round inside the group (m >= 1 here): never another group's rows
            a_ptrs = a_ptr + (start + (rows % m))[:, None] * stride_am + offs_k[None, :] * stride_ak
            b_ptrs = b_ptr + tl.cast(g, tl.int64) * stride_bg + offs_k[:, None] * stride_bk + (cols % N)[None, :] * stride_bn
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kt in range(0, tl.cdiv(K, BLOCK_K)):
                a = tl.load(a_ptrs, mask=offs_k[None, :] < K - kt * BLOCK_K, other=0.0)  # the K tail: zeros
                b = tl.load(b_ptrs, mask=offs_k[:, None] < K - kt * BLOCK_K, other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_K * stride_ak
                b_ptrs += BLOCK_K * stride_bk
            if SCALE:
                acc = acc * alpha
            c_ptrs = c_ptr + (start + rows)[:, None] * stride_cm + cols[None, :] * stride_cn
            c_mask = (rows[:, None] < m) & (cols[None, :] < N)  # the group's own rows only
            if HAS_BETA:
                acc += beta * tl.load(c_ptrs, mask=c_mask, other=0.0).to(tl.float32)
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)
            tile += programs
        before += tiles


# restore_value puts C back after each trial (beta != 0 reads the same C0 in every trial, and a masked problem's
# padding keeps what the harness wrote there).
grouped_autotuned = triton.autotune(
    configs=CONFIGS, key=["G", "N", "K", "M_TOTAL", "SCALE", "HAS_BETA"], restore_value=["c_ptr"],
)(grouped_matmul_kernel)


def total_tiles(ms, n: int, block_m: int, block_n: int) -> int:
    """The tile space of a configuration: every group's ceil(M_g/BLOCK_M) x ceil(N/BLOCK_N)."""
    return sum(triton.cdiv(m, block_m) for m in ms) * triton.cdiv(n, block_n)


def launch(a, b, c, starts, counts, ms, alpha: float, beta: float, programs: int, kernel=None, **meta) -> None:
    """Enqueue every group's C = alpha * A @ B + beta * C on torch's current stream. a, c: the stacked rows
    (2-D); b: groups x K x N; starts, counts: int32 device tensors; ms: the group Ms on the host (for the grid:
    at most `programs` programs, one per SM, never more than there are tiles)."""
    n, k = b.shape[2], b.shape[1]

    def grid(opts):
        return (max(1, min(programs, total_tiles(ms, n, opts["BLOCK_M"], opts["BLOCK_N"]))),)

    (kernel or grouped_autotuned)[grid](
        a, b, c, starts, counts, len(ms), n, k, sum(ms),
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), b.stride(2), c.stride(0), c.stride(1),
        float(alpha), float(beta), SCALE=alpha != 1.0, HAS_BETA=beta != 0.0, **meta)
