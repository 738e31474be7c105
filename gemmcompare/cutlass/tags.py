"""Every configuration value -> its C++ spelling (and short name), in one place.

The renderer never formats a C++ type name inline: it looks it up here. Adding a kernel template means adding
its rows to these tables and one template under cutlass_configs/templates/.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..contracts.precision import LAYOUTS, Math, Order  # noqa: F401  (LAYOUTS: the contract's table)
from ..dtypes import DTYPE_INFO, DType


# -- element types --------------------------------------------------------------------------------


@dataclass(frozen=True)
class InputType:
    """What a configuration's `dtype` field means: the A/B storage dtype and the math mode it runs."""

    storage: DType  # dtype of A and B in memory (what the contract's `a`/`b` must be)
    math: Math  # the contract math mode it honours
    bits: int  # bits per stored element (alignment arithmetic)


INPUT_TYPES: dict[str, InputType] = {
    "f16": InputType(DType.F16, Math.STRICT, 16),
    "bf16": InputType(DType.BF16, Math.STRICT, 16),
    "tf32": InputType(DType.F32, Math.TF32, 32),  # FP32 in memory, TF32 inside the tensor-core multiply
    "f32": InputType(DType.F32, Math.STRICT, 32),  # FP32 FMA (SIMT): no reduced-precision path
    "e4m3": InputType(DType.E4M3, Math.STRICT, 8),  # FP8 (kernel template sm90_fp8), with per-tensor or block scales
    "e5m2": InputType(DType.E5M2, Math.STRICT, 8),
}
FP8_INPUTS = ("e4m3", "e5m2")

OUTPUT_TYPES: dict[str, DType] = {"f16": DType.F16, "bf16": DType.BF16, "f32": DType.F32}
ACCUMULATOR_TYPES: dict[str, DType] = {"f32": DType.F32, "f16": DType.F16}

# How each kernel template spells a TF32 operand. CUTLASS 2 and 3 take `float` and run TF32 tensor cores on it
# (CUTLASS 2 rounds to TF32 in registers; SM90 GMMA reads FP32 bits from shared memory and ignores the
# low mantissa bits); the CuTe kernel names the MMA value type directly.
TF32_ELEMENT: dict[str, str] = {
    "sm80": "float",
    "sm90": "float",
    "sm90_fp8": "float",  # (takes no tf32: FP8 only)
    "sm90_grouped": "float",  # (takes no tf32: f16 and bf16 only)
    "sm90_grouped_fp8": "float",  # (takes no tf32: FP8 only)
    "cute_sm80": "cute::tfloat32_t",
    "cute_sm90": "float",  # (takes no tf32: f16 and bf16 only)
}


def element_tag(dtype: str, template: str) -> str:
    """C++ element type of an input/output/accumulator dtype name ('f16', 'bf16', 'tf32', 'f32')."""
    if dtype == "tf32":
        return TF32_ELEMENT[template]
    dt = DType(dtype)
    return DTYPE_INFO[dt].cutlass_tag


def storage_bits(dtype: str) -> int:
    """Bits of one stored element of a dtype name (tf32 is stored as FP32)."""
    if dtype in INPUT_TYPES:
        return INPUT_TYPES[dtype].bits
    return DTYPE_INFO[DType(dtype)].itemsize * 8


# -- the C ABI (extensions/include/gemmcompare/gemm_abi.h) ---------------------------------------------

ABI_DTYPE: dict[DType, str] = {DType.F16: "GC_F16", DType.BF16: "GC_BF16", DType.F32: "GC_F32", DType.F64: "GC_F64",
                               DType.E4M3: "GC_E4M3", DType.E5M2: "GC_E5M2"}
ABI_ORDER: dict[Order, str] = {Order.ROW: "GC_ROW", Order.COL: "GC_COL"}
ABI_MATH: dict[Math, str] = {Math.STRICT: "GC_MATH_STRICT", Math.TF32: "GC_MATH_TF32"}


# -- layouts --------------------------------------------------------------------------------------

LAYOUT_TAG: dict[Order, str] = {
    Order.ROW: "cutlass::layout::RowMajor",
    Order.COL: "cutlass::layout::ColumnMajor",
}


def k_major(operand: str, order: Order) -> bool:
    """Whether an operand's contiguous dimension is K: A (m x k) row-major, B (k x n) column-major."""
    return order is (Order.ROW if operand == "a" else Order.COL)


# -- architectures ----------------------------------------------------------------------------------

ARCH_TAG: dict[int, str] = {80: "cutlass::arch::Sm80", 90: "cutlass::arch::Sm90"}

