"""Kernel template cute_sm90: CuTe, our own Hopper kernel (TMA copy atoms, wgmma MMA atoms, an mbarrier pipeline).

Its rules are the kernel's (cutlass_configs/templates/cute_sm90_kernel.cu.tmpl), checked here so that a tile wgmma
cannot do or stages that do not fit are rejected with the reason before anything compiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .. import tags
from .base import TiledGemmConfig, _fmt
from .fields import ACC, DTYPE, LAYOUT, OUT, STAGES, TILE, ConfigError, Field

# f32 accumulators one consumer thread may hold: a 64 x 256 wgmma tile is 128 of them, and a consumer
# warpgroup has 232 registers under setmaxnreg (255 without), the rest for descriptors and addresses.
MAX_ACCUMULATORS = 128
WGMMA_N = (16, 32, 64, 96, 128, 192, 256)  # wgmma N of CuTe's default (non-extended) SM90 atoms
TILE_K = (64, 128)  # whole 128-byte swizzle rows of 16-bit elements
SMEM_SLACK = 2048  # the barriers' 1024-byte-aligned tail of SharedStorage + rounding the base up to 1024


@dataclass(frozen=True)
class CuteSm90Config(TiledGemmConfig):
    TEMPLATE: ClassVar[str] = "cute_sm90"
    DESCRIPTION: ClassVar[str] = "CuTe SM90 kernel (TMA copy atoms, 128B-swizzled stages, wgmma atoms, mbarrier pipeline)"
    NAME_PREFIX: ClassVar[str] = "cute_sm90"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        DTYPE, OUT, ACC, LAYOUT, TILE,
        Field("schedule", "choice", tuple(tags.CUTE_SM90_SCHEDULES),
              help="pipelined (every warpgroup multiplies, one thread issues TMA ahead) or warp_specialized "
                   "(a producer warpgroup, persistent CTAs)"),
        Field("consumers", "choice", (1, 2), help="warpgroups that multiply, stacked along M (64 rows each per wgmma)"),
        STAGES,
        Field("swizzle", "choice", (1, 2, 4, 8, 16), help="tile rows walked together (grouped raster, for L2 reuse)",
              runtime=True),
    )

    schedule: str
    consumers: int
    stages: Any
    swizzle: int

    min_cc: ClassVar[int] = 90
    arch_specific: ClassVar[bool] = True  # wgmma, setmaxnreg: sm_90a only
    DTYPES: ClassVar[tuple[str, ...]] = ("f16", "bf16")

    @classmethod
    def _defaults(cls, v):
        return {
            **cls._contract_defaults(v),
            "tile": v.get("tile", (128, 256, 64)),
            "schedule": v.get("schedule", "warp_specialized"),
            "consumers": v.get("consumers", 2),
            "stages": v.get("stages", 4),
            "swizzle": v.get("swizzle", 8),
        }

    @property
    def threads(self) -> int:
        producers = 1 if self.schedule == "warp_specialized" else 0
        return 128 * (producers + self.consumers)

    def smem_bytes(self) -> int:
        """The kernel's dynamic shared memory: the stages (A and B tiles), the pipeline barriers and the
        alignment slack (kSmemBytes in the template)."""
        return self._mainloop_smem_bytes() + SMEM_SLACK

    def vector_elements(self):
        # TMA reads 16-byte rows of A and B; C is written element by element (any ldc)
        return (128 // self.in_bits, 128 // self.in_bits, 1)

    def pad_multiples(self):
        """Nothing is padded: TMA zero-fills the part of a box past M, N or K, and the epilogue stores only
        inside the matrix. (The rows' 16-byte alignment is a leading-dimension rule: vector_elements.)"""
        return (1, 1, 1)

    @property
    def mma_atom(self) -> str:
        return tags.cute_sm90_mma_atom(self.dtype, self.acc, self.tile[1])

    def validate(self):
        self._check_types(self.DTYPES)
        if self.layout != "tn":
            raise ConfigError(f"layout {self.layout}: the CuTe SM90 kernel reads K-major operands only (layout tn: "
                              "A row-major, B column-major)")
        m, n, k = self.tile
        rows = 64 * self.consumers
        if m % rows or not rows <= m <= 256:
            raise ConfigError(f"tile M {m} must be a multiple of {rows} up to 256: wgmma is 64 rows per warpgroup and "
                              f"{self.consumers} consumer warpgroup(s) split the tile")
        if n not in WGMMA_N:
            raise ConfigError(f"tile N {n} is not a wgmma N (one of {', '.join(map(str, WGMMA_N))})")
        if k not in TILE_K:
            raise ConfigError(f"tile K {k} must be {' or '.join(map(str, TILE_K))} (whole 128-byte swizzle rows of "
                              f"{self.dtype})")
        accumulators = m * n // (128 * self.consumers) * self.acc_bits // 32
        if accumulators > MAX_ACCUMULATORS:
            raise ConfigError(f"a {m}x{n} tile over {self.consumers} consumer warpgroup(s) holds {accumulators} "
                              f"accumulator registers per thread (more than {MAX_ACCUMULATORS}: it would spill); "
                              "use 2 consumers or a smaller tile")
        if self.stages == "auto":
            raise ConfigError("the CuTe SM90 kernel needs a fixed stage count (2 or more), not auto")
        cap = tags.SMEM_CAPACITY[90]
        if self.smem_bytes() > cap:
            raise ConfigError(f"{self.stages} stages of {_fmt(self.tile)} {self.dtype} tiles need {self.smem_bytes():,} "
                              f"bytes of shared memory; sm_90 allows {cap:,} per CTA")

    @property
    def kernel_name(self):
        return "_".join([
            self.NAME_PREFIX, self.dtype, self.out, self.acc, _fmt(self.tile),
            tags.CUTE_SM90_SCHEDULES[self.schedule].short, f"c{self.consumers}", f"{self.stages}st", self.layout,
        ])

    @property
    def runtime_suffix(self):
        return f"_swz{self.swizzle}"
