"""Side by side, per problem: the baseline's and every other implementation's median time under each labelled
group of runs (the median of the runs' medians), and each implementation's percent of the baseline per group.
For the same problems timed under different L2 policies (one spec run with `gemmcompare run --l2 POLICY`, each
policy's runs in a folder of their own: experiments/studies/llm-shapes/baseline_spread_on_device.sh with POLICIES,
gemv_probe_on_device.sh):
    python3 experiments/studies/llm-shapes/l2_policy_table.py LABEL=FOLDER [LABEL=FOLDER...]
FOLDER holds run folders (each with results.csv or results.json.gz). A group is its folder, whatever its label
says: the L2 policy its rows record (their timing's l2_policy) is printed beside each label."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import gemmcompare


def l2_policy(timing) -> str | None:
    """The L2 policy a row was timed under, from its timing record (a dict, or its JSON text in results.csv)."""
    if isinstance(timing, str):
        try:
            timing = json.loads(timing)
        except ValueError:
            return None
    return (timing.get("l2_policy") or timing.get("l2")) if isinstance(timing, dict) else None


def group_medians(folder: Path) -> tuple[dict, str, set]:
    """(m, n, k, implementation) -> median over the runs of each run's median ms; the runs' baseline; and the L2
    policies their rows were timed under."""
    per_run: dict = {}
    baseline = ""
    policies: set = set()
    runs = sorted(p for p in folder.iterdir() if p.is_dir())
    if not runs:
        sys.exit(f"l2_policy_table: no run folders in {folder}")
    for run in runs:
        df = gemmcompare.load(run)[0]
        for r in df[df.status == "PASS"].itertuples():
            per_run.setdefault((r.m, r.n, r.k, r.implementation), []).append(r.median_ms)
            policies.add(l2_policy(r.timing) or "?")
            if r.is_baseline:
                baseline = r.implementation
    return {key: statistics.median(v) for key, v in per_run.items()}, baseline, policies


def main(args: list[str]) -> None:
    groups = {}
    for arg in args:
        label, sep, folder = arg.partition("=")
        if not sep or not label:
            sys.exit(f"l2_policy_table: {arg!r} is not LABEL=FOLDER")
        groups[label] = group_medians(Path(folder))
    baselines = {b for _, b, _ in groups.values()}
    if len(baselines) != 1:
        sys.exit(f"l2_policy_table: the groups name different baselines: {sorted(baselines)}")
    baseline = baselines.pop()
    labels = list(groups)
    keys = sorted({key for medians, _, _ in groups.values() for key in medians})
    print("median us (median of the runs' medians) per group: " + " / ".join(labels))
    policies = [f"{g}: {'+'.join(sorted(groups[g][2])) or '-'}" for g in labels]
    print("L2 policy of each group's rows: " + " / ".join(policies))
    for m, n, k, impl in keys:
        times = [groups[g][0].get((m, n, k, impl)) for g in labels]
        cells = " ".join(f"{t * 1e3:9.2f}" if t else f"{'-':>9}" for t in times)
        line = f"{m:>5}x{n}x{k:<6} {impl[:28]:<28} {cells}"
        if impl != baseline:
            pct = []
            for g, t in zip(labels, times):
                base = groups[g][0].get((m, n, k, baseline))
                pct.append(f"{100 * base / t:6.1f}%" if t and base else f"{'-':>7}")
            line += "   % of baseline " + " ".join(pct)
        print(line)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
