"""Timing methods on the CPU: reading each sample's GPU span out of profiler events, the choice between CUPTI
and events, and the timer annotating exactly its sampled launches (CUDA and the profiler faked)."""

import types
from dataclasses import dataclass

import pytest

from gemmcompare.contracts.timing import Launcher, Timer, TimingSettings
from gemmcompare.contracts.timing_methods import (AUTO_CUPTI_BELOW_MS, KernelClock, choose, event_ms, sample_details,
                                                  sample_spans, sample_tag, shortest_float32)
from gemmcompare.telemetry import at_max_clock, summarize_samples


@dataclass
class TR:
    start: float
    end: float


@dataclass
class Ev:
    """What sample_spans reads of a torch.profiler FunctionEvent (times in us)."""

    name: str
    start: float
    end: float
    id: int = 0
    device_type: str = "DeviceType.CPU"
    is_user_annotation: bool = False

    @property
    def time_range(self):
        return TR(self.start, self.end)


def gpu(name, start, end, corr):
    return Ev(name, start, end, corr, "DeviceType.CUDA")


def test_spans_follow_correlation_from_launch_call_to_annotation():
    t0, t1 = sample_tag(0, 0), sample_tag(0, 1)
    events = [
        Ev("aten::fill_", 0, 5), Ev("cudaLaunchKernel", 1, 2, id=10),  # the L2 flush: outside every sample
        gpu("fill_kernel", 100, 180, 10),
        Ev(t0, 10, 30, id=1, is_user_annotation=True),
        Ev("cudaLaunchKernel", 12, 14, id=11), Ev("cudaLaunchKernel", 15, 17, id=12),  # a copy, then the GEMM
        gpu("copy_kernel", 200, 203.5, 11), gpu("nvjet_gemm", 204.0, 207.71, 12),
        Ev(t1, 40, 60, id=2, is_user_annotation=True),
        Ev("cudaGraphLaunch", 45, 47, id=13),
        gpu("nvjet_gemm", 300.0, 303.71, 13),
        Ev(t1, 300.0, 303.71, device_type="DeviceType.CUDA", is_user_annotation=True),  # the profiler's own
    ]
    spans = sample_spans(events)
    assert spans[t0] == pytest.approx((207.71 - 200) * 1e-3)  # first start to last end, gap included
    assert spans[t1] == pytest.approx(3.71e-3)
    assert len(spans) == 2  # the flush belongs to no sample
    assert sample_details(events)[t0] == (pytest.approx(7.71e-3), 2)


def test_an_activity_the_correlation_missed_still_counts_through_the_profilers_own_span():
    tag = sample_tag(0, 0)
    events = [Ev(tag, 10, 30, is_user_annotation=True), Ev("cudaMemcpy2DAsync", 12, 13, id=21),
              gpu("Memcpy DtoD", 200.0, 202.0, 21),
              gpu("nvjet_gemm", 202.5, 206.0, 22),  # launched through a call the profiler did not record
              Ev(tag, 200.0, 206.0, device_type="DeviceType.CUDA", is_user_annotation=True)]
    assert sample_spans(events)[tag] == pytest.approx(6e-3)


def test_spans_fall_back_to_the_profilers_own_gpu_annotations():
    tag = sample_tag(3, 7)
    events = [Ev(tag, 10, 20, is_user_annotation=True),
              Ev(tag, 500.0, 504.0, device_type="DeviceType.CUDA", is_user_annotation=True)]
    assert sample_spans(events) == {tag: pytest.approx(4e-3)}


def test_auto_takes_cupti_for_short_launches_and_events_for_long_ones():
    short_ev, short_cu = [0.0055] * 20, [0.0037] * 20
    assert choose("auto", short_ev, short_cu).method == "cupti"
    assert choose("auto", short_ev, short_cu).samples_ms == short_cu
    long_ev, long_cu = [0.25] * 20, [0.249] * 20
    assert AUTO_CUPTI_BELOW_MS < 0.249
    assert choose("auto", long_ev, long_cu).method == "events"
    assert choose("cupti", long_ev, long_cu).method == "cupti"
    assert choose("events", short_ev, short_cu).method == "events"


