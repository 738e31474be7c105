"""Where CUPTI's first start (torch.profiler with CUDA activities) spends its seconds, on a GPU machine.

    python3 experiments/studies/first-contact/cupti_start_diag.py            # prints one JSON line per order, then a table

Each order runs in a fresh process (a first start happens once per process):
  after_cublas   CUDA context, cuBLAS and FP64 GEMMs (their modules loaded), then the profiler: the old worker order
  before_cublas  CUDA context, the profiler, then the GEMMs, then the profiler again (what a timer's start costs)
  thread         CUDA context, the profiler on a thread while the main thread runs the GEMMs: does the
                 main thread keep going (the GIL released), and how long does the thread take
For each: the import of torch.profiler, profile.__enter__ (torch's own prepare and enable counts where it keeps
them), __exit__, and reading the events, in seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

CHILD = r'''
import json, sys, threading, time
order = sys.argv[1]
out = {"order": order}
t0 = time.monotonic()
import torch
out["import_torch_s"] = time.monotonic() - t0
t = time.monotonic(); torch.empty(1, device="cuda"); torch.cuda.synchronize(); out["context_s"] = time.monotonic() - t

def gemms():
    t = time.monotonic()
    x = torch.ones(256, 256, device="cuda"); (x @ x).sum().item()
    r = torch.ones(256, 256, device="cuda", dtype=torch.float64); (r @ r).sum().item()
    h = torch.ones(256, 256, device="cuda", dtype=torch.float16); (h @ h).sum().item()
    return time.monotonic() - t

def profiled(prefix):
    t = time.monotonic()
    from torch.profiler import ProfilerActivity, profile
    out[prefix + "import_s"] = time.monotonic() - t
    t = time.monotonic()
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    prof.__enter__()
    out[prefix + "enter_s"] = time.monotonic() - t
    torch.ones(256, device="cuda").add_(1).sum().item()
    t = time.monotonic(); prof.__exit__(None, None, None); out[prefix + "exit_s"] = time.monotonic() - t
    t = time.monotonic(); n = len(prof.events()); out[prefix + "events_s"] = time.monotonic() - t
    stats = getattr(getattr(prof, "profiler", None), "_stats", None)
    for key in ("profiler_prepare_call_duration_us", "profiler_enable_call_duration_us",
                "profiler_disable_call_duration_us"):
        if isinstance(getattr(stats, key, None), (int, float)):
            out[prefix + key.split("_")[1] + "_s"] = getattr(stats, key) * 1e-6

if order == "after_cublas":
    out["gemms_s"] = gemms()
    t = time.monotonic(); profiled("first_"); out["first_total_s"] = time.monotonic() - t
elif order == "before_cublas":
    t = time.monotonic(); profiled("first_"); out["first_total_s"] = time.monotonic() - t
    out["gemms_s"] = gemms()
    t = time.monotonic(); profiled("second_"); out["second_total_s"] = time.monotonic() - t
else:
    done = []
    def warm():
        t = time.monotonic(); profiled("first_"); done.append(time.monotonic() - t)
    th = threading.Thread(target=warm); t = time.monotonic(); th.start()
    out["gemms_s"] = gemms()
    ticks = 0
    while th.is_alive():  # the main thread's progress while the profiler starts: Python work between waits
        x = sum(range(1000)); ticks += 1
    out["main_ticks_during_thread"] = ticks
    th.join(); out["first_total_s"] = done[0]; out["thread_wall_s"] = time.monotonic() - t
print("RESULT " + json.dumps(out))
'''


def main() -> int:
    rows = []
    for order in ("after_cublas", "before_cublas", "thread"):
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", CHILD, order], capture_output=True, text=True, timeout=120)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        row = json.loads(line[7:]) if line else {"order": order, "error": proc.stderr[-800:]}
        row["process_wall_s"] = time.monotonic() - t0
        print(json.dumps(row), flush=True)
        rows.append(row)
    keys = sorted({k for r in rows for k in r if k.endswith("_s") or k.startswith("main_")})
    print(f"{'step':<40}" + "".join(f"{r['order']:>15}" for r in rows))
    for k in keys:
        cells = "".join(f"{r[k]:>15.3f}" if isinstance(r.get(k), (int, float)) else f"{'':>15}" for r in rows)
        print(f"{k:<40}{cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
