"""The fields of a configuration as YAML and specs write them: `Field` (one field, parsing its values), the
fields every kernel template has, and the ones a precision contract fixes (`TYPE_FIELDS`, `contract_type_fields`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...contracts.precision import Order
from .. import tags


class ConfigError(ValueError):
    """A configuration that cannot be rendered or cannot work; the message says why."""


@dataclass(frozen=True)
class Field:
    """One configuration field as YAML and specs write it.

    kind: 'int' (a positive integer), 'choice' (one of `choices`), 'bool' (true or false), or 'shape' (a list
    of `length` positive integers). `runtime` marks fields passed to the kernel at launch rather than compiled in.
    """

    name: str
    kind: str
    choices: tuple = ()
    length: int = 0
    help: str = ""
    runtime: bool = False

    def parse(self, value: Any) -> Any:
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{self.name}: expected a positive integer, got {value!r}")
            return value
        if self.kind == "choice":
            if isinstance(value, bool) or value not in self.choices:
                raise ConfigError(f"{self.name}: expected one of {list(self.choices)}, got {value!r}")
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ConfigError(f"{self.name}: expected true or false, got {value!r}")
            return value
        if self.kind == "shape":
            if (not isinstance(value, (list, tuple)) or len(value) != self.length
                    or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value)):
                raise ConfigError(f"{self.name}: expected a list of {self.length} positive integers, got {value!r}")
            return tuple(value)
        raise AssertionError(self.kind)


STAGE_CHOICES = ("auto",) + tuple(range(2, 17))

# Fields every kernel template has: what the kernel computes (the contract it can honour).
DTYPE = Field("dtype", "choice", ("f16", "bf16", "tf32", "f32", "e4m3", "e5m2"),
              help="A/B element type; tf32 = FP32 in memory, TF32 tensor-core math; f32 = strict FP32; "
                   "e4m3/e5m2 = FP8 with per-tensor or block scales (kernel template sm90_fp8 only)")
OUT = Field("out", "choice", ("f16", "bf16", "f32"), help="element type of C")
ACC = Field("acc", "choice", ("f32", "f16"), help="accumulator type")
LAYOUT = Field("layout", "choice", tuple(tags.LAYOUTS),
               help="storage orders of A and B (t = row-major, n = column-major); C is row-major")
TILE = Field("tile", "shape", length=3, help="CTA tile [M, N, K]")
STAGES = Field("stages", "choice", STAGE_CHOICES, help="pipeline stages (auto: as many as shared memory holds)")
ALIGNMENT = Field("alignment", "int", help="A/B access width in elements (16 bytes = 8 f16 or 4 f32)")
# Skinny M (decode): computing D^T = B^T A^T puts the few tokens on the tile's N side, where wgmma takes 8..256
# columns, and the weight's thousands of rows on its M side (the "swap AB" of TensorRT-LLM's and vLLM's
# Hopper GEMMs): a 128x16 tile wastes no rows at M <= 16, where an unswapped tile has at least 64.
SWAP_AB = Field("swap_ab", "bool", help="compute D^T = B^T A^T (tokens on the tile's N side; for M <= 64)")

# The fields that say what a configuration computes: a precision contract fixes every one of them. A spec
# entry that leaves them out gets them from each contract of its experiment (contract_type_fields).
TYPE_FIELDS = (DTYPE.name, OUT.name, ACC.name, LAYOUT.name)


def contract_type_fields(contract) -> dict[str, str] | str:
    """The dtype/out/acc/layout values of a configuration that computes `contract` (a PrecisionContract),
    or the reason no values of these fields express it. Whether a kernel template can take the values is
    its own `validate`'s question."""
    if contract.a != contract.b:
        return f"mixed inputs {contract.a.value}/{contract.b.value} (A and B share one dtype field)"
    dtype = next((name for name, t in tags.INPUT_TYPES.items()
                  if t.storage is contract.a and t.math is contract.math), None)
    if dtype is None:
        return f"inputs {contract.a.value} under math {contract.math.value} (dtype takes {', '.join(tags.INPUT_TYPES)})"
    out = next((name for name, t in tags.OUTPUT_TYPES.items() if t is contract.c), None)
    acc = next((name for name, t in tags.ACCUMULATOR_TYPES.items() if t is contract.acc), None)
    if out is None or acc is None:
        return (f"output {contract.c.value} and accumulator {contract.acc.value} (out takes {', '.join(tags.OUTPUT_TYPES)}; "
                f"acc {', '.join(tags.ACCUMULATOR_TYPES)})")
    if contract.order_c is not Order.ROW:
        return "a column-major C (configurations write a row-major C)"
    layout = contract.order_a.letter + contract.order_b.letter
    return {DTYPE.name: dtype, OUT.name: out, ACC.name: acc, LAYOUT.name: layout}