def test_incomplete_cupti_records_leave_the_row_on_events_with_the_reason():
    picked = choose("cupti", [0.005] * 4, [0.004, None, 0.004, 0.004])
    assert picked.method == "events" and "3 of 4 samples" in picked.note
    picked = choose("auto", [0.005] * 4, None, "CUPTI unavailable: no libcupti")
    assert picked.method == "events" and "no libcupti" in picked.note


class _Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self):
        pass

    def query(self):
        return False

    def elapsed_time(self, other):
        return 0.0055


class FakeClock:
    """Stands in for KernelClock: records the annotations the timer opens and reports 3.7 us for each."""

    opened: list = []

    def __init__(self):
        self.error = None

    def start(self):
        return True

    def annotate(self, tag):
        import contextlib

        FakeClock.opened.append(tag)
        return contextlib.nullcontext()

    def stop(self):
        return {tag: 0.0037 for tag in FakeClock.opened}


def _timer(**settings) -> Timer:
    t = Timer.__new__(Timer)
    t.torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=_Event, _sleep=lambda c: None,
                                                              synchronize=lambda: None))
    t.s = TimingSettings(**settings)
    t.flush_buffer, t.cycles_per_ms, t.sleep_ms = None, 2e6, 1.0
    t._sync = lambda name: None
    t.clock_factory = FakeClock
    return t


def test_timer_annotates_every_sampled_launch_and_reports_the_chosen_method():
    FakeClock.opened = []
    launched = []
    res = _timer(l2="warm", min_samples=20, max_samples=20, target_noise=0.0, warmup_count=3, warmup_ms=0)\
        .measure([Launcher("A", lambda: launched.append("A")), Launcher("B", lambda: launched.append("B"))])
    a, b = res["A"], res["B"]
    assert a.method == "cupti" and a.samples_ms == [0.0037] * 20 and a.event_samples_ms == [0.0055] * 20
    assert a.cupti_samples_ms == [0.0037] * 20
    # warm-up launches are outside every annotation: 40 sampled launches, 40 annotations, distinct per launcher
    assert len(launched) == 6 + 40 and len(FakeClock.opened) == 40 == len(set(FakeClock.opened))
    assert set(FakeClock.opened) == {sample_tag(i, s) for i in (0, 1) for s in range(20)}
    assert b.method == "cupti"


def test_events_setting_starts_no_clock():
    t = _timer(l2="warm", min_samples=10, max_samples=10, method="events")
    t.clock_factory = None  # what Timer.__init__ sets for method: events
    res = t.measure([Launcher("A", lambda: None)])
    assert res["A"].method == "events" and res["A"].cupti_samples_ms is None


def test_in_batch_telemetry_is_read_after_the_gate_and_before_the_wait():
    order = []
    t = _timer(l2="warm", min_samples=10, max_samples=10, method="events")
    t.clock_factory = None
    t._sync = lambda name: order.append("sync")
    t.in_batch = lambda name: order.append("telemetry")
    t._wait_gate = lambda gate, name: order.append("gate")
    t.measure([Launcher("A", lambda: None)])
    assert order[-3:] == ["gate", "telemetry", "sync"]


def test_time_at_the_maximum_clock():
    assert at_max_clock(1.6, 1485.0, 1980.0) == pytest.approx(1.2)
    assert at_max_clock(1.6, None, 1980.0) is None
    tsum = summarize_samples([{"sm_clock_mhz": 1980, "throttled": False}, {"sm_clock_mhz": 1470, "throttled": True},
                              {"sm_clock_mhz": 1500, "throttled": True}])
    assert tsum["sm_clock_mhz_median"] == 1500 and tsum["throttled_fraction"] == pytest.approx(2 / 3)


def test_spec_timing_method():
    from gemmcompare.errors import SpecError
    from gemmcompare.spec import parse_spec

    base = "name: s\nproblems: [{m: 8, n: 8, k: 8}]\ncontracts: [f16_f32acc_tn]\nimplementations: [library.cublas]\n"
    assert parse_spec(base).timing.method == "auto"
    assert parse_spec(base + "timing: {method: cupti}").timing.method == "cupti"
    with pytest.raises(SpecError) as info:
        parse_spec(base + "timing: {method: cuptii}")
    assert "method must be one of ['auto', 'events', 'cupti']" in str(info.value)


