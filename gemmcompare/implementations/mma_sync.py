"""The `mma_sync` family: a hand-written mma.sync + ldmatrix + cp.async multistage GEMM.

The kernel is one header, extensions/mma_sync/mma_sync.cuh. A spec's parameters map one to one onto
its `Config<...>` template parameters; `MmaSyncConfig` is that mapping as a frozen dataclass, checked
here (with reasons, before anything compiles) and rendered into tiny translation units: one explicit
instantiation per TU, per B layout and per pair of element types, named after the configuration, plus
an entry TU that picks the layout and the types at launch. Rendering is a pure function of the
configuration (tested on the CPU); names, rendering and registration are parametrized.py's, shared with
the decode and gemv families.

Element types (not a parameter: every configuration is built for all of them, so a spec's one
`mma_sync` entry runs under FP16 and BF16 contracts alike): f16 A and B with f32 C; bf16 A and B with
f32 or bf16 C (round to nearest even). A BF16 contract runs the `.bf16` mma instruction on the bf16
operands as given, never a conversion to f16. Each pair is its own TU (they compile in parallel); the
f16 -> f32 TU keeps the names it always had.

Parameters (spec spelling -> template parameter):
  block      [BM, BN, BK]   block tile                              default [128, 256, 64]
  warps      int            warps per block (derives the warp tile) default 8
  warp_tile  [WM, WN]       warp tile (derives warps)               default: from warps
  stages     1..8           shared-memory stages (cp.async groups)  default 3
  smem       row | padded | swizzle                                 default swizzle
  group      int >= 1       grouped raster: tile rows per group     default 8
  mma        m16n8k16 | m16n8k8                                     default m16n8k16
  epilogue   plain | bias_relu                                      default plain
  acc        f32 | f16      f16 is the canary, see below            default f32
  layout     tn | tt | both (A row-major; B column- / row-major)    default both

Defaults are the best guess for an H200 (sm_90, 132 SMs, 227 KB of shared memory per block): a
128x256x64 block of 8 warps with 64x64 warp tiles (128 f32 accumulators per thread, one block per
SM at ~240 registers), 3 stages (144 KB), XOR swizzle (conflict-free ldmatrix at BK = 64 without
padding's extra bytes), group 8 (an 8-tile strip of A, 8 MB at K = 4096, stays in L2).

The f16-accumulate variant (acc: f16) accumulates in FP16 (`mma.sync ... .f16.f16.f16.f16`) yet declares
support for the f32-accumulate contracts too. That is deliberate: it is a canary for the correctness
contract, which must FAIL it wherever its error exceeds the f32-accumulate bound (large K, large
magnitudes), and must not let it pass silently. Its rows say `acc=f16` in the name. It is built for
f16 inputs only (mma.sync has no bf16 form with an f16 accumulator): under a BF16 contract it is a SKIP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dtypes import DType
from .base import Constraints, ContractSupport, Param, Skip, layouts
from ..contracts.precision import Epilogue
from .parametrized import ConfigKernel, KernelConfig, register_config_family
from .registry import InvalidConfig

SMEM_LIMIT = 227 * 1024  # bytes of dynamic shared memory one block may opt into on sm_80/sm_90
REG_BUDGET = 224  # accumulators + double-buffered fragments must leave room below 255 registers

SMEM_LAYOUTS = ("row", "padded", "swizzle")
MMA_SHAPES = ("m16n8k16", "m16n8k8")
EPILOGUES = ("plain", "bias_relu")
ACCS = ("f32", "f16")
LAYOUT_CHOICES = ("tn", "tt", "both")

# C++ spellings, one table each (never formatted inline).
SMEM_TAG = {"row": "gc::mma::Smem::Row", "padded": "gc::mma::Smem::Padded", "swizzle": "gc::mma::Smem::Swizzle"}
EPI_TAG = {"plain": "gc::mma::Epi::Plain", "bias_relu": "gc::mma::Epi::BiasRelu"}
MMA_K = {"m16n8k16": 16, "m16n8k8": 8}

# (A and B, C): the element types every f32-accumulate configuration is built for; the f16-accumulate
# canary is built for the first only.
TYPE_PAIRS: tuple[tuple[DType, DType], ...] = ((DType.F16, DType.F32), (DType.BF16, DType.F32), (DType.BF16, DType.BF16))
CANARY_TYPES = TYPE_PAIRS[:1]
CANARY_SKIP = "acc=f16 is an f16-only canary (mma.sync has no bf16 form with an f16 accumulator); use acc=f32"


def type_suffix(pair: tuple[DType, DType]) -> str:
    """What a pair of types adds to file, symbol and tag names: nothing for f16 -> f32 (the names the
    family always had), `_bf16` for bf16 -> f32, `_bf16_bf16out` for bf16 -> bf16."""
    inputs, output = pair
    if pair == TYPE_PAIRS[0]:
        return ""
    return f"_{inputs.value}" + ("" if output is DType.F32 else f"_{output.value}out")


def _pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


@dataclass(frozen=True)
class SmemTileSpec:
    """Python twin of SmemTile<ROWS, COLS, LAYOUT> (sizes only)."""

    rows: int
    cols: int
    layout: str

    @property
    def cpr(self) -> int:
        return self.cols // 8

    @property
    def row_bytes(self) -> int:
        return 2 * (self.cols + 8 if self.layout == "padded" else self.cols)

    @property
    def bytes(self) -> int:
        return self.rows * self.row_bytes

    @property
    def align(self) -> int:
        return self.row_bytes if self.layout == "swizzle" and self.row_bytes > 128 else 128


@dataclass(frozen=True)
class MmaSyncConfig(KernelConfig):
    """One instantiation of the kernel template, minus the B layout(s) it is built for."""

    family = "mma_sync"
    header = "mma_sync/mma_sync.cuh"
    namespace = "gc::mma"

    block: tuple[int, int, int] = (128, 256, 64)
    warp_tile: tuple[int, int] = (64, 64)
    stages: int = 3
    smem: str = "swizzle"
    group: int = 8
    mma: str = "m16n8k16"
    epilogue: str = "plain"
    acc: str = "f32"
    layouts: tuple[str, ...] = ("tn", "tt")

    # -- derived ---------------------------------------------------------------------------------
    @property
    def warps(self) -> int:
        bm, bn, _ = self.block
        wm, wn = self.warp_tile
        return (bm // wm) * (bn // wn)

    @property
    def threads(self) -> int:
        return 32 * self.warps

    def tiles(self, layout: str) -> tuple[SmemTileSpec, SmemTileSpec]:
        bm, bn, bk = self.block
        a = SmemTileSpec(bm, bk, self.smem)
        b = SmemTileSpec(bn, bk, self.smem) if layout == "tn" else SmemTileSpec(bk, bn, self.smem)
        return a, b

    def smem_bytes(self, layout: str) -> int:
        """Dynamic shared memory the kernel asks for (Config::SMEM_BYTES)."""
        a, b = self.tiles(layout)
        align = max(a.align, b.align if layout == "tn" else 128)
        return self.stages * (a.bytes + b.bytes) + align - 16

    @property
    def registers_floor(self) -> int:
        """Accumulator + double-buffered fragment registers per thread (a lower bound)."""
        wm, wn = self.warp_tile
        mi, ni = wm // 16, wn // 8
        return mi * ni * (4 if self.acc == "f32" else 2) + 2 * (4 * mi + 2 * ni)

    @property
    def ident(self) -> str:
        """The procedural name of the instantiation (without its layouts): names files, symbols, tags."""
        bm, bn, bk = self.block
        wm, wn = self.warp_tile
        return (f"{bm}x{bn}x{bk}_w{wm}x{wn}_s{self.stages}_{self.smem}_g{self.group}_"
                f"k{MMA_K[self.mma]}_{self.acc}acc_{self.epilogue}")

    @property
    def type_pairs(self) -> tuple[tuple[DType, DType], ...]:
        """The (A and B, C) element types this configuration is built for."""
        return CANARY_TYPES if self.acc == "f16" else TYPE_PAIRS

    @property
    def layout_name(self) -> str:
        return "both" if set(self.layouts) == {"tn", "tt"} else self.layouts[0]

    # -- checks ----------------------------------------------------------------------------------
    def problems(self) -> list[str]:
        """Every reason this configuration cannot work (empty when it can)."""
        out: list[str] = []
        bm, bn, bk = self.block
        wm, wn = self.warp_tile
        if bk < 16 or not _pow2(bk):
            out.append(f"BK={bk} must be a power of two >= 16 (the k step of ldmatrix.x4 + mma is 16)")
        if wm % 16 or wn % 16:
            out.append(f"warp tile {wm}x{wn} must be a multiple of 16x16 (m16 A tiles; ldmatrix.x4 loads two n8 B tiles)")
        if bm % wm or bn % wn:
            out.append(f"warp tile {wm}x{wn} does not divide the block tile {bm}x{bn}")
        if out:
            return out
        if self.warps > 32:
            out.append(f"{self.warps} warps is more than a block's 32 (1024 threads)")
        if not 1 <= self.stages <= 8:
            out.append(f"stages={self.stages} must be 1..8")
        if self.group < 1:
            out.append(f"group={self.group} must be >= 1")
        for name, value, choices in (("smem", self.smem, SMEM_LAYOUTS), ("mma", self.mma, MMA_SHAPES),
                                     ("epilogue", self.epilogue, EPILOGUES), ("acc", self.acc, ACCS)):
            if value not in choices:
                out.append(f"{name}={value!r} must be one of {list(choices)}")
        if not self.layouts or any(l not in ("tn", "tt") for l in self.layouts):
            out.append(f"layouts {self.layouts} must be tn and/or tt")
        if out:
            return out
        regs = self.registers_floor
        if regs > REG_BUDGET:
            out.append(f"warp tile {wm}x{wn} needs {regs} registers per thread for accumulators and fragments alone "
                       f"(more than {REG_BUDGET} leaves no room below the 255-register limit: it would spill)")
        for layout in self.layouts:
            a, b = self.tiles(layout)
            for tile, what in ((a, "A"), (b, f"B ({layout})")):
                if self.threads % tile.cpr:
                    out.append(f"{self.threads} threads cannot share the {tile.cpr} 16-byte chunks of a {what} tile row evenly")
                if self.smem == "swizzle" and not (tile.cpr in (2, 4) or tile.cpr % 8 == 0):
                    out.append(f"the XOR swizzle needs 2, 4 or a multiple of 8 chunks per row; the {what} tile has {tile.cpr}")
            if layout == "tt" and self.smem == "swizzle" and b.cpr < 4:
                out.append(f"tt with the swizzle needs BN >= 32 (BN={bn})")
            need = self.smem_bytes(layout)
            if need > SMEM_LIMIT:
                out.append(f"{self.stages} stages of {bm}x{bk} A + {bn}x{bk} B tiles ({self.smem}) need {need:,} bytes of "
                           f"shared memory, more than the {SMEM_LIMIT:,} a block can have")
        return sorted(set(out), key=out.index)

    # -- rendering: one launcher per B layout and pair of types --------------------------------------
    @property
    def variants(self) -> tuple[str, ...]:
        return self.layouts

    def type_part(self, types: tuple[DType, DType]) -> str:
        return type_suffix(types)

    def variant_condition(self, variant: str) -> str:
        return f"args->order_b == {'GC_COL' if variant == 'tn' else 'GC_ROW'}"

    @property
    def entry_ident(self) -> str:
        return f"{self.ident}_{self.layout_name}"

    def entry_comment(self) -> str:
        return (f"// Generated by gemmcompare/implementations/mma_sync.py: the entry of {self.ident}\n"
                f"// ({'/'.join(self.layouts)}; {self.type_pairs_text}), dispatching on B's storage order and the "
                f"types.\n")

    @property
    def built_for(self) -> str:
        return f"layouts {'/'.join(self.layouts)} and A/B -> C types {self.type_pairs_text}"

    def config_template(self, variant: str) -> str:
        bm, bn, bk = self.block
        wm, wn = self.warp_tile
        args = ", ".join(str(x) for x in (
            bm, bn, bk, wm, wn, self.stages, SMEM_TAG[self.smem], self.group, MMA_K[self.mma],
            "true" if self.acc == "f16" else "false", EPI_TAG[self.epilogue], "true" if variant == "tn" else "false",
        ))
        return f"gc::mma::Config<{args}>"

    def instance_comment(self, variant: str, types: tuple[DType, DType]) -> str:
        b_order = "column" if variant == "tn" else "row"
        return (f"// {self.ident}, layout {variant} (A row-major, B {b_order}-major, C row-major),\n"
                f"// {types[0].value} A and B, {types[1].value} C\n")

    def symbol(self, layout: str | None = None, types: tuple[DType, DType] = TYPE_PAIRS[0]) -> str:
        """extern "C" symbol: the entry (layout None: gc_mma_sync_<ident>_<tn|tt|both>) or the launcher of
        one layout and pair of types (gc_mma_sync_<ident>_<layout><type suffix>_launch), which the entry
        calls."""
        return self.entry_symbol if layout is None else self.launcher_symbol(layout, types)

    def tag(self, layout: str, types: tuple[DType, DType] = TYPE_PAIRS[0]) -> str:
        """The type naming one layout's and pair's kernels (it appears in their mangled names)."""
        return self.launcher_tag(layout, types)

    def instance_filename(self, layout: str, types: tuple[DType, DType] = TYPE_PAIRS[0]) -> str:
        return self.launcher_filename(layout, types)

    def render_instance(self, layout: str, types: tuple[DType, DType] = TYPE_PAIRS[0]) -> str:
        return self.render_launcher(layout, types)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> MmaSyncConfig:
        """Spec parameters -> a checked MmaSyncConfig (warps derive the warp tile, layout `both` is tn and tt).
        Raises InvalidConfig with the reason."""
        block = tuple(params.get("block") or MmaSyncConfig.block)
        if len(block) != 3 or any(not isinstance(v, int) or v <= 0 for v in block):
            raise InvalidConfig(f"block must be three positive integers, got {block}")
        warps, warp_tile = params.get("warps"), params.get("warp_tile")
        if warp_tile is not None:
            warp_tile = tuple(warp_tile)
            if len(warp_tile) != 2 or any(not isinstance(v, int) or v <= 0 for v in warp_tile):
                raise InvalidConfig(f"warp_tile must be two positive integers, got {warp_tile}")
        else:
            warp_tile = derive_warp_tile(block, warps if warps is not None else 8)
        layout = params.get("layout") or "both"
        if layout not in LAYOUT_CHOICES:
            raise InvalidConfig(f"layout={layout!r} must be one of {list(LAYOUT_CHOICES)}")
        cfg = MmaSyncConfig(
            block=block, warp_tile=warp_tile,
            stages=int(params.get("stages") if params.get("stages") is not None else MmaSyncConfig.stages),
            smem=params.get("smem") or MmaSyncConfig.smem,
            group=int(params.get("group") if params.get("group") is not None else MmaSyncConfig.group),
            mma=params.get("mma") or MmaSyncConfig.mma,
            epilogue=params.get("epilogue") or MmaSyncConfig.epilogue,
            acc=params.get("acc") or MmaSyncConfig.acc,
            layouts=("tn", "tt") if layout == "both" else (layout,),
        )
        cfg.validate()
        if warps is not None and params.get("warp_tile") is not None and warps != cfg.warps:
            raise InvalidConfig(f"warps={warps} does not match warp_tile {warp_tile[0]}x{warp_tile[1]} on a "
                                f"{block[0]}x{block[1]} block ({cfg.warps} warps)")
        return cfg

    def params(self) -> dict[str, Any]:
        """The canonical parameters (the implementation's name is built from these)."""
        return {
            "block": tuple(self.block), "warp_tile": tuple(self.warp_tile), "warps": self.warps,
            "stages": self.stages, "smem": self.smem, "group": self.group, "mma": self.mma,
            "epilogue": self.epilogue, "acc": self.acc, "layout": self.layout_name,
        }


def derive_warp_tile(block: tuple[int, int, int], warps: int) -> tuple[int, int]:
    """The most square warp tile (multiples of 16) that splits `block` among `warps` warps: the one
    that reads the fewest shared-memory bytes per MMA (WM + WN smallest for WM * WN fixed)."""
    bm, bn, _ = block
    best = None
    for wy in range(1, warps + 1):
        if warps % wy:
            continue
        wx = warps // wy
        if bm % wy or bn % wx:
            continue
        wm, wn = bm // wy, bn // wx
        if wm % 16 or wn % 16:
            continue
        key = (wm + wn, -wn)
        if best is None or key < best[0]:
            best = (key, (wm, wn))
    if best is None:
        raise InvalidConfig(f"{warps} warps cannot split a {bm}x{bn} block into warp tiles that are multiples of 16x16")
    return best[1]


config_from_params = MmaSyncConfig.from_params  # spec parameters -> a checked MmaSyncConfig, or InvalidConfig


class MmaSyncKernel(ConfigKernel):
    family = "mma_sync"
    min_cc = 80  # cp.async, ldmatrix, mma.sync m16n8k16
    build_group = "mma_sync"
    constraints = Constraints()  # any m, n, k; ragged tails are zero-filled in shared memory
    batched = True  # a batch is the grid's y: each block offsets A, B and C by its matrix's batch stride
    max_batch = 65535  # gridDim.y's limit
    batch_offsets_64bit = True  # the batch offsets are 64-bit; the 32-bit indices are those within a matrix

    def __init__(self, cfg: MmaSyncConfig):
        super().__init__(cfg)
        self.description = (
            f"mma.sync {cfg.mma} + ldmatrix + cp.async, {cfg.block[0]}x{cfg.block[1]}x{cfg.block[2]} block, "
            f"{cfg.warp_tile[0]}x{cfg.warp_tile[1]} warp tile ({cfg.warps} warps), {cfg.stages} stages, {cfg.smem} "
            f"shared memory, raster group {cfg.group}, {cfg.acc} accumulator"
            + (" (FP16-accumulate canary: declares the f32-accumulate contracts on purpose; f16 in only)"
               if cfg.acc == "f16" else "")
            + ("" if cfg.epilogue == "plain" else ", fused bias+ReLU")
            + f"; A/B -> C types {cfg.type_pairs_text}"
        )
        self.contract_support = ContractSupport(
            inputs=frozenset(t[0] for t in cfg.type_pairs),
            outputs=frozenset(t[1] for t in cfg.type_pairs),
            pairs=frozenset(cfg.type_pairs),  # f16 in, bf16 out: in both sets above, never built
            accumulators=frozenset({DType.F32} | ({DType.F16} if cfg.acc == "f16" else set())),
            layouts=layouts(*cfg.layouts),
            epilogues=frozenset({Epilogue.BIAS_RELU if cfg.epilogue == "bias_relu" else Epilogue.NONE}),
        )

    def supports(self, problem, contract):
        cfg = self.config
        if cfg.acc == "f16" and DType.BF16 in (contract.a, contract.b):
            return Skip(CANARY_SKIP)
        return super().supports(problem, contract)

    def dynamic_smem_bytes(self) -> int:
        return max(self.config.smem_bytes(layout) for layout in self.config.layouts)


def _check_block(v) -> str | None:
    if len(v) != 3:
        return "block is [BM, BN, BK]"
    if v[2] % 16:
        return f"BK={v[2]} must be a multiple of 16"
    return None


PARAMS = [
    Param("block", "shape", default=MmaSyncConfig.block, length=3, help="block tile [BM, BN, BK]",
                validate=_check_block),
    Param("warps", "int", default=None, help="warps per block (derives the warp tile; default 8)"),
    Param("warp_tile", "shape", default=None, length=2, help="warp tile [WM, WN] (derives warps)"),
    Param("stages", "int", default=MmaSyncConfig.stages, help="shared-memory pipeline stages, 1..8"),
    Param("smem", "choice", default=MmaSyncConfig.smem, choices=SMEM_LAYOUTS, help="shared-memory layout"),
    Param("group", "int", default=MmaSyncConfig.group, help="grouped raster: block rows per group (1 = row-major)"),
    Param("mma", "choice", default=MmaSyncConfig.mma, choices=MMA_SHAPES, help="mma.sync shape"),
    Param("epilogue", "choice", default=MmaSyncConfig.epilogue, choices=EPILOGUES, help="fused epilogue"),
    Param("acc", "choice", default=MmaSyncConfig.acc, choices=ACCS,
                help="accumulator; f16 is a canary that also claims the f32-accumulate contracts (f16 in only)"),
    Param("layout", "choice", default="both", choices=LAYOUT_CHOICES,
                help="B storage order(s) to build: tn (column-major B), tt (row-major B) or both"),
]


register_config_family(
    "mma_sync", PARAMS, MmaSyncKernel, MmaSyncConfig,
    description="hand-written mma.sync + ldmatrix + cp.async multistage GEMM (f16 in, f32 out; bf16 in, f32/bf16 "
                "out), any m, n, k",
)
