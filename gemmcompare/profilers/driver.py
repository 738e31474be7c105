"""The processes `profile` starts (ncu.py): one row prepared exactly as a run prepares it, then either

- timed (`--timing-only`, a plain process, never under ncu): the harness's events and CUPTI records of the
  same launches, and triton's do_bench over CUDA-graph replays of the launch (so that it times the kernel
  and not the Python call), with the SM clock NVML saw around each; or
- launched N times inside profiler ranges, L2 as the spec's policy leaves it (`--no-timing`: what ncu
  profiles): `flush` and `rotate` flush L2 outside the range before each profiled launch (a rotated launch,
  too, finds none of its inputs in L2); `warm` runs an unprofiled launch of the row before each profiled one
  instead, so the profiled launch finds what the last one left, as the harness's warm samples do.

Timing and profiling are separate processes because under ncu every launch is intercepted (tens of
microseconds each), which a timing in the same process would carry. It prints one JSON line.

`--l2=POLICY` (`profile --l2`): the spec narrowed to that L2 policy, as the command narrowed it.

    python -m gemmcompare.profilers.driver SPEC IMPL MxNxK CONTRACT LAUNCHES [--no-timing|--timing-only] [--l2=POLICY]
"""

from __future__ import annotations

import json
import re
import statistics
import sys

# do_bench's measuring time (ms). Its samples run back to back (an L2 clear, the launch), with no pause: over
# its default 100 ms a 4096^3 GEMM pushed the H200 off its boost clock and read 11% above the harness's
# interleaved batches; a shorter stretch stays at the clock the harness measures at (experiments/studies).
DO_BENCH_REP_MS = 20
DO_BENCH_WARMUP_MS = 5
DO_BENCH_REPEATS = 3


def _prepare(spec: str, impl_name: str, problem: str, contract_name: str, l2: str | None = None):
    """(experiment, device, implementation, problem, contract, operands, build) of the row, or the build
    failure's message."""
    from ..build.experiment import build_experiment
    from ..build.extension import BuildFailure
    from ..contracts import correctness as corr
    from ..device import probe_device
    from ..plan import narrow
    from ..runner.inputs import draw_inputs
    from ..spec import load_spec

    exp = narrow(load_spec(spec), problem, False, "^" + re.escape(impl_name) + "$", l2=l2)
    device = probe_device()
    built = build_experiment(exp, device, progress=False).by_impl.get(impl_name)
    if isinstance(built, BuildFailure):
        return built.message
    impl, entry = exp.implementations[0], exp.problems[0]
    contract = next(c for c in exp.contracts if c.name == contract_name)
    ops = draw_inputs("uniform", entry.problem, contract, corr.fresh_seed()).operands
    return exp, device, impl, entry.problem, contract, ops, built


def ncu_l2(policy: str) -> str:
    """How the profiled launches meet L2 under the spec's policy: 'flush' or 'warm' (see the docstring); `evict`
    and `rotate` profile as 'flush' (evict's pass over the buffer reads it instead of writing it)."""
    return "warm" if policy == "warm" else "flush"


L2_HOW = {"flush": "L2 flushed before each profiled launch",
          "warm": "L2 warm: an unprofiled launch before each profiled one, no flush"}


def drive(spec: str, impl_name: str, problem: str, contract_name: str, launches: int, timing: bool = True,
          profile: bool = True, l2: str | None = None) -> int:
    import torch

    from ..contracts.timing import clear_l2, new_flush_buffer, wait_stream

    ready = _prepare(spec, impl_name, problem, contract_name, l2)
    if isinstance(ready, str):
        print(json.dumps({"error": ready}))
        return 1
    exp, device, impl, p, contract, ops, built = ready
    stream = torch.cuda.Stream()
    record: dict = {}
    with torch.cuda.stream(stream):
        prepared = impl.prepare(p, contract, ops, built)
        if timing:
            record = time_launch(exp, device, impl.name, prepared.launch)
        if profile:
            prepared.launch()  # one warm-up launch (module load, first-touch) outside the profiled range
            wait_stream(60, impl.name)
            l2 = ncu_l2(exp.timing.l2)
            buffer = new_flush_buffer(device.l2_bytes) if l2 == "flush" else None
            profiled_launches(prepared.launch, launches, l2, flush=lambda: clear_l2(buffer, exp.timing.l2),
                              start=torch.cuda.profiler.start, stop=torch.cuda.profiler.stop,
                              wait=lambda what: wait_stream(60, what))
    print(json.dumps(record))
    return 0


