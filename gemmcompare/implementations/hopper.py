"""The `hopper` family: the hand-written Hopper GEMM ladder (wgmma + TMA, sm_90a), one step per name.

The kernels are headers under extensions/hopper/ (see its README): each step adds one idea to the last.

  hopper.wgmma_tma         TMA loads (128B swizzle), wgmma from shared memory, mbarrier completion; one stage
  hopper.pipelined         a ring of stages with full/empty mbarriers, loads ahead of math
  hopper.warp_specialized  a producer warpgroup and consumer warpgroups, registers moved with setmaxnreg
  hopper.persistent        one CTA per SM walking tiles in a grouped (L2-friendly) order
  hopper.cluster           clusters along M sharing B through TMA multicast
  hopper.best              epilogue through shared memory with TMA stores, no accumulator zeroing
  hopper.split_k           skinny M, long K: K split over CTAs into f32 planes and a reduction pass (apart
                           from the ladder's line: it starts again from the persistent step)
  hopper.fp8               FP8 (e4m3/e5m2) in, the tensor core's sums promoted to FP32 every 128 of K,
                           per-tensor, row/column or block scales (from the persistent step too); with
                           `accumulation: fast`, no promotion (`_fastacc` contracts only)
  hopper.grouped           grouped problems (an MoE layer: one GEMM per group, each its own M) in one persistent
                           launch over every group's tiles (from the persistent step too); dense problems are a SKIP
  hopper.grouped_fp8       grouped problems with FP8 inputs and block scales (DeepSeek-V3's recipe), hopper.grouped's
                           walk with hopper.fp8's promotion to FP32 every 128 of K
  hopper.stream_k          hopper.best without clusters, with a data-parallel + stream-K schedule: the tiles of a
                           part-empty last wave (and one more wave) split by k iterations over every CTA, put
                           together in-kernel (wave quantization at prefill shapes)

A spec's parameters map one to one onto `gc::hopper::Config<BM, BN, BK, STAGES, CONSUMERS, CLUSTER_M,
GROUP, SPLITS>`; `HopperConfig` is that mapping, checked here with the kernels' own rules (so an impossible
combination is a SKIP row with the reason before anything compiles) and rendered into one tiny
instantiation TU per configuration.

Parameters (spec spelling -> template parameter):
  block      [BM, BN, BK]  CTA tile; BN is the wgmma N (64/128/192/256), BK a multiple of 64
  stages     int           shared-memory stages (wgmma_tma: 1; the others 2..8)
  consumers  1 | 2         math warpgroups (wgmma_tma and pipelined: 1)
  cluster_m  1 | 2 | 4     CTAs per cluster along M sharing B (cluster and best only)
  group      int >= 1      grouped raster: tile rows walked together
  splits     0..16         K slices per tile (split_k only; 0: floor(SMs / tiles) per problem, 1: no split)
  overlap    0 | 1         fp8 only: 1 keeps two sets of partial sums, so one stage's wgmmas run while the
                           previous stage's are promoted (BN <= 128)
  accumulation promote | fast  fp8 only (template PROMOTE): `promote` adds each 128 of K's partial sums into
                           FP32 (strict and `_fastacc` contracts); `fast` accumulates over all of K in the
                           wgmma accumulator, as cuBLASLt's fast-accumulation mode: one register set, so BN up to
                           256 with 64 rows per consumer; tensor and row/column scales; a SKIP under strict
                           contracts (ContractSupport.fast_accum) and under block scales
  schedule   auto | hybrid | stream_k | data_parallel  stream_k only (template MODE): hybrid = the last wave's tiles
                           and one more wave stream-K, the rest whole; auto = hybrid when the last wave would be
                           under 80% full, else data_parallel; stream_k = every tile (extensions/hopper/stream_k_walk.cuh)

TMA needs 16-byte-aligned rows: lda and ldb multiples of 8 elements (the entry refuses anything else before
launching). K itself may be anything: TMA fills the part of a box past K with zeros. So the steps declare
their need as leading-dimension multiples, and the storage policy meets it: under `aligned` storage the shared
buffers already have such rows (in place, at any K); under `tight` storage with K % 8 != 0 the launch copies A
and B into 16-byte rows of its own, inside the timed region (docs/storage.md).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..build.request import KernelSource
from ..contracts.precision import Math, Scaling
from ..dtypes import DType
from ..paths import EXTENSIONS_DIR
from ..problems import INT32_MAX
from .base import AbiKernel, Constraints, ContractSupport, Ok, Param, Skip, layouts
from .registry import InvalidConfig, Parametrized, register_parametrized

SMEM_LIMIT = 232448  # bytes of dynamic shared memory a block may opt into on sm_90
MAX_ACCUMULATORS = 128  # f32 accumulators per consumer thread before the kernel would spill
MAX_FP8_REGISTERS = 192  # fp8: the sums and the promotion registers together (extensions/hopper/fp8.cuh)
WGMMA_N = (64, 128, 192, 256)
ACCUMULATIONS = ("promote", "fast")
# stream_k: the schedule's names, in the order of stream_k_walk.cuh's enum Schedule (AUTO = 0 ...)
SCHEDULES = ("auto", "data_parallel", "hybrid", "stream_k")  # fp8: FP32 promotion every 128 of K, or none (PROMOTE = false)
FAST_TITLE = "FP8 in, fast accumulation: no promotion to FP32 (_fastacc contracts only), tensor/rowcol scales"


@dataclass(frozen=True)
class StepRules:
    """What one step of the ladder allows, and its default configuration."""

    title: str
    stages: tuple[int, int]  # inclusive range
    consumers: tuple[int, ...]
    cluster_m: tuple[int, ...]
    default: tuple[tuple[int, int, int], int, int, int, int]  # block, stages, consumers, cluster_m, group
    epilogue_bytes_per_consumer: int = 0  # shared-memory epilogue buffers (best: two 64 x 128-byte slabs)
    splits: tuple[int, int] = (1, 1)  # inclusive range of K slices per tile; default 1 (only split_k splits)
    default_splits: int = 1
    fp8: bool = False  # FP8 inputs (1-byte elements, BK = 128, promotion registers beside the sums)
    grouped: bool = False  # runs grouped problems only (gemm_abi.h's grouped form), never a dense one
    stream_k: bool = False  # takes `schedule` (data-parallel + stream-K) and a workspace of flags and f32 slots


STEPS: dict[str, StepRules] = {
    "wgmma_tma": StepRules("TMA + wgmma, one stage", (1, 1), (1,), (1,), ((128, 128, 64), 1, 1, 1, 8)),
    "pipelined": StepRules("stage ring with full/empty mbarriers", (2, 8), (1,), (1,), ((128, 128, 64), 3, 1, 1, 8)),
    "warp_specialized": StepRules("producer + consumer warpgroups, setmaxnreg", (2, 8), (1, 2), (1,),
                                  ((128, 256, 64), 4, 2, 1, 8)),
    "persistent": StepRules("persistent CTAs, grouped raster", (2, 8), (1, 2), (1,), ((128, 256, 64), 4, 2, 1, 8)),
    "cluster": StepRules("clusters along M, TMA multicast of B", (2, 8), (1, 2), (1, 2, 4),
                         ((128, 256, 64), 4, 2, 2, 8)),
    "best": StepRules("shared-memory + TMA-store epilogue, no zeroing", (2, 8), (1, 2), (1, 2, 4),
                      ((128, 256, 64), 4, 2, 2, 8), epilogue_bytes_per_consumer=2 * 8192),
    "split_k": StepRules("K split over CTAs, f32 planes reduced", (2, 8), (1, 2), (1,), ((64, 128, 64), 6, 1, 1, 8),
                         splits=(0, 16), default_splits=0),
    # the TMA-store epilogue's buffers after the stages, as best's (6 stages of 128x128x128: 230,496 bytes)
    "fp8": StepRules("FP8 in, sums promoted to FP32 every 128 of K, tensor/rowcol/block scales, TMA-store epilogue",
                     (2, 8), (1, 2), (1,), ((128, 128, 128), 6, 2, 1, 8), epilogue_bytes_per_consumer=2 * 8192,
                     fp8=True),
    # The persistent step's default: MoE prefill groups are hundreds to thousands of rows. (Decode groups of a few
    # rows waste most of a 128-row tile; tune: auto races 64-row tiles too.)
    # Whole tiles store through shared memory and TMA, as best's do (its epilogue buffers); a group's last tile, when
    # it reaches past the group's rows, stores directly.
    "grouped": StepRules("grouped problems: one persistent launch over every group's tiles, TMA-store epilogue",
                         (2, 8), (1, 2), (1,), ((128, 256, 64), 4, 2, 1, 8), epilogue_bytes_per_consumer=2 * 8192,
                         grouped=True),
    # grouped FP8 (an MoE layer under DeepSeek-V3's recipe): grouped's walk and TMA-store epilogue, fp8's promotion and
    # block scales (the only grouped scaling gemm_abi.h defines), so BN <= 128 and no fast accumulation; fp8's default
    # tile (its 6 stages and the epilogue buffers: 230,496 bytes of shared memory)
    "grouped_fp8": StepRules("grouped FP8: block-scaled e4m3/e5m2 grouped problems in one persistent launch, sums "
                             "promoted to FP32 every 128 of K, TMA-store epilogue", (2, 8), (1, 2), (1,),
                             ((128, 128, 128), 6, 2, 1, 8), epilogue_bytes_per_consumer=2 * 8192, fp8=True,
                             grouped=True),
    # best's default tile without the cluster (a CTA's k range is its own): the TMA-store epilogue's buffers too
    "stream_k": StepRules("data-parallel + stream-K schedule for part-empty last waves", (2, 8), (1, 2), (1,),
                          ((128, 256, 64), 4, 2, 1, 8), epilogue_bytes_per_consumer=2 * 8192, stream_k=True),
}


@dataclass(frozen=True)
class HopperConfig:
    step: str
    block: tuple[int, int, int]
    stages: int
    consumers: int
    cluster_m: int
    group: int
    splits: int = 1
    overlap: int = 0
    accumulation: str = "promote"
    schedule: str = "auto"

    @property
    def fast(self) -> bool:
        return self.accumulation == "fast"

    @property
    def rules(self) -> StepRules:
        return STEPS[self.step]

    def smem_bytes(self) -> int:
        """Dynamic shared memory: the stages, the epilogue buffers (best), a barrier pair per stage, and
        1 KB of slack to round the base up to the 1024-byte alignment of the 128B swizzle."""
        bm, bn, bk = self.block
        epilogue = self.consumers * self.rules.epilogue_bytes_per_consumer
        element = 1 if self.rules.fp8 else 2
        return self.stages * (bm + bn) * bk * element + epilogue + 16 * self.stages + 1024

    @property
    def threads(self) -> int:
        return 128 * (self.consumers + (0 if self.step in ("wgmma_tma", "pipelined") else 1))

    def validate(self) -> None:
        bm, bn, bk = self.block
        r = self.rules
        lo, hi = r.stages
        if not lo <= self.stages <= hi:
            raise InvalidConfig(f"stages={self.stages}: hopper.{self.step} takes {lo}" + (f"..{hi}" if hi != lo else ""))
        if self.consumers not in r.consumers:
            raise InvalidConfig(f"consumers={self.consumers}: hopper.{self.step} takes {list(r.consumers)}")
        if self.cluster_m not in r.cluster_m:
            raise InvalidConfig(f"cluster_m={self.cluster_m}: hopper.{self.step} takes {list(r.cluster_m)}")
        if bn not in WGMMA_N:
            raise InvalidConfig(f"BN={bn} must be a wgmma N: one of {list(WGMMA_N)}")
        if r.fp8 and bk != 128:
            raise InvalidConfig(f"BK={bk}: hopper.fp8 promotes every stage of 128 of K (one 128-byte line of FP8): BK is 128")
        if bk % 64 or not 64 <= bk <= 256:
            raise InvalidConfig(f"BK={bk} must be 64, 128, 192 or 256 (whole 128-byte swizzle lines)")
        if bm % (64 * self.consumers) or bm > 256:
            raise InvalidConfig(f"BM={bm} must be a multiple of {64 * self.consumers} (64 rows per consumer) and at most 256")
        if (bn // self.cluster_m) % 8:
            raise InvalidConfig(f"BN={bn} does not split into {self.cluster_m} multicast slices of whole 8-row groups")
        accumulators = (bm // self.consumers // 64) * bn // 2
        if self.accumulation not in (ACCUMULATIONS if r.fp8 else ACCUMULATIONS[:1]):
            raise InvalidConfig(f"accumulation={self.accumulation!r}: hopper.{self.step} takes "
                                + (" or ".join(ACCUMULATIONS) if r.fp8 else "only promote"))
        if self.fast and self.overlap:
            raise InvalidConfig("overlap=1 overlaps the promotion of a stage's partial sums with the next stage's "
                                "wgmmas; accumulation fast keeps no partial sums: overlap is 0")
        # fast: one register set, the 16-bit steps' rule below; promote: the sums and the partials together (grouped
        # FP8 promotes a 256-column tile per 128-column half: one half's partials beside the sums)
        halves = bn // 128 if r.fp8 and r.grouped and bn > 128 else 1
        if r.fp8 and not self.fast and accumulators + accumulators // halves > MAX_FP8_REGISTERS:
            raise InvalidConfig(f"{accumulators} f32 sums and {accumulators // halves} promotion registers per "
                                f"consumer thread (more than {MAX_FP8_REGISTERS} together: it would spill); BN <= 192 "
                                f"with 64 rows per consumer" + (", or 256 promoted per 128-column half" if r.grouped
                                                               else ""))
        if accumulators > MAX_ACCUMULATORS:
            raise InvalidConfig(f"{accumulators} f32 accumulators per consumer thread (more than {MAX_ACCUMULATORS}: "
                                f"it would spill); use 2 consumers or a smaller tile")
        if self.group < 1:
            raise InvalidConfig(f"group={self.group} must be at least 1")
        if self.overlap not in ((0, 1) if r.fp8 else (0,)):
            raise InvalidConfig(f"overlap={self.overlap}: hopper.{self.step} takes " + ("0 or 1" if r.fp8 else "only 0"))
        if self.overlap and 3 * accumulators > MAX_FP8_REGISTERS:
            raise InvalidConfig(f"overlap=1 keeps the sums and two sets of partials: 3 x {accumulators} f32 per consumer "
                                f"thread is more than {MAX_FP8_REGISTERS}; BN <= 128 with 64 rows per consumer")
        if r.fp8 and r.grouped and (self.fast or (bn > 128 and bn % 128)):
            raise InvalidConfig(f"hopper.{self.step} takes block scales (each 128 of K's partial sums scaled as they "
                                f"are promoted): accumulation promote and BN <= 128 (one 128-wide scale block per "
                                f"tile) or 256 (two, promoted one at a time); got accumulation={self.accumulation}, "
                                f"BN={bn}")
        if self.schedule not in (SCHEDULES if r.stream_k else SCHEDULES[:1]):
            raise InvalidConfig(f"schedule={self.schedule!r}: hopper.{self.step} takes "
                                + (" | ".join(SCHEDULES) if r.stream_k else "only auto (hopper.stream_k schedules)"))
        lo, hi = r.splits
        if not lo <= self.splits <= hi:
            raise InvalidConfig(f"splits={self.splits}: hopper.{self.step} takes " +
                                (f"{lo}..{hi} (0: chosen per problem)" if hi != lo else f"only {lo}"))
        if self.smem_bytes() > SMEM_LIMIT:
            raise InvalidConfig(f"{self.stages} stages of {bm}x{bn}x{bk} need {self.smem_bytes():,} bytes of shared "
                                f"memory; sm_90 allows {SMEM_LIMIT:,} per block")

    @property
    def ident(self) -> str:
        bm, bn, bk = self.block
        splits = f"_k{self.splits}" if self.rules.splits != (1, 1) else ""
        overlap = "_o1" if self.overlap else ""
        fast = "_fast" if self.fast else ""
        schedule = f"_{self.schedule}" if self.rules.stream_k else ""
        return (f"{self.step}_{bm}x{bn}x{bk}_s{self.stages}_c{self.consumers}_cm{self.cluster_m}_g{self.group}"
                f"{splits}{overlap}{fast}{schedule}")

    @property
    def has_workspace(self) -> bool:
        return self.rules.splits != (1, 1) or self.rules.stream_k

    def symbol(self) -> str:
        return f"gc_hopper_{self.ident}"

    def render(self) -> str:
        """The instantiation TU: every input/output type of this configuration behind one ABI entry, and
        its occupancy query (gemm_abi.h NAME_occupancy)."""
        bm, bn, bk = self.block
        sym = self.symbol()
        splits = f", {self.splits}" if self.rules.splits != (1, 1) else ""
        # run<Cfg, Tag, OVERLAP, PROMOTE>: the defaults (false, true) are left out, as before fast accumulation
        overlap = ", false, false" if self.fast else ", true" if self.overlap else ""
        if self.rules.stream_k:  # run<Cfg, Tag, MODE>: the schedule as stream_k_walk.cuh's enum
            overlap = f", gc::hopper::stream_k::{self.schedule.upper()}"
        mode = overlap if self.rules.stream_k else ""
        workspace = (
            f'\nextern "C" size_t {sym}_workspace_bytes(const gc_gemm_args* args) {{\n'
            f"  return gc::hopper::{self.step}::workspace_bytes<{sym}_config, {sym}_tag{mode}>(args);\n"
            f"}}\n") if self.has_workspace else ""
        title = FAST_TITLE if self.fast else self.rules.title
        return (
            f"// hopper.{self.step} ({title}): {bm}x{bn}x{bk} tile, {self.stages} stages, "
            f"{self.consumers} consumer warpgroup(s), cluster {self.cluster_m}x1, raster group {self.group}"
            + (f", splits {self.splits or 'auto'}" if self.rules.splits != (1, 1) else "")
            + (f", schedule {self.schedule}" if self.rules.stream_k else "")
            + (", promotion overlapped with the next stage's wgmmas" if self.overlap else "")
            + ".\n"
            f'#include "hopper/{self.step}.cuh"\n\n'
            f"struct {sym}_tag;  // names this configuration's kernels in the ptxas report\n"
            f"using {sym}_config = gc::hopper::Config<{bm}, {bn}, {bk}, {self.stages}, {self.consumers}, "
            f"{self.cluster_m}, {self.group}{splits}>;\n\n"
            f'extern "C" int {sym}(const gc_gemm_args* args, char* err, size_t err_len) {{\n'
            f"  return gc::hopper::{self.step}::run<{sym}_config, {sym}_tag{overlap}>(args, err, err_len);\n"
            f"}}\n\n"
            f'extern "C" int {sym}_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {{\n'
            f"  return gc::hopper::{self.step}::occupancy<{sym}_config, {sym}_tag{overlap}>(args, out, err, err_len);\n"
            f"}}\n" + workspace
        )

    def params(self) -> dict[str, Any]:
        params = {"block": self.block, "stages": self.stages, "consumers": self.consumers, "cluster_m": self.cluster_m,
                  "group": self.group}
        if self.rules.splits != (1, 1):
            params["splits"] = self.splits
        if self.rules.stream_k:
            params["schedule"] = self.schedule
        if self.rules.fp8:
            params["overlap"] = self.overlap
            if self.fast:  # named only when fast: the promoting rows keep the names they had
                params["accumulation"] = self.accumulation
        return params


class HopperKernel(AbiKernel):
    family = "hopper"
    min_cc = 90
    arch_specific = True  # wgmma, setmaxnreg, TMA multicast: sm_90a only
    build_group = "hopper"
    include_dirs = (str(EXTENSIONS_DIR),)
    # TMA: 16-byte-aligned rows of A and B (lda, ldb multiples of 8 halves), any K (TMA zero-fills past it);
    # offsets are 64-bit inside. C takes any ldc (best falls back to its direct epilogue when TMA cannot store).
    constraints = Constraints(ld_multiples=(8, 8, 1), index_bits=64)
    contract_support = ContractSupport(
        inputs=frozenset({DType.F16, DType.BF16}),
        outputs=frozenset({DType.F32, DType.F16, DType.BF16}),
        maths=frozenset({Math.STRICT}),
        layouts=layouts("tn"),
        alpha_beta=True,
    )

    def __init__(self, cfg: HopperConfig):
        super().__init__(cfg.step, cfg.params())
        self.config = cfg
        self.entry_symbol = cfg.symbol()
        self.has_workspace = cfg.has_workspace
        if cfg.rules.fp8:  # FP8 in, with their scales; TMA's 16-byte rows are 16 elements of one byte
            self.contract_support = (GROUPED_FP8_SUPPORT if cfg.rules.grouped else FP8_FAST_SUPPORT if cfg.fast else
                                     FP8_SUPPORT if cfg.block[1] <= 128 else FP8_WIDE_SUPPORT)
            self.constraints = Constraints(ld_multiples=(16, 16, 1), index_bits=64)
        self.kernel_filter = f"{cfg.symbol()}_tag"
        bm, bn, bk = cfg.block
        title = FAST_TITLE if cfg.fast else cfg.rules.title
        self.description = (f"hand-written Hopper GEMM, step {cfg.step} ({title}): {bm}x{bn}x{bk} tile, "
                            f"{cfg.stages} stages, {cfg.consumers} consumer warpgroup(s), cluster {cfg.cluster_m}x1"
                            + (f", K split {cfg.splits or 'per problem'}" if cfg.rules.splits != (1, 1) else "")
                            + (f", schedule {cfg.schedule}" if cfg.rules.stream_k else ""))

    def sources(self) -> tuple[KernelSource, ...]:
        return (KernelSource(f"{self.config.symbol()}.cu", text=self.config.render()),)

    def dynamic_smem_bytes(self) -> int:
        return self.config.smem_bytes()


class HopperGroupedKernel(HopperKernel):
    """hopper.grouped and hopper.grouped_fp8 (extensions/hopper/grouped.cuh, grouped_fp8.cuh): grouped problems
    only, through gemm_abi.h's grouped form (ABI 4, the contiguous layout: AbiKernel.prepare hands the stacked
    operands over in place with the device offsets and the host Ms, and under FP8 the stacked block scales). A dense
    problem is a SKIP (hopper.persistent and hopper.fp8 are the same pipelines for one GEMM)."""

    takes_grouped = True
    GROUPED_ONLY = "grouped problems only (hopper.persistent runs one dense GEMM with the same pipeline)"
    grouped_fp8_note = "hopper.grouped takes f16/bf16 inputs (hopper.grouped_fp8 is the grouped FP8 step)"

    @property
    def grouped_fp8(self) -> bool:
        """hopper.grouped_fp8 is a grouped FP8 path (block scales per group): a grouped spec with an FP8 contract may
        name it (spec/load.py); hopper.grouped has none."""
        return self.config.rules.fp8

    def supports(self, problem, contract):
        if not problem.is_grouped:
            return Skip(self.GROUPED_ONLY)
        s = super().supports(problem, contract)  # the contract, the contiguous layout, no batch, 64-bit offsets
        if not s:
            return s
        # Grouped operands are handed over in place, never padded or copied: A's and B's rows are K elements, and
        # TMA moves rows of 16 bytes (8 16-bit elements, 16 FP8 ones).
        per_row = 16 if self.config.rules.fp8 else 8
        if problem.k % per_row:
            return Skip(f"k={problem.k} is not a multiple of {per_row} (TMA moves 16-byte rows of A and B; grouped "
                        f"problems are not padded)")
        bm, bn, _ = self.config.block
        tiles = (problem.m // bm + problem.groups) * -(-problem.n // bn)
        if problem.m > INT32_MAX - bm or tiles > INT32_MAX:  # the entry's own limit (grouped.cuh check_groups)
            return Skip(f"{problem.m:,} rows in {problem.groups} groups: tile coordinates past 2^31")
        return Ok()


# hopper.fp8: the family's contracts with FP8 inputs and every scale shape (fp8.cuh: tensor and row/column
# scales in the epilogue, block scales as each 128 of K is promoted). Block scales need each tile's columns in
# one 128-wide scale block: wider tiles take the other two.
FP8_SUPPORT = dataclasses.replace(
    HopperKernel.contract_support, inputs=frozenset({DType.E4M3, DType.E5M2}),
    scalings=frozenset({Scaling.TENSOR, Scaling.ROWCOL, Scaling.BLOCK}))
# hopper.grouped_fp8: block scales only, the grouped FP8 scales gemm_abi.h defines
GROUPED_FP8_SUPPORT = dataclasses.replace(
    FP8_SUPPORT, scalings=frozenset({Scaling.BLOCK}),
    scaling_note="grouped FP8 takes block scales (1 x 128 of A, 128 x 128 of each group's B), the only grouped "
                 "scaling gemm_abi.h defines")
FP8_WIDE_SUPPORT = dataclasses.replace(
    FP8_SUPPORT, scalings=frozenset({Scaling.TENSOR, Scaling.ROWCOL}),
    scaling_note="block scales need the tile's columns in one 128-wide scale block: BN <= 128")
# accumulation fast: the wgmma accumulator over all of K, so `_fastacc` contracts only (ContractSupport's
# fast_accum: a strict contract is a SKIP that says so, and the accumulation canary judges it if forced there).
FP8_FAST_SUPPORT = dataclasses.replace(
    FP8_WIDE_SUPPORT, fast_accum=True,
    scaling_note="block scales scale each 128 of K's partial sums as they are promoted, and accumulation fast keeps "
                 "none; accumulation promote takes them")


def _factory(step: str):
    def make(params: dict[str, Any]) -> HopperKernel:
        block, stages, consumers, cluster_m, group = STEPS[step].default
        splits = STEPS[step].default_splits
        cfg = HopperConfig(
            step, tuple(params.get("block") or block),
            *(int(params[k]) if params.get(k) is not None else d
              for k, d in (("stages", stages), ("consumers", consumers), ("cluster_m", cluster_m), ("group", group),
                           ("splits", splits), ("overlap", 0))),
            str(params.get("accumulation") or ACCUMULATIONS[0]), str(params.get("schedule") or SCHEDULES[0]))
        cfg.validate()
        return (HopperGroupedKernel if cfg.rules.grouped else HopperKernel)(cfg)

    return make


def _params(step: str) -> list[Param]:
    block, stages, consumers, cluster_m, group = STEPS[step].default
    return [
        Param("block", "shape", default=block, length=3, help="CTA tile [BM, BN, BK]"),
        Param("stages", "int", default=stages, help="shared-memory stages"),
        Param("consumers", "int", default=consumers, help="math warpgroups (1 or 2)"),
        Param("cluster_m", "int", default=cluster_m, help="CTAs per cluster along M sharing B (multicast)"),
        Param("group", "int", default=group, help="grouped raster: tile rows walked together"),
    ] + ([Param("splits", "int", default=STEPS[step].default_splits,
                help="K slices per tile (0: floor(SMs / tiles), chosen per problem)")]
         if STEPS[step].splits != (1, 1) else []) + ([
        Param("overlap", "int", default=0,
              help="1: two sets of partial sums, one stage's wgmmas run while the last one's are promoted (BN <= 128)"),
        Param("accumulation", "choice", default=ACCUMULATIONS[0], choices=ACCUMULATIONS,
              help="promote: partial sums added into FP32 every 128 of K; fast: no promotion (_fastacc contracts "
                   "only; tensor and row/column scales; BN up to 256)")]
         if STEPS[step].fp8 else []) + ([
        Param("schedule", "choice", default=SCHEDULES[0], choices=SCHEDULES,
              help="auto: hybrid when the last wave of tiles would be under 80% full, else data_parallel; hybrid: "
                   "that wave's tiles and one more split by k iterations over every CTA; stream_k: every tile")]
         if STEPS[step].stream_k else [])


for _step, _rules in STEPS.items():
    register_parametrized(Parametrized(
        f"hopper.{_step}", _params(_step), _factory(_step),
        description=f"hand-written Hopper ladder, {_rules.title} (sm_90a; "
                    + (("e4m3/e5m2 in with block scales" if _rules.grouped else
                        "e4m3/e5m2 in with tensor, row/column or block scales") if _rules.fp8 else "f16/bf16 in")
                    + (f", f32/f16/bf16 out; tn; grouped problems only, contiguous layout, K a multiple of "
                       f"{16 if _rules.fp8 else 8})" if _rules.grouped else
                       ", f32/f16/bf16 out; tn; any K: 16-byte rows of A and B, copied when the storage has none)"),
    ))
