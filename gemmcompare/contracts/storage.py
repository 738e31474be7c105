"""The storage policy of a contract: which leading dimensions every implementation is handed, the baseline
included, and what an implementation that needs other buffers pays for them.

- `tight`: each operand as a contiguous user tensor holds it: lda = K for a row-major A (M for a
  column-major one), ldb = N or K, ldc = N. What `torch.empty(m, k)` gives a user.
- `aligned`: each stored row padded to 16 bytes (what CUTLASS and TMA need), the padding zero, and the
  allocation rounded up to a whole number of SLACK_LINES stored rows, also zero: a kernel that computes a
  padded tail of M or N then reads zeros inside the allocation instead of past it. Every row's lda, ldb
  and ldc are the same.

Every implementation gets the policy's buffers. A kernel that needs something else (16-byte rows under
`tight`, packed rows under `aligned`, a multiple of K, M or N the buffers do not hold) gets buffers of its
own, zero-filled once when it is prepared, and its launch copies the operands into them before the kernel
and the result back after it: the copies are inside the timed region, and a zero-padded problem's executed
FLOPs count the padding. So no two rows of a run compare different problems.

A stored operand is `lines` stored rows of `extent` contiguous elements, `ld` elements apart: a row-major
m x k A is m lines of k, a column-major one k lines of m. A batched problem's operand is `batch` such
matrices in one allocation, each laid out as above, one matrix (alloc_lines x ld elements) apart.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

ALIGN_BYTES = 16  # a stored row starts on a 16-byte boundary under `aligned` (cp.async and TMA width)
SLACK_LINES = 16  # `aligned` allocations hold a multiple of this many stored rows (zero past the operand)


class Storage(enum.Enum):
    TIGHT = "tight"
    ALIGNED = "aligned"

    def describe(self) -> str:
        if self is Storage.TIGHT:
            return "tight (lda = K for row-major A, ...: contiguous user tensors)"
        return f"aligned (stored rows padded to {ALIGN_BYTES} bytes with zeros, the same buffers for every row)"


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple if multiple > 1 else value


@dataclass(frozen=True)
class Geometry:
    """How one operand sits in memory: `lines` stored rows of `extent` elements, `ld` elements apart, in an
    allocation of `alloc_lines` x `ld` elements (zero outside the operand)."""

    lines: int
    extent: int
    ld: int
    alloc_lines: int


def operand_shape(which: str, m: int, n: int, k: int, order) -> tuple[int, int]:
    """(lines, extent) of operand 'a' (m x k), 'b' (k x n) or 'c' (m x n) stored in `order` (an Order;
    compared by value: precision.py imports this module)."""
    rows, cols = {"a": (m, k), "b": (k, n), "c": (m, n)}[which]
    return (rows, cols) if order.value == "row" else (cols, rows)


def policy_geometry(lines: int, extent: int, itemsize: int, storage: Storage) -> Geometry:
    """The buffer the policy hands every implementation for a (lines x extent) operand."""
    if storage is Storage.TIGHT:
        return Geometry(lines, extent, extent, lines)
    per_row = max(1, ALIGN_BYTES // itemsize)
    return Geometry(lines, extent, round_up(extent, per_row), round_up(lines, SLACK_LINES))


@dataclass(frozen=True)
class OperandPlan:
    """One operand of one implementation: the policy's buffer, the buffer the kernel runs on, and whether
    the launch copies between them (inside the timed region), with the reason."""

    which: str
    policy: Geometry
    kernel: Geometry
    copy: bool
    why: str = ""


def plan_operand(which: str, lines: int, extent: int, padded_lines: int, padded_extent: int, itemsize: int,
                 storage: Storage, ld_multiple: int = 1, packed: bool = False) -> OperandPlan:
    """Whether a kernel that runs a (padded_lines x padded_extent) operand, with a leading dimension that is a
    multiple of `ld_multiple` (and equal to the extent when `packed`), can read the policy's buffer in place."""
    policy = policy_geometry(lines, extent, itemsize, storage)
    reasons = []
    if ld_multiple > 1 and policy.ld % ld_multiple:
        reasons.append(f"ld {policy.ld} is not a multiple of {ld_multiple}")
    if packed and policy.ld != padded_extent:
        reasons.append(f"ld {policy.ld} is not the packed {padded_extent}")
    if padded_extent > policy.ld:
        reasons.append(f"{padded_extent} elements per row do not fit ld {policy.ld}")
    if padded_lines > policy.alloc_lines:
        reasons.append(f"{padded_lines} rows do not fit the {policy.alloc_lines} allocated")
    if not reasons:
        return OperandPlan(which, policy, policy, False)
    ld = padded_extent if packed else round_up(padded_extent, max(1, ld_multiple))
    kernel = Geometry(padded_lines, padded_extent, ld, padded_lines)
    return OperandPlan(which, policy, kernel, True, "; ".join(reasons))


def plan_operands(m: int, n: int, k: int, padded: tuple[int, int, int], orders: tuple,
                  itemsizes: tuple[int, int, int], storage: Storage, ld_multiples: tuple[int, int, int] = (1, 1, 1),
                  packed: bool = False) -> dict[str, OperandPlan]:
    """The plan of A, B and C for a kernel that runs the padded (M, N, K) problem."""
    pm, pn, pk = padded
    out = {}
    for which, order, size, mult in zip("abc", orders, itemsizes, ld_multiples):
        lines, extent = operand_shape(which, m, n, k, order)
        plines, pextent = operand_shape(which, pm, pn, pk, order)
        out[which] = plan_operand(which, lines, extent, plines, pextent, size, storage, mult, packed)
    return out


def allocate(geometry: Geometry, dtype, device, fill: float = 0.0, batch: int = 1):
    """(allocation, view): a zero-filled alloc_lines x ld tensor and its lines x extent view (stride ld, 1).

    batch > 1: one allocation of `batch` such matrices, one after the other (batch stride alloc_lines * ld
    elements: each matrix keeps its own zero padding), and a batch x lines x extent view."""
    import torch

    if batch == 1:
        full = torch.full((geometry.alloc_lines, geometry.ld), fill, dtype=dtype, device=device)
        return full, full[: geometry.lines, : geometry.extent]
    full = torch.full((batch, geometry.alloc_lines, geometry.ld), fill, dtype=dtype, device=device)
    return full, full[:, : geometry.lines, : geometry.extent]
