"""The L1/shared-memory data path: how many 128-byte wavefronts a lab kernel's main loop needs.

Each SM moves one wavefront per clock between its L1/shared-memory array and the registers (128 bytes per
clock per SM on sm_80 to sm_90). A warp's instruction takes:

- a global load or store: one wavefront per distinct 128-byte line its active lanes touch (a coalesced
  warp of floats is one line; lanes walking 16 rows of a row-major matrix are 16);
- a shared-memory access: one per conflict-free pass over the banks: the bank-conflict degree of its
  distinct words, and at least one per 128 distinct bytes (a float4 read of 16 distinct addresses is two:
  256 bytes; lanes reading one word are a broadcast, one).

A kernel whose main loop needs W wavefronts per CTA per K tile runs, on the busiest SM, no faster than
tiles x K tiles x W / clock: for the lab's scalar and shared-memory kernels this, not the FFMA rate, is
the bound (lab.scalar_strided: 17 wavefronts per FFMA of a warp, 141.9 ms measured at 4096^3 on the H200
against 139.5 ms from this count). The counts come from each kernel's index maps (extensions/lab/), run
over every lane of one CTA's first K tile, and from the SASS CUDA 13.0 emits for sm_90 where a library
call hides the addresses (WMMA fragment loads: 8 LDG.E of 4 bytes per 16-deep step; ldmatrix .x4: 4
phases of 8 rows x 16 bytes).

Not in the count: L1 misses (the lines come from L2 at a rate this model does not know), instruction
latency, barriers, and the epilogue's stores (once per tile, against the main loop's K/BK steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from .access import BANK_WORD_BYTES, WARP_SIZE, bank_conflict_degree, ldmatrix_row_addresses, sectors_touched

LINE_BYTES = 128  # one wavefront: one 128-byte line of L1, or 128 bytes of shared-memory banks
WARP = WARP_SIZE


def global_wavefronts(byte_addresses: Iterable[int], access_bytes: int) -> int:
    """Distinct 128-byte lines one warp instruction's lanes touch ([address, address + access_bytes))."""
    return sectors_touched(byte_addresses, access_bytes, LINE_BYTES)


