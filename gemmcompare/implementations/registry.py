"""The registry of implementations a spec can name.

Two kinds of entry:
- fixed implementations, named as a string in a spec (`library.cublas`, `lab.scalar_strided`);
- parametrized families, named as a one-key mapping whose value holds parameters, each a single value
  or a list of values to sweep (`mma_sync: {stages: [2, 3, 4], smem: [padded, swizzle]}`).

Parametrized modules register themselves when imported (see implementations/__init__.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .base import Param, Implementation, Skip


class InvalidConfig(ValueError):
    """A parameter combination that cannot work (shared memory does not fit, tile not divisible...).
    Raised by a family's factory; the planner turns it into a SKIP row with this reason."""


@dataclass
class Parametrized:
    """A family a spec names with parameters. `for_contract(params, contract)`, where given, says what one
    combination of parameters becomes under a contract of the experiment (parameters the spec left open
    taken from it): the spec then makes one implementation per distinct result, planned only under the
    contracts it came from. Its implementations' names must be their identity (equal names, equal builds)."""

    name: str
    params: list[Param]
    factory: Callable[[dict[str, Any]], Implementation]
    description: str = ""
    for_contract: Callable[[dict[str, Any], Any], dict[str, Any]] | None = None

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


FIXED: dict[str, Callable[[], Implementation]] = {}
PARAMETRIZED: dict[str, Parametrized] = {}


def register_fixed(name: str, factory: Callable[[], Implementation]) -> None:
    if name in FIXED or name in PARAMETRIZED:
        raise ValueError(f"implementation {name!r} registered twice")
    FIXED[name] = factory


def register_parametrized(family: Parametrized) -> None:
    if family.name in FIXED or family.name in PARAMETRIZED:
        raise ValueError(f"family {family.name!r} registered twice")
    PARAMETRIZED[family.name] = family


class UnbuildableImplementation(Implementation):
    """Stands in for a sweep point whose parameters cannot work: every row it has is a SKIP."""

    def __init__(self, family: str, params: dict[str, Any], reason: str):
        fam, _, variant = family.partition(".")
        self.family = fam
        super().__init__(variant, params)
        self.reason = reason

    def supports(self, problem, contract):
        return Skip(f"invalid configuration: {self.reason}")

    def admits(self, problem, contract):
        """Its own reason for every problem, grouped ones included: the grouped rule's "launches one dense GEMM"
        would misname a grouped family's point (a tuned row's excluded candidates say why each was left out)."""
        return self.supports(problem, contract)

    def prepare(self, problem, contract, operands, extension):  # pragma: no cover - never called
        raise RuntimeError(self.reason)


def instantiate(family: Parametrized, params: dict[str, Any]) -> Implementation:
    """Build one implementation of a family, or an UnbuildableImplementation with the reason."""
    full = {p.name: params.get(p.name, p.default) for p in family.params}
    try:
        return family.factory(full)
    except InvalidConfig as exc:
        return UnbuildableImplementation(family.name, full, str(exc))


def all_names() -> list[str]:
    return sorted(FIXED) + sorted(PARAMETRIZED)
