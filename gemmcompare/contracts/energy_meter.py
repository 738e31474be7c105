"""Energy batches on the GPU: after a problem's rows are timed, each gets `energy_batches` batches of its launch
repeated back to back, interleaved round-robin as the time's batches are, each read by NVML (energy.py holds the
arithmetic, docs/timing.md the rule).

The energy batching rule. A batch must span at least two updates of the energy counter, with the host's poll gaps
at most 1% of the time between them. A warm-up round comes first and is not counted (WARMUP_ROUNDS): in it the
GPU's power and clocks settle from the timing phase's short bursts into the steady state (at the power cap, for
large GEMMs), and each row's batch length settles. Its first size is `energy_min_batch_ms` at the row's measured
median launch time; a warm-up batch in which the counter did not update twice is run again twice as long (up to
MAX_BATCH_MS), and one whose updates fell too close for the poll gaps is run again at its size, twice as long
only after a second miss (the gaps vary from batch to batch). Then every row of the problem runs its counted
batches at one length, the longest any of its rows settled at (SAME_LENGTH), and a counted batch that misses
the limit is run again at that length, never longer. The time samples' protocol is untouched: these launches run
after sampling, outside CUPTI, and make no time sample.

No L2 action runs between the launches of an energy batch: a flush's energy would be the flush's, not the
kernel's. An energy figure is therefore the warm-L2 steady state whatever the time's L2 policy (rotate's input
copies are cycled, which costs nothing). Under beta != 0 each launch's output reset runs before it, inside.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .energy import (EnergyBatch, MAX_WINDOW_ERROR, Polled, Window, counter_window, launches_for,
                     poll_batch, samples_window)
from .timing import MAX_SLEEP_MS, Launcher, Measurement, wait_stream
from .timing_methods import event_ms

MAX_BATCH_MS = 4000.0  # an energy batch is not doubled past this: the row's figure is marked not measurable
MAX_LAUNCHES = 2_000_000
ATTEMPTS = 6  # runs of one batch (starved, or too short and doubled) before it is given up
QUEUE_DEPTH = 1024  # launches CUDA queues before the host's launch call blocks: the gate need cover no more
GUESS_ENQUEUE_MS = 0.05  # per launch, when the timer recorded no enqueue time to size the gate from
L2_NOTE = "launches back to back, no L2 action between them (warm-L2 steady state)"
STARVED_REASON = "the host enqueues the launch slower than the GPU runs it, so the GPU idled between launches"
# The poll thread and the enqueue loop share the GIL. A launch call that waits for a queue slot holds it, and at
# Python's default 5 ms switch interval the poll thread got in only every ~10 ms (H100, 2026-12-06: window errors
# of 0.4-0.6% over 2.2 s windows), so a batch had to run ~2 s to keep the window error under 1%. Asking for the
# GIL back every 0.2 ms brings the gap near the read's own ~3.5 ms. The window-error rule still decides whether a
# batch counts, so a slower poll only makes batches longer, never a figure worse.
POLL_SWITCH_INTERVAL_S = 0.0002
# H200, experiments/studies/energy/h200 at f0b7480 (9 counted batches, no warm-up): a row's first batch ran at
# 340-625 W while the later ones ran at 630-675 W, and read 1-4% more energy per GEMM (cuBLAS 8192^3 BF16:
# 1189 mJ against a median of 1164). Batches doubled in rounds 2-6 at window errors of 0.8-1.0%, so one row's
# batches mixed 0.5, 1.2 and 2.3 s. Two of the twelve rows read UNKNOWN between two runs of one commit.
# A warm-up miss on the poll gaps alone is tried again at its size before it doubles: at ~1.2 s the H200's
# batches read window errors of 0.2-0.9% (f0b7480; at ~0.56 s, 0.7-1.0%), so a second try mostly passes and a
# problem's length (its longest row's) stays near 1.2 s, not 2.4.
WARMUP_ROUNDS = 1
# Why one batch length for all of a problem's counted batches. At the power cap a batch's energy per GEMM
# depends on its length: H100, fe28d79 (energy receipt h100/twice-fe28d79, in git history), 7 of the 8 rows (two
# runs) whose batches doubled mid-row read more per GEMM in their shorter batches (CUTLASS 4096^3 BF16:
# 152.8-155.4 mJ at 0.57 s, 145.1-149.5 at 1.19 s, in both runs; cuBLAS 8192^3 BF16: 1168 mJ at 1 s, 1131-1156
# at 2 s). That widened intervals past compare's 3% rule between two runs of one commit, and would bias rows
# measured at different lengths.
SAME_LENGTH = "a problem's counted batches all run at one length, the longest its rows' warm-up settled at"


class EnergyFailure(Exception):
    """A hang or CUDA error during an energy batch: the context is no longer trustworthy (like the timer's)."""

    def __init__(self, name: str, error: BaseException):
        super().__init__(f"energy batch: {error}")
        self.name, self.error = name, error


@dataclass
class EnergyRun:
    """One launcher's energy batches, the telemetry read in each, and why there are none (if so)."""

    batches: list[EnergyBatch] = field(default_factory=list)
    telemetry: list[dict[str, Any]] = field(default_factory=list)
    warmup: list[EnergyBatch] = field(default_factory=list)  # the warm-up round's batches: recorded, not counted
    note: str = ""
    count: int = 0  # launches per batch (grows when a batch is too short)
    gate_ms: float = 1.0
    launch_ms: float = 0.0


def energy_source(telemetry) -> str:
    """counter, power_samples (the counter is missing) or none (no NVML)."""
    if telemetry is None:
        return "none"
    if telemetry.energy_counter_mj() is not None:
        return "counter"
    return "power_samples" if telemetry.power_now_w() is not None else "none"


def measure_energy(launchers: Sequence[Launcher], measurements: dict[str, Measurement], settings, telemetry,
                   cycles_per_ms: float = 2.0e6, stage: Callable[[str, str], None] | None = None
                   ) -> tuple[str, dict[str, EnergyRun]]:
    """(source, launcher name -> EnergyRun) for the launchers that were timed (samples, no error)."""
    source = energy_source(telemetry)
    runs = {ln.name: EnergyRun() for ln in launchers}
    active = []
    for ln in launchers:
        m, run = measurements[ln.name], runs[ln.name]
        if m.error is not None or not m.samples_ms:
            run.note = "not timed"
            continue
        if source == "none":
            run.note = "no NVML energy counter or power reading on this machine"
            continue
        run.launch_ms = sorted(m.samples_ms)[len(m.samples_ms) // 2]
        run.count = launches_for(run.launch_ms, settings.energy_min_batch_ms, MAX_LAUNCHES)
        # its last timed batch's launches (fewer than settings.batch where the timer halved them for the queue)
        per_launch = (m.last_enqueue_ms / m.launches_per_batch(settings.batch)) if m.last_enqueue_ms else GUESS_ENQUEUE_MS
        run.gate_ms = min(MAX_SLEEP_MS, max(1.0, 2.0 * per_launch * min(run.count, QUEUE_DEPTH)))
        active.append(ln)
    with short_switch_interval(POLL_SWITCH_INTERVAL_S):
        for round_ in range(WARMUP_ROUNDS + settings.energy_batches):
            warmup = round_ < WARMUP_ROUNDS
            for ln in active:
                if stage:
                    stage(ln.name, "energy warm-up" if warmup else "energy")
                try:
                    starved_out = _batch(ln, runs[ln.name], source, telemetry, cycles_per_ms,
                                         settings.row_timeout_s, warmup=warmup)
                except Exception as exc:  # noqa: BLE001 - a hang or CUDA error ends every row's energy
                    if isinstance(exc, TimeoutError) or "CUDA error" in str(exc):
                        raise EnergyFailure(ln.name, exc) from exc
                    stop = f"energy batch failed: {exc}"
                else:
                    # starved at every attempt, the gate grown each time: its later batches would starve as well
                    # (ATTEMPTS each: minutes over a problem of such rows), so the row stops here
                    run = runs[ln.name]
                    stop = (f"no energy figure: {STARVED_REASON} (every attempt of a batch, behind a sleep gate "
                            f"grown to {run.gate_ms:.0f} ms)") if starved_out else ""
                    if warmup and not stop and run.warmup and not run.warmup[-1].ok:
                        # no size up to MAX_BATCH_MS gave a figure: the counted batches, at that size, would not
                        stop = f"no energy figure: the warm-up's batch had none ({run.warmup[-1].window.reason})"
                if stop:
                    runs[ln.name].note = stop
                    active = [a for a in active if a is not ln]
            if round_ == WARMUP_ROUNDS - 1:  # the warm-up is over: every row at the problem's length
                _same_length(runs[ln.name] for ln in active)
    return source, runs


def _same_length(runs) -> None:
    """SAME_LENGTH: each run's launches per batch set so that its batch lasts as long as the longest warm-up
    batch among them (at the launch time that batch measured)."""
    runs = [r for r in runs if r.warmup and r.warmup[-1].ok]
    if not runs:
        return
    target_ms = max(r.warmup[-1].span_ms for r in runs)
    for r in runs:
        per_launch_ms = r.warmup[-1].span_ms / r.warmup[-1].launches
        r.count = min(MAX_LAUNCHES, max(r.count, math.ceil(target_ms / per_launch_ms)))


@contextlib.contextmanager
def short_switch_interval(seconds: float):
    """Python's GIL switch interval lowered to `seconds` (never raised) inside the block, restored after it."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, seconds))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _too_short(window: Window, source: str) -> bool:
    """The batch gave no figure because it was too short for the counter's updates or the poll gaps."""
    if source == "counter":
        return window.updates < 2 or (window.error or 0.0) > MAX_WINDOW_ERROR
    return window.power_w is None and "sample" in window.reason


def _batch(ln: Launcher, run: EnergyRun, source: str, telemetry, cycles_per_ms: float, timeout_s: float,
           run_once: Callable | None = None, warmup: bool = False) -> bool:
    """One batch, run again until it gives a figure or ATTEMPTS are spent: behind a doubled gate when starved;
    when too short, twice as long in the warm-up (at once if the counter did not update twice, after a second
    miss if the poll gaps were too wide) and at the same size after it (SAME_LENGTH). The last attempt's batch is
    kept either way (in run.warmup for a warm-up batch). `run_once` runs one attempt (default: on the GPU; a
    test passes a fake). True when every attempt starved."""
    run_once = run_once or _run_once
    misses = 0  # attempts at this size whose counter updates fell too close for the poll gaps
    for _ in range(ATTEMPTS):
        batch, starved, enqueue_ms, sample = run_once(ln, run, source, telemetry, cycles_per_ms, timeout_s)
        if starved:  # the GPU idled between launches: idle power inside the window
            run.gate_ms = min(MAX_SLEEP_MS, 2.0 * run.gate_ms)
            continue
        if not batch.ok and _too_short(batch.window, source):
            misses += 1
            unreadable = source != "counter" or batch.window.updates < 2
            if warmup and (unreadable or misses >= 2):
                if batch.span_ms * 2 <= MAX_BATCH_MS:
                    run.count, misses = min(MAX_LAUNCHES, run.count * 2), 0
                elif unreadable:  # at MAX_BATCH_MS the counter still cannot read it: no row figure
                    break
            continue  # after the warm-up, at the same size (SAME_LENGTH)
        break
    if starved:
        batch = EnergyBatch(batch.launches, batch.span_ms, source,
                            Window(None, reason=f"every attempt starved: {STARVED_REASON}"))
    if warmup:
        run.warmup.append(batch)
    else:
        run.batches.append(batch)
        if sample:
            run.telemetry.append(sample)
    return starved


def _run_once(ln: Launcher, run: EnergyRun, source: str, telemetry, cycles_per_ms: float, timeout_s: float):
    """One attempt: the launches enqueued behind a sleep gate while a thread polls NVML. The poll cannot wait for
    the enqueue: CUDA's launch queue holds about a thousand launches, so the host's enqueue loop blocks until
    the batch is nearly done. Starved: the GPU had run everything by the time the host finished enqueuing (the
    host is slower than the kernel, so the GPU idled between launches)."""
    import torch

    torch.cuda.synchronize()
    start, end, gate = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True),
                        torch.cuda.Event())
    recorded: list = []  # the end event, once recorded (the thread's running() reads it)
    counter = telemetry.energy_counter_mj if source == "counter" else None
    box: dict[str, Any] = {}

    def running() -> bool:
        return not (recorded and recorded[0].query())

    def poll() -> None:
        try:
            box["polled"] = poll_batch(running, counter, telemetry.power_now_w, time.perf_counter, time.sleep,
                                       started=gate.query)
        except Exception as exc:  # noqa: BLE001 - surfaced in the calling thread
            box["error"] = exc

    t0 = time.perf_counter()
    torch.cuda._sleep(int(run.gate_ms * cycles_per_ms))  # the host gets ahead of the GPU while it sleeps
    gate.record()
    thread = threading.Thread(target=poll, name="gemmcompare energy poll", daemon=True)
    thread.start()
    start.record()
    n = len(ln.launches)
    for i in range(run.count):
        if ln.resets is not None:
            ln.resets[i % n]()
        ln.launches[i % n]()
    end.record()
    recorded.append(end)
    enqueue_ms = (time.perf_counter() - t0) * 1e3
    starved = end.query()
    sample = telemetry.sample()  # the clocks and caps of this batch (read while its tail runs)
    wait_stream(timeout_s, ln.name)
    thread.join(timeout_s)
    if "error" in box:
        raise box["error"]
    polled = box.get("polled") or Polled()
    span_ms = event_ms(start, end)
    by_samples = samples_window(polled.power)
    window = counter_window(polled.counter) if source == "counter" else by_samples
    return EnergyBatch(run.count, span_ms, source, window, by_samples.power_w), starved, enqueue_ms, sample
