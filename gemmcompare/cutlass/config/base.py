"""CUTLASS/CuTe configurations: one frozen dataclass per kernel template, fields one to one with template parameters.

A configuration is built with `<Kernel template>Config.from_fields({...})`: unknown fields and ill-typed values are
rejected, fields left out get their (possibly dtype-dependent) defaults, and `validate()` rejects
combinations that cannot work (shared memory does not fit, tile not divisible by the MMA atom, schedule
not valid for the tile...) with the reason, before anything is compiled. The result is fully resolved:
its procedural name spells every field, so it is the configuration's identity.

Two names per configuration:
- `kernel_name`: the compile-time part (every template parameter). It names the expensive kernel TU,
  so configurations that differ only in run-time arguments share one compiled kernel.
- `procedural_name`: kernel_name plus the run-time arguments (raster order, swizzle, split-K slices...).
  It names the implementation, its entry symbol and its result rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from ...contracts.precision import Math, Order, Scaling
from ...contracts.quantize import BLOCK
from ...dtypes import DType
from .. import tags
from .fields import ACC, ALIGNMENT, DTYPE, LAYOUT, OUT, STAGES, SWAP_AB, TILE, ConfigError, Field


# Accumulator registers a thread may hold: a warp (group) gets at most 255 registers (232 under
# setmaxnreg for SM90 consumers); beyond ~192 for accumulators alone the kernel spills.
MAX_ACCUMULATOR_REGISTERS = 192


def _fmt(shape) -> str:
    return "x".join(str(v) for v in shape)


def _lcm(*values: int) -> int:
    out = 1
    for v in values:
        out = out * v // math.gcd(out, v)
    return out


class GemmConfig:
    """Behaviour shared by every kernel template's dataclass (which declares TEMPLATE, FIELDS and its fields)."""

    TEMPLATE: ClassVar[str]
    FIELDS: ClassVar[tuple[Field, ...]]
    DESCRIPTION: ClassVar[str]
    NAME_PREFIX: ClassVar[str]  # first word of its procedural names; unique per kernel template
    DTYPES: ClassVar[tuple[str, ...]]  # the `dtype` values it has kernels for

    # -- construction ----------------------------------------------------------------------------
    @classmethod
    def from_fields(cls, fields: dict[str, Any]):
        """A validated, fully resolved configuration from YAML/spec fields (missing ones defaulted)."""
        known = {f.name: f for f in cls.FIELDS}
        unknown = sorted(set(fields) - set(known))
        if unknown:
            raise ConfigError(
                f"{', '.join(unknown)}: not a field of kernel template {cls.TEMPLATE} (its fields: {', '.join(known)})")
        values = {name: known[name].parse(v) for name, v in fields.items() if v is not None}
        config = cls(**cls._defaults(values))
        config.validate()
        return config

    @classmethod
    def _defaults(cls, values: dict[str, Any]) -> dict[str, Any]:
        """Fill the fields left out; defaults may depend on fields given (e.g. the MMA shape on dtype)."""
        raise NotImplementedError

    @staticmethod
    def _contract_defaults(v: dict[str, Any]) -> dict[str, Any]:
        """What every kernel template computes unless told otherwise: FP16 in, FP32 out and accumulate, tn."""
        return {"dtype": v.get("dtype", "f16"), "out": v.get("out", "f32"), "acc": v.get("acc", "f32"),
                "layout": v.get("layout", "tn")}

    def replace(self, **fields):
        return type(self).from_fields({**self.as_fields(), **fields})

    def as_fields(self) -> dict[str, Any]:
        """Field values as YAML writes them (lists for shapes)."""
        out = {}
        for f in self.FIELDS:
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    def validate(self) -> None:
        raise NotImplementedError

    # -- what it computes ---------------------------------------------------------------------------
    @property
    def input_type(self) -> tags.InputType:
        return tags.INPUT_TYPES[self.dtype]

    @property
    def out_dtype(self) -> DType:
        return tags.OUTPUT_TYPES[self.out]

    @property
    def acc_dtype(self) -> DType:
        return tags.ACCUMULATOR_TYPES[self.acc]

    @property
    def math(self) -> Math:
        return self.input_type.math

    @property
    def orders(self) -> tuple[Order, Order]:
        return tags.LAYOUTS[self.layout]

    @property
    def in_bits(self) -> int:
        return self.input_type.bits

    @property
    def out_bits(self) -> int:
        return tags.storage_bits(self.out)

    @property
    def acc_bits(self) -> int:
        return tags.storage_bits(self.acc)

    @property
    def scalings(self) -> frozenset[Scaling]:
        """The FP8 scale shapes it applies: none (it takes no FP8 contract) unless a kernel template says so."""
        return frozenset({Scaling.NONE})

    @property
    def fast_accum(self) -> bool:
        """Whether it accumulates with fewer bits than its accumulator type (FP8 fast accumulation)."""
        return False

    SCALING_NOTE: ClassVar[str] = ""  # why it takes no other FP8 scale shapes

    @property
    def scaling_note(self) -> str:
        """Why it takes no other FP8 scale shapes (the end of its SKIP reason under them)."""
        return self.SCALING_NOTE

    def _check_types(self, dtypes: tuple[str, ...]) -> None:
        if self.dtype not in dtypes:
            hint = " (FP8: kernel template sm90_fp8, cutlass_configs/sm90_fp8.yaml)" if self.dtype in tags.FP8_INPUTS else ""
            raise ConfigError(f"dtype {self.dtype} is not available in kernel template {self.TEMPLATE} "
                              f"(takes {', '.join(dtypes)}){hint}")
        if self.acc == "f16" and (self.dtype != "f16" or self.out != "f16"):
            raise ConfigError("acc f16 needs dtype f16 and out f16")
        if self.dtype in ("tf32", "f32") and self.out != "f32":
            raise ConfigError(f"dtype {self.dtype} writes f32 only, not out {self.out}")
        if self.dtype in ("f16", "bf16") and self.out not in (self.dtype, "f32"):
            raise ConfigError(f"dtype {self.dtype} writes {self.dtype} or f32, not out {self.out}")

    def _mainloop_smem_bytes(self) -> int:
        """Shared memory of the multistage mainloop: every stage holds an A and a B tile."""
        m, n, k = self.tile
        return self.stages * (m + n) * k * self.in_bits // 8

    def _check_cta(self, kernel: str, smem_arch: int) -> None:
        """Threads per CTA, a fixed stage count, and shared memory within the CTA budget of sm_<smem_arch>."""
        if self.threads > 1024:
            raise ConfigError(f"{self.threads} threads per CTA (more than 1024)")
        if self.stages == "auto":
            raise ConfigError(f"{kernel} needs a fixed stage count (2 or more), not auto")
        cap = tags.SMEM_CAPACITY[smem_arch]
        if self.smem_bytes() > cap:
            raise ConfigError(f"{self.stages} stages of {_fmt(self.tile)} {self.dtype} tiles need {self.smem_bytes():,} "
                              f"bytes of shared memory; sm_{smem_arch} allows {cap:,} per CTA")

    def _check_accumulators(self, rows: int, cols: int, threads: int) -> None:
        regs = rows * cols * self.acc_bits // 32 // threads
        if regs > MAX_ACCUMULATOR_REGISTERS:
            raise ConfigError(
                f"a {rows}x{cols} accumulator tile over {threads} threads needs {regs} registers per thread "
                f"for accumulators alone (more than {MAX_ACCUMULATOR_REGISTERS}: it would spill)")

    # -- identity ---------------------------------------------------------------------------------
    @property
    def kernel_name(self) -> str:
        raise NotImplementedError

    @property
    def runtime_suffix(self) -> str:
        raise NotImplementedError

    @property
    def procedural_name(self) -> str:
        return self.kernel_name + self.runtime_suffix

    # -- what it needs ----------------------------------------------------------------------------
    min_cc: int
    arch_specific: bool = False
    READS_C: ClassVar[bool] = True  # honours beta (reads C when beta != 0); else alpha only, beta = 0
    INDEX_BITS: ClassVar[int] = 32  # width of its element offsets

    def vector_elements(self) -> tuple[int, int, int]:
        """(A, B, C) access widths in elements: the extents along each operand's contiguous
        dimension must be multiples of these."""
        raise NotImplementedError

    def pad_multiples(self) -> tuple[int, int, int]:
        """(m, n, k) multiples the problem must have (the harness pads with zeros to reach them)."""
        va, vb, vc = self.vector_elements()
        order_a, order_b = self.orders
        a_k = tags.k_major("a", order_a)
        b_k = tags.k_major("b", order_b)
        m = 1 if a_k else va
        n = _lcm(1 if b_k else vb, vc)  # C is row-major: N is its contiguous dimension
        k = _lcm(va if a_k else 1, vb if b_k else 1)
        return (m, n, k)

    def describe(self) -> str:
        return f"{self.DESCRIPTION}: {self.dtype} in, {self.out} out, {self.acc} accumulate, layout {self.layout}"


