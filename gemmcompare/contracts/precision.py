"""The precision contract: operand dtypes, accumulator, math mode, storage orders, alpha and beta.

Rows are only ever compared within one contract. Named contracts come from a built-in table (below)
or from a spec's `contracts:` entries; both end up as the same frozen dataclass.

Layout letters follow CUTLASS and BLAS: for each of A and B, `t` means row-major and `n` column-major
(so `tn` is A row-major, B column-major: the capstone's layout; `tt` is the lab's all-row-major one).
C is row-major unless a contract says otherwise.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

from ..dtypes import DType, DTYPE_INFO, TF32_UNIT_ROUNDOFF
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
        return u

    def describe(self) -> str:
        return (
            f"{self.name}: A {self.a.value} {self.order_a.value}-major, B {self.b.value} {self.order_b.value}-major, "
            f"C {self.c.value} {self.order_c.value}-major, accumulate {self.acc.value}, math {self.math.value}, "
            f"alpha={self.alpha:g}, beta={self.beta:g}"
            + ("" if self.epilogue is Epilogue.NONE else f", epilogue {self.epilogue.value}")
            + f", storage {self.storage.describe()}"
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
        }


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
    # every contract also under the `aligned` storage policy (16-byte rows for every implementation)
    for name, contract in list(table.items()):
        twin = f"{name}{ALIGNED_SUFFIX}"
        table[twin] = dataclasses.replace(contract, name=twin, storage=Storage.ALIGNED)
    return table


# A built-in contract's name + this suffix is the same contract under the `aligned` storage policy.
ALIGNED_SUFFIX = "_aligned"


BUILTIN_CONTRACTS: dict[str, PrecisionContract] = _builtin_contracts()
