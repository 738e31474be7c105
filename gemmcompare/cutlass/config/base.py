"""What every kernel template's dataclass shares: `GemmConfig` (construction from fields, what it computes, the
checks several kernel templates make, its two names, what it needs of a problem) and `TiledGemmConfig` (the
fields first in every configuration)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from ...contracts.precision import Math, Order, Scaling
from ...dtypes import DType
from .. import tags
from .fields import ConfigError, Field


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
    # Whether its kernels compute grouped problems (one GEMM per group, gemm_abi.h's grouped form) instead of one
    # GEMM: then it runs grouped problems only, and `config: auto` races it only when its template is named.
    GROUPED: ClassVar[bool] = False

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
    BATCHED: ClassVar[bool] = False  # reads gc_gemm_args' batch and batch strides (one launch for the batch)

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
