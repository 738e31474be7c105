"""Kernel template sm90: CUTLASS 3.x, CollectiveBuilder (SM90a: TMA + wgmma)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from ...contracts.precision import Order
from .. import tags
from .base import TiledGemmConfig, _fmt
from .fields import ACC, ALIGNMENT, DTYPE, LAYOUT, OUT, STAGES, SWAP_AB, TILE, ConfigError, Field


@dataclass(frozen=True)
class Sm90Config(TiledGemmConfig):
    TEMPLATE: ClassVar[str] = "sm90"
    DESCRIPTION: ClassVar[str] = "CUTLASS 3.x CollectiveBuilder (SM90 TMA + wgmma)"
    NAME_PREFIX: ClassVar[str] = "cutlass3x"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        DTYPE, OUT, ACC, LAYOUT, TILE,
        Field("cluster", "shape", length=2, help="thread-block cluster [M, N]"),
        Field("schedule", "choice", tuple(tags.SM90_SCHEDULES),
              help="mainloop: tma_ws (1 consumer warp group), cooperative (2 on one tile), pingpong (2 on alternate tiles)"),
        Field("epilogue", "choice", ("tma", "nosmem"), help="tma: staged through shared memory and stored by TMA"),
        STAGES,
        Field("scheduler", "choice", tuple(tags.SM90_TILE_SCHEDULERS), help="tile scheduler"),
        Field("raster", "choice", tuple(tags.SM90_RASTER), help="tile raster order", runtime=True),
        Field("swizzle", "choice", (1, 2, 4, 8), help="max swizzle size of the tile raster", runtime=True),
        Field("decomposition", "choice", tuple(tags.SM90_DECOMPOSITION),
              help="stream-K scheduler: how K is shared between CTAs", runtime=True),
        Field("splits", "int", help="stream-K scheduler: K splits for decomposition split_k", runtime=True),
        ALIGNMENT,
        SWAP_AB,
    )

    cluster: tuple[int, int]
    schedule: str
    epilogue: str
    stages: Any
    scheduler: str
    raster: str
    swizzle: int
    decomposition: str
    splits: int
    alignment: int
    swap_ab: bool

    min_cc: ClassVar[int] = 90
    arch_specific: ClassVar[bool] = True
    READS_C: ClassVar[bool] = False  # ElementC = void: no C operand, no shared memory for it
    INDEX_BITS: ClassVar[int] = 64  # CUTLASS 3 strides are int64
    BATCHED: ClassVar[bool] = True  # L = batch, the operands' batch strides in their third stride mode
    TILE_K: ClassVar[dict[str, tuple[int, ...]]] = {"f16": (32, 64, 128), "bf16": (32, 64, 128), "tf32": (16, 32, 64)}
    DTYPES: ClassVar[tuple[str, ...]] = ("f16", "bf16", "tf32")
    MAX_CLUSTER = 8  # portable cluster size

    @classmethod
    def _defaults(cls, v):
        contract = cls._contract_defaults(v)
        dtype = contract["dtype"]
        return {
            **contract,
            "tile": v.get("tile", (128, 128, 32) if dtype == "tf32" else (128, 256, 64)),
            "cluster": v.get("cluster", (1, 1)),
            "schedule": v.get("schedule", "cooperative"),
            "epilogue": v.get("epilogue", "tma"),
            "stages": v.get("stages", "auto"),
            "scheduler": v.get("scheduler", "persistent"),
            "raster": v.get("raster", "heuristic"),
            "swizzle": v.get("swizzle", 1),
            "decomposition": v.get("decomposition", "heuristic"),
            "splits": v.get("splits", 1),
            "alignment": v.get("alignment", 128 // tags.INPUT_TYPES[dtype].bits),
            "swap_ab": v.get("swap_ab", False),
        }

    @property
    def d_alignment(self) -> int:
        return 128 // self.out_bits

    @property
    def kernel_orders(self) -> tuple[Order, Order, Order]:
        """The layouts of the kernel's own A, B and D. Swapped, it computes D^T = B^T A^T: its A is the contract's
        B transposed (K-major exactly when B is), its B the contract's A transposed, its D column-major."""
        order_a, order_b = self.orders
        if not self.swap_ab:
            return order_a, order_b, Order.ROW
        flip = {Order.ROW: Order.COL, Order.COL: Order.ROW}
        return flip[order_b], flip[order_a], Order.COL

    def vector_elements(self):
        return (self.alignment, self.alignment, self.d_alignment)

    def epilogue_tile(self) -> tuple[int, int]:
        """EpilogueTileAuto's choice (cutlass/epilogue/collective/builders/sm90_builder.inl)."""
        m, n, _ = self.tile
        tile_m = min(128 if self.schedule == "cooperative" else 64, m)
        tile_n = math.gcd(min(32, n), n)
        return tile_m, tile_n

    def epilogue_smem_bytes(self) -> int:
        """Shared memory of the TMA epilogue with no C source: min(epilogue tiles, 2) D buffers."""
        if self.epilogue == "nosmem":
            return 0
        em, en = self.epilogue_tile()
        tiles = (self.tile[0] // em) * (self.tile[1] // en)
        return min(tiles, 2) * em * en * self.out_bits // 8

    def stage_bytes(self) -> int:
        """One mainloop stage: A and B tiles (128-byte aligned) plus its two pipeline barriers."""
        m, n, k = self.tile
        raw = (m + n) * k * self.in_bits // 8
        return -(-raw // 128) * 128 + 16

    def smem_bytes(self) -> int:
        """Shared memory the kernel is expected to use: the resolved stages plus the epilogue's carve-out."""
        return self.resolved_stages() * self.stage_bytes() + self.epilogue_smem_bytes()

    def resolved_stages(self) -> int:
        """The stage count the builder will use (StageCountAutoCarveout's arithmetic for auto)."""
        if self.stages != "auto":
            return self.stages
        cap = tags.SMEM_CAPACITY[90] // 128 * 128
        carve = -(-self.epilogue_smem_bytes() // 128) * 128
        return (cap - carve) // self.stage_bytes()

    def validate(self):
        self._check_types(self.DTYPES)
        m, n, k = self.tile
        if m % 64 or not 64 <= m <= 256:
            raise ConfigError(f"tile M {m} must be 64, 128, 192 or 256 (wgmma is 64 rows per warp group)")
        if n % 8 or not 16 <= n <= 256:
            raise ConfigError(f"tile N {n} must be a multiple of 8 between 16 and 256 (wgmma N)")
        if k not in self.TILE_K[self.dtype]:
            raise ConfigError(f"tile K {k} for {self.dtype} must be one of {', '.join(map(str, self.TILE_K[self.dtype]))}")
        if self.dtype == "tf32":
            if self.layout == "tt":
                raise ConfigError("tf32 with both operands row-major (tt) needs a transposed epilogue gemmcompare does not render")
            if self.layout == "nt" and k != 32:
                raise ConfigError("tf32 nt (both operands MN-major, transposed in shared memory) needs tile K 32")
            if n % k:
                raise ConfigError(f"tf32 needs tile N ({n}) to be a multiple of tile K ({k})")
        if self.swap_ab and self.dtype not in ("f16", "bf16"):
            raise ConfigError(f"swap_ab is built for f16 and bf16 only, not {self.dtype} (its layout rules are the "
                              "contract's, not the swapped kernel's)")
        sched = tags.SM90_SCHEDULES[self.schedule]
        if self.schedule == "cooperative" and m % 128:
            raise ConfigError(f"the cooperative schedule splits tile M between two warp groups: tile M {m} must be a multiple of 128 "
                              "(64-row tiles: schedule pingpong)")
        self._check_accumulators(m, n, sched.consumer_threads)
        if self.epilogue == "tma" and not sched.tma_epilogue:
            raise ConfigError("the tma_ws schedule pairs with the nosmem epilogue only (as in CUTLASS's generator)")
        cm, cn = self.cluster
        if cm not in (1, 2, 4, 8) or cn not in (1, 2, 4, 8) or cm * cn > self.MAX_CLUSTER:
            raise ConfigError(f"cluster {_fmt(self.cluster)}: each side must be 1, 2, 4 or 8 and at most {self.MAX_CLUSTER} CTAs in all")
        if self.scheduler == "stream_k" and self.schedule != "cooperative":
            raise ConfigError(f"the stream_k scheduler runs with the cooperative schedule only, not {self.schedule} "
                              "(CUTLASS's ping-pong and basic warp-specialized kernels static_assert against it)")
        if self.scheduler != "stream_k" and (self.decomposition != "heuristic" or self.splits != 1):
            raise ConfigError("decomposition and splits are arguments of the stream_k scheduler")
        if self.splits > 1 and self.decomposition not in ("heuristic", "split_k"):
            raise ConfigError(f"splits {self.splits} needs decomposition split_k (or heuristic)")
        if self.alignment * self.in_bits != 128:
            raise ConfigError(f"TMA needs 16-byte aligned rows: alignment must be {128 // self.in_bits} for {self.dtype}")
        stages = self.resolved_stages()
        total = stages * self.stage_bytes() + self.epilogue_smem_bytes()
        if stages < 2:
            raise ConfigError(f"{_fmt(self.tile)} {self.dtype} tiles leave room for {stages} stage(s) next to the epilogue; at least 2 are needed")
        if total > tags.SMEM_CAPACITY[90]:
            raise ConfigError(f"{stages} stages of {_fmt(self.tile)} {self.dtype} tiles plus the epilogue need {total:,} bytes "
                              f"of shared memory; sm_90 allows {tags.SMEM_CAPACITY[90]:,}")

    @property
    def kernel_name(self):
        sched = tags.SM90_SCHEDULES[self.schedule].short
        scheduler = "streamk" if self.scheduler == "stream_k" else "persistent"
        return "_".join([
            f"{self.NAME_PREFIX}_sm90_tensorop", self.dtype, self.out, self.acc, _fmt(self.tile),
            f"{self.cluster[0]}x{self.cluster[1]}x1", sched, f"epi{self.epilogue}", f"st{self.stages}", scheduler,
            self.layout, f"align{self.alignment}",
        ] + (["swapab"] if self.swap_ab else []))

    @property
    def runtime_suffix(self):
        suffix = f"_raster{tags.SM90_RASTER[self.raster][1]}_swz{self.swizzle}"
        if self.scheduler == "stream_k":
            suffix += f"_{tags.SM90_DECOMPOSITION[self.decomposition][1]}{self.splits}"
        return suffix
