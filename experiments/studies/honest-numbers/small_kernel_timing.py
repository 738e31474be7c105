"""Small kernels timed right (issue 14): every timing method against Nsight Compute and against a kernel of
known duration, on a CUDA device. Three steps, each its own process (experiments/studies/honest-numbers/honest_numbers_on_device.sh):

    python3 experiments/studies/honest-numbers/small_kernel_timing.py measure OUT   # methods in-process -> OUT/methods.json
    ncu --clock-control none --cache-control none --profile-from-start off --metrics gpu__time_duration.sum \
        --csv --log-file OUT/ncu.csv python3 experiments/studies/honest-numbers/small_kernel_timing.py ncu OUT   # -> OUT/ncu_cases.json
    python3 experiments/studies/honest-numbers/small_kernel_timing.py report OUT    # -> OUT/small_kernel_timing.{json,md}, table

Cases: library.cublas (cublasGemmEx, f16 in, f32 out, f32 accumulate, tn) at 256^3, 1024^3, 2048^3, 4096^3,
prepared exactly as a run prepares it, with L2 flushed before each sample and warm; and the %globaltimer spin
kernel (extensions/timing/spin.cu) for 20 us, 100 us and 1 ms. Methods: CUDA events around each launch
(the harness's Timer, queue kept full), CUPTI kernel records of the same launches, both again over CUDA-graph
replays of one launch (`graph: true`), triton's do_bench over a graph replay (what `profile` reports now) and
over the launch itself (what it reported before). Nsight Compute's gpu__time_duration is the reference.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout's gemmcompare, also when not installed

SIZES = (256, 1024, 2048, 4096)
SPINS_NS = (20_000, 100_000, 1_000_000)
NCU_REPS = 20
CONTRACT = "f16_f32acc_tn"


def _cases():
    out = []
    for size in SIZES:
        for l2 in ("flush", "warm"):
            out.append({"case": f"cublas {size}^3 {l2}", "kind": "cublas", "size": size, "l2": l2})
    for ns in SPINS_NS:
        out.append({"case": f"spin {ns // 1000} us", "kind": "spin", "ns": ns, "l2": "warm"})
    return out


def _launchers():
    """case name -> launch callable (prepared as a run prepares them), and the spin kernel."""
    import torch

    from gemmcompare.build.extension import BuildFailure, build_extensions, plan_extensions
    from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
    from gemmcompare.device import probe_device
    from gemmcompare.implementations.base import Operands
    from gemmcompare.implementations.library import CublasGemmEx
    from gemmcompare.problems import GemmProblem
    from gemmcompare.profilers.spin import SpinKernel, spin_request

    device = probe_device()
    impl = CublasGemmEx()
    reqs = [impl.build_request(impl.target_arch(device.cc_int)), spin_request(device.arch)]
    plans = plan_extensions(reqs)
    built = build_extensions(plans, progress=False)
    for plan in plans:
        if isinstance(built[plan.module_name], BuildFailure):
            raise SystemExit(f"build failed: {built[plan.module_name].message}")
    cublas_ext, spin_ext = (built[p.module_name] for p in plans)
    spin = SpinKernel(spin_ext)
    contract = BUILTIN_CONTRACTS[CONTRACT]
    launch, keep = {}, []
    g = torch.Generator(device="cuda").manual_seed(14)
    for case in _cases():
        if case["kind"] == "cublas":
            s = case["size"]
            p = GemmProblem(s, s, s)
            ops = Operands((torch.rand(s, s, device="cuda", generator=g) * 2 - 1).half(),
                           (torch.rand(s, s, device="cuda", generator=g) * 2 - 1).half())
            prepared = impl.prepare(p, contract, ops, cublas_ext)
            keep.append(prepared)
            launch[case["case"]] = prepared.launch
        else:
            launch[case["case"]] = spin.launcher(case["ns"])
    return device, launch, spin, keep


def measure(out: Path) -> int:
    import torch

    from gemmcompare.contracts.timing import Launcher, Timer, TimingSettings
    from gemmcompare.contracts.timing_methods import KernelClock, sample_tag
    from gemmcompare.profilers.driver import graph_do_bench
    from gemmcompare.telemetry import Telemetry

    from gemmcompare.contracts.timing import new_flush_buffer

    tel = Telemetry(0)
    device, launch, spin, _keep = _launchers()
    flush = new_flush_buffer(device.l2_bytes)
    stream = torch.cuda.Stream()
    rows = []
    with torch.cuda.stream(stream):
        for case in _cases():
            name, fn = case["case"], launch[case["case"]]
            rec = dict(case)
            for graph in (False, True):
                settings = TimingSettings(l2=case["l2"], method="auto", min_samples=50, max_samples=200,
                                          max_ms=2000.0, target_noise=0.005, graph=graph)
                t0 = time.time()
                m = Timer(settings, device.l2_bytes).measure([Launcher(name, fn)])[name]
                key = "graph_" if graph else ""
                rec[f"{key}events_ms"] = statistics.median(m.event_samples_ms) if m.event_samples_ms else None
                cupti = [x for x in (m.cupti_samples_ms or []) if x is not None]
                rec[f"{key}cupti_ms"] = statistics.median(cupti) if cupti else None
                rec[f"{key}cupti_complete"] = bool(m.cupti_samples_ms) and len(cupti) == len(m.event_samples_ms)
                rec[f"{key}n"] = len(m.event_samples_ms)
                rec[f"{key}auto_method"] = m.method
                rec[f"{key}note"] = m.method_note or m.stop_reason
                rec[f"{key}seconds"] = time.time() - t0
                if case["kind"] == "spin":
                    rec[f"{key}spun_ns"], rec["timer_step_ns"] = spin.last()
            rec["timing_sm_clock_mhz"] = tel.sample().get("sm_clock_mhz")
            if case["kind"] == "cublas":
                rec["isolated_cupti_ms"] = isolated_cupti(fn, case["l2"], flush)
            if case["l2"] == "flush":  # do_bench always clears L2 before each sample
                timer = Timer(TimingSettings(l2="warm", method="events"), device.l2_bytes)
                rec["do_bench_graph_ms"], rec["do_bench_graph_how"], rec["do_bench_graph_runs_ms"] = \
                    graph_do_bench(timer, name, fn)
                rec["do_bench_graph_sm_clock_mhz"] = tel.sample().get("sm_clock_mhz")
                try:
                    import triton.testing

                    graph = timer._capture(Launcher(name, fn))[0]
                    rec["do_bench_graph_rep200_ms"] = triton.testing.do_bench(graph.replay, warmup=25, rep=200,
                                                                              return_mode="median")
                    rec["do_bench_graph_rep200_sm_clock_mhz"] = tel.sample().get("sm_clock_mhz")
                    rec["do_bench_direct_ms"] = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
                except Exception as exc:  # noqa: BLE001
                    rec["do_bench_error"] = str(exc)[:200]
            # kernels per launch (for grouping ncu's per-kernel records), from one short profiled stretch
            clock = KernelClock()
            if clock.start():
                for i in range(3):
                    with clock.annotate(sample_tag(0, i)):
                        fn()
                torch.cuda.synchronize()
                details = clock.stop_details()
                rec["kernels_per_launch"] = max((n for _, n in details.values()), default=None)
            rec["telemetry"] = tel.sample()
            rows.append(rec)
            print(json.dumps({k: v for k, v in rec.items() if k != "telemetry"}), flush=True)
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "contract": CONTRACT,
              "max_sm_clock_mhz": tel.max_sm_clock_mhz(), "cases": rows}
    (out / "methods.json").write_text(json.dumps(result, indent=1, default=str))
    return 0


def isolated_cupti(fn, l2: str, flush, reps: int = NCU_REPS) -> float | None:
    """CUPTI's median over launches made the way the ncu step makes them: the GPU idle before each (L2
    flushed, or warmed by an unrecorded launch, then a synchronize), one launch at a time. Tells the
    isolation's share of the ncu gap from the rest (the two clocks' own windows)."""
    import torch

    from gemmcompare.contracts.timing_methods import KernelClock, sample_tag

    clock = KernelClock()
    if not clock.start():
        return None
    for i in range(reps):
        if l2 == "flush":
            flush.fill_(0)
        else:
            fn()
        torch.cuda.synchronize()
        with clock.annotate(sample_tag(0, i)):
            fn()
        torch.cuda.synchronize()
    spans = [ms for ms, _ in clock.stop_details().values()]
    return statistics.median(spans) if spans else None


def ncu_launches(out: Path) -> int:
    """Under ncu: each case NCU_REPS times inside its own profiler range, L2 flushed (or warmed by an
    unprofiled launch) outside the ranges. The order is recorded for `report`."""
    import torch

    from gemmcompare.contracts.timing import new_flush_buffer

    device, launch, _spin, _keep = _launchers()
    flush = new_flush_buffer(device.l2_bytes)
    order = []
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for case in _cases():
            fn = launch[case["case"]]
            fn()  # module load and first touch, outside every range
            torch.cuda.synchronize()
            for _ in range(NCU_REPS):
                if case["l2"] == "flush":
                    flush.fill_(0)
                else:
                    fn()  # the operands warm in L2
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
                fn()
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
            order.append({"case": case["case"], "launches": NCU_REPS})
    (out / "ncu_cases.json").write_text(json.dumps(order, indent=1))
    return 0


def _fit(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares (intercept ms, slope) of measured ms against nominal ms."""
    if len(points) < 2:
        return None
    xs, ys = zip(*points)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - slope * mx, slope