def shared_wavefronts(byte_addresses: Iterable[int], access_bytes: int) -> int:
    """Passes one warp's shared-memory access needs: max(bank-conflict degree over its distinct words,
    distinct bytes / 128 rounded up)."""
    words: set[int] = set()
    for addr in byte_addresses:
        words.update(range(addr // BANK_WORD_BYTES, (addr + access_bytes - 1) // BANK_WORD_BYTES + 1))
    if not words:
        return 0
    return max(bank_conflict_degree(words), -(-len(words) * BANK_WORD_BYTES // LINE_BYTES))


@dataclass(frozen=True)
class Operands:
    """Leading dimensions (elements) and storage orders of A and B, as the kernel sees them."""

    lda: int
    ldb: int
    a_col: bool = False
    b_col: bool = False

    def a(self, r: int, c: int) -> int:
        """Element offset of A(r, c)."""
        return c * self.lda + r if self.a_col else r * self.lda + c

    def b(self, r: int, c: int) -> int:
        return c * self.ldb + r if self.b_col else r * self.ldb + c


@dataclass(frozen=True)
class LoopWavefronts:
    """Wavefronts one CTA's main loop needs per K tile, by access (global loads, shared stores and loads)."""

    kernel: str
    k_tile: int  # K elements one main-loop iteration covers
    per_cta_tile: int
    by_access: dict[str, int] = field(default_factory=dict)


class _Counter:
    """Accumulates wavefronts by access name over the warps of one CTA."""

    def __init__(self, threads: int):
        self.threads = threads
        self.by_access: dict[str, int] = {}

    def warps(self) -> range:
        return range(-(-self.threads // WARP))

    def lanes(self, warp: int) -> range:
        return range(warp * WARP, min((warp + 1) * WARP, self.threads))

    def add(self, name: str, kind: str, addresses: list[int], access_bytes: int, times: int = 1) -> None:
        count = (global_wavefronts if kind == "global" else shared_wavefronts)(addresses, access_bytes)
        self.by_access[name] = self.by_access.get(name, 0) + count * times

    def result(self, kernel: str, k_tile: int) -> LoopWavefronts:
        return LoopWavefronts(kernel, k_tile, sum(self.by_access.values()), dict(self.by_access))


def _scalar(kernel: str, block: tuple[int, int], x_is_row: bool, ops: Operands) -> LoopWavefronts:
    """One output per thread, one k per iteration: an A and a B load per lane (the C store is after the loop)."""
    bx, by = block
    count = _Counter(bx * by)
    for w in count.warps():
        a, b = [], []
        for t in count.lanes(w):
            tx, ty = t % bx, t // bx
            row, col = (tx, ty) if x_is_row else (ty, tx)
            a.append(4 * ops.a(row, 0))
            b.append(4 * ops.b(0, col))
        count.add("A load (global)", "global", a, 4)
        count.add("B load (global)", "global", b, 4)
    return count.result(kernel, 1)


def _shared_16x16(ops: Operands) -> LoopWavefronts:
    """16x16 tiles through shared memory: per K tile one global load and one shared store of each operand,
    then 16 steps of one A (broadcast) and one B shared read per lane."""
    t_, count = 16, _Counter(256)
    for w in count.warps():
        lanes = [(t % 16, t // 16) for t in count.lanes(w)]
        count.add("A load (global)", "global", [4 * ops.a(ty, tx) for tx, ty in lanes], 4)
        count.add("B load (global)", "global", [4 * ops.b(ty, tx) for tx, ty in lanes], 4)
        count.add("A store (shared)", "shared", [4 * (ty * t_ + tx) for tx, ty in lanes], 4)
        count.add("B store (shared)", "shared", [4 * (ty * t_ + tx) for tx, ty in lanes], 4)
        for kk in range(t_):
            count.add("A read (shared)", "shared", [4 * (ty * t_ + kk) for tx, ty in lanes], 4)
            count.add("B read (shared)", "shared", [4 * (kk * t_ + tx) for tx, ty in lanes], 4)
    return count.result("shared_16x16", t_)


def _register_16x64(ops: Operands) -> LoopWavefronts:
    """shared_16x16 with a 1x4 register tile: four B loads, stores and reads per lane per step (columns
    tx + 16j of a 64-wide tile: a row of the B tile is 64 words, so two rows of a warp share banks)."""
    count = _Counter(256)
    for w in count.warps():
        lanes = [(t % 16, t // 16) for t in count.lanes(w)]
        count.add("A load (global)", "global", [4 * ops.a(ty, tx) for tx, ty in lanes], 4)
        count.add("A store (shared)", "shared", [4 * (ty * 16 + tx) for tx, ty in lanes], 4)
        for j in range(4):
            count.add("B load (global)", "global", [4 * ops.b(ty, tx + 16 * j) for tx, ty in lanes], 4)
            count.add("B store (shared)", "shared", [4 * (ty * 64 + tx + 16 * j) for tx, ty in lanes], 4)
        for kk in range(16):
            count.add("A read (shared)", "shared", [4 * (ty * 16 + kk) for tx, ty in lanes], 4)
            for j in range(4):
                count.add("B read (shared)", "shared", [4 * (kk * 64 + tx + 16 * j) for tx, ty in lanes], 4)
    return count.result("register_16x64", 16)


def _register_2d(ops: Operands) -> LoopWavefronts:
    """128x128x8 tiles, 8x8 per thread: per K tile one float4 global load and a store of each operand
    (k-major shared tiles, rows of 132 floats), then 8 steps of four float4 shared reads per lane."""
    pitch, count = 132, _Counter(256)
    for w in count.warps():
        tids = list(count.lanes(w))
        for name, k_contig, at in (("A", not ops.a_col, lambda mn, k: ops.a(mn, k)),
                                   ("B", ops.b_col, lambda mn, k: ops.b(k, mn))):
            if k_contig:  # 4 consecutive k of one m (or n); stored as 4 scalars, transposed
                count.add(f"{name} load (global)", "global", [4 * at(t // 2, (t % 2) * 4) for t in tids], 16)
                for j in range(4):
                    count.add(f"{name} store (shared)", "shared",
                              [4 * (((t % 2) * 4 + j) * pitch + t // 2) for t in tids], 4)
            else:  # 4 consecutive m (or n) of one k; one float4 store
                count.add(f"{name} load (global)", "global", [4 * at((t % 32) * 4, t // 32) for t in tids], 16)
                count.add(f"{name} store (shared)", "shared", [4 * ((t // 32) * pitch + (t % 32) * 4) for t in tids],
                          16)
        for kk in range(8):
            for half in (0, 64):
                count.add("A read (shared)", "shared", [4 * (kk * pitch + half + (t // 16) * 4) for t in tids], 16)
                count.add("B read (shared)", "shared", [4 * (kk * pitch + half + (t % 16) * 4) for t in tids], 16)
    return count.result("register_2d", 8)


def _wmma_fragment_loads(rows_at: Callable[[int, int], int]) -> list[list[int]]:
    """Byte addresses of the four 4-byte loads per lane that one 16x16 half fragment takes from global
    memory (CUDA 13.0, sm_90: LDG.E; lane = 4*group + t: rows group and group + 8, halves 2t and 2t + 8)."""
    loads = []
    for row_off, col_off in ((0, 0), (8, 0), (0, 8), (8, 8)):
        loads.append([2 * rows_at(lane // 4 + row_off, 2 * (lane % 4) + col_off) for lane in range(WARP)])
    return loads


def _wmma_global(kernel: str, warps: int, ops: Operands) -> LoopWavefronts:
    """Every fragment from global memory, 16 deep per step: four loads for A, four for B, per warp."""
    count = _Counter(32 * warps)
    a_rows = (lambda r, c: ops.a(r, c))
    b_rows = (lambda r, c: ops.b(c, r)) if ops.b_col else (lambda r, c: ops.b(r, c))
    for _ in count.warps():
        for addrs in _wmma_fragment_loads(a_rows):
            count.add("A fragment (global)", "global", addrs, 4)
        for addrs in _wmma_fragment_loads(b_rows):
            count.add("B fragment (global)", "global", addrs, 4)
    return count.result(kernel, 16)


def _wmma_staged(warp_tile: tuple[int, int], ops: Operands) -> LoopWavefronts:
    """128x128x32 tiles through padded shared memory: per K tile each lane copies 512/threads chunks of
    16 bytes of each operand (global load, shared store), then every warp reads its fragments with
    ldmatrix .x4 (four 8x16-byte phases) twice (two 16-deep steps)."""
    wm, wn = warp_tile
    warps = (128 // wm) * (128 // wn)
    threads, a_ld, bt_ld, bn_ld = 32 * warps, 40, 136, 40
    count = _Counter(threads)
    for w in count.warps():
        for i in range(512 // threads):
            qs = [i * threads + t for t in count.lanes(w)]
            count.add("A load (global)", "global", [2 * ops.a(q // 4, (q % 4) * 8) for q in qs], 16)
            count.add("A store (shared)", "shared", [2 * ((q // 4) * a_ld + (q % 4) * 8) for q in qs], 16)
            if ops.b_col:
                count.add("B load (global)", "global", [2 * ops.b((q % 4) * 8, q // 4) for q in qs], 16)
                count.add("B store (shared)", "shared", [2 * ((q // 4) * bn_ld + (q % 4) * 8) for q in qs], 16)
            else:
                count.add("B load (global)", "global", [2 * ops.b(q // 16, (q % 16) * 8) for q in qs], 16)
                count.add("B store (shared)", "shared", [2 * ((q // 16) * bt_ld + (q % 16) * 8) for q in qs], 16)
        b_pitch = 2 * (bn_ld if ops.b_col else bt_ld)
        for step in range(2):
            for _ in range(wm // 16):  # A fragments: 16 rows x 16 halves, 4 phases
                for phase in range(4):
                    count.add("A fragments (ldmatrix)", "shared",
                              ldmatrix_row_addresses(2 * a_ld, chunk=phase % 2 + 2 * step), 16)
            for _ in range(wn // 16):
                for phase in range(4):
                    count.add("B fragments (ldmatrix)", "shared",
                              ldmatrix_row_addresses(b_pitch, chunk=phase % 2 + 2 * step), 16)
    return count.result(f"wmma_staged_{wm}x{wn}", 32)


def lab_loop_wavefronts(variant: str, ops: Operands, warp_tile: tuple[int, int] | None = None) -> LoopWavefronts:
    """The main-loop wavefronts of one lab kernel (extensions/lab/<variant>); KeyError for another name."""
    if variant == "scalar_strided":
        return _scalar(variant, (16, 16), True, ops)
    if variant == "scalar_coalesced":
        return _scalar(variant, (32, 8), False, ops)
    if variant == "shared_16x16":
        return _shared_16x16(ops)
    if variant == "register_16x64":
        return _register_16x64(ops)
    if variant == "register_2d":
        return _register_2d(ops)
    if variant == "wmma_global":
        return _wmma_global(variant, 4, ops)
    if variant == "wmma_padded":
        return _wmma_global(variant, 1, ops)
    if variant == "wmma_staged":
        return _wmma_staged(tuple(warp_tile or (32, 64)), ops)
    raise KeyError(f"no data-path model for lab kernel {variant!r}")


def datapath_ms(loop: LoopWavefronts, tiles_on_busiest_sm: float, k: int, clock_mhz: float) -> float:
    """Milliseconds the busiest SM's data path needs: tiles x K tiles x wavefronts per CTA tile / clock."""
    k_tiles = -(-k // loop.k_tile)
    return tiles_on_busiest_sm * k_tiles * loop.per_cta_tile / (clock_mhz * 1e6) * 1e3
