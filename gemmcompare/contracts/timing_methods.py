"""Timing methods beside CUDA events: each launch's GPU time from CUPTI activity records, and the choice of
which method makes a row's figure.

CUDA events time a launch from a timestamp written before it to one written after it, in the same stream:
their own cost (about 1-3 us on an H200, docs/timing.md) is inside every sample, which is noise for a 1 ms
kernel and half the figure of a 4 us one. CUPTI records each kernel's (and copy's) start and end on the GPU,
with nothing of the harness in between: the method for short kernels.

`KernelClock` collects them through torch.profiler (which ships CUPTI) while the timer enqueues its usual
batches: each sample's launch is enqueued inside a profiler annotation `gemmcompare#<launcher>#<sample>`;
every GPU activity whose launch call (matched by its CUPTI correlation id) lies inside that annotation
belongs to the sample, and the sample's time is the span from the first one's start to the last one's end
(one kernel: its duration; a launch that copies and then computes: the whole of it, gaps included).

`choose()` picks the row's figure: `events`, `cupti`, or `auto` (the default): CUPTI when the shortest
launch timed with it (one problem's rows, `auto_setting`) is shorter than AUTO_CUPTI_BELOW_MS, events
above it, and events whenever CUPTI gave no complete record. A
CUPTI figure is the span plus the device's launch window (launch_window.py): what ncu counts and CUPTI's
record does not.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

METHODS = ("auto", "events", "cupti")
PREFIX = "gemmcompare#"
# Below this median (ms), `auto` reports CUPTI's figure: the events' fixed excess (1-3 us) is over 1% of
# such a launch. Above it the two agree within that (docs/timing.md has the measured table).
AUTO_CUPTI_BELOW_MS = 0.2
# GPU activities that are a launch's work; anything else on the GPU timeline (annotations, syncs) is not.
_RUNTIME_PREFIXES = ("cuda", "cu")


# CUPTI's clock counts whole nanoseconds: a span in milliseconds rounded to 6 decimals keeps every digit it measured
# and drops the binary noise of differencing microsecond floats (0.016127999782562255). A figure (span + launch
# window, which a spec may set to a fraction of a nanosecond) is kept to the picosecond. A study's rows hold
# hundreds of samples each: the noise digits were a third of their compressed size.
SPAN_DECIMALS = 6
FIGURE_DECIMALS = 9


def event_ms(start, end) -> float:
    """A CUDA event pair's elapsed milliseconds: cudaEventElapsedTime's float32, as the shortest decimal that reads
    back as the same float32 (all its precision, without the 17 noise digits of a float32 widened to a double)."""
    return shortest_float32(start.elapsed_time(end))


def shortest_float32(x: float) -> float:
    import numpy as np

    return float(np.format_float_positional(np.float32(x), unique=True))


def sample_tag(launcher_index: int, sample_id: int) -> str:
    return f"{PREFIX}{launcher_index}#{sample_id}"


@dataclass(frozen=True)
class _Span:
    start: float  # us
    end: float


def _range(ev) -> tuple[float, float]:
    tr = ev.time_range
    return float(tr.start), float(tr.end)


def _is_device(ev) -> bool:
    return str(getattr(ev, "device_type", "")).upper().endswith("CUDA")


def sample_spans(events: Iterable[Any], prefix: str = PREFIX) -> dict[str, float]:
    """{annotation name: milliseconds from its first GPU activity's start to its last one's end}."""
    return {name: span for name, (span, _) in sample_details(events, prefix).items()}


def sample_details(events: Iterable[Any], prefix: str = PREFIX) -> dict[str, tuple[float, int]]:
    """{annotation name: (milliseconds from its first GPU activity's start to its last one's end, how many
    GPU activities it holds (0: the profiler's own annotation span was used))}.

    `events` are torch.profiler FunctionEvents (or anything with name, device_type, id, time_range and
    is_user_annotation). A GPU activity (device_type CUDA, not an annotation) shares its CUPTI correlation id
    (`id`) with the runtime call that launched it (a CPU event named cuda*/cu*); that call belongs to the
    annotation that contains it in time. (Time alone, not threads: the profiler numbers a runtime call's
    thread differently from an annotation's, and the harness enqueues from one thread, annotations never
    overlapping.) The GPU-side annotation spans the profiler itself draws (device events named like the
    annotation) are merged in: the union of both."""
    events = list(events)
    annotations: list[tuple[float, float, str]] = []
    runtime: dict[int, float] = {}
    device_ops: list[Any] = []
    gpu_annotations: dict[str, _Span] = {}
    for ev in events:
        name = str(getattr(ev, "name", ""))
        if _is_device(ev):
            if name.startswith(prefix):
                s, e = _range(ev)
                gpu_annotations[name] = _Span(s, e)
            elif not getattr(ev, "is_user_annotation", False):
                device_ops.append(ev)
            continue
        if name.startswith(prefix):
            s, e = _range(ev)
            annotations.append((s, e, name))
        elif name.startswith(_RUNTIME_PREFIXES):
            runtime[int(getattr(ev, "id", -1))] = _range(ev)[0]
    annotations.sort()
    found: dict[str, _Span] = {}
    counts: dict[str, int] = {}
    for ev in device_ops:
        t = runtime.get(int(getattr(ev, "id", -1)))
        if t is None:
            continue
        name = _containing(annotations, t)
        if name is None:
            continue
        s, e = _range(ev)
        old = found.get(name)
        found[name] = _Span(s, e) if old is None else _Span(min(old.start, s), max(old.end, e))
        counts[name] = counts.get(name, 0) + 1
    # The profiler's own GPU-side span of an annotation covers the activities it could tie to it; so does
    # ours. Both lie within the launch's true span: their union is the closest to it (one of them may miss
    # an activity whose launch call the profiler did not record, e.g. a driver-API launch).
    for name, span in gpu_annotations.items():
        old = found.get(name)
        found[name] = span if old is None else _Span(min(old.start, span.start), max(old.end, span.end))
    return {name: (round((span.end - span.start) * 1e-3, SPAN_DECIMALS), counts.get(name, 0))
            for name, span in found.items() if span.end >= span.start}


def _containing(spans: list[tuple[float, float, str]], t: float) -> str | None:
    """The annotation (start, end, name), sorted by start, whose interval holds t."""
    lo, hi = 0, len(spans)
    while lo < hi:  # last span starting at or before t
        mid = (lo + hi) // 2
        if spans[mid][0] <= t:
            lo = mid + 1
        else:
            hi = mid
    if lo and spans[lo - 1][0] <= t <= spans[lo - 1][1]:
        return spans[lo - 1][2]
    return None


# CUPTI's first start in a process costs seconds (torch.profiler's import, Kineto's and CUPTI's set-up).
# A measuring worker runs it on a thread while it starts up and draws its first inputs
# (warm_up_in_background); the first timing waits for it to end (finish_warm_up), so that two profilers
# never run at once.
_warm_up: dict = {"thread": None, "steps": {}, "reported": False}


def warm_up_in_background() -> None:
    """Start CUPTI's first start (one profiled kernel) on a daemon thread; once per process."""
    if _warm_up["thread"] is not None:
        return
    thread = threading.Thread(target=_warm_up_cupti, args=(_warm_up["steps"],), name="cupti-warm-up", daemon=True)
    _warm_up["thread"] = thread
    thread.start()


def finish_warm_up() -> None:
    """Wait for a background warm-up, if one was started (the first KernelClock.start() calls this)."""
    thread = _warm_up["thread"]
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def take_warm_up_steps() -> dict[str, float]:
    """The background warm-up's seconds by step (`cupti_warmup_s`: all of it), once it has ended; then {}."""
    thread = _warm_up["thread"]
    if thread is None or thread.is_alive() or _warm_up["reported"]:
        return {}
    _warm_up["reported"] = True
    return dict(_warm_up["steps"])


def _warm_up_cupti(steps: dict) -> None:
    """What a first KernelClock start and stop cost, by step: the import, the profiler's prepare and enable
    calls (torch's own counts, where it keeps them), one kernel, the stop and the reading of its records."""
    t0 = time.monotonic()
    try:
        import torch
        from torch.autograd.profiler import profile  # noqa: F401  (timed apart: the import is part of the cost)

        t1 = time.monotonic()
        steps["cupti_warmup_import_s"] = t1 - t0
        clock = KernelClock()
        if clock.start():
            t2 = time.monotonic()
            steps["cupti_warmup_start_s"] = t2 - t1
            prof = clock._prof
            stats = getattr(getattr(prof, "profiler", prof), "_stats", None)
            try:
                torch.ones(256, device="cuda").add_(1).sum().item()
            finally:
                t3 = time.monotonic()
                clock.stop_details()
                steps["cupti_warmup_stop_s"] = time.monotonic() - t3
            for key, name in (("profiler_prepare_call_duration_us", "cupti_warmup_prepare_s"),
                              ("profiler_enable_call_duration_us", "cupti_warmup_enable_s"),
                              ("profiler_disable_call_duration_us", "cupti_warmup_disable_s")):
                if isinstance(getattr(stats, key, None), (int, float)):
                    steps[name] = getattr(stats, key) * 1e-6
    except Exception:  # noqa: BLE001 - the timer's own start meets the same failure and reports it
        pass
    steps["cupti_warmup_s"] = time.monotonic() - t0


def _cupti_profiler():
    """The profiler a KernelClock starts: torch.autograd.profiler.profile through Kineto (CUPTI), which is what
    torch.profiler.profile wraps. torch.profiler's own start first asks whether torch has `_inductor`, and that
    question imports torch's whole compiler package: 3.7 s of a first start on the H200
    (experiments/studies/first-contact/h200/first-answer-643cc42/cupti_diag.log), pure Python that competes with
    the worker for the GIL. Once a Python row has imported inductor, that answer is free and it matters (under
    inductor's CUDA graphs torch.profiler keeps CUPTI from being torn down), so torch.profiler is used then."""
    if "torch._inductor" in sys.modules:
        from torch.profiler import ProfilerActivity, profile

        return _TorchProfilerEvents(profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                                            record_shapes=False, with_stack=False, profile_memory=False))
    from torch.autograd.profiler import profile

    return profile(use_device="cuda", use_kineto=True, use_cpu=True, record_shapes=False, with_stack=False,
                   profile_memory=False)


class _TorchProfilerEvents:
    """torch.profiler.profile with autograd's profile's `function_events` (what KernelClock reads)."""

    def __init__(self, prof):
        self.prof = prof

    def __enter__(self):
        self.prof.__enter__()
        return self

    def __exit__(self, *exc):
        return self.prof.__exit__(*exc)

    @property
    def function_events(self):
        return self.prof.events()

    @property
    def profiler(self):  # the wrapped autograd profile (the warm-up reads its _stats)
        return self.prof.profiler


# The first profiler start of a process sets up libkineto, which then writes a line that says nothing the user
# must act on straight to fd 2 when that start is on another thread than the one that imported torch (the main
# thread, here): a measuring worker's is, on its warm-up thread, and a Dask worker's, on a task thread.
# library_noise.py keeps that line out of the run's output and lets everything else through.
_first_start = {"done": False, "lock": threading.Lock()}


def _first_start_quiet():
    """library_noise.without_known_noise() around the process's first profiler start when it is not on the main
    thread; nothing around the others (`profile`'s timing process, an --in-process run: fd 2 left alone)."""
    with _first_start["lock"]:
        first, _first_start["done"] = not _first_start["done"], True
    if not first or threading.current_thread() is threading.main_thread():
        return contextlib.nullcontext()
    from ..library_noise import without_known_noise

    return without_known_noise()


class KernelClock:
    """CUPTI activity records of the launches enqueued between start() and stop(), through torch's profiler
    (_cupti_profiler)."""

    def __init__(self):
        self._prof = None
        self.error: str | None = None

    def start(self) -> bool:
        finish_warm_up()  # one profiler at a time
        try:
            with warnings.catch_warnings():
                # torch (2.11 on the H200) warns that a profiler cycle drops the previous cycle's events: each
                # clock here is one cycle, read once, so the warning only added a line to every run's output
                warnings.filterwarnings("ignore", message=".*Profiler clears events", category=UserWarning)
                self._prof = _cupti_profiler()
                with _first_start_quiet():
                    self._prof.__enter__()
            return True
        except Exception as exc:  # noqa: BLE001 - no CUPTI here: the timer keeps its events
            self.error, self._prof = f"CUPTI unavailable: {exc}", None
            return False

    def annotate(self, tag: str):
        if self._prof is None:
            return contextlib.nullcontext()
        from torch.autograd.profiler import record_function

        return record_function(tag)

    def stop(self) -> dict[str, float]:
        """{sample tag: ms}; empty (with `error` set) when the profiler recorded nothing usable."""
        return {tag: span for tag, (span, _) in self.stop_details().items()}

    def stop_details(self) -> dict[str, tuple[float, int]]:
        """{sample tag: (ms, GPU activities)}, as sample_details; empty (with `error` set) when nothing usable."""
        if self._prof is None:
            return {}
        prof, self._prof = self._prof, None
        try:
            prof.__exit__(None, None, None)
            details = sample_details(prof.function_events)
        except Exception as exc:  # noqa: BLE001
            self.error = f"CUPTI records could not be read: {exc}"
            return {}
        if not details:
            self.error = "CUPTI recorded no GPU activity inside the sample annotations"
        return details


def auto_setting(cupti_per_launcher: Sequence[Sequence[float | None] | None]) -> str:
    """`auto` for launchers timed together (one problem's rows): `cupti` when the shortest of them has a
    CUPTI median under AUTO_CUPTI_BELOW_MS, else `events`; one method for all, so that their ratios compare
    like with like (a row whose CUPTI records are incomplete still falls back to events, with its note)."""
    medians = [statistics.median([x for x in c if x is not None]) for c in cupti_per_launcher
               if c and any(x is not None for x in c)]
    return "cupti" if medians and min(medians) < AUTO_CUPTI_BELOW_MS else "events"


@dataclass(frozen=True)
class Choice:
    method: str  # "events" or "cupti": what made the row's figure
    samples_ms: list[float]
    note: str = ""


def choose(setting: str, event_ms: Sequence[float], cupti_ms: Sequence[float | None] | None,
           cupti_error: str | None = None, window_ms: float = 0.0) -> Choice:
    """The samples a row reports. `cupti_ms[i]` is CUPTI's span for the launch of `event_ms[i]` (None where
    no record was matched); a CUPTI figure is that span plus `window_ms`, the device's launch window
    (launch_window.py). CUPTI is used only when every sample has its record."""
    complete = bool(cupti_ms) and len(cupti_ms) == len(event_ms) and all(x is not None and x > 0 for x in cupti_ms)
    if setting == "auto" and complete:  # one launcher alone: the rule auto_setting applies to a problem's rows
        setting = auto_setting([cupti_ms])
    if setting == "events":
        return Choice("events", list(event_ms))
    if not complete:
        missing = "no CUPTI records" if not cupti_ms else \
            f"CUPTI records for {sum(x is not None for x in cupti_ms)} of {len(event_ms)} samples"
        why = cupti_error or missing
        return Choice("events", list(event_ms), f"timed with events: {why}")
    return Choice("cupti", [round(float(x) + window_ms, FIGURE_DECIMALS) for x in cupti_ms])
