"""Validates gemmcompare's timing contract on a CUDA device (run on the device; writes JSON + CSV).

1. A kernel of known duration: torch.cuda._sleep(cycles) spins for `cycles` SM clock ticks. Timed with
   gemmcompare's Timer (warm L2, no flush) at several cycle counts, the times must fall on a line whose
   slope is 1 / (SM clock), with the clock read from NVML during the run.
2. The same GEMMs timed by gemmcompare's Timer and by triton.testing.do_bench (median, its own 256 MB
   L2 clear before each sample, like our `flush` policy): cuBLAS through torch.mm, FP16 in, FP16 out.

Usage: python experiments/studies/timing/timing_validation.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from gemmcompare.contracts.timing import Launcher, Timer, TimingSettings, summarize
from gemmcompare.telemetry import Telemetry


def sleep_kernel(out: Path, tel: Telemetry) -> list[dict]:
    timer = Timer(TimingSettings(l2="warm", min_samples=30, max_samples=60, target_noise=0.002, batch=10), 0)
    rows = []
    for cycles in (20_000, 200_000, 2_000_000, 20_000_000):
        ln = Launcher(f"sleep{cycles}", lambda c=cycles: torch.cuda._sleep(c))
        before = tel.sample()
        m = timer.measure([ln])[ln.name]
        after = tel.sample()
        s = summarize(m.samples_ms)
        clocks = [x.get("sm_clock_mhz") for x in (before, after) if x.get("sm_clock_mhz")]
        mhz = sum(clocks) / len(clocks) if clocks else None
        expected = cycles / (mhz * 1e3) if mhz else None  # ms
        rows.append({"cycles": cycles, "median_ms": s.median, "cv": s.cv, "n": s.n, "sm_clock_mhz": mhz,
                     "expected_ms": expected, "ratio": s.median / expected if expected else None,
                     "starved_batches": m.starved_batches})
    # least-squares line t = a + cycles / f over the points: f is the clock the timer implies
    xs = [r["cycles"] for r in rows]
    ys = [r["median_ms"] for r in rows]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    intercept = my - slope * mx
    for r in rows:
        r["fit_implied_clock_mhz"] = 1.0 / slope / 1e3
        r["fit_intercept_ms"] = intercept
    return rows


def gemm_vs_do_bench(tel: Telemetry) -> list[dict]:
    import triton.testing

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    timer = Timer(TimingSettings(l2="flush", min_samples=20, max_samples=200, target_noise=0.005, batch=10), l2)
    rows = []
    for size in (1024, 4096, 8192):
        a = torch.rand(size, size, device="cuda", dtype=torch.float16) * 2 - 1
        b = torch.rand(size, size, device="cuda", dtype=torch.float16) * 2 - 1
        c = torch.empty(size, size, device="cuda", dtype=torch.float16)
        fn = lambda: torch.mm(a, b, out=c)  # noqa: E731
        for rep in range(3):  # repeat: run-to-run spread of each method
            m = timer.measure([Launcher("mm", fn)])["mm"]
            ours = summarize(m.samples_ms)
            theirs = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
            rows.append({"size": size, "rep": rep, "gemmcompare_median_ms": ours.median, "gemmcompare_cv": ours.cv,
                         "gemmcompare_n": ours.n, "do_bench_median_ms": theirs,
                         "ratio_do_bench_over_ours": theirs / ours.median, "telemetry": tel.sample()})
    return rows


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "timing_validation")
    out.mkdir(parents=True, exist_ok=True)
    tel = Telemetry(0)
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "sleep_kernel": sleep_kernel(out, tel), "gemm_vs_do_bench": gemm_vs_do_bench(tel)}
    (out / "timing_validation.json").write_text(json.dumps(result, indent=1, default=str))
    print(f"{'cycles':>10} {'median ms':>11} {'expected ms':>12} {'ratio':>7} {'clock MHz':>10} {'fit MHz':>8}")
    for r in result["sleep_kernel"]:
        print(f"{r['cycles']:>10} {r['median_ms']:>11.5f} {r['expected_ms'] or 0:>12.5f} {r['ratio'] or 0:>7.4f} "
              f"{r['sm_clock_mhz'] or 0:>10.0f} {r['fit_implied_clock_mhz']:>8.0f}")
    print(f"{'size':>6} {'ours ms':>10} {'do_bench ms':>12} {'ratio':>7}")
    for r in result["gemm_vs_do_bench"]:
        print(f"{r['size']:>6} {r['gemmcompare_median_ms']:>10.5f} {r['do_bench_median_ms']:>12.5f} {r['ratio_do_bench_over_ours']:>7.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
