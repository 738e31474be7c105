"""The `gemv` family: a memory-bound GEMM for the smallest decode batches (M <= 4 tokens), one warp per column.

At M = 1 a GEMM is a matrix-vector product: every element of the weight B is read once for 2 FLOPs, so the time
is B's bytes over HBM's bandwidth plus however long the memory system takes to get going. `decode` (M <= 16)
shapes its loads for mma.sync (each warp load: 8 columns x 64 bytes); here each warp owns one column of B and
reads it in 512-byte contiguous runs, `unroll` loads per lane in flight, FP32 FMAs on the CUDA cores, and a
butterfly of shuffles for the sum (deterministic). extensions/decode/gemv.cuh says how, line by line.

Element types as `decode` (every configuration is built for all four pairs: f16 -> f32, f16 -> f16, bf16 -> f32,
bf16 -> bf16), FP32 accumulation, layout tn only (A row-major, B column-major: a PyTorch Linear weight [N, K]).

Parameters (spec spelling -> template parameter):
  warps    1..32     warps (= columns of B) per CTA                              default 4
  unroll   1..16     16-byte loads of B per lane issued before any is used       default 8

Defaults: 4 warps per CTA (fine-grained CTAs: the last wave is short) and 8 loads in flight per lane (4 KiB of a
column per warp; 1x4096x4096 puts all of B's 32 MiB through in two rounds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dtypes import DType
from .base import Constraints, ContractSupport, Param, Skip, layouts
from .decode import TYPE_PAIRS
from .parametrized import ConfigKernel, PairConfig, register_config_family

MAX_M = 4  # gemv.cuh MAX_M: FP32 FMAs per row; beyond it decode's MMAs win
M_SKIP = ("m={m} > 4: gemv is the matrix-vector kernel for M <= 4 tokens (FP32 FMAs per row on the CUDA "
          "cores); use decode for M <= 16, mma_sync, hopper or cutlass above")
ROW_VARIANTS = 3  # ROWS = 1, 2, 4: one kernel each per load width


@dataclass(frozen=True)
class GemvConfig(PairConfig):
    """One instantiation of gemv.cuh's Config<WARPS, UNROLL>."""

    family = "gemv"
    header = "decode/gemv.cuh"
    namespace = "gc::gemv"

    warps: int = 4
    unroll: int = 8

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def ident(self) -> str:
        """The procedural name of the instantiation: names files, symbols, tags."""
        return f"w{self.warps}_u{self.unroll}"

    def problems(self) -> list[str]:
        """Every reason this configuration cannot work (empty when it can)."""
        out: list[str] = []
        if not (isinstance(self.warps, int) and not isinstance(self.warps, bool) and 1 <= self.warps <= 32):
            out.append(f"warps={self.warps!r} must be 1..32 (a CTA holds at most 1024 threads)")
        if not (isinstance(self.unroll, int) and not isinstance(self.unroll, bool) and 1 <= self.unroll <= 16):
            out.append(f"unroll={self.unroll!r} must be 1..16 (16-byte loads per lane in flight; 16 is 64 registers)")
        return out

    @property
    def type_pairs(self) -> tuple[tuple[DType, DType], ...]:
        return TYPE_PAIRS  # decode's

    def config_template(self, variant: str) -> str:
        return f"gc::gemv::Config<{self.warps}, {self.unroll}>"

    def instance_comment(self, variant: str, types: tuple[DType, DType]) -> str:
        return (f"// {self.ident}: {self.warps} warps (columns) per CTA, {self.unroll} loads per lane in flight;\n"
                f"// {types[0].value} A (row-major) and B (column-major), {types[1].value} C (row-major)\n")

    def params(self) -> dict[str, Any]:
        return {"warps": self.warps, "unroll": self.unroll}


config_from_params = GemvConfig.from_params  # spec parameters -> a checked GemvConfig, or InvalidConfig


class GemvKernel(ConfigKernel):
    family = "gemv"
    build_group = "decode"  # one extension with decode: the same header directory, the same kind of kernel
    # any n and k (the K tail is loaded element-wise), 64-bit offsets; m > 4 is refused in supports()
    constraints = Constraints(index_bits=64)
    contract_support = ContractSupport(
        inputs=frozenset({DType.F16, DType.BF16}),
        outputs=frozenset({DType.F32, DType.F16, DType.BF16}),
        pairs=frozenset(TYPE_PAIRS),
        layouts=layouts("tn"),
    )
    min_cc = 80  # bf16 conversions and ld.global.nc cache hints: sm_80

    def __init__(self, cfg: GemvConfig):
        super().__init__(cfg)
        self.description = (
            f"memory-bound matrix-vector GEMM (M <= 4): one warp per column of B, {cfg.warps} per CTA, 512-byte "
            f"contiguous warp loads, {cfg.unroll} per lane in flight, FP32 FMAs, a shuffle butterfly for the sum "
            f"(deterministic); A/B -> C types {cfg.type_pairs_text}")

    def supports(self, problem, contract):
        if problem.m > MAX_M:
            return Skip(M_SKIP.format(m=problem.m))
        if problem.n > 2**31 - 256 or problem.k > 2**31 - 256:
            return Skip(f"n={problem.n} or k={problem.k} too large for the kernel's 32-bit column and k indices")
        return super().supports(problem, contract)


def _in_range(name: str, lo: int, hi: int):
    def check(v) -> str | None:
        return None if lo <= v <= hi else f"{name}={v} must be {lo}..{hi}"
    return check


PARAMS = [
    Param("warps", "int", default=GemvConfig.warps, help="warps (columns of B) per CTA (1..32)",
          validate=_in_range("warps", 1, 32)),
    Param("unroll", "int", default=GemvConfig.unroll, help="16-byte loads of B per lane in flight (1..16)",
          validate=_in_range("unroll", 1, 16)),
]


register_config_family(
    "gemv", PARAMS, GemvKernel, GemvConfig,
    description="hand-written memory-bound matrix-vector GEMM for M <= 4 (decode at batch 1-4): one warp per column "
                "of B in 512-byte contiguous loads, FP32 FMAs, shuffle reduction; f16/bf16 in, f32 or same-type out, "
                "layout tn",
)
