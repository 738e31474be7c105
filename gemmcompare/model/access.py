"""Memory-access models of the lab kernels: 32-byte sectors per warp request, shared-memory bank conflicts.

Address models only: they count what one warp instruction asks for, not cache misses, HBM transactions
or cycles (seed 000 keeps the same boundary).

Global memory is served in 32-byte sectors: a warp's load or store touches as many sectors as its active
lanes' addresses cover. With N = K = 64 and aligned FP32 buffers, the first warp of the lab's two scalar
kernels asks, for its first k step, for (A, B, C) = (16, 1, 16) sectors in the strided mapping (lanes walk
rows) and (1, 4, 4) in the coalesced one (lanes walk columns): 33 against 9.

Shared memory has 32 banks of 4-byte words. Lanes reading different words of one bank are served one after
another (the conflict degree); lanes reading the same word are served at once (a broadcast). Accesses wider
than 4 bytes are served in phases of 128 bytes (8 lanes for 16-byte accesses such as one ldmatrix 8x8
matrix), and the degree is counted within each phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

SECTOR_BYTES = 32
BANKS = 32
BANK_WORD_BYTES = 4
PHASE_BYTES = BANKS * BANK_WORD_BYTES  # one shared-memory wavefront serves 128 bytes
WARP_SIZE = 32


# -- global memory: sectors ------------------------------------------------------------------------


def sectors_touched(byte_addresses: Iterable[int], access_bytes: int = 4, sector_bytes: int = SECTOR_BYTES) -> int:
    """Distinct `sector_bytes` sectors covered by the accesses [address, address + access_bytes)."""
    sectors = set()
    for addr in byte_addresses:
        first, last = addr // sector_bytes, (addr + access_bytes - 1) // sector_bytes
        sectors.update(range(first, last + 1))
    return len(sectors)


def warp_threads(block_dim: tuple[int, int, int] | tuple[int, int], warp: int = 0) -> list[tuple[int, int, int]]:
    """(threadIdx.x, .y, .z) of the lanes of one warp: CUDA numbers threads x fastest, then y, then z,
    and cuts that order into warps of 32."""
    bx, by, bz = (tuple(block_dim) + (1, 1))[:3]
    total = bx * by * bz
    out = []
    for linear in range(warp * WARP_SIZE, min((warp + 1) * WARP_SIZE, total)):
        out.append((linear % bx, (linear // bx) % by, linear // (bx * by)))
    return out


@dataclass(frozen=True)
class ScalarMapping:
    """A one-output-per-thread kernel: its block shape and which thread index walks the rows of C."""

    name: str
    block_dim: tuple[int, int]
    x_is_row: bool  # True: row = blockIdx.x*blockDim.x + threadIdx.x (the strided kernel)

    def output_of(self, thread: tuple[int, int, int], block: tuple[int, int] = (0, 0)) -> tuple[int, int]:
        """(row, col) of C that `thread` of block (blockIdx.x, blockIdx.y) computes."""
        tx, ty, _ = thread
        bx, by = block
        along_x = bx * self.block_dim[0] + tx
        along_y = by * self.block_dim[1] + ty
        return (along_x, along_y) if self.x_is_row else (along_y, along_x)


# The lab's two scalar kernels (extensions/lab/scalar_strided.cu, scalar_coalesced.cu).
SCALAR_STRIDED = ScalarMapping("scalar_strided", (16, 16), x_is_row=True)
SCALAR_COALESCED = ScalarMapping("scalar_coalesced", (32, 8), x_is_row=False)


@dataclass(frozen=True)
class WarpSectors:
    """Sectors one warp's A load, B load and C store touch (row-major A, B, C in separate aligned buffers)."""

    a: int
    b: int
    c: int

    @property
    def total(self) -> int:
        return self.a + self.b + self.c


def scalar_warp_sectors(mapping: ScalarMapping, m: int, n: int, k: int, *, k_step: int = 0, warp: int = 0,
                        block: tuple[int, int] = (0, 0), element_size: int = 4) -> WarpSectors:
    """Sectors of A[row*K + k_step], B[k_step*N + col] and C[row*N + col] over one warp's active lanes
    (lanes whose output lies outside M x N are masked off, as the kernels' bounds check does)."""
    a_addr, b_addr, c_addr = [], [], []
    for thread in warp_threads(mapping.block_dim, warp):
        row, col = mapping.output_of(thread, block)
        if row >= m or col >= n:
            continue
        a_addr.append((row * k + k_step) * element_size)
        b_addr.append((k_step * n + col) * element_size)
        c_addr.append((row * n + col) * element_size)
    return WarpSectors(sectors_touched(a_addr, element_size), sectors_touched(b_addr, element_size),
                       sectors_touched(c_addr, element_size))