METHODS = ("events_ms", "cupti_ms", "isolated_cupti_ms", "graph_events_ms", "graph_cupti_ms", "do_bench_graph_ms",
           "do_bench_graph_rep200_ms", "do_bench_direct_ms")


def report(out: Path) -> int:
    from gemmcompare.profilers.ncu import ncu_durations

    methods = json.loads((out / "methods.json").read_text())
    rows = methods["cases"]
    ncu_note = ""
    if (out / "ncu.csv").exists() and (out / "ncu_cases.json").exists():
        durations = ncu_durations((out / "ncu.csv").read_text())
        order = json.loads((out / "ncu_cases.json").read_text())
        per = {r["case"]: r.get("kernels_per_launch") or 1 for r in rows}
        expected = sum(o["launches"] * per[o["case"]] for o in order)
        if len(durations) != expected and len(durations) == sum(o["launches"] for o in order):
            # CUPTI counted a second activity inside some launches' windows that ncu (which profiles kernels
            # only) does not see: ncu's own count is one kernel per launch, so group by that
            per = {case: 1 for case in per}
            expected = len(durations)
        if len(durations) != expected:
            ncu_note = f"ncu reported {len(durations)} kernels, {expected} expected: not grouped"
        else:
            i = 0
            for o in order:
                k = per[o["case"]]
                launches = [sum(durations[i + j * k:i + (j + 1) * k]) for j in range(o["launches"])]
                i += o["launches"] * k
                rec = next(r for r in rows if r["case"] == o["case"])
                rec["ncu_ms"] = statistics.median(launches)
                rec["ncu_all_ms"] = launches
    else:
        ncu_note = "no ncu records (ncu.csv or ncu_cases.json missing)"
    for r in rows:
        for key in METHODS:
            if r.get(key) and r.get("ncu_ms"):
                r[key.replace("_ms", "_over_ncu")] = r[key] / r["ncu_ms"]
    fits = {}
    spins = [r for r in rows if r["kind"] == "spin"]
    for key in ("events_ms", "cupti_ms", "graph_events_ms", "graph_cupti_ms", "ncu_ms"):
        f = _fit([(r["ns"] * 1e-6, r[key]) for r in spins if r.get(key)])
        if f:
            intercept, slope = f
            fits[key] = {"intercept_ms": intercept, "slope": slope,
                         "worst_residual_rel": max(abs(r[key] - intercept - r["ns"] * 1e-6) / (r["ns"] * 1e-6)
                                                   for r in spins if r.get(key))}
    # the launch window runs add to a CUPTI span (gemmcompare/contracts/launch_window.py), and the one this
    # run's spin fits imply (ncu's intercept - CUPTI's)
    from gemmcompare.contracts.launch_window import launch_window

    window = launch_window(methods.get("device", ""))
    fitted = (fits["ncu_ms"]["intercept_ms"] - fits["cupti_ms"]["intercept_ms"]
              if "ncu_ms" in fits and "cupti_ms" in fits else None)
    for r in rows:
        if r.get("cupti_ms") and r.get("ncu_ms"):
            r["cupti_window_over_ncu"] = (r["cupti_ms"] + window.ms) / r["ncu_ms"]
    result = {**methods, "ncu_note": ncu_note, "spin_fits": fits, "launch_window_ms": window.ms,
              "launch_window_source": window.source, "launch_window_fitted_here_ms": fitted}
    (out / "small_kernel_timing.json").write_text(json.dumps(result, indent=1, default=str))

    lines = ["| case | events | CUPTI | CUPTI isolated | graph+events | graph+CUPTI | do_bench (graph, 20 ms) | "
             "do_bench (graph, 200 ms) | do_bench (direct) | ncu | events/ncu | CUPTI/ncu | isolated CUPTI/ncu | "
             "(CUPTI + window)/ncu | do_bench/events | auto picks |", "|---|" + "---:|" * 15]
    ms = lambda v: f"{v * 1e3:.2f} us" if isinstance(v, (int, float)) else "-"  # noqa: E731
    ratio = lambda v: f"{v:.3f}" if isinstance(v, (int, float)) else "-"  # noqa: E731
    for r in rows:
        db = r["do_bench_graph_ms"] / r["events_ms"] if r.get("do_bench_graph_ms") and r.get("events_ms") else None
        lines.append(f"| {r['case']} | {ms(r.get('events_ms'))} | {ms(r.get('cupti_ms'))} | "
                     f"{ms(r.get('isolated_cupti_ms'))} | {ms(r.get('graph_events_ms'))} | {ms(r.get('graph_cupti_ms'))} | "
                     f"{ms(r.get('do_bench_graph_ms'))} | {ms(r.get('do_bench_graph_rep200_ms'))} | "
                     f"{ms(r.get('do_bench_direct_ms'))} | {ms(r.get('ncu_ms'))} | "
                     f"{ratio(r.get('events_over_ncu'))} | {ratio(r.get('cupti_over_ncu'))} | "
                     f"{ratio(r.get('isolated_cupti_over_ncu'))} | {ratio(r.get('cupti_window_over_ncu'))} | "
                     f"{ratio(db)} | {r.get('auto_method', '-')} |")
    lines += ["", "spin kernel: measured = intercept + slope x nominal (least squares over 20 us, 100 us, 1 ms)", "",
              "| method | intercept | slope | worst |measured - intercept - nominal| / nominal |", "|---|---:|---:|---:|"]
    for key, f in fits.items():
        lines.append(f"| {key[:-3]} | {f['intercept_ms'] * 1e3:.2f} us | {f['slope']:.4f} | "
                     f"{100 * f['worst_residual_rel']:.2f}% |")
    if spins:
        lines.append(f"\n%globaltimer step seen by the spin kernel: {spins[0].get('timer_step_ns')} ns")
    lines.append(f"\nlaunch window added to CUPTI spans: {window.ms * 1e3:.2f} us ({window.source})"
                 + (f"; this run's spin fits imply {fitted * 1e3:.2f} us" if fitted is not None else ""))
    if ncu_note:
        lines.append(f"\nnote: {ncu_note}")
    text = "\n".join(lines) + "\n"
    (out / "small_kernel_timing.md").write_text(text)
    print(text)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("measure", "ncu", "report"):
        print("usage: python3 experiments/studies/honest-numbers/small_kernel_timing.py measure|ncu|report OUT_DIR (see the docstring)",
              file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    return {"measure": measure, "ncu": ncu_launches, "report": report}[argv[0]](out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
