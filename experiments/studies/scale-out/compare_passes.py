"""Compares the passes of experiments/studies/scale-out/scale_out_on_device.sh: one GPU, every GPU (--gpus all), two shards
run at once and merged, the Dask engine (--cluster local). Reads each pass's store; writes summary.json
and prints a table. Usage: python3 compare_passes.py OUT"""

import json
import sqlite3
import sys
from pathlib import Path

BAD = {"FAIL", "CRASH", "TIMEOUT", "BUILD_ERROR"}
PASSES = [("one GPU", "one.db"), ("--gpus all", "two.db"), ("2 shards + merge", "merged.db"),
          ("--cluster local", "cluster.db")]


def load(db: Path):
    if not db.exists():
        return None
    conn = sqlite3.connect(db)
    run = conn.execute("SELECT run_id, status, receipt FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()
    if run is None:
        return None
    rows = conn.execute("SELECT problem, contract, implementation, status, pct_of_baseline, gpu_uuid FROM results "
                        "WHERE run_id = ?", (run[0],)).fetchall()
    return {"run_id": run[0], "status": run[1], "receipt": json.loads(run[2] or "{}"),
            "rows": {(p, c, i): (s, pct, g) for p, c, i, s, pct, g in rows}}


def shard_phase(out: Path) -> dict:
    """The shards ran at once: their measuring phase is the longer of the two."""
    phases = [(load(out / f"shard{i}.db") or {}).get("receipt", {}).get("phases", {}) for i in range(2)]
    secs = [p.get("measure_s") for p in phases if p.get("measure_s")]
    rows = sum(p.get("rows_measured") or 0 for p in phases)
    return {"measure_s": max(secs) if len(secs) == 2 else None, "rows_measured": rows}


def main(out: Path) -> int:
    runs = {name: load(out / db) for name, db in PASSES}
    one = runs["one GPU"]
    summary = {"passes": {}, "checks": {}}
    for name, run in runs.items():
        if run is None:
            summary["passes"][name] = None
            continue
        phases = shard_phase(out) if name.startswith("2 shards") else run["receipt"].get("phases", {})
        counts: dict = {}
        for status, _, _ in run["rows"].values():
            counts[status] = counts.get(status, 0) + 1
        rate = phases["rows_measured"] / phases["measure_s"] if phases.get("measure_s") else None
        entry = {"run_id": run["run_id"], "status": run["status"], "counts": counts, "measure_s": phases.get("measure_s"),
                 "rows_per_s": rate, "gpus": sorted({g for _, _, g in run["rows"].values() if g}),
                 "worker_start_s": [g.get("worker_start_s") for g in run["receipt"].get("gpus", [])]}
        if one is not None and run is not one:
            same_keys = set(run["rows"]) == set(one["rows"])
            same_status = same_keys and all(run["rows"][k][0] == one["rows"][k][0] for k in one["rows"])
            deltas = [abs(run["rows"][k][1] - one["rows"][k][1]) for k in one["rows"]
                      if k in run["rows"] and run["rows"][k][1] is not None and one["rows"][k][1] is not None]
            entry.update({"same_rows": same_keys, "same_statuses": same_status,
                          "max_pct_delta": max(deltas) if deltas else None,
                          "rows_over_3_points": sum(1 for d in deltas if d > 3.0), "compared": len(deltas)})
            one_rate = summary["passes"]["one GPU"]["rows_per_s"]
            entry["speedup"] = rate / one_rate if rate and one_rate else None
        summary["passes"][name] = entry
    two = summary["passes"].get("--gpus all") or {}
    merged = summary["passes"].get("2 shards + merge") or {}
    ok_rows = lambda e: bool(e) and not (set(e["counts"]) & BAD)  # noqa: E731
    summary["checks"] = {
        "--gpus all >= 1.9x rows/s of one GPU": bool(two.get("speedup") and two["speedup"] >= 1.9),
        "no FAIL/CRASH/TIMEOUT/BUILD_ERROR in any pass": bool(one) and all(
            ok_rows(e) for e in summary["passes"].values() if e),
        "--gpus all: % of cuBLAS within 3 points of one GPU": two.get("rows_over_3_points") == 0 and two.get("same_statuses"),
        "shards + merge: the same rows as one GPU": bool(merged.get("same_rows") and merged.get("same_statuses")),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(f"{'pass':<18} {'rows':>5} {'PASS':>5} {'SKIP':>5} {'other':>5} {'measure s':>9} {'rows/s':>7} "
          f"{'x one':>6} {'max d%':>7} {'>3pt':>5} {'GPUs':>4}")
    for name, e in summary["passes"].items():
        if e is None:
            print(f"{name:<18} (did not run)")
            continue
        c = e["counts"]
        other = sum(v for k, v in c.items() if k not in ("PASS", "SKIP"))
        f = lambda v, fmt: format(v, fmt) if v is not None else "-"  # noqa: E731
        print(f"{name:<18} {sum(c.values()):>5} {c.get('PASS', 0):>5} {c.get('SKIP', 0):>5} {other:>5} "
              f"{f(e['measure_s'], '9.1f')} {f(e['rows_per_s'], '7.2f')} {f(e.get('speedup'), '6.2f')} "
              f"{f(e.get('max_pct_delta'), '7.2f')} {f(e.get('rows_over_3_points'), '5d')} {len(e['gpus']):>4}")
    for check, ok in summary["checks"].items():
        print(f"{'ok  ' if ok else 'NOT '} {check}")
    return 0 if all(summary["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
