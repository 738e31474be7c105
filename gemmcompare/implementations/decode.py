"""The `decode` family: a memory-bound GEMM for decode-shaped problems (M <= 16 tokens), streaming B once.

At M <= 16 a GEMM is a stream over the weight B (2*M FLOPs per element read once: 16x4096x4096 is 32 MiB of B,
~7 us at the H200's 4.8 TB/s, ~1 us of tensor-core work), so its kernel is laid out to keep bytes of B in flight:
each CTA owns `cols` columns of B (each a contiguous K-vector), its `warps` warps split K in chunks of 32, every
lane loads 16 bytes per column and chunk (`unroll` chunks per iteration), mma.sync m16n8k16 multiplies the
loaded registers as they are (M <= 16 rows are one m16 tile), and the warps' FP32 partial sums meet in shared
memory; `splits` CTAs of a thread-block cluster split K and add their partials through distributed shared
memory (Hopper), in a fixed order: deterministic, one kernel, no workspace. extensions/decode/decode_gemm.cuh
says how, line by line.

Element types (not a parameter: every configuration is built for all of them): f16 or bf16 A and B, with f32
or the input type's C (f16 -> f32, f16 -> f16, bf16 -> f32, bf16 -> bf16), FP32 accumulation; layout tn only
(A row-major, B column-major: a PyTorch Linear weight [N, K]). One translation unit per pair of types, plus an
entry that dispatches on them (named, rendered and registered as every Config-template family: parametrized.py).

Parameters (spec spelling -> template parameter):
  cols     8..128, a multiple of 8   columns of B per CTA                               default 32
  warps    1..16                     warps per CTA, splitting the CTA's K range         default 8
  unroll   1..8                      chunks of 32 k a warp loads per iteration          default 2
  splits   auto | 1 | 2 | 4 | 8      CTAs of a cluster splitting K (> 1: sm_90+)        default auto

Defaults are the best guess for an H200 (132 SMs): 32 columns (A, which every CTA re-reads from L2, costs
M/cols of B's bytes: half at M = 16), 8 warps x 2 chunks x 4 n8 tiles = 8 16-byte loads of B in flight per
thread (~104 registers: two 256-thread CTAs per SM, 64 KB in flight per SM), and `auto` splits: the fewest
cluster CTAs (1, 2, 4, 8) that give at least 2 CTAs per SM while each split keeps a whole round of its warps'
chunks (16x4096x4096: 128 column tiles x 4 = 512 CTAs; 1x14336x4096: 448 tiles, no split).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dtypes import DType
from .base import Constraints, ContractSupport, Param, Skip, layouts
from .parametrized import ConfigKernel, PairConfig, register_config_family
from .parametrized import pair_tag  # noqa: F401  (its callers import it from here)

MAX_M = 16  # rows of one m16 MMA tile (decode_gemm.cuh MAX_M)
M_SKIP = ("m={m} > 16: decode is the memory-bound kernel for M <= 16 tokens (the rows are one m16 MMA tile and "
          "B is streamed once); larger M is compute-bound: use mma_sync, hopper or cutlass")
SPLIT_CHOICES = ("auto", 1, 2, 4, 8)
SMEM_LIMIT = 227 * 1024  # bytes of dynamic shared memory one block may opt into on sm_80/sm_90
REG_BUDGET = 128  # loaded B and A registers + accumulators per thread; ptxas needs ~1.5x (cols=64, unroll=4: 192 spills)
RED_PAD = 8  # decode_gemm.cuh RED_PAD

# (A and B, C): what every configuration is built for.
TYPE_PAIRS: tuple[tuple[DType, DType], ...] = (
    (DType.F16, DType.F32), (DType.F16, DType.F16), (DType.BF16, DType.F32), (DType.BF16, DType.BF16))


@dataclass(frozen=True)
class DecodeConfig(PairConfig):
    """One instantiation of decode_gemm.cuh's Config<COLS, WARPS, UNROLL, SPLITS>."""

    family = "decode"
    header = "decode/decode_gemm.cuh"
    namespace = "gc::decode"

    cols: int = 32
    warps: int = 8
    unroll: int = 2
    splits: int | str = "auto"

    # -- derived ---------------------------------------------------------------------------------
    @property
    def tiles(self) -> int:
        return self.cols // 8

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory: the warps' partial sums (Config::SMEM_BYTES)."""
        return self.warps * MAX_M * (self.cols + RED_PAD) * 4

    @property
    def registers_floor(self) -> int:
        """Loaded B (unroll x tiles x 4) and A (unroll x 8) registers and accumulators (tiles x 4) per thread."""
        return self.unroll * self.tiles * 4 + self.unroll * 8 + self.tiles * 4

    @property
    def splits_code(self) -> int:
        """SPLITS as the template takes it: 0 for auto."""
        return 0 if self.splits == "auto" else int(self.splits)

    @property
    def min_cc(self) -> int:
        """mma.sync with bf16 needs sm_80; a fixed split of K needs clusters (sm_90). `auto` runs unsplit below sm_90."""
        return 90 if self.splits_code > 1 else 80

    @property
    def ident(self) -> str:
        """The procedural name of the instantiation: names files, symbols, tags."""
        return f"c{self.cols}_w{self.warps}_u{self.unroll}_s{self.splits}"

    # -- checks ----------------------------------------------------------------------------------
    def problems(self) -> list[str]:
        """Every reason this configuration cannot work (empty when it can)."""
        out: list[str] = []
        if not (isinstance(self.cols, int) and 8 <= self.cols <= 128 and self.cols % 8 == 0):
            out.append(f"cols={self.cols} must be a multiple of 8 in 8..128 (n8 MMA tiles)")
        if not (isinstance(self.warps, int) and 1 <= self.warps <= 16):
            out.append(f"warps={self.warps} must be 1..16")
        if not (isinstance(self.unroll, int) and 1 <= self.unroll <= 8):
            out.append(f"unroll={self.unroll} must be 1..8")
        if self.splits not in SPLIT_CHOICES or isinstance(self.splits, bool):
            out.append(f"splits={self.splits!r} must be one of {list(SPLIT_CHOICES)} (a portable cluster holds 8 CTAs)")
        if out:
            return out
        if self.registers_floor > REG_BUDGET:
            out.append(f"cols={self.cols} x unroll={self.unroll} needs {self.registers_floor} registers per thread for "
                       f"loaded operands and accumulators alone (more than {REG_BUDGET}: it would spill)")
        if self.smem_bytes > SMEM_LIMIT:
            out.append(f"{self.warps} warps' partial sums need {self.smem_bytes:,} bytes of shared memory, more than "
                       f"the {SMEM_LIMIT:,} a block can have")
        return out

    # -- rendering -------------------------------------------------------------------------------
    @property
    def type_pairs(self) -> tuple[tuple[DType, DType], ...]:
        return TYPE_PAIRS

    def config_template(self, variant: str) -> str:
        return f"gc::decode::Config<{self.cols}, {self.warps}, {self.unroll}, {self.splits_code}>"

    def instance_comment(self, variant: str, types: tuple[DType, DType]) -> str:
        return (f"// {self.ident}: {self.cols} columns per CTA, {self.warps} warps, unroll {self.unroll}, splits "
                f"{self.splits};\n"
                f"// {types[0].value} A (row-major) and B (column-major), {types[1].value} C (row-major)\n")

    def params(self) -> dict[str, Any]:
        """The canonical parameters (the implementation's name is built from these)."""
        return {"cols": self.cols, "warps": self.warps, "unroll": self.unroll, "splits": self.splits}