def test_profiles_do_bench_times_graph_replays_not_the_python_launch(monkeypatch):
    """`profile`'s do_bench column: do_bench gets a graph replay (one driver call), never the binding's launch
    itself (a Python call whose host time filled the old column), and says which it timed."""
    triton_testing = pytest.importorskip("triton.testing")
    from gemmcompare.profilers.driver import graph_do_bench

    seen = []
    monkeypatch.setattr(triton_testing, "do_bench", lambda fn, **kw: seen.append(fn) or [0.0074, 0.0075, 0.0076])

    class Graph:
        def replay(self):
            pass

    graph = Graph()
    timer = types.SimpleNamespace(_capture=lambda ln: [graph])
    launch = lambda: None  # noqa: E731
    ms, how, runs = graph_do_bench(timer, "cublas", launch)
    assert ms == 0.0075 and seen[-1] == graph.replay and "CUDA-graph" in how and len(runs) == 3

    def cannot_capture(ln):
        raise RuntimeError("operation not permitted when stream is capturing")

    ms, how, _ = graph_do_bench(types.SimpleNamespace(_capture=cannot_capture), "x", launch)
    assert seen[-1] is launch and "graph capture failed" in how


def test_a_cupti_figure_is_the_span_plus_the_devices_launch_window():
    """ncu's gpu__time_duration counts the front end's work for a launch that a CUPTI record does not: a row
    timed by CUPTI reports the span plus the window measured for its GPU; events are never shifted."""
    from gemmcompare.contracts.launch_window import MEASURED_US, launch_window

    spans = [0.0029] * 10
    h200 = launch_window("NVIDIA H200")
    assert h200.ms == pytest.approx(MEASURED_US["NVIDIA H200"][0] * 1e-3) and "measured on NVIDIA H200" in h200.note()
    picked = choose("auto", [0.0062] * 10, spans, window_ms=h200.ms)
    assert picked.method == "cupti" and picked.samples_ms == pytest.approx([0.0029 + h200.ms] * 10)
    assert choose("events", [0.0062] * 10, spans, window_ms=h200.ms).samples_ms == [0.0062] * 10
    unknown = launch_window("NVIDIA L4")
    assert unknown.ms == 0.0 and "no launch window measured for NVIDIA L4" in unknown.note()
    assert launch_window("NVIDIA H200", 0).ms == 0.0  # the spec's setting wins, 0 included
    assert launch_window("NVIDIA L4", 1.5).ms == pytest.approx(0.0015)


def test_samples_keep_every_digit_their_clock_measured_and_no_binary_noise():
    """Stored samples are the data of every receipt: an event's float32 milliseconds are kept as the shortest
    decimal that reads back as the same float32 (not its 17-digit widening to a double), and CUPTI's spans and
    figures to the picosecond (its clock counts whole nanoseconds), so rows shrink without losing a measured
    digit."""
    import numpy as np

    widened = float(np.float32(0.018912))  # what cudaEventElapsedTime's float becomes in Python
    assert repr(widened) == "0.018912000581622124"
    short = shortest_float32(widened)
    assert repr(short) == "0.018912" and np.float32(short) == np.float32(widened)  # the same float32, every digit
    for x in (1.3085119724273682, 2.5e-06, 1234.5677490234375, 3000.0):  # float32 values of any magnitude
        assert np.float32(shortest_float32(x)) == np.float32(x) and len(repr(shortest_float32(x))) <= len(repr(x))

    class Event:
        def __init__(self, t):
            self.t = t

        def elapsed_time(self, end):
            return float(np.float32(end.t - self.t))

    assert repr(event_ms(Event(1.0), Event(1.018912))) == "0.018912"
    # CUPTI: nanosecond timestamps in microsecond floats; their difference carries noise that rounding removes
    t = sample_tag(0, 0)
    events = [Ev(t, 0, 50, id=1, is_user_annotation=True), Ev("cudaLaunchKernel", 1, 2, id=7),
              gpu("nvjet_gemm", 1733942154.311, 1733942170.439, 7)]
    span = sample_spans(events)[t]
    assert repr(span) == "0.016128"
    picked = choose("cupti", [0.0189] * 3, [span] * 3, window_ms=0.8e-3)
    assert picked.samples_ms == [0.016928] * 3 and repr(picked.samples_ms[0]) == "0.016928"


