"""Global-memory traffic of a tiled GEMM: the panel model, and an HBM estimate from the raster order.

Two quantities, kept apart on purpose (seed 000 warns that source-load ratios are not HBM intensity):

- Operand (tile) traffic: every CTA streams its A row-panel and B column-panel through shared memory, so A
  is read once per tile column and B once per tile row: ceil(N/BN)*M*K*s_a + ceil(M/BM)*K*N*s_b, plus the
  output once. With tiles that divide the problem this is M*N*K*s*(1/BN + 1/BM) + M*N*s_c: the inverse of
  the panel intensity. This is what the SMs request from the memory system (mostly served by L2).
- HBM traffic: what reaches DRAM once L2 catches the reuse between CTAs that run at the same time. The
  wave-footprint model assumes the CTAs of one wave walk K roughly together, so L2 holds the k-slices they
  share: each wave fetches every distinct A row-panel and B column-panel it touches once, and nothing is
  reused across waves. The raster order (grouped or not) decides how many distinct panels a wave touches.
  Cross-wave reuse (an operand small enough to stay in L2 for the whole run) is not modelled, so the model
  overestimates when one operand fits in L2.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..problems import GemmProblem
from .work import panel_intensity, tiles_along


@dataclass(frozen=True)
class TileTraffic:
    """Operand bytes the CTAs of a tiled GEMM request (the panel model)."""

    a_bytes: int  # A read once per tile column: ceil(N/BN) * M * K * s_a
    b_bytes: int  # B read once per tile row: ceil(M/BM) * K * N * s_b
    c_bytes: int  # the output written once
    flops: int
    panel_intensity: float  # 2*BM*BN / (s*(BM + BN)) with s the A/B element size (the mean when they differ)

    @property
    def operand_bytes(self) -> int:
        return self.a_bytes + self.b_bytes

    @property
    def total_bytes(self) -> int:
        return self.a_bytes + self.b_bytes + self.c_bytes

    @property
    def intensity(self) -> float:
        """FLOP per byte of operand plus output traffic (includes ragged tiles and the store)."""
        return self.flops / self.total_bytes


def tile_traffic(problem: GemmProblem, bm: int, bn: int, a_size: int, b_size: int, c_size: int) -> TileTraffic:
    """Operand traffic of a BM x BN block tiling of `problem` (element sizes in bytes)."""
    tm, tn = tiles_along(problem.m, bm), tiles_along(problem.n, bn)
    batch = problem.batch
    return TileTraffic(
        a_bytes=tn * problem.m * problem.k * a_size * batch,
        b_bytes=tm * problem.k * problem.n * b_size * batch,
        c_bytes=problem.m * problem.n * c_size * batch,
        flops=problem.flops,
        panel_intensity=panel_intensity(bm, bn, 1) * 2 / (a_size + b_size),
    )


def raster_tile(pid: int, tiles_m: int, tiles_n: int, group: int = 1, along: str = "n") -> tuple[int, int]:
    """(tile row, tile column) of the pid-th CTA in launch order.

    along='n' is gemmcompare's mma_sync raster (extensions/mma_sync/mma_sync.cuh `raster`): CTAs walk `group`
    tile rows column by column; group 1 is the plain row-major order of a grid with blockIdx.x over N.
    along='m' is the transpose (groups of tile columns walked row by row), CUTLASS 3's raster along M.
    """
    if group < 1:
        raise ValueError("raster group must be >= 1")
    if along == "m":
        tn, tm = raster_tile(pid, tiles_n, tiles_m, group, "n")
        return tm, tn
    if along != "n":
        raise ValueError(f"along must be 'n' or 'm', got {along!r}")
    per_group = group * tiles_n
    first_m = (pid // per_group) * group
    rows = min(tiles_m - first_m, group)
    in_group = pid % per_group
    return first_m + in_group % rows, in_group // rows


@dataclass(frozen=True)
class HbmEstimate:
    """DRAM bytes of a tiled GEMM by the wave-footprint model (see the module docstring)."""

    read_bytes: int
    write_bytes: int
    unique_read_bytes: int  # every A and B element read exactly once: the compulsory minimum
    waves: int
    ctas_per_wave: int
    group: int
    along: str

    @property
    def total_bytes(self) -> int:
        return self.read_bytes + self.write_bytes

    @property
    def read_amplification(self) -> float:
        """DRAM reads over the compulsory minimum (seed 001's '34x the compulsory minimum')."""
        return self.read_bytes / self.unique_read_bytes


def wave_footprint_hbm(problem: GemmProblem, bm: int, bn: int, a_size: int, b_size: int, c_size: int,
                       ctas_per_wave: int, group: int = 1, along: str = "n") -> HbmEstimate:
    """DRAM bytes when each wave of `ctas_per_wave` concurrent CTAs fetches each distinct A row-panel and
    B column-panel it touches once. Ragged last panels count only their real rows and columns."""
    if ctas_per_wave < 1:
        raise ValueError("a wave holds at least one CTA")
    m, n, k = problem.m, problem.n, problem.k
    tiles_m, tiles_n = tiles_along(m, bm), tiles_along(n, bn)
    tiles = tiles_m * tiles_n
    row_bytes = [min(bm, m - i * bm) * k * a_size for i in range(tiles_m)]
    col_bytes = [min(bn, n - j * bn) * k * b_size for j in range(tiles_n)]
    read, waves = 0, 0
    for start in range(0, tiles, ctas_per_wave):
        rows, cols = set(), set()
        for pid in range(start, min(start + ctas_per_wave, tiles)):
            tm, tn = raster_tile(pid, tiles_m, tiles_n, group, along)
            rows.add(tm)
            cols.add(tn)
        read += sum(row_bytes[i] for i in rows) + sum(col_bytes[j] for j in cols)
        waves += 1
    batch = problem.batch
    return HbmEstimate(
        read_bytes=read * batch,
        write_bytes=m * n * c_size * batch,
        unique_read_bytes=(m * k * a_size + k * n * b_size) * batch,
        waves=waves * batch,
        ctas_per_wave=ctas_per_wave,
        group=group,
        along=along,
    )
