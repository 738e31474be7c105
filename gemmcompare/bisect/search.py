"""Which commit to measure next, and what the verdicts so far say: the search of `gemmcompare bisect`,
pure logic (no git, no GPU), so that it is tested with a fake measurer.

The candidates are the commits after the good one up to the bad one, oldest first; the bad end is the last.
Every candidate gets at most one verdict: good, bad, or skip (it could not be measured or judged, as
`git bisect skip`). The first bad commit lies after the last good one before the first bad one; the next
commit measured is the untested one nearest the middle of that range (a skipped commit's neighbour in
its place). Without skips that takes ceil(log2(N)) steps for N candidates. When only skipped commits are
left in the range, the culprit is one of them or the first bad one, and the outcome names them all, as
git bisect does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

GOOD, BAD, SKIP = "good", "bad", "skip"
VERDICTS = (GOOD, BAD, SKIP)


@dataclass(frozen=True)
class Outcome:
    """What the verdicts say. first_bad: the commit that made it bad, when it is one; could_be: every commit
    it may be, oldest first (one when first_bad is known; several when skips hide it)."""

    could_be: tuple[str, ...]

    @property
    def first_bad(self) -> str | None:
        return self.could_be[0] if len(self.could_be) == 1 else None


@dataclass
class Search:
    candidates: Sequence[str]  # oldest first; the last is the bad end
    verdicts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.candidates:
            raise ValueError("bisect needs at least one commit after the good one")
        if len(set(self.candidates)) != len(self.candidates):
            raise ValueError("a commit is listed twice among the candidates")
        self._index = {sha: i for i, sha in enumerate(self.candidates)}

    def record(self, sha: str, verdict: str) -> None:
        if verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}; expected one of {VERDICTS}")
        if sha not in self._index:
            raise ValueError(f"{sha} is not one of the candidates")
        self.verdicts[sha] = verdict

    def _bounds(self) -> tuple[int, int]:
        """(lo, hi): the last good index before the first bad one (-1: the good end) and the first bad index
        (the bad end until a middle commit is bad)."""
        bad = [i for sha, i in self._index.items() if self.verdicts.get(sha) == BAD]
        hi = min(bad) if bad else len(self.candidates) - 1
        good = [i for sha, i in self._index.items() if self.verdicts.get(sha) == GOOD and i < hi]
        return (max(good) if good else -1), hi

    def next(self) -> str | None:
        """The next commit to measure, or None when the verdicts settle the question."""
        lo, hi = self._bounds()
        untested = [i for i in range(lo + 1, hi) if self.candidates[i] not in self.verdicts]
        if not untested:
            return None
        middle = (lo + hi) / 2
        return self.candidates[min(untested, key=lambda i: (abs(i - middle), i))]

    def outcome(self) -> Outcome:
        """The commits the first bad one may be (call once next() is None)."""
        lo, hi = self._bounds()
        return Outcome(tuple(self.candidates[i] for i in range(lo + 1, hi + 1)
                             if self.verdicts.get(self.candidates[i]) != GOOD))

    def steps_left(self) -> int:
        """About how many more commits to measure, if none is skipped (what git bisect prints)."""
        lo, hi = self._bounds()
        left = sum(1 for i in range(lo + 1, hi) if self.candidates[i] not in self.verdicts)
        return math.ceil(math.log2(left + 1)) if left else 0