def test_spec_launch_window_is_checked_and_unset_keeps_the_spec_hash():
    from gemmcompare.errors import SpecError
    from gemmcompare.spec import parse_spec

    def spec(timing):
        return parse_spec("name: w\nproblems: [{m: 64, n: 64, k: 64}]\ncontracts: [f16_f32acc_tn]\n"
                          f"implementations: [library.cublas]\ntiming: {timing}\n")

    assert spec("{launch_window_us: 0.5}").timing.launch_window_us == 0.5
    assert "launch_window_us" not in spec("{method: auto}").timing.as_dict()
    for bad in ("-1", "fast", ".nan"):
        with pytest.raises(SpecError) as info:
            spec(f"{{launch_window_us: {bad}}}")
        assert "timing.launch_window_us" in str(info.value)


def test_auto_picks_one_method_for_a_problems_rows():
    """A 0.15 ms baseline and a 0.3 ms candidate timed together are both reported by CUPTI: their ratio never
    sets an event pair's fixed cost against a CUPTI span. All rows over 0.2 ms: all events."""
    from gemmcompare.contracts.timing import Measurement
    from gemmcompare.contracts.timing_methods import auto_setting

    def timed(name_ms):
        timer = Timer.__new__(Timer)
        timer.s, timer.launch_window_ms = TimingSettings(method="auto"), 0.0
        launchers = [types.SimpleNamespace(name=name) for name in name_ms]
        results, spans = {}, {}
        for i, (name, ms) in enumerate(name_ms.items()):
            m = results[name] = Measurement()
            m.samples_ms, m.sample_ids = [ms + 0.003] * 5, list(range(5))
            spans.update({sample_tag(i, sid): ms for sid in range(5)})
        timer._assign(launchers, results, spans, None)
        return {name: m.method for name, m in results.items()}

    assert timed({"cublas": 0.15, "mma_sync": 0.3}) == {"cublas": "cupti", "mma_sync": "cupti"}
    assert timed({"cublas": 0.25, "mma_sync": 0.3}) == {"cublas": "events", "mma_sync": "events"}
    assert auto_setting([[0.1, None], None, [0.5]]) == "cupti" and auto_setting([None]) == "events"


def test_the_profilers_cycle_warning_is_kept_out_of_the_runs_output(monkeypatch, recwarn):
    """torch 2.11 (the H200's) warns on every process's first profiler cycle that a cycle drops the last
    one's events; a KernelClock is one cycle read once, so the line was noise in every CUPTI run. Other
    warnings still come through."""
    import warnings

    from gemmcompare.contracts import timing_methods

    class WarningProfile:
        def __init__(self, **_):
            pass

        def __enter__(self):
            warnings.warn("Warning: Profiler clears events at the end of each cycle.Only events from the current "
                          "cycle will be reported.", UserWarning)
            warnings.warn("something else", UserWarning)
            return self

    # the clock's profiler, whichever torch API it comes from (torch.profiler once another test imported inductor)
    monkeypatch.setattr(timing_methods, "_cupti_profiler", WarningProfile)
    assert KernelClock().start()
    assert [str(w.message) for w in recwarn] == ["something else"]


def test_the_clock_starts_without_importing_torchs_compiler():
    """torch.profiler's start imports torch._inductor (3.7 s of a first start on the H200); the clock starts
    through autograd's profile instead, and only uses torch.profiler once inductor is imported anyway."""
    import subprocess
    import sys

    code = ("import sys, warnings; warnings.simplefilter('ignore')\n"
            "from gemmcompare.contracts import timing_methods as tm\n"
            "p = tm._cupti_profiler(); print(type(p).__name__, 'torch._inductor' in sys.modules)\n"
            "import torch._inductor\n"
            "print(type(tm._cupti_profiler()).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["profile", "False", "_TorchProfilerEvents"]
