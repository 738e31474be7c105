"""The precision contract: operand dtypes, accumulator, math mode, storage orders, alpha and beta.

Rows are only ever compared within one contract. Named contracts come from a built-in table (below)
or from a spec's `contracts:` entries; both end up as the same frozen dataclass.

Layout letters follow CUTLASS and BLAS: for each of A and B, `t` means row-major and `n` column-major
(so `tn` is A row-major, B column-major: the capstone's layout; `tt` is the lab's all-row-major one).
C is row-major unless a contract says otherwise.

FP8 contracts (e4m3 / e5m2 inputs) also name a scaling granularity, the shape of the FP32 dequantization
scales that come with A and B (contracts/quantize.py), and whether fast accumulation is allowed (Hopper's
FP8 tensor-core accumulator keeps about 14 bits unless partial sums are promoted to FP32: docs/fp8.md).
Non-FP8 contracts have scaling `none` and fast_accum False, and print and hash exactly as before.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

from ..dtypes import DType, DTYPE_INFO, FP8_DTYPES, TF32_UNIT_ROUNDOFF
from .storage import Storage


class Order(enum.Enum):
    ROW = "row"
    COL = "col"

    @property
    def abi_code(self) -> int:  # gc_order
        return 0 if self is Order.ROW else 1

    @property
    def letter(self) -> str:
        return "t" if self is Order.ROW else "n"


class Epilogue(enum.Enum):
    NONE = "none"
    BIAS_RELU = "bias_relu"  # C = max(0, alpha*AB + beta*C + bias[j]), bias an FP32 n-vector

    @property
    def abi_code(self) -> int:  # gc_epilogue
        return 0 if self is Epilogue.NONE else 1


class Math(enum.Enum):
    STRICT = "strict"  # products and sums in the accumulator type; TF32 and reduced-precision paths off
    TF32 = "tf32"  # FP32 operands may be rounded to TF32 inside the tensor-core multiply

    @property
    def abi_code(self) -> int:  # gc_math
        return 0 if self is Math.STRICT else 1


class Scaling(enum.Enum):
    """How FP8 operands are scaled: the shapes of scale_a (for A, m x k) and scale_b (for B, k x n)."""

    NONE = "none"  # not an FP8 contract
    TENSOR = "tensor"  # one scale for A, one for B
    ROWCOL = "rowcol"  # one per row of A (m x 1), one per column of B (1 x n)
    BLOCK = "block"  # DeepSeek-V3: 1 x 128 blocks of A (m x ceil(k/128)), 128 x 128 of B (ceil(k/128) x ceil(n/128))

    @property
    def abi_code(self) -> int:  # gc_scaling
        return ("none", "tensor", "rowcol", "block").index(self.value)


# Fast accumulation: Hopper's FP8 wgmma accumulates in what behaves like ~14 significand bits (DeepSeek-V3
# report, section 3.3.2), unless the kernel promotes partial sums to FP32 registers every few k-steps.
# The bound of a contract that allows it uses this unit roundoff (contracts/correctness.py).
FAST_ACCUM_UNIT_ROUNDOFF = 2.0**-14


@dataclass(frozen=True)
class PrecisionContract:
    name: str
    a: DType
    b: DType
    c: DType
    acc: DType
    math: Math = Math.STRICT
    order_a: Order = Order.ROW
    order_b: Order = Order.COL
    order_c: Order = Order.ROW
    alpha: float = 1.0
    beta: float = 0.0
    epilogue: Epilogue = Epilogue.NONE
    storage: Storage = Storage.TIGHT  # leading dimensions every implementation is handed (storage.py)
    scaling: Scaling = Scaling.NONE  # FP8 only: the granularity of the dequantization scales
    fast_accum: bool = False  # FP8 only: the tensor-core accumulator may keep fewer bits than FP32

    def __post_init__(self):
        problem = contract_problem(self)
        if problem:
            raise ValueError(f"contract {self.name!r}: {problem}")

    @property
    def is_fp8(self) -> bool:
        return self.a in FP8_DTYPES or self.b in FP8_DTYPES

    @property
    def layout(self) -> str:
        """'tn', 'tt', 'nn' or 'nt' (A then B), with '_ccol' when C is column-major."""
        base = self.order_a.letter + self.order_b.letter
        return base if self.order_c is Order.ROW else base + "_ccol"

    @property
    def input_dtype(self) -> DType | None:
        """The common input dtype, or None for mixed-input contracts."""
        return self.a if self.a == self.b else None

    @property
    def product_unit_roundoff(self) -> float:
        """Rounding unit of what the multiply-accumulate does to exact products: the accumulator's,
        or TF32's when the math mode lets FP32 operands be rounded to TF32 inside the multiply."""
        u = DTYPE_INFO[self.acc].unit_roundoff
        if self.math is Math.TF32:
            u = max(u, TF32_UNIT_ROUNDOFF)
        if self.fast_accum:
            u = max(u, FAST_ACCUM_UNIT_ROUNDOFF)
        return u

    def describe(self) -> str:
        return (
            f"{self.name}: A {self.a.value} {self.order_a.value}-major, B {self.b.value} {self.order_b.value}-major, "
            f"C {self.c.value} {self.order_c.value}-major, accumulate {self.acc.value}, math {self.math.value}, "
            f"alpha={self.alpha:g}, beta={self.beta:g}"
            + ("" if self.epilogue is Epilogue.NONE else f", epilogue {self.epilogue.value}")
            + f", storage {self.storage.describe()}"
            + (f", scaling {self.scaling.value}, fast accumulation {'allowed' if self.fast_accum else 'forbidden'}"
               if self.is_fp8 else "")
        )

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "a": self.a.value,
            "b": self.b.value,
            "c": self.c.value,
            "acc": self.acc.value,
            "math": self.math.value,
            "order_a": self.order_a.value,
            "order_b": self.order_b.value,
            "order_c": self.order_c.value,
            "alpha": self.alpha,
            "beta": self.beta,
            "epilogue": self.epilogue.value,
            "storage": self.storage.value,
            # only on FP8 contracts: every other contract's dict (receipts, python/custom declarations) is unchanged
            **({"scaling": self.scaling.value, "fast_accum": self.fast_accum} if self.is_fp8 else {}),
        }


