"""Per problem and implementation, the median time of every run given and their spread (max / min - 1): how far
a row moves from one process to the next when nothing else changes.
    python3 experiments/studies/llm-shapes/spread_table.py RUN_FOLDER [RUN_FOLDER...]   (folders with results.csv or results.json.gz)"""

from __future__ import annotations

import json
import sys

import gemmcompare


def l2_policy(timing) -> str:
    """The L2 policy a row was timed under, from its timing record (a dict, or its JSON text in results.csv)."""
    if isinstance(timing, str):
        try:
            timing = json.loads(timing)
        except ValueError:
            return "?"
    return (timing.get("l2_policy") or timing.get("l2") or "?") if isinstance(timing, dict) else "?"


def main(folders: list[str]) -> None:
    runs = [gemmcompare.load(f)[0] for f in folders]
    policies = sorted({l2_policy(t) for df in runs for t in df[df.status == "PASS"].timing})
    print(f"{len(runs)} runs (L2 policy {'+'.join(policies) or '-'}); median us per run, then spread = max / min - 1")
    rows = {}
    for i, df in enumerate(runs):
        for r in df[df.status == "PASS"].itertuples():
            rows.setdefault((r.m, r.n, r.k, r.implementation), {})[i] = r.median_ms * 1e3
    for (m, n, k, impl), per_run in sorted(rows.items()):
        us = list(per_run.values())
        print(f"{m:>5}x{n}x{k:<6} {impl[:28]:<28} " + " ".join(f"{u:8.2f}" for u in us)
              + f"   spread {100 * (max(us) / min(us) - 1):5.2f}%")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
