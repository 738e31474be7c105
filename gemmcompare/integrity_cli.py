"""`gemmcompare sanitize SPEC` and `gemmcompare profile SPEC`: the spec's implementations under
compute-sanitizer, and their launches timed by Nsight Compute next to the harness's event timing.

sanitize: one compute-sanitizer run per tool (memcheck, racecheck, synccheck) over the spec narrowed to
small shapes and correctness only (`run --shapes ... --check-only --in-process`); each error the tool
prints names a kernel, which is mapped back to the implementation that owns it (ptxas report).

profile: for each implementation and problem, a driver process prepares the implementation exactly as a
run does, then launches it N times inside cudaProfilerStart/Stop under `ncu --clock-control none
--cache-control none --profile-from-start off --metrics gpu__time_duration.sum`; the L2 flush happens
between launches, outside the profiled ranges. The kernels of one launch are summed. The event-timed
median of the same rows comes from a run in the store (--run) or from a fresh run.

profile --stalls: one more ncu run per row (a single launch, `--page raw` of the SpeedOfLight,
ComputeWorkloadAnalysis, WarpStateStats, Occupancy and LaunchStats sections): the kernel's name (which
is how a library's kernel choice is seen), registers, achieved occupancy, tensor-pipe and issue
utilization, and the warp stall reasons (warps stalled per issued instruction), largest first. The
sections replay the kernel, so their times are not the timing: that stays the plain run's.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .errors import GemmCompareError, ToolchainError

TOOLS = ("memcheck", "racecheck", "synccheck")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path:
        return path
    from .build.toolchain import cuda_home

    for cand in (cuda_home() / "bin" / name, *Path("/opt/nvidia").glob(f"nsight-compute/*/{name}")):
        if Path(cand).exists():
            return str(cand)
    raise ToolchainError(f"{name} not found on PATH or in the CUDA toolkit")


def _kernel_owners(spec: str, args) -> dict[str, str]:
    """Demangled kernel name -> implementation, from the build's ptxas reports (builds are cached)."""
    import re as _re

    from .cli import _run_options, _spec, narrow
    from .device import probe_device
    from .runner import build_for

    exp = narrow(_spec(spec), args.shapes, True, args.only)
    outcome = build_for(exp, probe_device(), _run_options(args))
    owners: dict[str, list[str]] = {}
    impls = {i.name: i for i in exp.implementations}
    for name, ext in outcome.by_impl.items():
        resources = getattr(ext, "resources", [])
        pattern = getattr(impls[name], "kernel_filter", "")
        rx = _re.compile(pattern) if pattern else None
        for r in resources:
            label = r.get("demangled") or r["function"]
            if rx is None or rx.search(r["function"]) or rx.search(label):
                key = label.split("(")[0].split("<")[0].strip().split("::")[-1]
                owners.setdefault(key, [])
                if name not in owners[key]:
                    owners[key].append(name)
    return owners


def parse_sanitizer(text: str) -> tuple[int, list[dict]]:
    """(error count from the summary, one dict per reported error with its kernel)."""
    m = re.search(r"ERROR SUMMARY:\s+(\d+) error", text) or re.search(r"SUMMARY:.*?\((\d+) errors?", text)
    count = int(m.group(1)) if m else -1
    errors, current = [], None
    for line in text.splitlines():
        body = line.replace("=========", "").strip()
        if not body:
            continue
        if re.match(r"(Invalid|Error|Race|Barrier|Program hit|Uninitialized|Divergent|Misaligned|Out-of-range)", body):
            current = {"what": body, "kernel": None}
            errors.append(current)
        elif current is not None and current["kernel"] is None:
            k = re.search(r"(?:in|at)\s+([A-Za-z_][\w:<>, ]*?)\(", body)
            if k:
                current["kernel"] = k.group(1).split("::")[-1].split("<")[0].strip()
    return count, errors