def profiled_launches(launch, launches: int, l2: str, flush, start, stop, wait) -> None:
    """`launches` launches, each alone inside a profiler range, L2 prepared before each outside the range:
    flushed ('flush'), or warmed by an unprofiled launch ('warm': as the harness's back-to-back samples)."""
    for _ in range(launches):
        if l2 == "warm":
            launch()
            wait("warm-up launch")
        else:
            flush()
            wait("flush")
        start()
        launch()
        wait("profiled launch")
        stop()


def time_launch(exp, device, name: str, launch) -> dict:
    """The harness's event and CUPTI medians of `launch` (the spec's timing settings, L2 as the spec says),
    then do_bench's, each with the SM clock NVML read right after it."""
    import dataclasses

    from ..contracts.launch_window import launch_window
    from ..contracts.timing import Launcher, Timer
    from ..telemetry import Telemetry

    tel = Telemetry(0)
    window = launch_window(device.name, exp.timing.launch_window_us)
    timer = Timer(dataclasses.replace(exp.timing, method="cupti"), device.l2_bytes, launch_window_ms=window.ms)
    m = timer.measure([Launcher(name, launch)])[name]
    events = m.event_samples_ms or m.samples_ms
    cupti = [x for x in (m.cupti_samples_ms or []) if x is not None]
    span = statistics.median(cupti) if cupti else None
    record = {"event_median_ms": statistics.median(events) if events else None,
              "event_cv": statistics.pstdev(events) / statistics.mean(events) if events else None,
              "cupti_median_ms": span,  # the raw span
              "launch_window_ms": window.ms,
              "cupti_reported_median_ms": span + window.ms if cupti else None,  # what a run reports
              "timing_sm_clock_mhz": tel.sample().get("sm_clock_mhz")}
    record["do_bench_median_ms"], record["do_bench_how"], record["do_bench_runs_ms"] = graph_do_bench(timer, name, launch)
    record["do_bench_sm_clock_mhz"] = tel.sample().get("sm_clock_mhz")
    record["max_sm_clock_mhz"] = tel.max_sm_clock_mhz()
    return record


def graph_do_bench(timer, name: str, launch, repeats: int = DO_BENCH_REPEATS) -> tuple[float | None, str | None, list]:
    """triton's do_bench (it clears L2 before every sample, as `flush` does) over replays of a CUDA graph of
    one launch: the median of `repeats` stretches' medians, each stretch's (p10, median, p90) beside it.
    do_bench puts an event pair around each call of its function: called on the launch itself, that pair
    holds the Python binding's host time (tens of us: the column read ~85 us at every size); a graph replay
    is one cheap driver call, which the L2 clear in front of it hides."""
    try:
        import triton.testing
    except Exception:  # noqa: BLE001 - triton absent: no third opinion
        return None, None, []
    from ..contracts.timing import Launcher

    try:
        graph = timer._capture(Launcher(name, launch))[0]
        fn, how = graph.replay, "do_bench over CUDA-graph replays of one launch"
    except Exception as exc:  # noqa: BLE001 - a launch that cannot be captured: time it directly, and say so
        fn, how = launch, f"do_bench over direct launches (graph capture failed: {str(exc)[:120]})"
    runs = []
    try:
        for _ in range(repeats):
            times = sorted(triton.testing.do_bench(fn, warmup=DO_BENCH_WARMUP_MS, rep=DO_BENCH_REP_MS,
                                                   return_mode="all"))
            runs.append([times[len(times) // 10], statistics.median(times), times[(9 * len(times)) // 10]])
    except Exception as exc:  # noqa: BLE001
        return None, f"do_bench failed: {str(exc)[:120]}", runs
    return (statistics.median(r[1] for r in runs),
            f"{how}, median of {repeats} stretches of {DO_BENCH_REP_MS} ms", runs)


def main(argv: list[str]) -> int:
    if len(argv) >= 5:
        flags = argv[5:]
        l2 = next((f.partition("=")[2] for f in flags if f.startswith("--l2=")), None)
        return drive(argv[0], argv[1], argv[2], argv[3], int(argv[4]), timing="--no-timing" not in flags,
                     profile="--timing-only" not in flags, l2=l2)
    print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
