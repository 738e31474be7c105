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


@dataclass(frozen=True)
class DTypeInfo:
    torch_name: str  # attribute of the torch module: torch.float16, ...
    abi_code: int  # gc_dtype in extensions/include/gemmcompare/gemm_abi.h
    cpp_tag: str  # the CUDA C++ spelling used by hand-written kernels
    cutlass_tag: str  # the CUTLASS spelling used by rendered configurations
    unit_roundoff: float  # u = 2^-p for p significand bits (round to nearest)
    itemsize: int

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.torch_name)


DTYPE_INFO: dict[DType, DTypeInfo] = {
    DType.F16: DTypeInfo("float16", 0, "__half", "cutlass::half_t", 2.0**-11, 2),
    DType.BF16: DTypeInfo("bfloat16", 1, "__nv_bfloat16", "cutlass::bfloat16_t", 2.0**-8, 2),
    DType.F32: DTypeInfo("float32", 2, "float", "float", 2.0**-24, 4),
    DType.F64: DTypeInfo("float64", 3, "double", "double", 2.0**-53, 8),
}

# TF32 keeps 10 explicit significand bits, like f16: operands rounded to it lose 2^-11 relative.
TF32_UNIT_ROUNDOFF = 2.0**-11


def parse_dtype(name: str) -> DType:
    """Map a spec spelling ('f16', 'bf16', 'f32', 'f64') to a DType; raises ValueError otherwise."""
    try:
        return DType(name)
    except ValueError:
        raise ValueError(f"unknown dtype {name!r}; expected one of {[d.value for d in DType]}") from None
