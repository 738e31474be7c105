"""The process Nsight Compute profiles (ncu.py starts it): one row prepared exactly as a run prepares it,
timed with the harness's events and with triton's do_bench (over CUDA-graph replays of the launch, so that
it times the kernel and not the Python call) outside the profiled ranges (unless --no-timing), then launched N times inside profiler ranges with L2 flushed between them. It prints one
JSON line with the event and do_bench medians.

    python -m gemmcompare.profilers.driver SPEC IMPL MxNxK CONTRACT LAUNCHES [--no-timing]
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
import sys


def drive(spec: str, impl_name: str, problem: str, contract_name: str, launches: int, timing: bool = True) -> int:
    import torch

    from ..build.experiment import build_experiment
    from ..build.extension import BuildFailure
    from ..contracts import correctness as corr
    from ..contracts.timing import Launcher, Timer, new_flush_buffer, wait_stream
    from ..device import probe_device
    from ..plan import narrow
    from ..run.inputs import draw_inputs
    from ..spec import load_spec

    exp = narrow(load_spec(spec), problem, False, "^" + re.escape(impl_name) + "$")
    device = probe_device()
    built = build_experiment(exp, device, progress=False).by_impl.get(impl_name)
    if isinstance(built, BuildFailure):
        print(json.dumps({"error": built.message}))
        return 1
    impl, entry = exp.implementations[0], exp.problems[0]
    contract = next(c for c in exp.contracts if c.name == contract_name)
    p = entry.problem
    ops = draw_inputs("uniform", p, contract, corr.fresh_seed()).operands
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        prepared = impl.prepare(p, contract, ops, built)
        samples, do_bench_ms, do_bench_how = [], None, None
        if timing:
            # events only: under ncu, CUPTI is ncu's (a second subscriber would fail or perturb it)
            timer = Timer(dataclasses.replace(exp.timing, method="events"), device.l2_bytes)
            samples = timer.measure([Launcher(impl.name, prepared.launch)])[impl.name].samples_ms
            do_bench_ms, do_bench_how = graph_do_bench(timer, impl.name, prepared.launch)
        else:
            prepared.launch()  # one warm-up launch (module load, first-touch) outside the profiled range
            wait_stream(60, impl.name)
        flush = new_flush_buffer(device.l2_bytes)
        for _ in range(launches):
            flush.fill_(0)
            wait_stream(60, "flush")
            torch.cuda.profiler.start()
            prepared.launch()
            wait_stream(60, impl.name)
            torch.cuda.profiler.stop()
    print(json.dumps({"event_median_ms": statistics.median(samples) if samples else None,
                      "event_cv": statistics.pstdev(samples) / statistics.mean(samples) if samples else None,
                      "do_bench_median_ms": do_bench_ms, "do_bench_how": do_bench_how}))
    return 0


def graph_do_bench(timer, name: str, launch) -> tuple[float | None, str | None]:
    """triton's do_bench (median; it clears L2 before every sample, as `flush` does) over replays of a CUDA
    graph of one launch. do_bench puts an event pair around each call of its function: called on the
    launch itself, that pair holds the Python binding's host time (tens of us: the column read ~85 us at
    every size); a graph replay is one cheap driver call, which the L2 clear in front of it hides."""
    try:
        import triton.testing
    except Exception:  # noqa: BLE001 - triton absent: no third opinion
        return None, None
    from ..contracts.timing import Launcher

    try:
        graph = timer._capture(Launcher(name, launch))[0]
        fn, how = graph.replay, "do_bench over CUDA-graph replays of one launch"
    except Exception as exc:  # noqa: BLE001 - a launch that cannot be captured: time it directly, and say so
        fn, how = launch, f"do_bench over direct launches (graph capture failed: {str(exc)[:120]})"
    try:
        return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median"), how
    except Exception as exc:  # noqa: BLE001
        return None, f"do_bench failed: {str(exc)[:120]}"


if __name__ == "__main__":
    if len(sys.argv) >= 6:
        sys.exit(drive(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]),
                       timing="--no-timing" not in sys.argv[6:]))
    print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
    sys.exit(2)