@dataclass(frozen=True)
class TiledGemmConfig(GemmConfig):
    """The fields every kernel template has, first in every configuration: what it computes and its CTA tile."""

    dtype: str
    out: str
    acc: str
    layout: str
    tile: tuple[int, int, int]


# -- CUTLASS 2.x, device::GemmUniversal (SM80; runs on SM80 and later) ------------------------------------


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


# -- CUTLASS 3.x, CollectiveBuilder (SM90a: TMA + wgmma) ----------------------------------------------------


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


# -- CUTLASS 3.x FP8 (SM90a: TMA + FP8 wgmma, per-tensor scales in the epilogue) --------------------------


@dataclass(frozen=True)
class Sm90Fp8Config(Sm90Config):
    """The sm90 kernel with FP8 (e4m3/e5m2) A and B: the fields of sm90 plus `accumulation` and `scaling`.

    scaling tensor: the two per-tensor scales (and alpha) are one scalar broadcast of the epilogue, read from
    device pointers inside the launch: D = (alpha * scale_a * scale_b) * acc, the harness's dequantized
    product (A ~= A_q * scale_a). scaling block: DeepSeek-V3's 1x128 scales of A and 128x128 of B, read from
    the same pointers by CUTLASS's blockwise mainloop, which multiplies each k block's partial sums by their
    two scales as it promotes them into FP32 (every 128 of K); the epilogue applies alpha."""

    TEMPLATE: ClassVar[str] = "sm90_fp8"
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


# -- CuTe: our own SM80-style kernel (cp.async + ldmatrix + mma.sync) -------------------------------------


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