# Largest dynamic shared memory one CTA may opt in to, in bytes (CUDA programming guide, per cc).
SMEM_CAPACITY: dict[int, int] = {80: 166912, 86: 101376, 89: 101376, 90: 232448}


# -- CUTLASS 2.x (kernel template sm80) --------------------------------------------------------------------

SM80_OPCLASS: dict[str, str] = {
    "tensorop": "cutlass::arch::OpClassTensorOp",
    "simt": "cutlass::arch::OpClassSimt",
}
SM80_MATH_OPERATOR = "cutlass::arch::OpMultiplyAdd"


def sm80_swizzle(n: int) -> str:
    return f"cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<{n}>"


# split_k field -> the SplitK enumerator of the sm80 template
SM80_SPLIT_K: dict[str, str] = {"none": "kNone", "serial": "kSerial", "parallel": "kParallel"}


# -- CUTLASS 3.x (kernel template sm90) --------------------------------------------------------------------


@dataclass(frozen=True)
class Sm90Schedule:
    kernel: str  # mainloop (kernel) schedule tag
    short: str  # in procedural names
    consumer_threads: int  # threads that hold one tile's accumulators
    tma_epilogue: str  # the TMA epilogue schedule that pairs with it ('' = none)


SM90_SCHEDULES: dict[str, Sm90Schedule] = {
    "tma_ws": Sm90Schedule("cutlass::gemm::KernelTmaWarpSpecialized", "ws", 128, ""),
    "cooperative": Sm90Schedule(
        "cutlass::gemm::KernelTmaWarpSpecializedCooperative", "coop", 256,
        "cutlass::epilogue::TmaWarpSpecializedCooperative"),
    "pingpong": Sm90Schedule(
        "cutlass::gemm::KernelTmaWarpSpecializedPingpong", "pp", 128,
        "cutlass::epilogue::TmaWarpSpecialized"),
}

SM90_NOSMEM_EPILOGUE = "cutlass::epilogue::NoSmemWarpSpecialized"

# FP8 (kernel template sm90_fp8), by its `accumulation` field. promote: the schedules above, for which the
# CollectiveBuilder picks MainloopSm90TmaGmmaWarpSpecializedFP8: the wgmma accumulator is added into FP32
# registers every mma_promotion_interval (4) k-steps of 32, i.e. every 128 of K. fast: the FP8FastAccum
# schedules, which keep the tensor cores' own (~14-bit) accumulation over the whole K.
SM90_FP8_FAST_ACCUM: dict[str, str] = {
    "cooperative": "cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum",
    "pingpong": "cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum",
}
SM90_FP8_ACCUMULATION: dict[str, str] = {"promote": "promote", "fast": "fastacc"}  # field value -> short

# FP8 scale shapes (kernel template sm90_fp8, its `scaling` field) -> the token in kernel names ('' = none, so
# the per-tensor kernels keep their names). tensor: the two scales fold into the epilogue's scalar
# (sm90_fp8_kernel.cu.tmpl). block: DeepSeek-V3's 1x128 blocks of A and 128x128 of B, multiplied into each
# k block's partial sums as the mainloop promotes them to FP32 (sm90_fp8_blockwise_kernel.cu.tmpl), by the
# FP8BlockScaledAccum schedules below.
SM90_FP8_SCALING: dict[str, str] = {"tensor": "", "block": "blockwise"}
SM90_FP8_BLOCK_SCALED: dict[str, str] = {
    "cooperative": "cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8BlockScaledAccum",
    "pingpong": "cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8BlockScaledAccum",
}
# Which mode of each scale tensor is contiguous, as Sm90BlockwiseScaleConfig takes it: the harness's scales are
# row-major (contracts/quantize.py), so scale_a (m, ceil(k/128)) is K-major and scale_b (ceil(k/128),
# ceil(n/128)) N-major. CUTLASS derives the strides from these (tile_atom_to_shape_SFA/SFB); nothing is copied.
SM90_FP8_BLOCK_SCALE_MAJOR: dict[str, str] = {"a": "cute::GMMA::Major::K", "b": "cute::GMMA::Major::MN"}

# Grouped GEMMs (kernel template sm90_grouped): CUTLASS's pointer-array schedules, which take device arrays of
# per-group pointers and strides and rewrite their TMA descriptors when a CTA moves to another group, and the
# pointer-array TMA epilogues that pair with them (cutlass/gemm/dispatch_policy.hpp, epilogue/dispatch_policy.hpp).
SM90_GROUPED_SCHEDULES: dict[str, Sm90Schedule] = {
    "cooperative": Sm90Schedule(
        "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative", "coop", 256,
        "cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative"),
    "pingpong": Sm90Schedule(
        "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong", "pp", 128,
        "cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong"),
}

