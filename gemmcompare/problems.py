"""GEMM problem shapes and the sweeps that generate them.

A problem is a logical shape: C[m, n] = A[m, k] @ B[k, n], `batch` times. Its FLOP count is the useful
work, 2*m*n*k per batch; an implementation that pads reports its executed FLOPs separately.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

INT32_MAX = 2**31 - 1


@dataclass(frozen=True, order=True)
class GemmProblem:
    m: int
    n: int
    k: int
    batch: int = 1

    is_grouped = False  # a GroupedProblem (grouped.py) says True: the one test grouped-aware places make

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.batch

    @property
    def label(self) -> str:
        base = f"{self.m}x{self.n}x{self.k}"
        return base if self.batch == 1 else f"{base}x{self.batch}"

    def unique_bytes(self, a_bytes: int, b_bytes: int, c_bytes: int) -> int:
        """Fewest bytes a GEMM must move: each input read once, the output written once."""
        return self.batch * (self.m * self.k * a_bytes + self.k * self.n * b_bytes + self.m * self.n * c_bytes)

    def max_element_offset(self) -> int:
        """Largest element offset any operand needs (for index-width checks)."""
        return max(self.m * self.k, self.k * self.n, self.m * self.n) * self.batch - 1

    def as_dict(self) -> dict:
        return {"m": self.m, "n": self.n, "k": self.k, "batch": self.batch}


def pow2_values(lo: int, hi: int) -> list[int]:
    """Powers of two from lo to hi inclusive (both must be powers of two)."""
    values, v = [], lo
    while v <= hi:
        values.append(v)
        v *= 2
    return values


def range_values(start: int, stop: int, step: int) -> range:
    """start, start+step, ... up to and including stop: lazy, so that its length is known before a sweep
    of 2**31 values is built (it never is: the spec's limits count first)."""
    return range(start, stop + 1, step)


def expand_sweep(axes: dict[str, list[int]], ties: dict[str, str]) -> list[GemmProblem]:
    """Cartesian product of the listed axes, then each tied axis copies the axis it names.

    axes: dimension -> values (every dimension not tied); ties: dimension -> the dimension it equals.
    """
    names = list(axes)
    problems = []
    for combo in itertools.product(*(axes[n] for n in names)):
        dims = dict(zip(names, combo))
        for tied, source in ties.items():
            dims[tied] = dims[source]
        dims.setdefault("batch", 1)
        problems.append(GemmProblem(dims["m"], dims["n"], dims["k"], dims["batch"]))
    return problems
