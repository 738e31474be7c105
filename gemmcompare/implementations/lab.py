"""The `lab` family: the GEMM lab's kernel ladder, from one-thread-per-output to staged WMMA.

Each rung is a fixed implementation (or, for `lab.wmma_staged`, a family over the warp tile) whose
kernel lives in extensions/lab/. All of them share one build group, so a run builds them as one
extension: one generated torch binding plus one translation unit per kernel, compiled in parallel.

  FP32 SIMT (f32_strict_*; every layout tt/tn/nn/nt, C row-major):
    lab.scalar_strided     one output per thread, threadIdx.x -> row (uncoalesced on purpose)
    lab.scalar_coalesced   one output per thread, threadIdx.x -> column
    lab.shared_16x16       16x16 shared tiles, both barriers, zero-filled edges
    lab.register_16x64     shared tiles + a 1x4 register tile per thread
    lab.register_2d        128x128 block, 8x8 per thread, float4 when aligned: the FP32 baseline
  FP16 in, FP32 accumulate and out (f16_f32acc_tt / _tn: A row-major):
    lab.wmma_global        fragments straight from global memory; m, n, k multiples of 16
    lab.wmma_padded        the lab's kernel: m, n, k zero-padded to 16 (the copies are timed)
    lab.wmma_staged        padded shared tiles, warp_tile 32x32 / 32x64 / 64x64, any m, n, k
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..build.request import KernelSource
from ..paths import EXTENSIONS_DIR
from ..dtypes import DType
from .base import AbiKernel, Constraints, ContractSupport, Param, layouts
from .registry import Parametrized, InvalidConfig, register_parametrized, register_fixed

LAB_DIR = EXTENSIONS_DIR / "lab"
GRID_Y = 65535  # the lab kernels put M (or N) on gridDim.y
INT_MAX = 2**31 - 1

F32_SIMT = ContractSupport(
    inputs=frozenset({DType.F32}),
    outputs=frozenset({DType.F32}),
    accumulators=frozenset({DType.F32}),
    layouts=layouts("tt", "tn", "nn", "nt"),
)
F16_WMMA = ContractSupport(
    inputs=frozenset({DType.F16}),
    outputs=frozenset({DType.F32}),
    accumulators=frozenset({DType.F32}),
    layouts=layouts("tt", "tn"),
)


class LabKernel(AbiKernel):
    """One rung of the ladder: a kernel file (or rendered TU) in extensions/lab with one C entry."""

    family = "lab"
    build_group = "lab"
    include_dirs = (str(EXTENSIONS_DIR),)  # kernels include "lab/lab_common.cuh"

    def __init__(self, variant: str, *, entry: str, kernel: str, description: str, min_cc: int,
                 contract_support: ContractSupport, constraints: Constraints,
                 sources: tuple[KernelSource, ...], params: dict[str, Any] | None = None,
                 layout_template: str = ""):
        super().__init__(variant, params)
        self.entry_symbol = entry
        self.kernel_filter = kernel
        self.layout_template = layout_template
        self.description = description
        self.min_cc = min_cc
        self.contract_support = contract_support
        self.constraints = constraints
        self._sources = sources

    def sources(self):
        return self._sources

    def kernel_filter_for(self, contract) -> str:
        """The one instantiation a launch under `contract` runs (the kernels are templates on the storage
        orders: KERNEL<A_COL, B_COL> or KERNEL<B_COL>, lab_common.cuh), demangled or mangled; they can
        differ in registers (register_16x64: 32 to 40), and occupancy follows the one that runs."""
        if not self.layout_template:
            return self.kernel_filter
        cols = {"a": contract.order_a.value == "col", "b": contract.order_b.value == "col"}
        flags = [cols[operand] for operand in self.layout_template]
        demangled = "<" + ", ".join("true" if f else "false" for f in flags) + ">"
        mangled = "I" + "".join(f"Lb{int(f)}E" for f in flags) + "E"
        return rf"{self.kernel_filter}({demangled}|{mangled})"


@dataclass(frozen=True)
class Rung:
    """A fixed rung: its kernel file is extensions/lab/<variant>.cu, entry gc_lab_<variant>,
    kernel gc_lab_<variant>_kernel."""

    variant: str
    description: str
    min_cc: int
    contract_support: ContractSupport
    constraints: Constraints
    layout_template: str = "ab"  # the kernel's template parameters: A_COL, B_COL ("ab") or B_COL ("b")

    @property
    def filename(self) -> str:
        return f"lab_{self.variant}.cu"

    def make(self) -> LabKernel:
        return LabKernel(
            self.variant,
            entry=f"gc_lab_{self.variant}",
            kernel=rf"gc_lab_{self.variant}_kernel",
            description=self.description,
            min_cc=self.min_cc,
            contract_support=self.contract_support,
            constraints=self.constraints,
            sources=(KernelSource(self.filename, path=LAB_DIR / f"{self.variant}.cu"),),
            layout_template=self.layout_template,
        )


RUNGS = (
    Rung("scalar_strided", "one output per thread, threadIdx.x -> row (strided, uncoalesced)", 0, F32_SIMT,
         Constraints(max_dims=(INT_MAX, GRID_Y * 16, INT_MAX))),
    Rung("scalar_coalesced", "one output per thread, threadIdx.x -> column (coalesced)", 0, F32_SIMT,
         Constraints(max_dims=(GRID_Y * 8, INT_MAX, INT_MAX))),
    Rung("shared_16x16", "16x16 shared-memory tiles, two barriers, zero-filled edges", 0, F32_SIMT,
         Constraints(max_dims=(GRID_Y * 16, INT_MAX, INT_MAX))),
    Rung("register_16x64", "16x64 block tile from shared memory, 1x4 outputs per thread", 0, F32_SIMT,
         Constraints(max_dims=(GRID_Y * 16, INT_MAX, INT_MAX))),
    Rung("register_2d", "128x128 block tile, 8x8 outputs per thread, float4 loads when aligned, double-buffered "
                        "shared memory (the FP32 baseline)", 0, F32_SIMT,
         Constraints(max_dims=(GRID_Y * 128, INT_MAX, INT_MAX))),
    Rung("wmma_global", "WMMA 16x16x16, fragments loaded straight from global memory (4 warps, 32x32 block)", 70,
         F16_WMMA, Constraints(m_multiple_of=16, n_multiple_of=16, k_multiple_of=16,
                               max_dims=(GRID_Y * 32, INT_MAX, INT_MAX)), layout_template="b"),
    Rung("wmma_padded", "the lab's WMMA kernel (one warp per 16x16 tile, fragments from global); runs m, n, k "
                        "zero-padded to multiples of 16: copies in and out are inside the timed region", 70,
         F16_WMMA, Constraints(pad_to=(16, 16, 16), ld_multiples=(8, 8, 4),  # wmma's ldm rule (16 bytes)
                               max_dims=(GRID_Y * 16, INT_MAX, INT_MAX)), layout_template="b"),
)

for _rung in RUNGS:
    register_fixed(f"lab.{_rung.variant}", _rung.make)


# ---------------------------------------------------------------------------------------------------
# lab.wmma_staged: a family over the warp tile (the capstone's sweep), one rendered TU per warp tile.

WARP_TILES = ((32, 32), (32, 64), (64, 64))


def wmma_staged_symbol(warp_tile: tuple[int, int]) -> str:
    return f"gc_lab_wmma_staged_{warp_tile[0]}x{warp_tile[1]}"


def render_wmma_staged(warp_tile: tuple[int, int]) -> str:
    """The translation unit of one warp tile: includes the kernel header, instantiates it, defines the entry."""
    wm, wn = warp_tile
    sym = wmma_staged_symbol(warp_tile)
    return (
        f"// Generated by gemmcompare/implementations/lab.py: lab.wmma_staged with a {wm}x{wn} warp tile.\n"
        f'#include "lab/wmma_staged.cuh"\n'
        f"\n"
        f"struct {sym}_tag;  // names the kernels in the ptxas report\n"
        f"\n"
        f'extern "C" int {sym}(const gc_gemm_args* args, char* err, size_t err_len) {{\n'
        f'  return gc::lab::staged::launch<{wm}, {wn}, {sym}_tag>(args, "{sym}", err, err_len);\n'
        f"}}\n"
        f"\n"
        f'extern "C" int {sym}_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {{\n'
        f'  return gc::lab::staged::launch<{wm}, {wn}, {sym}_tag>(args, "{sym}", err, err_len, out);\n'
        f"}}\n"
    )


def make_wmma_staged(params: dict[str, Any]) -> LabKernel:
    wt = params.get("warp_tile") or (32, 64)
    wt = tuple(wt)
    if wt not in WARP_TILES:
        raise InvalidConfig(f"warp_tile {list(wt)} is not one of {[list(w) for w in WARP_TILES]} "
                            f"(the 128x128 block must split into 4, 8 or 16 warps of whole 16x16 fragments)")
    sym = wmma_staged_symbol(wt)
    return LabKernel(
        "wmma_staged",
        entry=sym,
        kernel=rf"{sym}_tag",
        description=f"WMMA from padded, double-buffered shared tiles: 128x128x32 block, {wt[0]}x{wt[1]} warp tile "
                    f"({(128 // wt[0]) * (128 // wt[1])} warps), zero-filled ragged edges, masked edge stores",
        min_cc=70,
        contract_support=F16_WMMA,
        constraints=Constraints(max_dims=(GRID_Y * 128, INT_MAX, INT_MAX)),
        sources=(KernelSource(f"lab_wmma_staged_{wt[0]}x{wt[1]}.cu", text=render_wmma_staged(wt)),),
        params={"warp_tile": wt},
    )


def _check_warp_tile(v) -> str | None:
    if tuple(v) not in WARP_TILES:
        return f"warp_tile must be one of {[list(w) for w in WARP_TILES]}, got {list(v)}"
    return None


register_parametrized(Parametrized(
    "lab.wmma_staged",
    [Param("warp_tile", "shape", default=(32, 64), length=2, help="warp tile [WM, WN] of the 128x128 block",
                 validate=_check_warp_tile)],
    make_wmma_staged,
    description="WMMA from padded shared-memory tiles, any m, n, k (no global padding)",
))