# -- shared memory: bank conflicts ---------------------------------------------------------------------


def bank_conflict_degree(word_indices: Iterable[int], banks: int = BANKS) -> int:
    """Serialized service groups for one warp's 4-byte accesses: the most distinct words any one bank is
    asked for (1 = conflict-free; lanes sharing a word are a broadcast, not a conflict)."""
    per_bank: dict[int, set[int]] = {}
    for word in word_indices:
        per_bank.setdefault(word % banks, set()).add(word)
    if not per_bank:
        raise ValueError("no accesses")
    return max(len(words) for words in per_bank.values())


def vector_bank_conflict_degree(byte_addresses: list[int], access_bytes: int) -> int:
    """Conflict degree of one warp's `access_bytes`-wide accesses (4, 8 or 16 bytes, aligned): lanes are
    served in phases of 128 bytes (32, 16 or 8 lanes), and within a phase every bank serves its distinct
    words one after another. Returns the worst phase's degree."""
    if access_bytes not in (4, 8, 16):
        raise ValueError("shared-memory accesses are 4, 8 or 16 bytes")
    lanes_per_phase = PHASE_BYTES // access_bytes
    worst = 0
    for start in range(0, len(byte_addresses), lanes_per_phase):
        words = []
        for addr in byte_addresses[start:start + lanes_per_phase]:
            if addr % access_bytes:
                raise ValueError(f"address {addr} is not {access_bytes}-byte aligned")
            words.extend(range(addr // BANK_WORD_BYTES, (addr + access_bytes) // BANK_WORD_BYTES))
        worst = max(worst, bank_conflict_degree(words))
    return worst


def column_words(column: int, rows: int = 32, row_pitch_words: int = 32) -> list[int]:
    """Words lane r reads when lane r reads element (r, column) of a row-major tile with the given pitch:
    a 32x32 float tile's column is 32-way; a pitch of 33 (one padding word) makes it conflict-free."""
    return [row * row_pitch_words + column for row in range(rows)]


def xor_swizzled_column_words(column: int, rows: int = 32, row_words: int = 32,
                              row_mask: Callable[[int], int] = lambda row: row) -> list[int]:
    """Words read for logical column `column` when logical (row, col) is stored at physical column
    col ^ row_mask(row) of its row (no padding). row_mask = row spreads a 32-row column over all 32
    banks; seed 000's weaker (row // 4) % 8 leaves it 4-way."""
    return [row * row_words + ((column ^ row_mask(row)) % row_words) for row in range(rows)]


def padding_overhead(rows: int, cols: int, pad_cols: int, element_size: int = 4) -> tuple[int, float]:
    """(extra bytes, extra fraction) of padding each row of a rows x cols tile by pad_cols elements:
    32x32 FP32 padded to 33 columns costs 128 bytes (3.125%), 16x16 padded to 17 costs 64 bytes (6.25%)."""
    extra = rows * pad_cols * element_size
    return extra, extra / (rows * cols * element_size)


def ldmatrix_row_addresses(row_pitch_bytes: int, chunk: int = 0, rows: int = 8,
                           swizzle: Callable[[int, int], int] | None = None) -> list[int]:
    """Byte addresses of the 8 row segments (16 bytes each) one ldmatrix 8x8 b16 matrix reads: logical
    16-byte chunk `chunk` of rows 0..7 of a tile with the given row pitch, optionally through a swizzle
    (row, logical chunk) -> physical chunk."""
    out = []
    for row in range(rows):
        physical = swizzle(row, chunk) if swizzle else chunk
        out.append(row * row_pitch_bytes + 16 * physical)
    return out


def xor_chunk_swizzle(chunks_per_row: int) -> Callable[[int, int], int]:
    """The usual 16-byte-chunk XOR swizzle: physical chunk = chunk ^ (row mod chunks_per_row)."""
    return lambda row, chunk: chunk ^ (row % chunks_per_row)


def ldmatrix_conflict_degree(row_pitch_bytes: int, chunk: int = 0,
                             swizzle: Callable[[int, int], int] | None = None) -> int:
    """Bank-conflict degree of one ldmatrix 8x8 phase over a tile with this row pitch (and swizzle).
    Seed 001: a BK = 32 half tile (64-byte rows) is 4-way row-major, 2-way XOR-swizzled (four chunks per
    row), conflict-free padded by 8 halves (80-byte rows); BK = 64 swizzled (128-byte rows) is conflict-free."""
    return vector_bank_conflict_degree(ldmatrix_row_addresses(row_pitch_bytes, chunk, swizzle=swizzle), 16)