config_from_params = DecodeConfig.from_params  # spec parameters -> a checked DecodeConfig, or InvalidConfig


class DecodeKernel(ConfigKernel):
    family = "decode"
    build_group = "decode"
    # any n and k (ragged column tiles are clamped, the K tail is loaded element-wise), 64-bit offsets;
    # m > 16 is refused in supports() with its own reason
    constraints = Constraints(index_bits=64)
    contract_support = ContractSupport(
        inputs=frozenset({DType.F16, DType.BF16}),
        outputs=frozenset({DType.F32, DType.F16, DType.BF16}),
        pairs=frozenset(TYPE_PAIRS),  # f16 in with bf16 out (and bf16 with f16): in both sets above, never built
        layouts=layouts("tn"),
    )

    def __init__(self, cfg: DecodeConfig):
        super().__init__(cfg)
        self.min_cc = cfg.min_cc
        split = ("K split across an automatic cluster of 1-8 CTAs (unsplit below sm_90)" if cfg.splits == "auto"
                 else "K unsplit" if cfg.splits_code == 1 else f"K split across clusters of {cfg.splits} CTAs")
        self.description = (
            f"memory-bound decode GEMM (M <= 16): {cfg.cols} columns of B per CTA, {cfg.warps} warps splitting K, "
            f"{cfg.unroll} chunks of 32 k per load round, 16-byte streaming loads, mma.sync m16n8k16 on the loaded "
            f"registers, {split}, deterministic reduction; A/B -> C types {cfg.type_pairs_text}"
        )

    def supports(self, problem, contract):
        if problem.m > MAX_M:
            return Skip(M_SKIP.format(m=problem.m))
        if problem.n > 2**31 - 256 or problem.k > 2**31 - 1024:
            return Skip(f"n={problem.n} or k={problem.k} too large for the kernel's 32-bit column and k indices")
        return super().supports(problem, contract)

    def dynamic_smem_bytes(self) -> int:
        return self.config.smem_bytes


def _check_cols(v) -> str | None:
    return None if v % 8 == 0 and 8 <= v <= 128 else f"cols={v} must be a multiple of 8 in 8..128"


PARAMS = [
    Param("cols", "int", default=DecodeConfig.cols, help="columns of B per CTA (a multiple of 8, 8..128)",
          validate=_check_cols),
    Param("warps", "int", default=DecodeConfig.warps, help="warps per CTA, splitting its K range (1..16)"),
    Param("unroll", "int", default=DecodeConfig.unroll, help="chunks of 32 k each warp loads per round (1..8)"),
    Param("splits", "choice", default=DecodeConfig.splits, choices=SPLIT_CHOICES,
          help="CTAs of a thread-block cluster splitting K (> 1 needs sm_90); auto: from the device, N and K"),
]


register_config_family(
    "decode", PARAMS, DecodeKernel, DecodeConfig,
    description="hand-written memory-bound GEMM for M <= 16 (decode): streams B once with 16-byte loads, mma.sync "
                "on the loaded registers, cluster split-K; f16/bf16 in, f32 or same-type out, layout tn",
)
