"""`gemmcompare bisect` from end to end: the commits between good and bad, the two ends checked, then the
search (search.py) measuring one commit at a time (measure.py) in a scratch worktree (git.py) and judging
it against the good commit (judge.py), until the first bad commit is named, or the range skips leave.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import InputError
from .git import Commit, ScratchTree, between, exists_at, repository_of, resolve
from .judge import RowChange, judge_step, reference_problems
from .measure import Measurement, Measurer, Watch
from .search import BAD, GOOD, SKIP, Search

REFERENCE = "reference"  # the good end's verdict: every other commit is judged against it
FOUND, RANGE, NONE, INVALID = "found", "range", "none", "invalid"
EXIT_CODES = {FOUND: 1, RANGE: 1, NONE: 0, INVALID: 2}


@dataclass
class Step:
    commit: Commit
    role: str  # good end, bad end, middle
    verdict: str  # reference, good, bad, skip
    reason: str
    rows: list[RowChange] = field(default_factory=list)
    rows_measured: int = 0
    run_dir: Path | None = None
    log: Path | None = None
    seconds: float = 0.0
    build_failed: bool = False  # a skip because the commit's spec or kernels could not be run or built


@dataclass
class BisectResult:
    repo: Path
    spec: Path  # inside the repository
    good: Commit
    bad: Commit
    candidates: list[Commit]
    watch: Watch
    threshold: float | None
    steps: list[Step] = field(default_factory=list)
    status: str = NONE
    could_be: list[Commit] = field(default_factory=list)
    message: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def first_bad(self) -> Commit | None:
        return self.could_be[0] if self.status == FOUND else None

    @property
    def intermediate_steps(self) -> int:
        return sum(1 for s in self.steps if s.role == "middle")

    def step_of(self, commit: Commit) -> Step | None:
        return next((s for s in self.steps if s.commit.sha == commit.sha), None)


def search_history(result: BisectResult, measure: Callable[[Commit], Measurement],
                   on_step: Callable[[Step, BisectResult], None] = lambda step, result: None) -> BisectResult:
    """Measure the two ends, then bisect the candidates between them; fills `result` and returns it.
    `measure(commit)` measures one commit (in its worktree); the judging is judge.py's."""

    def run(commit: Commit, role: str) -> tuple[Measurement, Step]:
        t0 = time.monotonic()
        m = measure(commit)
        step = Step(commit, role, "", "", rows_measured=0 if m.run is None else len(m.run[1]), run_dir=m.run_dir,
                    log=m.log)
        step.seconds = time.monotonic() - t0
        return m, step

    def done(step: Step) -> None:
        result.steps.append(step)
        on_step(step, result)

    reference, step = run(result.good, "good end")
    wrong = reference_problems(reference)
    step.verdict, step.reason = (SKIP, wrong) if wrong else (REFERENCE, "every watched row PASSed")
    done(step)
    if wrong:
        return _settle(result, INVALID, f"good commit {result.good.short} cannot be the reference: {wrong}")
    if result.threshold is None:
        result.threshold = threshold_of(reference)

    def judged(commit: Commit, role: str) -> Step:
        m, step = run(commit, role)
        verdict = judge_step(reference, m, result.threshold)
        step.verdict, step.reason, step.rows = verdict.verdict, verdict.reason, verdict.rows
        step.build_failed = verdict.build_failed
        done(step)
        return step

    step = judged(result.bad, "bad end")
    if step.verdict != BAD:
        if step.build_failed:
            return _settle(result, INVALID, f"bad commit {result.bad.short} cannot be measured ({step.reason}): "
                                            f"name a bad commit whose spec runs and whose kernels build")
        why = "not slower than" if step.verdict == GOOD else "not clearly slower than"
        return _settle(result, NONE, f"bad commit {result.bad.short} is {why} good commit {result.good.short} "
                                     f"({step.reason}): nothing to bisect")

    search = Search([c.sha for c in result.candidates])
    search.record(result.bad.sha, BAD)
    by_sha = {c.sha: c for c in result.candidates}
    while (sha := search.next()) is not None:
        step = judged(by_sha[sha], "middle")
        search.record(sha, step.verdict)
    result.could_be = [by_sha[sha] for sha in search.outcome().could_be]
    if len(result.could_be) == 1:
        c = result.could_be[0]
        return _settle(result, FOUND, f"first bad commit: {c.short} {c.subject}")
    return _settle(result, RANGE, "only skipped commits are left to test: the first bad commit could be any of "
                                  + ", ".join(f"{c.short} {c.subject}" for c in result.could_be))


def _settle(result: BisectResult, status: str, message: str) -> BisectResult:
    result.status, result.message = status, message
    return result


def threshold_of(reference: Measurement) -> float:
    """The spec's threshold (recorded in the good commit's receipt) or compare's default."""
    from ..receipt import compare_threshold

    return compare_threshold(reference.run[0] if reference.run else None)


def bisect_repository(spec: Path, good: str, bad: str, measurer: Measurer, watch: Watch, *,
                      threshold: float | None = None, tree: Path | None = None,
                      on_step: Callable[[Step, BisectResult], None] = lambda step, result: None,
                      on_start: Callable[[BisectResult], None] = lambda result: None) -> BisectResult:
    """Bisect the repository that holds `spec` between `good` and `bad` (revisions). Bad input (not a
    repository, an unknown commit, good not an ancestor of bad, a spec that is not in the repository or not
    at the good commit, an invalid spec, --only matching nothing) raises InputError or SpecError before
    anything is measured. `tree` places the scratch worktree (default: the temporary folder)."""
    root, inside = repository_of(spec)
    good_c, bad_c = resolve(root, good, "good commit"), resolve(root, bad, "bad commit")
    candidates, note = between(root, good_c, bad_c)
    if not exists_at(root, good_c, inside):
        raise InputError(f"{inside} does not exist at good commit {good_c.short}: bisect runs the spec as each "
                          f"commit has it")
    result = BisectResult(root, inside, good_c, bad_c, candidates, watch, threshold, notes=[note] if note else [])
    with ScratchTree(root, tree) as scratch:
        scratch.checkout(good_c)
        result.watch = measurer.prepare(scratch.path / inside, watch)
        result.notes += result.watch.notes
        on_start(result)

        def measure(commit: Commit) -> Measurement:
            return measurer.measure(commit, scratch.checkout(commit) / inside)

        return search_history(result, measure, on_step)


