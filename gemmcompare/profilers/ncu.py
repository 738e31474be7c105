"""Nsight Compute (ncu) over one row: the implementation prepared exactly as a run prepares it (driver.py),
launched N times inside profiler ranges under `ncu --clock-control none --cache-control none
--profile-from-start off`, L2 as the spec's policy says (driver.py: flushed before each profiled launch
under `flush`, `evict` (a read, not a write) and `rotate`, warmed by an unprofiled launch under `warm`): ncu
and the harness time the same cache state, and the record says which (`l2`). Two profiles:

- timing: `--metrics gpu__time_duration.sum`, the kernels of one launch summed, beside the harness's event
  and CUPTI timing and triton's do_bench of the same row, measured in a process of its own (not under ncu);
- stalls: one launch, `--page raw` of the SpeedOfLight, ComputeWorkloadAnalysis, WarpStateStats, Occupancy
  and LaunchStats sections: the kernel's name (how a library's kernel choice is seen), registers, achieved
  occupancy, tensor-pipe and issue utilization, and warp stall reasons, largest first. The sections replay
  the kernel, so their times are not timings.

The clocks are never locked (`--clock-control none`): gemmcompare does not change clocks.
"""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

def _run_ncu(ncu: str, ncu_args: list[str], spec: str, impl_name: str, problem: str, contract: str,
             launches: int, timeout: float, *drive_flags: str):
    """The driver for one row under ncu with `ncu_args`; returns (process, ncu's CSV log)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ncu.csv"
        cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--csv", "--log-file", str(log),
               *ncu_args, sys.executable, "-m", "gemmcompare.profilers.driver", spec, impl_name,
               problem, contract, str(launches), *drive_flags]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return res, (log.read_text() if log.exists() else "")


def _l2_flag(l2_override: str | None) -> list[str]:
    """The driver's flag for `profile --l2`: its processes read the spec again and narrow it as the command did."""
    return [f"--l2={l2_override}"] if l2_override else []


def timing_profile(ncu: str, spec: str, impl_name: str, problem: str, contract: str, launches: int,
                   timeout: float, l2: str = "flush", l2_override: str | None = None) -> dict:
    """`launches` launches of the row under ncu's gpu__time_duration, next to the event, CUPTI and do_bench
    medians of the same row timed in a process of its own (never under ncu: ncu intercepts every launch).
    `l2`: how ncu's launches meet L2 (driver.ncu_l2); `l2_override`: --l2, the policy the driver times under."""
    timed = subprocess.run([sys.executable, "-m", "gemmcompare.profilers.driver", spec, impl_name, problem,
                            contract, "0", "--timing-only", *_l2_flag(l2_override)],
                           capture_output=True, text=True, timeout=timeout)
    drive = _last_json(timed.stdout) or {}
    res, text = _run_ncu(ncu, ["--cache-control", "none", "--metrics", "gpu__time_duration.sum"], spec,
                         impl_name, problem, contract, launches, timeout, "--no-timing", *_l2_flag(l2_override))
    ncu_ms = ncu_launch_times(text, launches)
    rec = {"ncu_median_ms": statistics.median(ncu_ms) if ncu_ms else None, "ncu_ms": ncu_ms, "l2": l2,
           **{k: drive.get(k) for k in ("event_median_ms", "event_cv", "cupti_median_ms", "launch_window_ms",
                                        "cupti_reported_median_ms", "do_bench_median_ms", "do_bench_runs_ms",
                                        "do_bench_how", "timing_sm_clock_mhz", "do_bench_sm_clock_mhz",
                                        "max_sm_clock_mhz")},
           "error": None if ncu_ms else (res.stderr[-400:] or text[-400:])}
    if not drive or drive.get("error"):
        rec["timing_error"] = drive.get("error") or (timed.stderr[-400:] or "the timing process printed nothing")
    for key in ("event", "cupti", "cupti_reported", "do_bench"):
        if rec["ncu_median_ms"] and rec.get(f"{key}_median_ms"):
            rec[f"{key}_over_ncu"] = rec[f"{key}_median_ms"] / rec["ncu_median_ms"]
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


def stall_profile(ncu: str, spec: str, impl_name: str, problem: str, contract: str, timeout: float,
                  l2: str = "flush", l2_override: str | None = None) -> list[dict]:
    """One launch of the row under ncu's stall sections; a record per kernel (see parse_stall_csv). The
    sections replay the kernel: ncu flushes the caches before each replay unless told not to, which under a
    warm policy it is (the replays then find L2 as the unprofiled launch before them left it)."""
    sections = [arg for section in STALL_SECTIONS for arg in ("--section", section)]
    cache = ["--cache-control", "none"] if l2 == "warm" else []
    res, text = _run_ncu(ncu, ["--page", "raw", *cache, *sections], spec, impl_name, problem, contract, 1, timeout,
                         "--no-timing", *_l2_flag(l2_override))
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


def ncu_durations(csv_text: str) -> list[float]:
    """gpu__time_duration (ms) of every kernel in ncu's CSV, in the order they ran."""
    lines = [ln for ln in csv_text.splitlines() if ln.startswith('"')]
    durations = []
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        if row.get("Metric Name") == "gpu__time_duration.sum":
            value = float(row["Metric Value"].replace(",", ""))
            scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3}.get(row.get("Metric Unit"), 1e-6)
            durations.append(value * scale)
    return durations


def ncu_launch_times(csv_text: str, launches: int) -> list[float]:
    """Per-launch device time (ms) from ncu's CSV: kernels grouped into `launches` equal groups, summed."""
    durations = ncu_durations(csv_text)
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