# Grouped FP8 with block scales (kernel template sm90_grouped_fp8): the pointer-array blockwise schedules (aliases of
# ...FP8Blockwise in nvidia-cutlass 4.2), with the same PtrArray TMA epilogues.
SM90_GROUPED_FP8_BLOCK_SCALED: dict[str, str] = {
    "cooperative": "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperativeFP8BlockScaledAccum",
    "pingpong": "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpongFP8BlockScaledAccum",
}

SM90_TILE_SCHEDULERS: dict[str, str] = {
    "persistent": "cutlass::gemm::PersistentScheduler",
    "stream_k": "cutlass::gemm::StreamKScheduler",
}

SM90_STAGES_AUTO = (
    "cutlass::gemm::collective::StageCountAutoCarveout<"
    "static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>"
)


def sm90_stage_count(stages) -> str:
    return SM90_STAGES_AUTO if stages == "auto" else f"cutlass::gemm::collective::StageCount<{stages}>"


# Run-time arguments travel as ints from the entry TU (which cannot include CUTLASS) to the kernel TU;
# the values are CUTLASS's enumerator values, checked there by static_asserts.
SM90_RASTER: dict[str, tuple[int, str]] = {  # field value -> (code, short)
    "heuristic": (0, "H"),
    "along_m": (1, "M"),
    "along_n": (2, "N"),
}
SM90_DECOMPOSITION: dict[str, tuple[int, str]] = {
    "heuristic": (0, "heur"),
    "data_parallel": (1, "dp"),
    "split_k": (2, "splitk"),
    "stream_k": (3, "streamk"),
}


# -- CuTe (kernel template cute_sm80) ----------------------------------------------------------------------

# (input dtype, accumulator, MMA shape) -> SM80 mma.sync atom
CUTE_MMA_ATOMS: dict[tuple[str, str, tuple[int, int, int]], str] = {
    ("f16", "f32", (16, 8, 16)): "cute::SM80_16x8x16_F32F16F16F32_TN",
    ("f16", "f32", (16, 8, 8)): "cute::SM80_16x8x8_F32F16F16F32_TN",
    ("f16", "f16", (16, 8, 16)): "cute::SM80_16x8x16_F16F16F16F16_TN",
    ("f16", "f16", (16, 8, 8)): "cute::SM80_16x8x8_F16F16F16F16_TN",
    ("bf16", "f32", (16, 8, 16)): "cute::SM80_16x8x16_F32BF16BF16F32_TN",
    ("bf16", "f32", (16, 8, 8)): "cute::SM80_16x8x8_F32BF16BF16F32_TN",
    ("tf32", "f32", (16, 8, 8)): "cute::SM80_16x8x8_F32TF32TF32F32_TN",
}


def cpp_bool(value: bool) -> str:
    return "true" if value else "false"


# -- CuTe SM90 (kernel template cute_sm90) -----------------------------------------------------------------


@dataclass(frozen=True)
class CuteSm90Schedule:
    short: str  # its token in procedural names
    warp_specialized: bool  # a producer warpgroup and persistent CTAs
    text: str  # what it does, in the rendered kernel's banner


CUTE_SM90_SCHEDULES: dict[str, CuteSm90Schedule] = {
    "pipelined": CuteSm90Schedule("pipe", False, "every warpgroup multiplies one tile; thread 0 issues TMA "
                                                 "kStages k-tiles ahead"),
    "warp_specialized": CuteSm90Schedule("ws", True, "a producer warpgroup issues TMA, consumer warpgroups "
                                                     "multiply; persistent CTAs walk the tiles"),
}

# (input dtype, accumulator) -> the types part of CuTe's SM90 SS wgmma atom names (both operands from shared memory)
CUTE_SM90_GMMA_TYPES: dict[tuple[str, str], str] = {
    ("f16", "f32"): "F32F16F16",
    ("f16", "f16"): "F16F16F16",
    ("bf16", "f32"): "F32BF16BF16",
}


def cute_sm90_mma_atom(dtype: str, acc: str, n: int) -> str:
    """The 64 x n x 16 wgmma atom of CuTe for K-major A and B, read from shared memory."""
    return f"cute::SM90_64x{n}x16_{CUTE_SM90_GMMA_TYPES[(dtype, acc)]}_SS<cute::GMMA::Major::K, cute::GMMA::Major::K>"
