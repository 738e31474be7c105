"""Grouped GEMM problems: one GEMM per group (an MoE layer's experts), the same N and K, each group its own M.

    C_g[M_g, N] = A_g[M_g, K] @ B_g[K, N],  g = 0 .. groups-1,  M_g >= 0 (an expert no token chose has none)

B_g is group g's weight, stored N x K (K-major: the layout of a linear layer's weight and of every grouped
kernel's B; contracts whose B is K-major are the TN ones, see grouped_contract_support). Storage layouts:

  contiguous  A is every group's rows stacked, sum(M) x K; C likewise sum(M) x N; B is groups x N x K. Group g
              owns rows offsets[g] .. offsets[g+1] of A and C (offsets: the cumulative Ms, starting at 0).
  masked      A is groups x capacity x K, C groups x capacity x N; group g's first M_g rows are its own and
              the rest padding (DeepGEMM's masked layout: a fixed M capacity per group and a count).

The work is the groups' real work: FLOPs are sum over g of 2*M_g*N*K (= 2*m*n*k with m = sum(M): `m` is the
total rows); padding and empty groups add nothing. Unique bytes are A's real rows, C's real rows, and the
weights of the groups that have tokens: a kernel need not read an empty expert's weights, and the fewest bytes
a grouped GEMM must move is the figure a bandwidth bound is made of (docs/grouped.md).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from dataclasses import dataclass

from .routing import Routing

LAYOUTS = ("contiguous", "masked")
# A masked layout's default capacity: the largest group M rounded up to this. 128 is the M tile of the grouped
# kernels it is written for (DeepGEMM's masked GEMMs need the capacity aligned to their block M, 64 or 128;
# CUTLASS's grouped tiles are 64-256 rows), so no kernel's last tile reads past its group's allocation.
CAPACITY_MULTIPLE = 128
# A list of at most this many Ms is written out in the label; a longer one is named by a digest of its values.
LISTED_IN_LABEL = 8


@dataclass(frozen=True)
class GroupedProblem:
    n: int
    k: int
    ms: tuple[int, ...]  # M of each group, in group order
    layout: str = "contiguous"
    capacity: int = 0  # masked: rows per group (>= every M); 0 under contiguous
    routing: Routing | None = None  # the draw the Ms came from (None: listed in the spec)

    is_grouped = True  # GemmProblem's is False: the one test every grouped-aware place makes
    batch = 1  # one launch's worth of groups, not a batch of equal matrices

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown grouped layout {self.layout!r}; expected one of {LAYOUTS}")
        if not self.ms or any(m < 0 for m in self.ms) or self.n < 1 or self.k < 1:
            raise ValueError(f"a grouped problem needs groups with M >= 0 and N, K >= 1, got {self.ms}, {self.n}, {self.k}")
        if self.layout == "masked" and self.capacity < max(self.ms):
            raise ValueError(f"masked capacity {self.capacity} is below the largest group M {max(self.ms)}")

    @property
    def groups(self) -> int:
        return len(self.ms)

    @property
    def m(self) -> int:
        """The total rows of A and C: sum of the group Ms (the problem's FLOPs are 2*m*n*k)."""
        return sum(self.ms)

    @functools.cached_property  # read per group in loops over up to 256 groups: once, not groups^2 additions
    def offsets(self) -> tuple[int, ...]:
        """Cumulative Ms, groups + 1 of them: group g's rows are offsets[g] .. offsets[g+1] (contiguous)."""
        return (0, *itertools.accumulate(self.ms))

    @property
    def rows(self) -> int:
        """Rows A and C are stored with: sum(M) contiguous, groups * capacity masked."""
        return self.m if self.layout == "contiguous" else self.groups * self.capacity

    @property
    def flops(self) -> int:
        return sum(2 * m * self.n * self.k for m in self.ms)

    @property
    def label(self) -> str:
        """Unique and stable: `g128 n768 k2048 t4096 top8 zipf1.2 s0` for a routing draw (tokens, top-k, the
        distribution, the seed), `g4 n768 k2048 m128,0,64,256` for a short list, `g64 n768 k2048 t8192
        m#1a2b3c4d` (the sum and a digest of the values) for a long one; ` masked c256` after a masked one."""
        head = f"g{self.groups} n{self.n} k{self.k}"
        r = self.routing
        if r is not None:
            body = f"t{r.tokens} top{r.top_k} {r.name} s{r.seed}"
        elif self.groups <= LISTED_IN_LABEL:
            body = "m" + ",".join(map(str, self.ms))
        else:
            digest = hashlib.sha256(",".join(map(str, self.ms)).encode()).hexdigest()[:8]
            body = f"t{self.m} m#{digest}"
        tail = f" masked c{self.capacity}" if self.layout == "masked" else ""
        return f"{head} {body}{tail}"

    def unique_bytes(self, a_bytes: int, b_bytes: int, c_bytes: int) -> int:
        """Fewest bytes it must move: every real row of A read and of C written once, and the weights of each
        group with tokens read once (an empty group's weights need not be read)."""
        busy = sum(1 for m in self.ms if m)
        return self.m * self.k * a_bytes + busy * self.n * self.k * b_bytes + self.m * self.n * c_bytes

    def max_element_offset(self) -> int:
        """Largest element offset any operand needs (index-width checks): the stored A and C, all of B."""
        return max(self.rows * self.k, self.groups * self.n * self.k, self.rows * self.n, 1) - 1

    def as_dict(self) -> dict:
        out = {"n": self.n, "k": self.k, "ms": list(self.ms), "layout": self.layout}
        if self.layout == "masked":
            out["capacity"] = self.capacity
        if self.routing is not None:
            out["routing"] = self.routing.as_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "GroupedProblem":
        """Inverse of as_dict (a stored row's `grouped` column)."""
        routing = Routing(**d["routing"]) if d.get("routing") else None
        return cls(int(d["n"]), int(d["k"]), tuple(int(m) for m in d["ms"]), d.get("layout", "contiguous"),
                   int(d.get("capacity", 0)), routing)


def default_capacity(ms) -> int:
    """The masked layout's capacity when the spec gives none: the largest M rounded up to CAPACITY_MULTIPLE
    (at least one multiple: a layer whose experts all got no token still has a capacity)."""
    top = max(max(ms), 1)
    return -(-top // CAPACITY_MULTIPLE) * CAPACITY_MULTIPLE


_LABEL = re.compile(r"g(\d+) n(\d+) k(\d+) (?:t(\d+) top(\d+)|m([\d,]+)|t(\d+) m#)")


def label_volume(label: str) -> int | None:
    """m*n*k of a grouped problem's label (sum of the group Ms times N times K: half its FLOPs), for sorting
    tables by size; None when the label is not a grouped one."""
    found = _LABEL.match(str(label))
    if not found:
        return None
    _, n, k, tokens, top_k, listed, total = found.groups()
    if tokens is not None:
        rows = int(tokens) * int(top_k)
    elif listed is not None:
        rows = sum(int(x) for x in listed.split(",") if x)
    else:
        rows = int(total)
    return rows * int(n) * int(k)
