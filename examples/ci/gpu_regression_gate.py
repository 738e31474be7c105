#!/usr/bin/env python3
"""A CI regression gate for a GPU runner: run a spec, compare the run against a committed baseline, write the
verdict table as Markdown to the job summary, leave the reports in one folder for upload, and exit non-zero
on a regression. github-actions.yml and gitlab-ci.yml in this folder call it.

    python examples/ci/gpu_regression_gate.py --spec experiments/quickstart.yaml \\
        --baseline experiments/studies/quickstart/h200 --out gate

Steps (each a `gemmcompare` command, so the gate judges exactly as a person at a terminal would):
  1. gemmcompare run SPEC --store OUT/gate.db --runs-dir OUT/runs      (skipped with --candidate RUN)
  2. gemmcompare compare --baseline BASELINE CANDIDATE --out OUT/compare
  3. gemmcompare report CANDIDATE --out OUT/report
  4. OUT/summary.md: the verdict and the table; appended to $GITHUB_STEP_SUMMARY when that is set.

--candidate names an existing run (a run folder, results.json/csv, or a run id in --store) instead of
measuring one: the gate then needs no GPU (its CPU test runs it on committed receipts).

Exit code: compare's (0 no regression, 1 a row SLOWER or a REGRESSION, 2 a run or file that cannot be
read); or the run's when the run itself could not be made (3: no CUDA device; 2: an invalid spec).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path


def gemmcompare(*args: str) -> int:
    """Run one gemmcompare command with this interpreter (the package it has installed, or PYTHONPATH's)."""
    cmd = [sys.executable, "-m", "gemmcompare", *args]
    print("+ gemmcompare " + " ".join(args), flush=True)
    return subprocess.run(cmd).returncode


def summary_markdown(compare_md: str, exit_code: int, baseline: str, candidate: str) -> str:
    """compare.md made into a job summary: a heading with the outcome, compare's summary and its table (the
    plot's image, which the summary cannot show, left out: it is in the uploaded report)."""
    outcome = {0: "no regression", 1: "REGRESSED"}.get(exit_code, f"error (exit {exit_code})")
    lines = [f"## GEMM regression gate: {outcome}", "",
             f"baseline `{baseline}` → candidate `{candidate}`; the full report (plot, rule) is in the job's "
             f"artifacts.", ""]
    body = compare_md.split("\n## The rule")[0].splitlines()
    lines += [line for line in body[1:] if not line.startswith("![") and not (line.startswith("_") and line.endswith("_"))]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spec", help="the spec to run (not needed with --candidate)")
    p.add_argument("--baseline", required=True, help="the committed baseline: a run folder or results file")
    p.add_argument("--candidate", help="an existing run to judge instead of running the spec (no GPU needed)")
    p.add_argument("--out", default="gate", help="folder for the store, the run, the reports and summary.md")
    p.add_argument("--threshold", help="compare's --threshold (default: the spec's, else 3%%)")
    p.add_argument("--store", help="the store the candidate id is looked up in (default OUT/gate.db)")
    args = p.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = args.store or str(out / "gate.db")
    candidate = args.candidate
    if candidate is None:
        if not args.spec:
            p.error("give --spec to run, or --candidate RUN to judge an existing run")
        code = gemmcompare("run", args.spec, "--store", store, "--runs-dir", str(out / "runs"), "--no-report",
                           "--no-progress")
        if code not in (0, 1):  # 1: some rows failed; compare calls them out as REGRESSION
            print(f"gate: the run failed (exit {code}); nothing to compare", file=sys.stderr)
            return code
        candidate = "latest"

    threshold = ["--threshold", args.threshold] if args.threshold else []
    code = gemmcompare("compare", "--baseline", args.baseline, candidate, "--store", store,
                       "--out", str(out / "compare"), *threshold)
    if code not in (0, 1):
        return code
    gemmcompare("report", candidate, "--store", store, "--out", str(out / "report"))  # for upload; not gating

    summary = summary_markdown((out / "compare" / "compare.md").read_text(), code, args.baseline, candidate)
    (out / "summary.md").write_text(summary)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a") as f:
            f.write(summary)
    print(f"gate: {'REGRESSED' if code else 'no regression'}; summary in {out / 'summary.md'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
