"""Element types: one table maps each to its spec name, torch dtype, ABI code, C++ tag and rounding unit.

torch is imported only when a torch dtype is asked for, so that specs and configurations can be read
(and `gemmcompare validate` answer) without loading it."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class DType(enum.Enum):
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"
    E4M3 = "e4m3"  # FP8: 4 exponent bits, 3 mantissa bits, no infinity (torch.float8_e4m3fn), max 448
    E5M2 = "e5m2"  # FP8: 5 exponent bits, 2 mantissa bits (torch.float8_e5m2), max 57344


@dataclass(frozen=True)
class DTypeInfo:
    torch_name: str  # attribute of the torch module: torch.float16, ...
    abi_code: int  # gc_dtype in extensions/include/gemmcompare/gemm_abi.h
    cpp_tag: str  # the CUDA C++ spelling used by hand-written kernels
    cutlass_tag: str  # the CUTLASS spelling used by rendered configurations
    unit_roundoff: float  # u = 2^-p for p significand bits (round to nearest)
    itemsize: int
    max_finite: float  # the largest finite value: FP8 quantization saturates to it

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.torch_name)


DTYPE_INFO: dict[DType, DTypeInfo] = {
    DType.F16: DTypeInfo("float16", 0, "__half", "cutlass::half_t", 2.0**-11, 2, 65504.0),
    DType.BF16: DTypeInfo("bfloat16", 1, "__nv_bfloat16", "cutlass::bfloat16_t", 2.0**-8, 2, 3.3895313892515355e38),
    DType.F32: DTypeInfo("float32", 2, "float", "float", 2.0**-24, 4, 3.4028234663852886e38),
    DType.F64: DTypeInfo("float64", 3, "double", "double", 2.0**-53, 8, 1.7976931348623157e308),
    DType.E4M3: DTypeInfo("float8_e4m3fn", 4, "__nv_fp8_e4m3", "cutlass::float_e4m3_t", 2.0**-4, 1, 448.0),
    DType.E5M2: DTypeInfo("float8_e5m2", 5, "__nv_fp8_e5m2", "cutlass::float_e5m2_t", 2.0**-3, 1, 57344.0),
}

# The 8-bit float inputs: a contract on them names a scaling granularity (contracts/precision.py Scaling).
FP8_DTYPES = frozenset({DType.E4M3, DType.E5M2})

# TF32 keeps 10 explicit significand bits, like f16: operands rounded to it lose 2^-11 relative.
TF32_UNIT_ROUNDOFF = 2.0**-11


def parse_dtype(name: str) -> DType:
    """Map a spec spelling ('f16', 'bf16', 'f32', 'f64', 'e4m3', 'e5m2') to a DType; raises ValueError otherwise."""
    try:
        return DType(name)
    except ValueError:
        raise ValueError(f"unknown dtype {name!r}; expected one of {[d.value for d in DType]}") from None