def contract_problem(contract: PrecisionContract) -> str | None:
    """Why a contract cannot be: scaling or fast accumulation on non-FP8 inputs, an FP8 contract without
    scales, an FP8 output or a non-FP32 accumulator. None when it is sound. (A non-tn FP8 layout is a sound
    contract: implementations that need K-major operands SKIP it, saying so.)"""
    if not contract.is_fp8:
        if contract.scaling is not Scaling.NONE:
            return f"scaling {contract.scaling.value!r} applies to FP8 (e4m3/e5m2) inputs only, not {contract.a.value}"
        if contract.fast_accum:
            return f"fast_accum applies to FP8 (e4m3/e5m2) inputs only, not {contract.a.value}"
        if contract.c in FP8_DTYPES or contract.acc in FP8_DTYPES:
            return "FP8 is an input type only: the output and the accumulator are f16, bf16 or f32"
        return None
    if contract.a not in FP8_DTYPES or contract.b not in FP8_DTYPES:
        return f"FP8 contracts need both inputs in FP8 (e4m3/e5m2), got {contract.a.value} x {contract.b.value}"
    if contract.scaling is Scaling.NONE:
        return "an FP8 contract needs a scaling: tensor, rowcol or block"
    if contract.c not in (DType.BF16, DType.F16, DType.F32):
        return f"FP8 contracts write bf16, f16 or f32 outputs, not {contract.c.value}"
    if contract.acc is not DType.F32:
        return f"FP8 contracts accumulate in f32 (fast_accum says whether fewer bits are allowed), not {contract.acc.value}"
    if contract.math is not Math.STRICT:
        return "FP8 contracts use math strict (TF32 applies to FP32 inputs)"
    if contract.epilogue is not Epilogue.NONE or contract.beta != 0.0:
        return "FP8 contracts compute alpha * A @ B only (beta=0, no epilogue)"
    return None


# Layout letters, A then B: t = row-major, n = column-major. The one table (CUTLASS configurations use it too).
LAYOUTS: dict[str, tuple[Order, Order]] = {
    "tn": (Order.ROW, Order.COL),
    "tt": (Order.ROW, Order.ROW),
    "nn": (Order.COL, Order.COL),
    "nt": (Order.COL, Order.ROW),
}


def _builtin_contracts() -> dict[str, PrecisionContract]:
    table: dict[str, PrecisionContract] = {}

    def add(name, a, c, acc, math=Math.STRICT):
        for letters, (oa, ob) in LAYOUTS.items():
            full = f"{name}_{letters}"
            table[full] = PrecisionContract(full, a, a, c, acc, math, oa, ob, Order.ROW)

    for low in (DType.F16, DType.BF16):
        add(f"{low.value}_f32acc", low, DType.F32, DType.F32)  # f16_f32acc_tn: the capstone contract
        add(f"{low.value}_{low.value}out_f32acc", low, low, DType.F32)  # what torch.matmul runs
    add("f16_f16acc", DType.F16, DType.F16, DType.F16)
    add("f32_strict", DType.F32, DType.F32, DType.F32)
    add("f32_tf32", DType.F32, DType.F32, DType.F32, Math.TF32)
    # fused bias + ReLU epilogue variants of the capstone contract (for mma_sync's fused epilogue)
    for letters in ("tn", "tt"):
        base = table[f"f16_f32acc_{letters}"]
        name = f"f16_f32acc_bias_relu_{letters}"
        table[name] = dataclasses.replace(base, name=name, epilogue=Epilogue.BIAS_RELU)
    # FP8, K-major only (what Hopper's FP8 tensor cores take): e4m3 under each scaling, e5m2 per tensor, each
    # output, and each with a fast-accumulation twin. e4m3_bf16out_f32acc_tn_tensor(_fastacc), ..._rowcol, ..._block
    for fp8, scalings in ((DType.E4M3, (Scaling.TENSOR, Scaling.ROWCOL, Scaling.BLOCK)), (DType.E5M2, (Scaling.TENSOR,))):
        for out in (DType.BF16, DType.F16, DType.F32):
            for scaling in scalings:
                for fast in (False, True):
                    full = f"{fp8.value}_{out.value}out_f32acc_tn_{scaling.value}" + ("_fastacc" if fast else "")
                    table[full] = PrecisionContract(full, fp8, fp8, out, DType.F32, Math.STRICT, Order.ROW, Order.COL,
                                                    Order.ROW, scaling=scaling, fast_accum=fast)
    # every contract also under the `aligned` storage policy (16-byte rows for every implementation)
    for name, contract in list(table.items()):
        twin = f"{name}{ALIGNED_SUFFIX}"
        table[twin] = dataclasses.replace(contract, name=twin, storage=Storage.ALIGNED)
    return table


# A built-in contract's name + this suffix is the same contract under the `aligned` storage policy.
ALIGNED_SUFFIX = "_aligned"


BUILTIN_CONTRACTS: dict[str, PrecisionContract] = _builtin_contracts()
