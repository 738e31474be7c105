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

from .. import tags
from .fields import ConfigError, Field
from .sm90 import Sm90Config

# Fields of sm90 a grouped kernel has no choice of: its epilogue is the pointer-array TMA one, its tile
# scheduler CUTLASS's group scheduler (PersistentTileSchedulerSm90Group: no stream-K for grouped SM90 GEMMs), and
# its operands are laid out as the ABI's grouped form says (swap_ab would transpose every group's C).
_FIXED = ("epilogue", "scheduler", "decomposition", "splits", "swap_ab")


@dataclass(frozen=True)
class Sm90GroupedConfig(Sm90Config):
    """sm90's tile, cluster, schedule, stages, raster and swizzle, for a grouped problem (the ABI's contiguous
    form: A [sum M, K] rows stacked, B [groups, N, K] K-major, C [sum M, N]): layout tn, f16 or bf16 in."""

    TEMPLATE: ClassVar[str] = "sm90_grouped"
    DESCRIPTION: ClassVar[str] = ("CUTLASS 3.x grouped GEMM, pointer-array (SM90 TMA + wgmma, GroupProblemShape, one "
                                  "problem per group)")
    NAME_PREFIX: ClassVar[str] = "cutlass3x_sm90_grouped"
    GROUPED: ClassVar[bool] = True
    FIELDS: ClassVar[tuple[Field, ...]] = tuple(f for f in Sm90Config.FIELDS if f.name not in _FIXED)
    DTYPES: ClassVar[tuple[str, ...]] = ("f16", "bf16")
    # What the pointer-array kernel keeps in shared memory besides the stages and the epilogue's D buffers: the
    # A and B TMA descriptors it rewrites per group (2 x 128 bytes) and the scheduler pipeline's barriers
    # (PipelineAsyncSharedStorage<8>: 128 bytes), which the CollectiveBuilder subtracts before it counts stages
    # (KernelSmemCarveout, sm90_gmma_builder.inl); and the epilogue's D descriptors, one per epilogue warp group
    # (NumEpilogueWarpGroups is 2 for both PtrArray TMA epilogues; no C source, so no C descriptor).
    KERNEL_CARVEOUT: ClassVar[int] = 2 * 128 + 128
    EPILOGUE_TENSORMAPS: ClassVar[int] = 2 * 128

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
