"""Where a run's wall time goes: each phase's seconds, kept in the run's receipt (`phases_s`) and printed in
one line at the end of `gemmcompare run`.

The parent's phases follow one another (start, spec, plan, GPU probe, build, run set-up, waiting for the
workers, measuring, report), so with the total they show the critical path. The measuring worker starts
at the run's first moment and warms up beside the parent (worker.py), so its start-up steps are given
apart (`worker_*`); only what the parent still waited for it is on the path (`worker_wait_s`). Inside
measuring, the groups' phases (GROUPS) are summed over the groups (and GPUs).
"""

from __future__ import annotations

import contextlib
import os
import time

# key -> label, in the order of the printed line; keys absent from a run are left out
PARENT = (("start_s", "start"), ("spec_s", "spec"), ("plan_s", "plan"), ("gpu_probe_s", "GPU probe"),
          ("build_s", "build"), ("run_setup_s", "run set-up"), ("worker_wait_s", "worker wait"),
          ("measure_s", "measure"), ("report_s", "report"))
WORKER = (("worker_start_s", "start"), ("worker_spawn_s", "spawn"), ("worker_import_s", "imports"), ("worker_cuda_context_s", "CUDA context"),
          ("worker_cublas_s", "cuBLAS"), ("worker_first_kernels_s", "first kernels"),
          ("worker_session_s", "builds+GPU receipt"), ("worker_executor_s", "executor"), ("cupti_warmup_s", "CUPTI's first start (on a thread)"))
# A group's phases (the executor's, and the parent's store_s): drawing inputs and computing both FP64 references,
# checking each implementation, timing them (preparing and sampling), and of the timing apart its warm-up,
# CUPTI's start and read-out, the wait for CUPTI's first start (worker.py) and the NVML telemetry read in each
# batch; the energy batches after timing (timing: {energy: ...}); re-checking the timed output and a fresh launch
# after timing; a tuned row's race (runner/picking.py).
# Each excludes the phases inside it, so they add up to the groups' time.
GROUPS = (("inputs_refs_s", "inputs+refs"), ("check_s", "check"), ("timing_s", "timing"), ("warmup_s", "warm-up"),
          ("cupti_s", "CUPTI"), ("cupti_wait_s", "CUPTI wait"), ("telemetry_s", "telemetry"), ("energy_s", "energy"),
          ("recheck_s", "re-check"),
          ("tuning_s", "tuning"), ("store_s", "store"))


def process_age_s() -> float | None:
    """Seconds since this process started (its interpreter's start and imports included); None where
    /proc cannot say."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


class Phases(dict):
    """Seconds by phase name; `timed(name)` adds a block's wall time."""

    @contextlib.contextmanager
    def timed(self, name: str):
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - t0)

    def add(self, name: str, seconds: float | None) -> None:
        if seconds is not None:
            self[name] = self.get(name, 0.0) + seconds


def _part(phases: dict, keys) -> str:
    return ", ".join(f"{label} {phases[key]:.1f} s" for key, label in keys if phases.get(key) is not None)


def phase_line(phases: dict) -> str:
    """'phases: start 0.4 s, ..., report 1.1 s; total 9.8 s | worker (beside the parent): ... | in measure: ...'"""
    line = "phases: " + _part(phases, PARENT)
    if phases.get("total_s") is not None:
        line += f"; total {phases['total_s']:.1f} s"
    worker, groups = _part(phases, WORKER), _part(phases, GROUPS)
    if worker:
        line += f" | worker (beside the parent): {worker}"
    if groups:
        line += f" | in measure: {groups}"
    return line