def cmd_sanitize(args) -> int:
    sanitizer = _tool("compute-sanitizer")
    owners = _kernel_owners(args.spec, args)
    rows, worst = [], 0
    for tool in args.tools.split(","):
        if tool not in TOOLS:
            raise GemmCompareError(f"--tools: unknown tool {tool!r}; expected {list(TOOLS)}")
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sanitizer, "--tool", tool, "--error-exitcode", "99", "--print-limit", "50",
                   sys.executable, "-m", "gemmcompare.cli", "run", args.spec, "--shapes", args.shapes, "--check-only",
                   "--in-process", "--no-report", "--no-progress", "--store", f"{tmp}/s.db", "--runs-dir", tmp]
            if args.only:
                cmd += ["--only", args.only]
            print(f"[{tool}] {' '.join(cmd[:6])} ... run {args.spec} --shapes {args.shapes}", file=sys.stderr)
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        text = res.stdout + res.stderr
        count, errors = parse_sanitizer(text)
        per_impl: dict[str, list[str]] = {}
        for e in errors:
            # a kernel name shared by several implementations is charged to each of them
            for impl in owners.get(e["kernel"] or "", [f"(kernel {e['kernel'] or 'unknown'})"]):
                per_impl.setdefault(impl, []).append(e["what"])
        for impl in sorted({i for names in owners.values() for i in names}):
            found = per_impl.pop(impl, [])
            rows.append({"tool": tool, "implementation": impl, "errors": len(found), "first": found[0] if found else ""})
        for other, found in per_impl.items():
            rows.append({"tool": tool, "implementation": other, "errors": len(found), "first": found[0]})
        if count < 0:
            rows.append({"tool": tool, "implementation": "(run)", "errors": -1,
                         "first": f"no sanitizer summary; exit {res.returncode}: {text[-500:]}"})
        worst = max(worst, count if count >= 0 else 1)
        if args.log_dir:
            Path(args.log_dir).mkdir(parents=True, exist_ok=True)
            (Path(args.log_dir) / f"sanitize_{tool}.log").write_text(text)
    print(f"{'tool':<10} {'implementation':<52} {'errors':>6}  first")
    for r in rows:
        print(f"{r['tool']:<10} {r['implementation'][:52]:<52} {r['errors']:>6}  {r['first'][:90]}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 1 if worst else 0


# ---------------------------------------------------------------------------------------------------
# profile


def cmd_profile(args) -> int:
    ncu = _tool("ncu")
    from .cli import _spec, narrow

    exp = narrow(_spec(args.spec), args.shapes, False, args.only)
    out_rows = []
    for entry in exp.problems:
        for contract in exp.contracts:
            for impl in exp.implementations:
                if not impl.supports(entry.problem, contract):
                    continue
                rec = {"problem": entry.problem.label, "contract": contract.name, "implementation": impl.name}
                if not args.stalls_only:
                    rec.update(_timing_profile(ncu, args, impl.name, entry.problem.label, contract.name))
                if args.stalls or args.stalls_only:
                    rec["stalls"] = _stall_profile(ncu, args, impl.name, entry.problem.label, contract.name)
                out_rows.append(rec)
    if not args.stalls_only:
        print(f"{'problem':<16} {'implementation':<44} {'events ms':>10} {'ncu ms':>10} {'do_bench':>10} {'ev/ncu':>7} {'db/ev':>7}")
        for r in out_rows:
            ev = f"{r['event_median_ms']:.5f}" if r.get("event_median_ms") else "-"
            nc = f"{r['ncu_median_ms']:.5f}" if r.get("ncu_median_ms") else "-"
            db = f"{r['do_bench_median_ms']:.5f}" if r.get("do_bench_median_ms") else "-"
            ratio = f"{r['event_over_ncu']:.4f}" if r.get("event_over_ncu") else (r.get("error") or "")[:40]
            dbr = f"{r['do_bench_median_ms'] / r['event_median_ms']:.4f}" if r.get("do_bench_median_ms") and r.get("event_median_ms") else "-"
            print(f"{r['problem']:<16} {r['implementation'][:44]:<44} {ev:>10} {nc:>10} {db:>10} {ratio:>7} {dbr:>7}")
    if args.stalls or args.stalls_only:
        print_stalls(out_rows)
    if args.json:
        Path(args.json).write_text(json.dumps(out_rows, indent=1))
    timed = args.stalls_only or all(r.get("ncu_median_ms") for r in out_rows)
    profiled = not (args.stalls or args.stalls_only) or all("error" not in k for r in out_rows for k in r["stalls"])
    return 0 if timed and profiled else 1


def _run_ncu(ncu: str, ncu_args: list[str], args, impl_name: str, problem: str, contract: str,
             launches: int, *drive_flags: str):
    """The driver (_drive) for one row under ncu with `ncu_args`; returns (process, ncu's CSV log)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ncu.csv"
        cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--csv", "--log-file", str(log),
               *ncu_args, sys.executable, "-m", "gemmcompare.integrity_cli", "_drive", args.spec, impl_name,
               problem, contract, str(launches), *drive_flags]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        return res, (log.read_text() if log.exists() else "")


def _timing_profile(ncu: str, args, impl_name: str, problem: str, contract: str) -> dict:
    """`launches` launches of the row under ncu's gpu__time_duration, next to the driver's event and
    do_bench medians."""
    res, text = _run_ncu(ncu, ["--cache-control", "none", "--metrics", "gpu__time_duration.sum"], args,
                         impl_name, problem, contract, args.launches)
    drive = _last_json(res.stdout)
    ncu_ms = ncu_launch_times(text, args.launches)
    rec = {"ncu_median_ms": statistics.median(ncu_ms) if ncu_ms else None, "ncu_ms": ncu_ms,
           "event_median_ms": (drive or {}).get("event_median_ms"),
           "do_bench_median_ms": (drive or {}).get("do_bench_median_ms"),
           "error": None if ncu_ms else (res.stderr[-400:] or text[-400:])}
    if rec["ncu_median_ms"] and rec["event_median_ms"]:
        rec["event_over_ncu"] = rec["event_median_ms"] / rec["ncu_median_ms"]
    return rec


STALL_SECTIONS = ("SpeedOfLight", "ComputeWorkloadAnalysis", "WarpStateStats", "Occupancy", "LaunchStats")
_STALL_METRIC = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
# Raw metric -> the name this report gives it.
STALL_FIELDS = {
    "launch__registers_per_thread": "registers",
    "launch__grid_size": "grid",
    "launch__block_size": "block",
    "launch__shared_mem_per_block_dynamic": "dynamic_smem_bytes",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pipe_pct",
    "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active": "tensor_inst_pct",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue_active_pct",
    "sm__inst_issued.avg.pct_of_peak_sustained_active": "issue_active_pct",  # "Issue Slots Busy" (same idea)
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_throughput_pct",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "memory_throughput_pct",
    "smsp__average_warp_latency_per_inst_issued.ratio": "cycles_per_issue",
    "gpc__cycles_elapsed.avg.per_second": "sm_clock_hz",
}


def _stall_profile(ncu: str, args, impl_name: str, problem: str, contract: str) -> list[dict]:
    """One launch of the row under ncu's stall sections; a record per kernel (see parse_stall_csv)."""
    sections = [arg for section in STALL_SECTIONS for arg in ("--section", section)]
    res, text = _run_ncu(ncu, ["--page", "raw", *sections], args, impl_name, problem, contract, 1, "--no-timing")
    kernels = parse_stall_csv(text)
    if not kernels:
        return [{"error": (res.stderr[-400:] or text[-400:]) or "ncu reported no kernel"}]
    return kernels


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def parse_stall_csv(csv_text: str) -> list[dict]:
    """ncu `--page raw --csv`: a header row of metric names, a row of units, then a row per kernel.
    Each kernel becomes {kernel, the STALL_FIELDS it has, stalls: {reason: warps per issue}} with the
    stall reasons sorted largest first."""
    lines = [ln for ln in csv_text.splitlines() if ln.startswith('"')]
    if len(lines) < 2:
        return []
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    out = []
    for row in rows:
        if not (row.get("ID") or "").strip().isdigit():
            continue  # the units row
        rec: dict = {"kernel": row.get("Kernel Name", "")}
        for metric, field in STALL_FIELDS.items():  # the first metric found names a field
            if field not in rec and metric in row and _number(row[metric]) is not None:
                rec[field] = _number(row[metric])
        stalls = {}
        for metric, value in row.items():
            m = _STALL_METRIC.match(metric or "")
            v = _number(value)
            if m and v is not None and not m.group(1).endswith("_not_issued"):
                stalls[m.group(1)] = v
        rec["stalls"] = dict(sorted(stalls.items(), key=lambda kv: -kv[1]))
        out.append(rec)
    return out


def print_stalls(rows: list[dict]) -> None:
    print()
    print("stalls: warps stalled per issued instruction, largest first (ncu WarpStateStats)")
    for r in rows:
        for k in r.get("stalls") or []:
            if "error" in k:
                print(f"{r['problem']:<16} {r['implementation'][:44]:<44} ncu: {k['error'][:80]}")
                continue
            top = ", ".join(f"{name} {v:.2f}" for name, v in list(k["stalls"].items())[:5])

            def show(field, fmt):  # a metric this ncu version did not report shows as '-'
                return format(k[field], fmt) if field in k else "-"

            print(f"{r['problem']:<16} {r['implementation'][:44]:<44} regs {show('registers', '.0f')} "
                  f"occ {show('achieved_occupancy_pct', '.1f')}% tensor {show('tensor_pipe_pct', '.1f')}% "
                  f"issue {show('issue_active_pct', '.1f')}% | {top}")
            print(f"{'':<16} kernel: {k['kernel'][:140]}")


def ncu_launch_times(csv_text: str, launches: int) -> list[float]:
    """Per-launch device time (ms) from ncu's CSV: kernels grouped into `launches` equal groups, summed."""
    lines = [ln for ln in csv_text.splitlines() if ln.startswith('"')]
    if not lines:
        return []
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    durations = []
    for row in reader:
        if row.get("Metric Name") == "gpu__time_duration.sum":
            value = float(row["Metric Value"].replace(",", ""))
            unit = row.get("Metric Unit", "nsecond")
            scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3}.get(unit, 1e-6)
            durations.append(value * scale)
    if not durations or len(durations) % launches:
        return durations  # cannot group: report per kernel
    per = len(durations) // launches
    return [sum(durations[i * per:(i + 1) * per]) for i in range(launches)]


