"""Steps in a series: each implementation's row in one run against its row in the previous run that has it,
judged by `compare`'s own verdict (the Mann-Whitney / Hodges-Lehmann interval on the raw samples, the
threshold, the same-run baseline and clock checks). A step is flagged when that verdict is SLOWER, FASTER,
REGRESSION or FIXED.

Why compare and not a change-point library: consecutive runs of one spec are few (a handful to a few dozen
points), while each point carries tens to hundreds of raw samples. A change-point method on the medians
alone throws those samples away and needs several points on each side of a change before it can see it;
compare's verdict judges each pair on its full sample distributions, knows the machine's state (a power cap
moves the baseline too), and is the verdict the CI gate fails on, so the dashboard and the gate agree.
"""

from __future__ import annotations

import pandas as pd

from ..verdicts import compare
from ..receipt import compare_threshold
from .runs import Run

STEP_VERDICTS = ("REGRESSION", "SLOWER", "FASTER", "FIXED")
STEP_COLUMNS = ["implementation", "base_run", "cand_run", "verdict", "detail", "ratio", "ratio_lo", "ratio_hi",
                "throttled", "is_baseline"]


def series_steps(runs: list[Run], contract: str, problem: str, threshold: float | None = None) -> pd.DataFrame:
    """Every consecutive pair of an implementation's rows at (contract, problem) over `runs` (oldest first),
    one row each with compare's verdict (STEP_COLUMNS). Each distinct pair of runs is compared once, on the
    rows of this (contract, problem) only, so that the baseline checks see the baseline measured beside it.
    threshold: the smallest change that counts (default: the later run's spec's, else compare's default)."""
    by_id = {r.run_id: r for r in runs}
    rows = {r.run_id: r.rows_at(contract, problem) for r in runs}
    pairs: dict[tuple[str, str], list[str]] = {}
    last: dict[str, str] = {}
    for run in runs:
        for impl in dict.fromkeys(rows[run.run_id]["implementation"].astype(str)):
            if impl in last:
                pairs.setdefault((last[impl], run.run_id), []).append(impl)
            last[impl] = run.run_id
    records = []
    for (base_id, cand_id), impls in pairs.items():
        base, cand = by_id[base_id], by_id[cand_id]
        comp = compare((base.receipt, rows[base_id]), (cand.receipt, rows[cand_id]),
                       compare_threshold(cand.receipt, threshold), base_label=base.label, cand_label=cand.label)
        table = comp.table[comp.table["implementation"].isin(impls)]
        for _, r in table.iterrows():
            records.append({"implementation": r["implementation"], "base_run": base_id, "cand_run": cand_id,
                            "verdict": r["verdict"], "detail": r["detail"], "ratio": r["ratio"],
                            "ratio_lo": r["ratio_lo"], "ratio_hi": r["ratio_hi"], "throttled": r["throttled"],
                            "is_baseline": bool(r["is_baseline"])})
    return pd.DataFrame(records, columns=STEP_COLUMNS)


def flagged(steps: pd.DataFrame) -> pd.DataFrame:
    return steps[steps["verdict"].isin(STEP_VERDICTS)]


def latest_comparison(runs: list[Run], threshold: float | None = None):
    """compare's Comparison of the last run against the one before it (runs of one spec on one GPU, oldest
    first); None when there is only one."""
    if len(runs) < 2:
        return None
    base, cand = runs[-2], runs[-1]
    return compare(base.pair, cand.pair, compare_threshold(cand.receipt, threshold), base_label=base.label,
                   cand_label=cand.label)
