"""What the spec-driven GPU tests share (test_gpu_batched.py, test_gpu_grouped.py): run a spec once, then compare
every (implementation, contract, problem) row with what is expected of it; and, for every GPU test that runs the
harness, `assert_complete`: a run that did not complete says why (its status and every row that neither PASSed
nor SKIPped, with its reason), so that a failure on a device call is diagnosed from its log alone."""

from __future__ import annotations

from pathlib import Path

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import load_spec


def assert_complete(out) -> None:
    """The run completed; else an assertion naming its status and each row that neither PASSed nor SKIPped."""
    if out.status == "complete":
        return
    bad = [f"  {r.implementation} | {r.contract} | {r.problem}: {r.status.value}: {r.reason}" for r in out.rows
           if r.status not in (Status.PASS, Status.SKIP)]
    raise AssertionError(f"run {out.run_id} ended {out.status!r} after {len(out.rows)} rows (log: {out.run_dir}); "
                         f"rows that neither PASSed nor SKIPped: {len(bad)}\n" + "\n".join(bad[:60]))


def run_rows(spec: Path, tmp: Path) -> dict:
    """The rows of one run of `spec`, keyed (implementation, contract, problem)."""
    out = Runner(load_spec(spec), RunOptions(store=tmp / "g.db", runs_dir=tmp / "runs", progress=False)).run()
    assert_complete(out)
    return {(r.implementation, r.contract, r.problem): r for r in out.rows}


def mismatches(rows: dict, expected: dict, problems) -> list[str]:
    """Each row that is missing, or whose status or reason is not what `expected` says. `expected`:
    (implementation, contract) -> (status, words in the reason), each either for every problem or a dict by
    problem."""
    out = []
    for (impl, contract), (status, words) in expected.items():
        for problem in problems:
            want = words if isinstance(words, str) else words[problem]
            state = status if isinstance(status, Status) else status[problem]
            row = rows.get((impl, contract, problem))
            if row is None or row.status is not state or want not in row.reason:
                out.append(f"{impl} {contract} {problem}: expected {state.value} ({want!r}), got "
                           f"{row.status.value if row else 'no row'}: {row.reason if row else ''}")
    return out
