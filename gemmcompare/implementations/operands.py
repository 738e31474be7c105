"""The inputs every implementation of one (problem, contract, fixture) is handed, and the C every row writes,
laid out under the contract's storage policy (contracts/storage.py).

A batched problem (batch > 1) has 3-D operands: A is batch x m x k, B batch x k x n, C batch x m x n, each one
allocation whose matrices lie one after the other (the batch stride is one matrix of the policy's layout:
lines x ld under `tight`, alloc_lines x ld under `aligned`), every matrix laid out as a 2-D problem's is.

A grouped problem (grouped.py; tight TN contracts only) has A stacked: sum(M) x K (contiguous) or groups x
capacity x K (masked), B groups x K x N logically, stored column-major as groups x N x K (K-major weights), C
like A with N columns; `m_offsets` (int32, groups + 1 cumulative Ms from 0) and, masked, `masked_counts` (int32,
each group's M) are device tensors handed with them.
"""

from __future__ import annotations

from ..lazy import torch  # loads on first use: reading a spec needs no torch

from ..contracts.precision import Order, PrecisionContract
from ..contracts.storage import Storage, allocate, operand_shape, policy_geometry
from ..dtypes import DTYPE_INFO
from ..problems import GemmProblem


def transposed(t: torch.Tensor) -> torch.Tensor:
    """The transposed view of a matrix, or of every matrix of a batch (the last two dimensions swapped)."""
    return t.transpose(-2, -1)


def policy_output(problem: GemmProblem, contract: PrecisionContract, device):
    """C laid out as the contract's storage policy lays it out for every row (its leading dimension and zero
    padding): (the whole allocation, C's stored lines x extent view, ldc). Batched: batch x lines x extent."""
    if problem.is_grouped:  # tight and row-major (grouped_contract_support): stacked rows, or groups x capacity
        import torch

        shape = (problem.m, problem.n) if problem.layout == "contiguous" else (problem.groups, problem.capacity, problem.n)
        full = torch.empty(shape, dtype=DTYPE_INFO[contract.c].torch_dtype, device=device)
        return full, full, problem.n
    lines, extent = operand_shape("c", problem.m, problem.n, problem.k, contract.order_c)
    geometry = policy_geometry(lines, extent, DTYPE_INFO[contract.c].itemsize, contract.storage)
    full, view = allocate(geometry, DTYPE_INFO[contract.c].torch_dtype, device, batch=problem.batch)
    return full, view, geometry.ld


class Operands:
    """The inputs of one (problem, contract, fixture): generated once, shared by every implementation.

    `a` is the logical m x k matrix and `b` the logical k x n matrix, already rounded to the contract's
    dtypes; `c0` is the initial C when beta != 0; `bias` the FP32 n-vector of a bias_relu epilogue; under an FP8
    contract `scale_a` and `scale_b` are the FP32 dequantization scales of `a` and `b` (logical shapes of the
    contract's scaling: contracts/quantize.py), part of the inputs like the rest. `stored()` gives each operand
    in the storage order an implementation needs, with the leading dimension of the contract's storage policy
    (contracts/storage.py: the same buffers for every implementation); the conversion is cached and happens
    outside any timed region. A batched problem's `a`, `b` and `c0` are batch x rows x cols (the bias is one
    n-vector for every batch), and so are their stored copies. A grouped problem's operands are stacked (module
    docstring), with `m_offsets` and `masked_counts` (None unless masked) beside them.
    """

    def __init__(self, a: torch.Tensor, b: torch.Tensor, c0: torch.Tensor | None = None,
                 bias: torch.Tensor | None = None, storage: Storage = Storage.TIGHT,
                 scale_a: torch.Tensor | None = None, scale_b: torch.Tensor | None = None,
                 m_offsets: torch.Tensor | None = None, masked_counts: torch.Tensor | None = None):
        self.a, self.b, self.c0, self.bias = a, b, c0, bias
        self.m_offsets, self.masked_counts = m_offsets, masked_counts
        self.scale_a, self.scale_b = scale_a, scale_b
        self.storage = storage
        # (which, order) -> (whole allocation, the operand's view of it)
        self._cache: dict[tuple[str, Order], tuple[torch.Tensor, torch.Tensor]] = {}

    @property
    def batch(self) -> int:
        """How many matrices each operand holds (1: a 2-D problem)."""
        return self.a.shape[0] if self.a.dim() == 3 else 1

    def stored(self, which: str, order: Order) -> tuple[torch.Tensor, int]:
        """(storage tensor, leading dimension) of operand 'a', 'b' or 'c0' in the given order: a lines x extent
        view with strides (ld, 1) of an allocation whose padding (if the policy pads) is zero; batched, a
        batch x lines x extent view with strides (batch stride, ld, 1)."""
        key = (which, order)
        if key not in self._cache:
            logical = getattr(self, which)
            src = logical if order is Order.ROW else transposed(logical)
            if self.storage is Storage.TIGHT:
                t = src.contiguous()
                self._cache[key] = (t, t)
            else:
                geometry = policy_geometry(src.shape[-2], src.shape[-1], logical.element_size(), self.storage)
                full, view = allocate(geometry, logical.dtype, logical.device, batch=self.batch)
                view.copy_(src)
                self._cache[key] = (full, view)
        t = self._cache[key][1]
        return t, t.stride(-2)

    def tensors(self) -> list[torch.Tensor | None]:
        """Every tensor implementations are handed: the logical operands and their laid-out copies (whole
        allocations, padding included)."""
        return [self.a, self.b, self.c0, self.bias, *(full for full, _ in self._cache.values()),
                *((self.scale_a, self.scale_b) if self.scale_a is not None else ()),
                *(t for t in (self.m_offsets, self.masked_counts) if t is not None)]

    def padded_allocations(self) -> list[torch.Tensor]:
        """The whole allocations of the laid-out copies that hold more than their view (the padding of a padding
        storage policy); a tight copy's allocation is its view."""
        return [full for full, view in self._cache.values() if full is not view]

    def layouts(self) -> dict[tuple[str, Order], torch.Tensor]:
        """The laid-out copies made so far, by (operand, order): each operand's view of its allocation."""
        return {key: view for key, (_, view) in self._cache.items()}

    def forget_layouts(self) -> None:
        """Drop the laid-out copies (after the logical operands were restored: they are rebuilt on demand)."""
        self._cache.clear()

    def clone(self) -> "Operands":
        """Independent copies of the logical operands (the rotate policy's extra inputs)."""
        copy = lambda t: None if t is None else t.clone()  # noqa: E731
        return Operands(self.a.clone(), self.b.clone(), copy(self.c0), copy(self.bias), self.storage,
                        copy(self.scale_a), copy(self.scale_b), copy(self.m_offsets), copy(self.masked_counts))
