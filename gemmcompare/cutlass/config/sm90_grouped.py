"""Kernel template sm90_grouped: CUTLASS 3.x grouped GEMM, pointer-array (SM90a: TMA + wgmma, one problem per group).

One launch computes `groups` GEMMs of one n and k and their own M (an MoE layer: one group per expert). The
kernel is CUTLASS's `KernelPtrArrayTmaWarpSpecialized{Cooperative,Pingpong}` over
`cutlass::gemm::GroupProblemShape<Shape<int, int, int>>` with the `PtrArrayTmaWarpSpecialized*` epilogue: it
reads device arrays of per-group shapes, pointers and strides, and rewrites its TMA descriptors in place when
a CTA moves to another group (cutlass_configs/templates/sm90_grouped_kernel.cu.tmpl; gemm_abi.h has the ABI).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...contracts.precision import Scaling
from ...contracts.quantize import BLOCK
from .. import tags
from .base import MAX_ACCUMULATOR_REGISTERS
from .fields import ConfigError, Field
from .sm90 import Sm90Config

# Fields of sm90 a grouped kernel has no choice of: its epilogue is the pointer-array TMA one, its tile
# scheduler CUTLASS's group scheduler (PersistentTileSchedulerSm90Group: no stream-K for grouped SM90 GEMMs), and
# its operands are laid out as the ABI's grouped form says (swap_ab would transpose every group's C).
_FIXED = ("epilogue", "scheduler", "decomposition", "splits", "swap_ab")

# The group scheduler walks the tiles of all groups as one linear sequence: CUTLASS applies no raster heuristic to
# grouped problems ("since largest dimension can change per group", sm90_tile_scheduler_group.hpp; its heuristic
# would see one column of tiles and pick along M), and defaults to along M.
_RASTER = Field("raster", "choice", ("along_m", "along_n"),
                help="tile raster order within each group (the group scheduler has no heuristic)", runtime=True)


@dataclass(frozen=True)
class Sm90GroupedConfig(Sm90Config):
    """sm90's tile, cluster, schedule, stages, raster and swizzle, for a grouped problem (the ABI's contiguous
    form: A [sum M, K] rows stacked, B [groups, N, K] K-major, C [sum M, N]): layout tn, f16 or bf16 in."""

    TEMPLATE: ClassVar[str] = "sm90_grouped"
    DESCRIPTION: ClassVar[str] = ("CUTLASS 3.x grouped GEMM, pointer-array (SM90 TMA + wgmma, GroupProblemShape, one "
                                  "problem per group)")
    NAME_PREFIX: ClassVar[str] = "cutlass3x_sm90_grouped"
    GROUPED: ClassVar[bool] = True
    BATCHED: ClassVar[bool] = False  # a grouped launch has batch 1 (its entry says so)
    FIELDS: ClassVar[tuple[Field, ...]] = tuple(_RASTER if f.name == "raster" else f
                                                for f in Sm90Config.FIELDS if f.name not in _FIXED)
    DTYPES: ClassVar[tuple[str, ...]] = ("f16", "bf16")
    # What the pointer-array kernel keeps in shared memory besides the stages and the epilogue's D buffers: the
    # A and B TMA descriptors it rewrites per group (2 x 128 bytes) and the scheduler pipeline's barriers
    # (PipelineAsyncSharedStorage<8>: 128 bytes), which the CollectiveBuilder subtracts before it counts stages
    # (KernelSmemCarveout, sm90_gmma_builder.inl); and the epilogue's D descriptors, one per epilogue warp group
    # (NumEpilogueWarpGroups is 2 for both PtrArray TMA epilogues; no C source, so no C descriptor).
    KERNEL_CARVEOUT: ClassVar[int] = 2 * 128 + 128
    EPILOGUE_TENSORMAPS: ClassVar[int] = 2 * 128

    @classmethod
    def _defaults(cls, v):
        return super()._defaults({"raster": "along_m", **v})

    def resolved_stages(self) -> int:
        if self.stages != "auto":
            return self.stages
        cap = (tags.SMEM_CAPACITY[90] - self.KERNEL_CARVEOUT) // 128 * 128
        carve = -(-self.epilogue_smem_bytes() // 128) * 128
        return (cap - carve) // self.stage_bytes()

    def smem_bytes(self) -> int:
        return super().smem_bytes() + self.KERNEL_CARVEOUT + self.EPILOGUE_TENSORMAPS

    def validate(self):
        self._check_types(self.DTYPES)
        if self.layout != "tn":
            raise ConfigError(f"the grouped template takes A [sum M, K] row-major and each group's B [N, K] K-major: "
                              f"layout tn, not {self.layout}")
        if self.schedule not in ("cooperative", "pingpong"):
            raise ConfigError(f"grouped GEMMs run schedule cooperative or pingpong (CUTLASS's KernelPtrArray* "
                              f"schedules), not {self.schedule}")
        super().validate()
        total = self.smem_bytes()
        if total > tags.SMEM_CAPACITY[90]:
            raise ConfigError(f"{self.resolved_stages()} stages of {self.tile[0]}x{self.tile[1]}x{self.tile[2]} tiles, "
                              f"the epilogue and the per-group TMA descriptors need {total:,} bytes of shared memory; "
                              f"sm_90 allows {tags.SMEM_CAPACITY[90]:,}")

    @property
    def kernel_name(self):
        sched = tags.SM90_SCHEDULES[self.schedule].short
        m, n, k = self.tile
        return "_".join([
            self.NAME_PREFIX, self.dtype, self.out, self.acc, f"{m}x{n}x{k}", f"{self.cluster[0]}x{self.cluster[1]}x1",
            sched, f"st{self.stages}", self.layout, f"align{self.alignment}",
        ])

    def describe(self) -> str:
        return f"{super().describe()}, grouped: one problem per group, pointer-array (per-group TMA descriptors)"


@dataclass(frozen=True)
class Sm90GroupedFp8Config(Sm90GroupedConfig):
    """The grouped kernel with FP8 (e4m3/e5m2) A and B and DeepSeek-V3's block scales (1x128 of A, 128x128 of B):
    CUTLASS's `KernelPtrArrayTmaWarpSpecialized{Cooperative,Pingpong}FP8BlockScaledAccum` mainloop multiplies each
    128 of K's partial sums by their scales as it promotes them into FP32 (as sm90_fp8's blockwise kernel does for
    one GEMM). Each group's scales are read in place from the ABI's grouped block scales (gemm_abi.h)."""

    TEMPLATE: ClassVar[str] = "sm90_grouped_fp8"
    DESCRIPTION: ClassVar[str] = ("CUTLASS 3.x grouped FP8 GEMM with block scales, pointer-array (SM90 TMA + FP8 wgmma, "
                                  "scales multiplied in as each 128 of K is promoted)")
    NAME_PREFIX: ClassVar[str] = "cutlass3x_sm90_grouped_fp8_blockwise"
    DTYPES: ClassVar[tuple[str, ...]] = tags.FP8_INPUTS
    # one k tile is one scale block: the mainloop promotes and scales once per k tile
    TILE_K: ClassVar[dict[str, tuple[int, ...]]] = {"e4m3": (BLOCK,), "e5m2": (BLOCK,)}
    BLOCK_SCALE_GRANULARITY: ClassVar[tuple[int, int, int]] = (1, BLOCK, BLOCK)

    @classmethod
    def _defaults(cls, v):
        return super()._defaults({"dtype": "e4m3", "out": "bf16", "tile": (128, 128, BLOCK), **v})

    @property
    def scalings(self):
        return frozenset({Scaling.BLOCK})

    SCALING_NOTE: ClassVar[str] = ("block scales are multiplied into each group's partial sums in the mainloop; "
                                   "per-tensor and row/column scales: no grouped kernel yet")

    def stage_bytes(self) -> int:
        """One mainloop stage with its scales (a tile's rows of scale_a, its column blocks of scale_b), as
        CUTLASS's compute_stage_count_with_blockwise_scale counts them."""
        m, n, k = self.tile
        gm, gn, _ = self.BLOCK_SCALE_GRANULARITY
        raw = (m + n) * k * self.in_bits // 8 + 4 * (m // gm + n // gn)
        return -(-raw // 128) * 128 + 16

    def validate(self):
        _, gn, _ = self.BLOCK_SCALE_GRANULARITY
        if self.stages != "auto":
            raise ConfigError("the blockwise builder computes its own stage count (it has no StageCount<N> form): "
                              "stages auto")
        super().validate()
        if self.tile[1] % gn:
            raise ConfigError(f"block scales need tile N a multiple of {gn} (whole 128-column blocks of scale_b per "
                              f"tile), not {self.tile[1]}")
        m, n, _ = self.tile
        threads = tags.SM90_SCHEDULES[self.schedule].consumer_threads
        regs = 2 * m * n * self.acc_bits // 32 // threads
        if regs > MAX_ACCUMULATOR_REGISTERS:
            raise ConfigError(f"the promoting mainloop holds two {m}x{n} accumulator tiles over {threads} threads: "
                              f"{regs} registers per thread (more than {MAX_ACCUMULATOR_REGISTERS}: it would spill)")

    def describe(self) -> str:
        return (f"{super().describe()}; block scales (1x128 of A, 128x128 of B) multiplied in as each 128 of K is "
                "promoted to FP32")
