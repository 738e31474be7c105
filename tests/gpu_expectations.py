"""What the spec-driven GPU tests share (test_gpu_batched.py, test_gpu_grouped.py): run a spec once, then compare
every (implementation, contract, problem) row with what is expected of it; and, for every GPU test that runs the
harness, `assert_complete`: a run that did not complete says why (its status and every row that neither PASSed
nor SKIPped, with its reason), so that a failure on a device call is diagnosed from its log alone."""

from __future__ import annotations

from pathlib import Path

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import load_spec


# Grouped problems at every edge a grouped kernel's walk over groups and tiles can get wrong (spec lines, for the
# `problems:` of test_gpu_hopper_grouped.py and test_gpu_cutlass_grouped.py): empty groups first, between and last,
# groups below one tile, Ms and N off the tile, Zipf-skewed routing, 128 experts, more tiles than SMs, K shorter
# than one k tile, every group empty, a K tail.
GROUPED_EDGE_PROBLEMS = """\
  - grouped: {n: 256, k: 512, m: [64, 0, 5, 130, 12, 200, 1, 96]}     # an empty group, groups below one tile
  - grouped: {n: 1000, k: 1032, m: [0, 300, 0, 1, 127, 128, 129, 0]}  # empty first/between/last; N off the tile
  - grouped: {n: 512, k: 1024, routing: {tokens: 256, top_k: 4, experts: 32, distribution: {zipf: 1.2}, seed: 2}}
  - grouped: {n: 768, k: 2048, routing: {tokens: 512, top_k: 8, experts: 128, distribution: {zipf: 1.2}, seed: 0}}
  - grouped: {n: 2048, k: 1024, routing: {tokens: 4096, top_k: 8, experts: 64, distribution: balanced}}  # > 132 tiles
  - grouped: {n: 256, k: 8, m: [3, 0, 70]}                            # K shorter than one k tile
  - grouped: {n: 256, k: 512, m: [0, 0, 0, 0]}                        # every group empty: nothing to write
  - grouped: {n: 384, k: 4104, m: [1000]}                             # one group, a K tail
"""


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
