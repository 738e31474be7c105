"""Kernel template cute_sm80: CuTe, our own SM80-style kernel (cp.async + ldmatrix + mma.sync)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .. import tags
from .base import TiledGemmConfig, _fmt
from .fields import ACC, DTYPE, LAYOUT, OUT, STAGES, TILE, ConfigError, Field


@dataclass(frozen=True)
class CuteSm80Config(TiledGemmConfig):
    TEMPLATE: ClassVar[str] = "cute_sm80"
    DESCRIPTION: ClassVar[str] = "CuTe kernel (TiledMMA + TiledCopy, cp.async, ldmatrix, mma.sync)"
    NAME_PREFIX: ClassVar[str] = "cute"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        DTYPE, OUT, ACC, LAYOUT, TILE,
        Field("warps", "shape", length=2, help="warps along [M, N]; each owns a (tile M/warps M) x (tile N/warps N) block"),
        Field("atom", "shape", length=3, help="mma.sync shape: [16, 8, 16] or [16, 8, 8]"),
        STAGES,
        Field("swizzle", "choice", (1, 2, 4, 8, 16), help="tile rows walked together (grouped raster, for L2 reuse)",
              runtime=True),
    )

    warps: tuple[int, int]
    atom: tuple[int, int, int]
    stages: Any
    swizzle: int

    min_cc: ClassVar[int] = 80
    SMEM_ARCH: ClassVar[int] = 80
    DTYPES: ClassVar[tuple[str, ...]] = ("f16", "bf16", "tf32")  # shared-memory budget: the lowest architecture it runs on

    @classmethod
    def _defaults(cls, v):
        contract = cls._contract_defaults(v)
        return {
            **contract,
            "tile": v.get("tile", (128, 128, 32)),
            "warps": v.get("warps", (2, 2)),
            "atom": v.get("atom", (16, 8, 8) if contract["dtype"] == "tf32" else (16, 8, 16)),
            "stages": v.get("stages", 3),
            "swizzle": v.get("swizzle", 8),
        }

    @property
    def threads(self) -> int:
        return 32 * self.warps[0] * self.warps[1]

    @property
    def vector(self) -> int:
        """Elements per 16-byte cp.async."""
        return 128 // self.in_bits

    def smem_bytes(self) -> int:
        return self._mainloop_smem_bytes()

    def vector_elements(self):
        return (self.vector, self.vector, 1)  # C is written element by element

    def validate(self):
        self._check_types(self.DTYPES)
        atom = tags.CUTE_MMA_ATOMS.get((self.dtype, self.acc, self.atom))
        if atom is None:
            shapes = sorted({s for (d, a, s) in tags.CUTE_MMA_ATOMS if d == self.dtype and a == self.acc})
            raise ConfigError(f"no SM80 mma.sync atom {_fmt(self.atom)} for {self.dtype} in, {self.acc} accumulate "
                              f"(have {', '.join(_fmt(s) for s in shapes)})")
        if self.dtype == "tf32" and self.layout != "tn":
            raise ConfigError("tf32 takes K-major operands only (layout tn): ldmatrix cannot transpose 32-bit elements")
        m, n, k = self.tile
        wm, wn = self.warps
        # The TiledMMA covers (16 * warps M) x (16 * warps N) x atom K per step (16 columns per warp so
        # one ldmatrix.x4 feeds two n8 atoms of B).
        if m % (16 * wm) or n % (16 * wn):
            raise ConfigError(f"tile {_fmt(self.tile)} is not divisible by the MMA tile {16 * wm}x{16 * wn} of warps {_fmt(self.warps)}")
        if k % self.atom[2] or k // self.atom[2] < 2:
            raise ConfigError(f"tile K {k} must hold at least two MMA K steps of {self.atom[2]}")
        row_elems = 1024 // self.in_bits  # elements in one 128-byte shared-memory row
        for operand, order, rows in (("A", self.orders[0], m), ("B", self.orders[1], n)):
            if tags.k_major(operand.lower(), order):
                # Swizzled rows of min(K, 128 bytes); the copy puts k/vector threads along each row.
                atom_k = min(k, row_elems)
                vecs = atom_k // self.vector
                if k % atom_k or vecs < 2 or vecs & (vecs - 1):
                    raise ConfigError(f"tile K {k} does not split into swizzled rows of a power-of-two number of "
                                      f"16-byte vectors for {operand}")
                per_row = k // self.vector
                if per_row > self.threads or self.threads % per_row:
                    raise ConfigError(f"{self.threads} threads cannot share the {per_row} 16-byte vectors of one {operand} row")
                if rows % (self.threads // per_row):
                    raise ConfigError(f"{operand} tile rows {rows} are not a multiple of the {self.threads // per_row} "
                                      f"rows one copy step covers")
            else:
                # 128-byte swizzled columns along M (or N); the copy puts 8 threads along each.
                if rows % row_elems:
                    raise ConfigError(f"{operand} is MN-major: its tile extent {rows} must be a multiple of {row_elems} "
                                      f"(one swizzled 128-byte row)")
                along_k = self.threads // (row_elems // self.vector)
                if k % along_k:
                    raise ConfigError(f"MN-major {operand}: tile K {k} is not a multiple of the {along_k} K columns "
                                      f"one copy step covers")
        self._check_accumulators(m // wm, n // wn, 32)
        self._check_cta("the CuTe kernel", self.SMEM_ARCH)

    @property
    def kernel_name(self):
        return "_".join([
            f"{self.NAME_PREFIX}_sm80", self.dtype, self.out, self.acc, _fmt(self.tile), f"w{self.warps[0]}x{self.warps[1]}",
            f"mma{_fmt(self.atom)}", f"{self.stages}st", self.layout,
        ])

    @property
    def runtime_suffix(self):
        return f"_swz{self.swizzle}"
