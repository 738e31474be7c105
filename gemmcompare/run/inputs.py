"""The inputs of one (problem, contract, fixture): drawn once, rounded to the contract, both references
computed, and a pristine copy kept, so that an implementation that writes into its inputs is caught and
the next one still sees what the references were made from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..contracts import correctness as corr
from ..contracts.precision import PrecisionContract
from ..implementations.base import Operands
from ..problems import GemmProblem


@dataclass
class Draw:
    fixture: str
    seed: int
    operands: Operands  # what every implementation is handed (rounded to the contract's dtypes)
    refs: corr.References  # rounded-input (judges) and original-input (reported)
    pristine: dict[str, Any]  # bit-exact copies of the rounded operands

    def fingerprint(self) -> list[int]:
        """A cheap bitwise checksum of every tensor the implementations were handed."""
        import torch

        out = []
        for t in self.operands.tensors():
            if t is None:
                out.append(0)
                continue
            bits = as_bits(t).to(torch.int64)
            weights = torch.arange(bits.numel(), device=bits.device).view(bits.shape) % 1021 + 1
            out.append(int((bits * weights).sum()))
        return out

    def restore(self) -> None:
        """Undo an implementation that wrote into its inputs."""
        ops = self.operands
        ops.a.copy_(self.pristine["a"])
        ops.b.copy_(self.pristine["b"])
        if ops.c0 is not None and "c0" in self.pristine:
            ops.c0.copy_(self.pristine["c0"])
        ops.forget_layouts()


def draw_inputs(fixture: str, p: GemmProblem, contract: PrecisionContract, seed: int) -> Draw:
    """One fixture's inputs on the device, rounded to the contract, with both references."""
    originals = corr.make_inputs(fixture, p.m, p.n, p.k, contract, seed, "cuda")
    rounded = {"a": corr.round_to(originals["a"], contract.a), "b": corr.round_to(originals["b"], contract.b)}
    if "c0" in originals:
        rounded["c0"] = corr.round_to(originals["c0"], contract.c)
    refs = corr.compute_references(originals, rounded, contract)
    operands = Operands(rounded["a"], rounded["b"], rounded.get("c0"), originals.get("bias"), contract.storage)
    return Draw(fixture, seed, operands, refs, {k: v.clone() for k, v in rounded.items()})


def same_bits(x, y) -> bool:
    """Bitwise equality (NaN == NaN), for the other-stream check."""
    import torch

    if x.shape != y.shape:
        return False
    return bool(torch.equal(as_bits(x), as_bits(y)))


def as_bits(t):
    """A tensor's bits as a same-width integer tensor (so that NaN == NaN and -0 != +0)."""
    import torch

    return t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