def _last_json(text: str):
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def _drive(spec: str, impl_name: str, problem: str, contract_name: str, launches: int, timing: bool = True) -> int:
    """Runs under ncu: prepare one implementation as a run does, time it with events (outside the
    profiled ranges; not with timing=False), then launch it `launches` times inside profiler ranges,
    flushing L2 between."""
    import torch

    from .build.extension import BuildFailure
    from .cli import _spec, narrow
    from .contracts import correctness as corr
    from .contracts.timing import Launcher, Timer
    from .device import probe_device
    from .contracts.timing import wait_stream
    from .executor import draw_inputs
    from .runner import RunOptions, build_for

    exp = narrow(_spec(spec), problem, False, "^" + re.escape(impl_name) + "$")
    device = probe_device()
    built = build_for(exp, device, RunOptions(progress=False)).by_impl.get(impl_name)
    if isinstance(built, BuildFailure):
        print(json.dumps({"error": built.message}))
        return 1
    impl, entry = exp.implementations[0], exp.problems[0]
    contract = next(c for c in exp.contracts if c.name == contract_name)
    p = entry.problem
    ops = draw_inputs("uniform", p, contract, corr.fresh_seed())["operands"]
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        prepared = impl.prepare(p, contract, ops, built)
        samples, do_bench_ms = [], None
        if timing:
            timer = Timer(exp.timing, device.l2_bytes)
            samples = timer.measure([Launcher(impl.name, prepared.launch)])[impl.name].samples_ms
            try:  # the same launches through triton's do_bench (it clears L2 before every sample, as `flush` does)
                import triton.testing

                do_bench_ms = triton.testing.do_bench(prepared.launch, warmup=25, rep=200, return_mode="median")
            except Exception:  # noqa: BLE001 - triton absent: no third opinion
                do_bench_ms = None
        else:
            prepared.launch()  # one warm-up launch (module load, first-touch) outside the profiled range
            wait_stream(60, impl.name)
        flush = torch.empty(max(2 * device.l2_bytes, 64 << 20) // 4, dtype=torch.int32, device="cuda")
        for _ in range(launches):
            flush.fill_(0)
            wait_stream(60, "flush")
            torch.cuda.profiler.start()
            prepared.launch()
            wait_stream(60, impl.name)
            torch.cuda.profiler.stop()
    print(json.dumps({"event_median_ms": statistics.median(samples) if samples else None,
                      "event_cv": statistics.pstdev(samples) / statistics.mean(samples) if samples else None,
                      "do_bench_median_ms": do_bench_ms}))
    return 0


def add_integrity_commands(subparsers) -> None:
    def common(p):
        p.add_argument("spec")
        p.add_argument("--only", default=None, metavar="REGEX", help="only implementations whose name matches")
        p.add_argument("--timeout", type=float, default=1800, help="seconds per tool run")
        p.add_argument("--json", default=None, help="also write the table as JSON here")

    p = subparsers.add_parser("sanitize", help="the spec's implementations under compute-sanitizer, per implementation")
    common(p)
    p.add_argument("--shapes", default="31x29x37,611x613x617", help="small shapes to check (MxNxK,...)")
    p.add_argument("--tools", default=",".join(TOOLS), help="comma-separated: memcheck,racecheck,synccheck")
    p.add_argument("--log-dir", default=None, help="keep each tool's full output here")
    p.add_argument("--store", default="gemmcompare.db")
    p.add_argument("--runs-dir", default="runs")
    p.add_argument("--cache-dir", default=None)
    p.add_argument("--arch", default=None)
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_sanitize)

    p = subparsers.add_parser("profile", help="ncu's gpu__time_duration next to the harness's event timing")
    common(p)
    p.add_argument("--shapes", default=None, help="replace the spec's problems: MxNxK[,MxNxK...]")
    p.add_argument("--launches", type=int, default=5, help="profiled launches per row")
    p.add_argument("--stalls", action="store_true",
                   help="also profile one launch per row with ncu's stall sections: kernel name, registers, "
                        "occupancy, tensor-pipe use, warp stall reasons")
    p.add_argument("--stalls-only", action="store_true", help="only the stall profile (no timing comparison)")
    p.set_defaults(func=cmd_profile)


if __name__ == "__main__":
    if len(sys.argv) >= 7 and sys.argv[1] == "_drive":
        sys.exit(_drive(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]),
                        timing="--no-timing" not in sys.argv[7:]))
    print("usage: python -m gemmcompare.integrity_cli _drive SPEC IMPL MxNxK CONTRACT LAUNCHES", file=sys.stderr)
    sys.exit(2)
