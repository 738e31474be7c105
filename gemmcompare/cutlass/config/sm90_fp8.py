"""Kernel template sm90_fp8: CUTLASS 3.x FP8 (SM90a: TMA + FP8 wgmma, per-tensor scales in the epilogue)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...contracts.precision import Scaling
from ...contracts.quantize import BLOCK
from .. import tags
from .base import MAX_ACCUMULATOR_REGISTERS, _fmt
from .fields import ConfigError, Field
from .sm90 import Sm90Config


@dataclass(frozen=True)
class Sm90Fp8Config(Sm90Config):
    """The sm90 kernel with FP8 (e4m3/e5m2) A and B: the fields of sm90 plus `accumulation` and `scaling`.

    scaling tensor: the two per-tensor scales (and alpha) are one scalar broadcast of the epilogue, read from
    device pointers inside the launch: D = (alpha * scale_a * scale_b) * acc, the harness's dequantized
    product (A ~= A_q * scale_a). scaling block: DeepSeek-V3's 1x128 scales of A and 128x128 of B, read from
    the same pointers by CUTLASS's blockwise mainloop, which multiplies each k block's partial sums by their
    two scales as it promotes them into FP32 (every 128 of K); the epilogue applies alpha."""

    TEMPLATE: ClassVar[str] = "sm90_fp8"
    BATCHED: ClassVar[bool] = False  # one matrix's scales per launch: batched FP8 problems are not offered
    DESCRIPTION: ClassVar[str] = "CUTLASS 3.x CollectiveBuilder FP8 (SM90 TMA + FP8 wgmma, scales from device pointers)"
    NAME_PREFIX: ClassVar[str] = "cutlass3x_sm90_fp8"
    # swap_ab is not one of its fields: the FP8 kernel templates compute D = A B as the contract lays them out
    FIELDS: ClassVar[tuple[Field, ...]] = tuple(f for f in Sm90Config.FIELDS if f.name != "swap_ab") + (
        Field("accumulation", "choice", tuple(tags.SM90_FP8_ACCUMULATION),
              help="promote: wgmma partial sums added into FP32 registers every 128 of K (CUTLASS's FP8 mainloop); "
                   "fast: the FP8FastAccum schedules (the tensor cores' ~14-bit accumulation, _fastacc contracts only)"),
        Field("scaling", "choice", tuple(tags.SM90_FP8_SCALING),
              help="tensor: per-tensor scales in the epilogue; block: 1x128 (A) and 128x128 (B) block scales "
                   "applied as the mainloop promotes each 128 of K (FP8BlockScaledAccum; accumulation promote, "
                   "tile K 128, tile N a multiple of 128, stages auto)"),
    )

    accumulation: str
    scaling: str

    # FP8 wgmma takes 32 of K per step; the promoting mainloop adds into FP32 every 4 steps (mma_promotion_interval),
    # which must be a multiple of the steps per k tile (its can_implement): tile K 32 x 1, 2 or 4
    TILE_K: ClassVar[dict[str, tuple[int, ...]]] = {"e4m3": (64, 128), "e5m2": (64, 128)}
    DTYPES: ClassVar[tuple[str, ...]] = tags.FP8_INPUTS
    # DeepSeek-V3's scale blocks (contracts/quantize.py): M x N x K extents one scale covers, for A (M x K) and B (N x K)
    BLOCK_SCALE_GRANULARITY: ClassVar[tuple[int, int, int]] = (1, BLOCK, BLOCK)

    @classmethod
    def _defaults(cls, v):
        fp8 = {"dtype": "e4m3", "out": "bf16", "tile": (128, 128, 128), **v}
        return {**super()._defaults(fp8), "accumulation": v.get("accumulation", "promote"),
                "scaling": v.get("scaling", "tensor")}

    @property
    def scalings(self):
        return frozenset({Scaling(self.scaling)})

    @property
    def scaling_note(self) -> str:
        if self.scaling == "block":
            return ("block scales are multiplied into the partial sums in the mainloop; per-tensor scales: the "
                    "scaling tensor entries of sm90_fp8; row/column scales: not built yet")
        return ("the two per-tensor scales fold into the epilogue's scalar; block scales: the scaling block "
                "entries of sm90_fp8 (sm90_fp8_blockwise_*); row/column scales need a row and a column broadcast "
                "in the epilogue: not built yet")

    @property
    def fast_accum(self) -> bool:
        return self.accumulation == "fast"

    def stage_bytes(self) -> int:
        """One mainloop stage; under block scaling also its scales (a tile's rows of scale_a and its column
        blocks of scale_b), as CUTLASS's compute_stage_count_with_blockwise_scale counts them."""
        if self.scaling != "block":
            return super().stage_bytes()
        m, n, k = self.tile
        gm, gn, _ = self.BLOCK_SCALE_GRANULARITY
        raw = (m + n) * k * self.in_bits // 8 + 4 * (m // gm + n // gn)
        return -(-raw // 128) * 128 + 16

    def validate(self):
        self._check_types(self.DTYPES)
        if self.layout != "tn":
            raise ConfigError(f"FP8 wgmma takes K-major operands only: layout tn (A row-major, B column-major), not {self.layout}")
        if self.schedule not in tags.SM90_FP8_FAST_ACCUM:
            raise ConfigError(f"FP8 configurations run schedule {' or '.join(tags.SM90_FP8_FAST_ACCUM)}, not {self.schedule} "
                              "(its nosmem epilogue cannot apply the scales)")
        if self.epilogue != "tma":
            raise ConfigError("FP8 configurations take epilogue tma: the scales are a scalar broadcast of its visitor tree")
        if self.scaling == "block":
            self._check_block_scaling()
        super().validate()
        if self.accumulation == "promote":
            m, n, _ = self.tile
            threads = tags.SM90_SCHEDULES[self.schedule].consumer_threads
            regs = 2 * m * n * self.acc_bits // 32 // threads
            if regs > MAX_ACCUMULATOR_REGISTERS:
                raise ConfigError(
                    f"accumulation promote holds two {m}x{n} accumulator tiles (the wgmma one and its FP32 sum) over "
                    f"{threads} threads: {regs} registers per thread (more than {MAX_ACCUMULATOR_REGISTERS}: it would spill); "
                    + ("take a smaller tile" if self.scaling == "block" else "take a smaller tile or accumulation fast"))

    def _check_block_scaling(self) -> None:
        """What CUTLASS's blockwise mainloop (sm90_mma_tma_gmma_ss_warpspecialized_fp8_blockwise_scaling.hpp) and
        its builder take, with 1x128 / 128x128 blocks."""
        _, gn, gk = self.BLOCK_SCALE_GRANULARITY
        if self.accumulation != "promote":
            raise ConfigError("scaling block multiplies each 128 of K's partial sums by their scales as it promotes them "
                              "to FP32: accumulation promote only (there is no fast-accumulation blockwise mainloop)")
        if self.tile[2] != gk:
            raise ConfigError(f"scaling block needs tile K {gk}: one k tile is one scale block (the mainloop promotes "
                              f"and scales once per k tile), not {self.tile[2]}")
        if self.tile[1] % gn:
            raise ConfigError(f"scaling block needs tile N a multiple of {gn} (whole 128-column blocks of scale_b per "
                              f"tile), not {self.tile[1]}")
        if self.stages != "auto":
            raise ConfigError("scaling block takes stages auto: CUTLASS's blockwise builder computes its own stage "
                              "count (it has no StageCount<N> form)")

    @property
    def kernel_name(self):
        sched = tags.SM90_SCHEDULES[self.schedule].short
        scheduler = "streamk" if self.scheduler == "stream_k" else "persistent"
        scaling = tags.SM90_FP8_SCALING[self.scaling]
        return "_".join([
            self.NAME_PREFIX, self.dtype, self.out, self.acc, _fmt(self.tile), f"{self.cluster[0]}x{self.cluster[1]}x1",
            sched, *([scaling] if scaling else []), tags.SM90_FP8_ACCUMULATION[self.accumulation], f"epi{self.epilogue}",
            f"st{self.stages}", scheduler, self.layout, f"align{self.alignment}",
        ])

    def describe(self) -> str:
        if self.scaling == "block":
            return (f"{super().describe()}, block scales (1x128 of A, 128x128 of B) multiplied in as each 128 of K "
                    "is promoted to FP32")
        how = "fast accumulation" if self.fast_accum else "FP32 promotion every 128 of K"
        return f"{super().describe()}, per-tensor scales, {how}"
