"""A commit's verdict for `gemmcompare bisect`: its run against the good commit's, by `compare`'s rule.

Every watched row gets compare's verdict (noise-aware, % of the same-run baseline, FAIL/CRASH/TIMEOUT a
REGRESSION). The rows other than the baseline decide the step, in this order:
  bad    a row is SLOWER, or PASS turned into FAIL, CRASH or TIMEOUT
  skip   a row did not build, or the commit has no run (the spec cannot be run there), or the baseline did
         not PASS (no % of baseline to tell the kernel from the GPU's state), or a row cannot be told
         (UNKNOWN, SKIPPED, GONE): like `git bisect skip`, the search measures a neighbour instead
  good   every row is SAME or FASTER (or FIXED)
The baseline row is shown beside them (how the machine moved) and not judged: it is the same library at
every commit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .measure import Measurement
from .search import BAD, GOOD, SKIP

BROKEN = ("FAIL", "CRASH", "TIMEOUT")


@dataclass(frozen=True)
class RowChange:
    """One watched row at one commit, against the good commit."""

    implementation: str
    problem: str
    contract: str
    verdict: str  # compare's: SAME, SLOWER, FASTER, UNKNOWN, REGRESSION, ...
    status: str  # the row's status at this commit
    base_status: str  # and at the good commit
    ratio: float | None  # time at this commit / time at the good commit
    ratio_lo: float | None
    ratio_hi: float | None
    detail: str
    is_baseline: bool = False

    @property
    def change(self) -> str:
        """'+14.9% (CI +14.1..+15.6%)', or the status when there is no time to compare."""
        if self.ratio is None:
            return self.status
        text = f"{100 * (self.ratio - 1):+.1f}%"
        if self.ratio_lo is not None and self.ratio_hi is not None:
            text += f" (CI {100 * (self.ratio_lo - 1):+.1f}..{100 * (self.ratio_hi - 1):+.1f}%)"
        return text


@dataclass
class StepVerdict:
    verdict: str  # good, bad or skip
    reason: str
    rows: list[RowChange] = field(default_factory=list)
    build_failed: bool = False  # skip because a row did not build or the spec could not be run


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def row_changes(table) -> list[RowChange]:
    out = []
    for _, r in table.iterrows():
        out.append(RowChange(
            str(r["implementation"]), str(r["problem"]), str(r["contract"]), str(r["verdict"]),
            str(r.get("cand_status") or "-"), str(r.get("base_status") or "-"), _number(r.get("ratio")), _number(r.get("ratio_lo")),
            _number(r.get("ratio_hi")), str(r.get("detail") or ""), bool(r.get("is_baseline"))))
    return out


def judge_step(reference: Measurement, step: Measurement, threshold: float) -> StepVerdict:
    """The verdict of `step` against the good commit's measurement `reference`."""
    from ..verdicts import compare

    if step.run is None:
        return StepVerdict(SKIP, step.failure or "no run", build_failed=True)
    comp = compare(reference.run, step.run, threshold, base_label=reference.commit.short,
                   cand_label=step.commit.short)
    rows = row_changes(comp.table)
    judged = [r for r in rows if not r.is_baseline and r.base_status == "PASS"]

    def named(these):
        return ", ".join(f"{r.implementation} {r.problem} {r.verdict if r.status == 'PASS' else r.status}"
                         for r in these)

    bad = [r for r in judged if r.verdict == "SLOWER" or (r.verdict == "REGRESSION" and r.status in BROKEN)]
    if bad:
        return StepVerdict(BAD, named(bad), rows)
    unbuilt = [r for r in rows if r.status == "BUILD_ERROR"]
    if unbuilt:
        return StepVerdict(SKIP, f"did not build: {named(unbuilt)}", rows, build_failed=True)
    baseline_down = [r for r in rows if r.is_baseline and r.status != "PASS"]
    if baseline_down:
        return StepVerdict(SKIP, f"the baseline did not PASS ({named(baseline_down)}): no % of baseline to judge "
                                 f"by", rows)
    unclear = [r for r in judged if r.verdict not in ("SAME", "FASTER", "FIXED")]
    if unclear:
        return StepVerdict(SKIP, f"cannot tell: {named(unclear)}", rows)
    if not judged:
        return StepVerdict(SKIP, "no watched row in this commit's run", rows)
    return StepVerdict(GOOD, named(judged), rows)


def reference_problems(reference: Measurement) -> str:
    """'' when the good commit can be the reference: its run exists, no watched row failed (a SKIP row is
    left out of every verdict), the baseline PASSed and a row besides it did; otherwise what is wrong."""
    if reference.run is None:
        return reference.failure or "no run"
    from ..report.data import normalise_rows

    rows = normalise_rows(reference.run[1])
    if len(rows) == 0:
        return "its run holds no rows"
    failed = rows[~rows["status"].isin(["PASS", "SKIP"])]
    if len(failed):
        return "rows that did not PASS: " + ", ".join(
            f"{r['implementation']} {r['problem']} {r['status']}" for _, r in failed.head(5).iterrows())
    baseline = rows["is_baseline"].astype(bool)
    if (baseline & (rows["status"] != "PASS")).any():
        return "its baseline did not PASS"
    if not ((rows["status"] == "PASS") & ~baseline).any():
        return "no watched row besides the baseline PASSed (every one is SKIP)"
    return ""
