"""What the spec-driven GPU tests share (test_gpu_batched.py, test_gpu_grouped.py): run a spec once, then compare
every (implementation, contract, problem) row with what is expected of it."""

from __future__ import annotations

from pathlib import Path

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import load_spec


def run_rows(spec: Path, tmp: Path) -> dict:
    """The rows of one run of `spec`, keyed (implementation, contract, problem)."""
    out = Runner(load_spec(spec), RunOptions(store=tmp / "g.db", runs_dir=tmp / "runs", progress=False)).run()
    assert out.status == "complete"
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
