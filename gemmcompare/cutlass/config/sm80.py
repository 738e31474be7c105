"""Kernel template sm80: CUTLASS 2.x, device::GemmUniversal (SM80; runs on SM80 and later)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .. import tags
from .base import TiledGemmConfig, _fmt
from .fields import ACC, ALIGNMENT, DTYPE, LAYOUT, OUT, STAGES, TILE, ConfigError, Field


@dataclass(frozen=True)
class Sm80Config(TiledGemmConfig):
    TEMPLATE: ClassVar[str] = "sm80"
    DESCRIPTION: ClassVar[str] = "CUTLASS 2.x device::GemmUniversal (SM80 multistage)"
    NAME_PREFIX: ClassVar[str] = "cutlass2x"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        DTYPE, OUT, ACC, LAYOUT, TILE,
        Field("warp", "shape", length=3, help="warp tile [M, N, K]; K equals the tile's K"),
        Field("instruction", "shape", length=3, help="MMA instruction shape ([1, 1, 1] = SIMT FMA)"),
        STAGES,
        Field("swizzle", "choice", (1, 2, 4, 8), help="GemmIdentityThreadblockSwizzle<N>"),
        Field("split_k", "choice", ("none", "serial", "parallel"),
              help="serial: partitions reduce in turn through a semaphore; parallel: partials + a reduction kernel"),
        Field("slices", "int", help="split-K partitions of K", runtime=True),
        ALIGNMENT,
        Field("arch", "choice", (80, 86, 89, 90), help="lowest architecture (sets the shared-memory budget)"),
    )

    warp: tuple[int, int, int]
    instruction: tuple[int, int, int]
    stages: Any
    swizzle: int
    split_k: str
    slices: int
    alignment: int
    arch: int

    # tile K that CUTLASS 2's shared-memory layouts take, per input type
    TILE_K: ClassVar[dict[str, tuple[int, ...]]] = {"f16": (32, 64), "bf16": (32, 64), "tf32": (16, 32), "f32": (8, 16)}
    DTYPES: ClassVar[tuple[str, ...]] = ("f16", "bf16", "tf32", "f32")
    INSTRUCTIONS: ClassVar[dict[str, tuple[tuple[int, int, int], ...]]] = {
        "f16": ((16, 8, 16), (16, 8, 8)), "bf16": ((16, 8, 16), (16, 8, 8)), "tf32": ((16, 8, 8),), "f32": ((1, 1, 1),),
    }

    @classmethod
    def _defaults(cls, v):
        contract = cls._contract_defaults(v)
        dtype = contract["dtype"]
        simt = dtype == "f32"
        tile = v.get("tile", (128, 128, 8) if simt else (128, 256, 32))
        return {
            **contract,
            "tile": tile,
            "warp": v.get("warp", (32, 64, tile[2]) if simt else (64, 64, tile[2])),
            "instruction": v.get("instruction", cls.INSTRUCTIONS.get(dtype, ((16, 8, 16),))[0]),  # (a dtype it lacks: validate says so)
            "stages": v.get("stages", 4 if simt else 3),
            "swizzle": v.get("swizzle", 8),
            "split_k": v.get("split_k", "none"),
            "slices": v.get("slices", 1),
            "alignment": v.get("alignment", 1 if simt else 128 // tags.INPUT_TYPES[dtype].bits),
            "arch": v.get("arch", 80),
        }

    @property
    def opclass(self) -> str:
        return "simt" if self.dtype == "f32" else "tensorop"

    @property
    def min_cc(self) -> int:
        return self.arch

    @property
    def warp_count(self) -> tuple[int, int, int]:
        return tuple(t // w for t, w in zip(self.tile, self.warp))

    @property
    def threads(self) -> int:
        wm, wn, wk = self.warp_count
        return 32 * wm * wn * wk

    @property
    def c_alignment(self) -> int:
        """Elements per epilogue access of C: as many bytes as an A/B access, at most 16."""
        return max(1, min(128 // self.out_bits, self.alignment * self.in_bits // self.out_bits))

    @property
    def partial_alignment(self) -> int:
        """Elements per access of the FP32 partial sums of a parallel split-K."""
        return max(1, min(128 // self.acc_bits, self.c_alignment))

    def smem_bytes(self) -> int:
        return self._mainloop_smem_bytes()

    def vector_elements(self):
        return (self.alignment, self.alignment, self.c_alignment)

    def validate(self):
        self._check_types(self.DTYPES)
        if self.instruction not in self.INSTRUCTIONS[self.dtype]:
            raise ConfigError(
                f"instruction {_fmt(self.instruction)} is not an SM80 {self.opclass} instruction for {self.dtype} "
                f"(takes {', '.join(_fmt(i) for i in self.INSTRUCTIONS[self.dtype])})")
        if self.tile[2] not in self.TILE_K[self.dtype]:
            raise ConfigError(f"tile K {self.tile[2]} does not fit CUTLASS 2's shared-memory layouts for {self.dtype} "
                              f"(takes {', '.join(map(str, self.TILE_K[self.dtype]))})")
        for name, t, w in zip("MNK", self.tile, self.warp):
            if t % w:
                raise ConfigError(f"tile {_fmt(self.tile)} is not divisible by warp {_fmt(self.warp)} along {name}")
        if self.warp[2] != self.tile[2]:
            raise ConfigError(f"warp K {self.warp[2]} must equal tile K {self.tile[2]} (no intra-CTA split-K)")
        for name, w, i in zip("MNK", self.warp, self.instruction):
            if w % i:
                raise ConfigError(f"warp {_fmt(self.warp)} is not divisible by instruction {_fmt(self.instruction)} along {name}")
        self._check_accumulators(self.warp[0], self.warp[1], 32)
        self._check_cta("CUTLASS 2", self.arch)
        access_bits = self.alignment * self.in_bits
        if self.opclass == "simt":
            if self.alignment != 1:
                raise ConfigError("SIMT (dtype f32) configurations take alignment 1")
        elif access_bits not in (32, 64, 128):
            raise ConfigError(f"alignment {self.alignment} x {self.in_bits} bits is not a cp.async width (4, 8 or 16 bytes)")
        if self.split_k == "none" and self.slices != 1:
            raise ConfigError(f"slices {self.slices} needs split_k serial or parallel")

    @property
    def kernel_name(self):
        parts = [
            f"{self.NAME_PREFIX}_sm{self.arch}_{self.opclass}", self.dtype, self.out, self.acc,
            _fmt(self.tile), _fmt(self.warp), _fmt(self.instruction), f"{self.stages}st", f"swz{self.swizzle}",
            self.layout, f"align{self.alignment}",
        ]
        if self.split_k != "none":
            parts.append(f"splitk{self.split_k}")
        return "_".join(parts)

    @property
    def runtime_suffix(self):
        return "" if self.split_k == "none" else f"_slices{self.slices}"
