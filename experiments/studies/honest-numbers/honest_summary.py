"""The short table of experiments/studies/honest-numbers/honest_numbers_on_device.sh: what each step did, the small-kernel timing
table, the alignment study by policy, the two compares and the do_bench column. Reads the work folder the
script fills; prints plain text (the script saves it as summary.txt and prints it last).

    python3 experiments/studies/honest-numbers/honest_summary.py WORK_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _run_folder(parent: Path) -> Path | None:
    found = sorted(p for p in parent.glob("*/") if (p / "results.json").exists()) if parent.exists() else []
    return found[0] if found else None


def _rows(parent: Path):
    folder = _run_folder(parent)
    if folder is None:
        return None
    from gemmcompare.store.run_folder import load_result_file

    df = load_result_file(folder)[1]
    return df if len(df) and "problem" in df else None


def _short(name: str) -> str:
    if name.startswith("cutlass."):
        return ("CUTLASS SM90 " if "sm90" in name else "CUTLASS SM80 " if "sm80" in name else "CuTe ") + (
            "128x256x64" if "128x256x64" in name else "")
    return name.split("[")[0]


def steps(work: Path) -> list[str]:
    path = work / "steps.txt"
    return ["## steps", *(path.read_text().splitlines() if path.exists() else ["(no steps.txt)"])]


def small(work: Path) -> list[str]:
    path = work / "small" / "small_kernel_timing.md"
    return ["", "## small kernels (experiments/studies/honest-numbers/small_kernel_timing.py)",
            *(path.read_text().splitlines() if path.exists() else ["(no table: see logs/small_*.log)"])]


def alignment(work: Path) -> list[str]:
    df = _rows(work / "runs" / "alignment")
    out = ["", "## alignment study: median ms, % of cuBLAS in the same run and policy, method, copies"]
    if df is None:
        return out + ["(no run: see logs/alignment.log)"]
    out.append(f"{'problem':<16} {'implementation':<22} " + " | ".join(f"{c:<34}" for c in ("tight", "aligned")))
    for problem in dict.fromkeys(df["problem"]):
        for impl in dict.fromkeys(df["implementation"]):
            cells = []
            for contract in ("f16_f32acc_tn", "f16_f32acc_tn_aligned"):
                sel = df[(df["problem"] == problem) & (df["implementation"] == impl) & (df["contract"] == contract)]
                if sel.empty:
                    cells.append("-")
                    continue
                r = sel.iloc[-1]
                if r["status"] != "PASS":
                    cells.append(f"{r['status']}: {str(r['reason'])[:26]}")
                    continue
                copies = "copies" if "inside the timed region" in str(r.get("notes", "")) else "in place"
                pct = r.get("pct_of_baseline")
                cells.append(f"{r['median_ms']:.4f} {pct:6.1f}% {str(r.get('timing_method', ''))[:6]:<6} {copies}")
            out.append(f"{problem:<16} {_short(impl)[:22]:<22} " + " | ".join(f"{c:<34}" for c in cells))
    lds = df.drop_duplicates(["problem", "contract"])[["problem", "contract", "lda", "ldb", "ldc"]]
    out.append("leading dimensions every row of a (problem, policy) got: " + "; ".join(
        f"{r.problem} {r.contract}: {r.lda}/{r.ldb}/{r.ldc}" for r in lds.itertuples()))
    return out


def compares(work: Path) -> list[str]:
    out = []
    for name, expected in (("compare_twice", 0), ("compare_planted", 1)):
        log = work / "logs" / f"{name}.log"
        out += ["", f"## {name} (expected exit {expected})"]
        if not log.exists():
            out.append("(not run)")
            continue
        lines = [ln for ln in log.read_text().splitlines() if ln.strip()]
        out += lines[-14:]
    return out


def throttling(work: Path) -> list[str]:
    out = ["", "## clocks: rows at 8192^3 (median SM clock while sampling, throttled share, ms, ms at max clock)"]
    for run in ("twice_1", "twice_2", "planted_base", "planted_slow"):
        df = _rows(work / "runs" / run)
        if df is None:
            continue
        for r in df[df["problem"] == "8192x8192x8192"].itertuples():
            if r.status != "PASS":
                continue
            out.append(f"{run:<13} {_short(r.implementation)[:22]:<22} {r.sm_clock_mhz or 0:6.0f} MHz "
                       f"{100 * (r.throttled_fraction or 0):4.0f}% {r.median_ms:.4f} ms "
                       f"{(r.median_ms_at_max_clock or float('nan')):.4f} ms@max")
    return out


def profile(work: Path) -> list[str]:
    path = work / "profile.json"
    out = ["", "## profile: do_bench (graph replays) against events and ncu"]
    if not path.exists():
        return out + ["(no profile.json: see logs/profile.log)"]
    for r in json.loads(path.read_text()):
        ev, db, nc = r.get("event_median_ms"), r.get("do_bench_median_ms"), r.get("ncu_median_ms")
        ratio = f"{db / ev:.3f}" if ev and db else "-"
        out.append(f"{r['problem']:<16} events {ev or 0:.5f} ms, do_bench {db or 0:.5f} ms (x{ratio} of events), "
                   f"ncu {nc or 0:.5f} ms; {r.get('do_bench_how') or ''}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    work = Path(argv[0])
    lines = []
    for part in (steps, small, alignment, compares, throttling, profile):
        try:
            lines += part(work)
        except Exception as exc:  # noqa: BLE001 - one broken part must not hide the others
            lines += ["", f"## {part.__name__}: could not summarize ({type(exc).__name__}: {exc})"]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
