"""The timing contract: device time of an implementation's launches, from CUDA events in one stream, with
each launch's CUPTI record beside it (timing_methods.py: which of the two a row reports).

- The launch queue is kept full: each batch of samples is enqueued behind a sleep kernel long enough to
  cover the host's enqueue time, so host launch gaps are never inside an event pair. If the sleep had
  already finished when the host finished enqueuing (the queue ran dry), the batch is flagged and the
  next batch gets a longer sleep.
- L2 policy is explicit: `flush` writes a buffer of at least 2x L2 before every sample, `evict` reads one
  (L2 is left holding clean lines, not dirty ones the kernel's misses must first write back), `rotate` cycles
  through input copies totalling at least 2x L2, `warm` does none of these.
- Warm-up by count and by time; then rounds of samples, implementations of one problem interleaved
  round-robin, until the 95% CI of the median is within `target_noise` (relative) or a cap is hit. With
  `lockstep`, a row that meets its target keeps sampling until every row of the problem has met its own or
  stopped at a cap, so that the rows of one problem are sampled over the same stretch of the GPU's drift.
- Excluded, and stated in every receipt: allocation, transfers, dtype conversion, laying the inputs out in
  the storage policy's buffers (the same for every row), references. Included: whatever an implementation's
  launch does, copies into and out of buffers of its own and zero-padding among them (contracts/storage.py).
Raw samples are kept in milliseconds; summaries are computed from them afterwards.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .timing_methods import (AUTO_CUPTI_BELOW_MS, KernelClock, auto_setting, choose, event_ms, finish_warm_up,
                             sample_tag)

L2_POLICIES = ("flush", "evict", "rotate", "warm")
# Most input copies the rotate policy makes; a problem too small to cover 2x L2 with this many copies is
# flushed instead (and its row says so).
MAX_ROTATION_COPIES = 255
# The sleep gate in front of a launcher's batch is twice its last batch's enqueue time, at most this (ms).
MAX_SLEEP_MS = 5000.0
# A batch starved although its gate was sized from the batch before (twice that enqueue time) means the
# enqueue grew with the gate: the launcher waits for the GPU itself (a synchronize inside), and no gate
# can get ahead of it. After this many such batches in a row it is given up.
STARVED_SIZED_STOP = 3
# ...unless its batches could not fit CUDA's launch queue. The queue holds about a thousand launches; once it is
# full the host's next launch call blocks until the GPU frees a slot, which with a sleep gate at the head of the
# queue means until the gate ends. A launch that enqueues hundreds of kernels (a loop of one GEMM per MoE expert:
# 256 experts at 10 launches a batch is 2,560 kernels) then looks exactly like one that synchronizes. So a
# launcher starving behind sized gates has its batch halved, down to one launch, before it is given up: a batch
# that fits the queue is timed as every other; one launch that is still starved really waits for the GPU.
# A launcher that says how many kernels one launch enqueues (Launcher.kernels) gets a batch that fits from the start:
# this many queue entries a batch, a quarter of the queue kept free, each sample its kernels plus the L2 action and
# the two events around it.
LAUNCH_QUEUE_BUDGET = 768
QUEUE_ENTRIES_PER_SAMPLE = 3
# Every row of a problem is sampled in batches of one size (the smallest any of them needs). On a power-capped GPU a
# sample's place in its batch moves its time: on an H100 at 4e87cbd (moe-shapes/h100/bf16-4e87cbd, in git
# history) tuned CUTLASS's batches of 10 at DeepSeek-V3's up/gate layer read 11.1-11.4 ms for their first three
# samples and up to 24 ms for their last, while the loop of cuBLAS calls beside it, its batch cut to 2 to fit the
# launch queue, only ever ran the first two of a burst (10.8-10.9 ms): the % compared a burst's start with a whole
# burst.
# Under `method: auto`, CUPTI is dropped after the first round when every row's shortest sample by events already
# took this many times AUTO_CUPTI_BELOW_MS: auto can only report events then, and CUPTI's records cost device-side
# time to read (7-28 s a part of the MoE study at 4e87cbd, 25,600 records a row for a loop of 256 calls).
CUPTI_NEEDLESS_FACTOR = 2.0

EXCLUDED = ("allocation, host-device transfers, dtype conversion, laying the inputs out in the storage policy's "
            "buffers (the same for every row), reference computation; an implementation's own copies and padding "
            "are inside its launch, timed")


@dataclass(frozen=True)
class TimingSettings:
    l2: str = "flush"
    warmup_count: int = 3
    warmup_ms: float = 25.0
    min_samples: int = 10
    max_samples: int = 100
    max_ms: float = 3000.0  # cap on device time spent sampling one implementation on one problem
    target_noise: float = 0.01  # relative half-width of the median's 95% CI
    batch: int = 10  # samples enqueued behind one sleep kernel
    graph: bool = False  # time CUDA-graph replays of one launch instead of direct launches
    row_timeout_s: float = 300.0
    method: str = "auto"  # which figure a row reports: events, cupti, or auto (timing_methods.py)
    launch_window_us: float | None = None  # added to CUPTI spans; None: the device's measured one (launch_window.py)
    # A row whose noise target is met samples on until every row of its problem has met its own or hit a cap:
    # a row that stopped early would otherwise hold an earlier, cooler stretch of a power-capped GPU than the
    # baseline beside it (llm-shapes/study-0906836: at 8192x8192x28672 CUTLASS stopped after 10 batches,
    # cuBLAS after 61).
    lockstep: bool = False
    # energy per GEMM (energy_meter.py): batches per row after its time is sampled (0: none, the default: on
    # the H200, its counter updating every 100 ms, 9 batches of a large GEMM took ~15 s a row at f0b7480), and
    # the first size of a batch in ms of launches (doubled while too short for the counter's updates)
    energy_batches: int = 0
    # (1 s: on the H100 at fe28d79 the warm-up doubled a 0.5 s start at 9 and 10 of the 12 rows of two runs of
    # experiments/energy.yaml, an attempt lost per row; at ~1.2 s the H200's windows read errors of 0.2-0.9%)
    energy_min_batch_ms: float = 1000.0
    # tuned rows: every candidate that passes its check is measured with this protocol too, after the pick is
    # made (tuning/select.py, "oracle"), so that a study can show how far each pick is from the true best
    oracle: bool = False

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("energy_batches", "energy_min_batch_ms"):  # at their defaults: absent, as lockstep
            if out[key] == getattr(TimingSettings, key):
                del out[key]
        if out["launch_window_us"] is None:  # unset: absent, so that earlier specs keep their hashes
            del out["launch_window_us"]
        for key in ("lockstep", "oracle"):  # likewise
            if not out[key]:
                del out[key]
        return out


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    mean: float
    min: float
    max: float
    stdev: float
    cv: float
    iqr: float
    median_ci_rel: float  # relative half-width of the distribution-free 95% CI of the median


def summarize(samples: Sequence[float]) -> Summary:
    xs = sorted(samples)
    n = len(xs)
    if n == 0:
        raise ValueError("no samples")
    med = statistics.median(xs)
    mean = statistics.fmean(xs)
    sd = statistics.stdev(xs) if n > 1 else 0.0
    q = statistics.quantiles(xs, n=4, method="inclusive") if n > 1 else [xs[0]] * 3
    return Summary(n, med, mean, xs[0], xs[-1], sd, sd / mean if mean else math.inf, q[2] - q[0],
                   median_ci_rel(xs))


def median_ci_rel(sorted_samples: Sequence[float]) -> float:
    """Order-statistic 95% CI of the median (normal approximation to the binomial), as a relative
    half-width. inf for too few samples to bound it."""
    xs, n = sorted_samples, len(sorted_samples)
    if n < 6:
        return math.inf
    half = 1.96 * math.sqrt(n) / 2
    lo, hi = int(math.floor(n / 2 - half)), int(math.ceil(n / 2 + half)) - 1
    lo, hi = max(lo, 0), min(hi, n - 1)
    med = statistics.median(xs)
    return (xs[hi] - xs[lo]) / (2 * med) if med > 0 else math.inf


# ---------------------------------------------------------------------------------------------------
# Measuring (needs a CUDA device)


def wait_stream(timeout_s: float, name: str) -> None:
    """Wait for the current stream, polling, so that a hung kernel becomes a TimeoutError, not a hang."""
    import torch

    ev = torch.cuda.Event()
    ev.record()
    deadline = time.perf_counter() + timeout_s
    while not ev.query():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{name}: no completion within {timeout_s:g} s")
        time.sleep(0.0005)


class Launcher:
    """What the timer needs of one implementation on one problem: launch() enqueues one GEMM on the
    current stream. `copies` (rotate policy) are further launchers over other input copies; `resets[i]`,
    if given, runs before launch i outside the event pair (restores C when beta != 0); `flush` asks for an
    L2 flush before each sample whatever the policy (rotate's fallback for problems too small to rotate);
    `kernels` is how many kernels one launch enqueues, which sizes the batches to fit CUDA's launch queue."""

    def __init__(self, name: str, launch: Callable[[], None], copies: Sequence[Callable[[], None]] = (),
                 resets: Sequence[Callable[[], None]] | None = None, flush: bool = False, kernels: int = 1):
        self.name = name
        self.kernels = max(1, int(kernels))  # kernels one launch enqueues (a loop of per-group calls: one each)
        self.launches = [launch, *copies]
        self.resets = list(resets) if resets is not None else None
        if self.resets is not None and len(self.resets) != len(self.launches):
            raise ValueError("one reset per launch")
        self.flush = flush


@dataclass
class Measurement:
    samples_ms: list[float] = field(default_factory=list)
    starved_batches: int = 0  # batches whose sleep gate finished before the host finished enqueuing
    batches: int = 0
    warmup_launches: int = 0
    last_index: int = 0  # which of the launcher's copies ran last (its output is what the re-check reads)
    fatal: bool = False  # a hang or a CUDA error: the context is unusable, nothing more was measured
    sleep_ms: float = 0.0  # the longest sleep gate its batches had
    next_sleep_ms: float = 1.0  # the gate in front of its next batch (each launcher its own)
    last_enqueue_ms: float | None = None  # its last batch's enqueue time (the next gate is sized from it)
    starved_sized: int = 0  # consecutive batches starved behind a gate sized from the batch before
    batch_size: int = 0  # launches per batch when cut to fit the launch queue (0: the settings' batch)
    batch_note: str = ""  # why, when the batch is not the settings' (every row of the problem shares it)
    restarts: int = 0  # times its samples were dropped because the problem's batch became smaller mid-way
    done: bool = False
    met: bool = False  # its noise target is met as of its last batch (lockstep: it waits for the others)
    stop_reason: str = ""
    error: BaseException | None = None
    # every sample's id (its CUPTI annotation), the figures of both methods, and which one samples_ms holds
    sample_ids: list[int] = field(default_factory=list)
    event_samples_ms: list[float] = field(default_factory=list)
    cupti_samples_ms: list[float | None] | None = None
    method: str = "events"
    method_note: str = ""
    launched: int = 0

    def summary(self) -> Summary:
        return summarize(self.samples_ms)

    def launches_per_batch(self, settings_batch: int) -> int:
        """Its batch: the settings' unless the timer halved it to fit the launch queue (batch_size)."""
        return self.batch_size or settings_batch


# -- the L2 policy's sizes (the timer, the executor and the profiler driver all use these) ----------------


def flush_bytes(l2_bytes: int) -> int:
    """Size of the buffer written (flush) or read (evict) before each sample: twice L2, at least 64 MiB."""
    return max(2 * l2_bytes, 64 << 20)


def new_flush_buffer(l2_bytes: int):
    """The flush buffer, on the current device (filled with a fill kernel, or summed under evict, before each
    sample; never initialized: evict reads whatever it holds)."""
    import torch

    return torch.empty(flush_bytes(l2_bytes) // 4, dtype=torch.int32, device="cuda")


def clear_l2(buffer, policy: str) -> None:
    """Push the inputs out of L2 with the flush buffer. `evict` reads it: the inputs leave L2 and what replaces
    them is clean. Otherwise it is written, which leaves 2x L2 of written lines, so the timed kernel's first
    misses each write one back to HBM first."""
    if policy == "evict":
        buffer.sum()
    else:
        buffer.fill_(0)


def rotation_copies(problem_bytes: int, l2_bytes: int) -> int | None:
    """Extra input copies the rotate policy needs so that all copies together cover 2x L2; None when
    that would take more than MAX_ROTATION_COPIES (the problem is then flushed instead)."""
    count = max(0, math.ceil(2 * l2_bytes / max(1, problem_bytes)) - 1)
    return None if count > MAX_ROTATION_COPIES else count


class Timer:
    """Interleaved event timing of several launchers on one problem, with each launch's CUPTI record beside
    its event pair unless the method is `events` (timing_methods.py). `in_batch(name)` is called while the
    batch's own launches run, once its sleep gate has passed (the executor reads telemetry there: the clock
    the samples ran at)."""

    in_batch: Callable[[str], None] | None = None
    clock_factory: Callable[[], Any] | None = None  # makes the KernelClock; None: events only
    # phase(name) -> a context manager timing that part of measure() (the executor's phases: warm-up, CUPTI's
    # start and read-out); None: untimed
    phase: Callable[[str], Any] | None = None
    clock: Any = None  # the KernelClock while sampling
    cupti_dropped: str = ""  # why the clock was stopped early (_drop_needless_cupti), for the receipt
    launch_window_ms: float = 0.0  # what a CUPTI figure adds to the span (launch_window.py)

    def __init__(self, settings: TimingSettings, l2_bytes: int, sleep_cycles_per_ms: float = 2.0e6,
                 in_batch: Callable[[str], None] | None = None,
                 launch_window_ms: float = 0.0, phase: Callable[[str], Any] | None = None):
        import torch

        self.torch = torch
        self.s = settings
        self.in_batch, self.phase = in_batch, phase
        self.launch_window_ms = launch_window_ms
        self.clock_factory = None if settings.method == "events" else KernelClock
        self.clock = None
        self.flush_buffer = None
        if settings.l2 in ("flush", "evict", "rotate"):  # rotate falls back to flushing for tiny problems
            self.flush_buffer = new_flush_buffer(l2_bytes)
        self.cycles_per_ms = sleep_cycles_per_ms  # upper bound of the SM clock (2 GHz): sleeps at least as long

    def _between_samples(self, launcher: Launcher):
        if self.flush_buffer is not None and (self.s.l2 in ("flush", "evict") or launcher.flush):
            clear_l2(self.flush_buffer, self.s.l2)

    def warm_up(self, launcher: Launcher) -> int:
        torch = self.torch
        count, t0 = 0, time.perf_counter()
        while count < self.s.warmup_count or (time.perf_counter() - t0) * 1e3 < self.s.warmup_ms:
            which = count % len(launcher.launches)
            if launcher.resets is not None:
                launcher.resets[which]()
            launcher.launches[which]()
            self._sync(launcher.name)
            count += 1
            if count >= 10_000:
                break
        torch.cuda.synchronize()
        return count

    def _sync(self, name: str):
        wait_stream(self.s.row_timeout_s, name)

    def run_batch(self, launcher: Launcher, m: Measurement, count: int, graph=None, index: int = 0) -> None:
        torch = self.torch
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        gate = torch.cuda.Event()
        ids = []
        t0 = time.perf_counter()
        torch.cuda._sleep(int(m.next_sleep_ms * self.cycles_per_ms))  # keeps the queue full while we enqueue
        gate.record()
        for i in range(count):
            which = (m.batches * count + i) % len(launcher.launches)
            if launcher.resets is not None:
                launcher.resets[which]()
            self._between_samples(launcher)
            ids.append(m.launched)
            with self._annotate(index, m.launched):  # CUPTI: this launch's GPU work is this sample's
                starts[i].record()
                if graph is not None:
                    graph[which].replay()
                else:
                    launcher.launches[which]()
                ends[i].record()
            m.launched += 1
            m.last_index = which
        enqueue_ms = (time.perf_counter() - t0) * 1e3
        starved = gate.query()  # the gate already done: the GPU idled waiting for the host
        if self.in_batch is not None:
            self._wait_gate(gate, launcher.name)
            self.in_batch(launcher.name)
        self._sync(launcher.name)
        m.batches += 1
        if starved:
            m.starved_batches += 1
        # next sleep: twice this batch's enqueue time, at least 0.5 ms, at most MAX_SLEEP_MS. A launcher that
        # waits for the GPU itself enqueues for as long as its gate sleeps, so its gate doubled every batch
        # (2^40 ms by the old starvation rule's 40th): it is recognised by starving behind a sized gate
        gate = m.next_sleep_ms
        sized = m.last_enqueue_ms is not None and gate >= min(MAX_SLEEP_MS, 2.0 * m.last_enqueue_ms) * 0.999
        m.starved_sized = m.starved_sized + 1 if starved and sized else 0
        m.sleep_ms = max(m.sleep_ms, gate)
        m.last_enqueue_ms = enqueue_ms
        m.next_sleep_ms = min(MAX_SLEEP_MS, max(0.5, 2.0 * enqueue_ms))
        if not starved:
            m.samples_ms.extend(event_ms(s, e) for s, e in zip(starts, ends))
            m.sample_ids.extend(ids)

    def _annotate(self, index: int, sample: int):
        if self.clock is None:
            return contextlib.nullcontext()
        return self.clock.annotate(sample_tag(index, sample))

    def _wait_gate(self, gate, name: str) -> None:
        """Until the batch's sleep gate has passed (its launches are running), within the row timeout."""
        deadline = time.perf_counter() + self.s.row_timeout_s
        while not gate.query():
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{name}: no completion within {self.s.row_timeout_s:g} s")
            time.sleep(0.0001)

    def measure(self, launchers: Sequence[Launcher], stage: Callable[[str, str], None] | None = None
                ) -> dict[str, Measurement]:
        """Warm up each launcher, then round-robin batches until each meets the noise target or a cap.

        An ordinary error stops only its own launcher. A hang or a CUDA error stops everything at once:
        the context is no longer trustworthy, and the launchers queued behind a hung kernel must not be
        blamed for it; the culprit's Measurement has `fatal` set."""
        results = {ln.name: Measurement() for ln in launchers}
        graphs = {}

        def fail(ln: Launcher, exc: BaseException) -> bool:
            m = results[ln.name]
            m.error, m.done, m.stop_reason = exc, True, f"error: {exc}"
            m.fatal = isinstance(exc, TimeoutError) or "CUDA error" in str(exc)
            if m.fatal:
                for other in launchers:
                    if not results[other.name].done:
                        results[other.name].done = True
                        results[other.name].stop_reason = f"stopped: {ln.name} failed"
            return m.fatal

        for ln in launchers:
            if stage:
                stage(ln.name, "warm-up")
            try:
                with self._phase("warmup_s"):
                    results[ln.name].warmup_launches = self.warm_up(ln)
                if self.s.graph:
                    graphs[ln.name] = self._capture(ln)
            except Exception as exc:  # noqa: BLE001 - recorded per implementation
                if fail(ln, exc):
                    return results
        self._share_batch(launchers, results)
        spent = {ln.name: 0.0 for ln in launchers}
        index = {ln.name: i for i, ln in enumerate(launchers)}
        # CUPTI records from here on: after every warm-up and graph capture, around the sampled launches only
        clock, error = (self.clock_factory() if self.clock_factory is not None else None), None
        if clock is not None:
            with self._phase("cupti_wait_s"):  # a worker's CUPTI warm-up, still running on its thread
                finish_warm_up()
        with self._phase("cupti_s"):
            if clock is not None and not clock.start():
                clock, error = None, clock.error
        self.clock, self.cupti_dropped = clock, ""
        try:
            self._rounds(launchers, results, graphs, spent, index, fail, stage)
        finally:
            clock, self.clock = self.clock, None  # None when the rounds dropped it (_drop_needless_cupti)
            with self._phase("cupti_s"):
                spans = clock.stop() if clock is not None else {}
            error = clock.error if clock is not None else error
            self._assign(launchers, results, spans, error)
        return results

    def fitting_batch(self, kernels: int) -> int:
        """Launches a batch may hold when each enqueues `kernels` kernels: the settings' batch, or fewer so that the
        batch fits CUDA's launch queue (LAUNCH_QUEUE_BUDGET)."""
        return max(1, min(self.s.batch, LAUNCH_QUEUE_BUDGET // (kernels + QUEUE_ENTRIES_PER_SAMPLE)))

    def _share_batch(self, launchers, results) -> None:
        """Before sampling: the problem's batch is the smallest that any of its launchers needs, for all of them."""
        if not launchers:
            return
        who = min(launchers, key=lambda ln: (self.fitting_batch(ln.kernels), ln.name))
        size = self.fitting_batch(who.kernels)
        if size == self.s.batch:
            return
        for ln in launchers:
            m = results[ln.name]
            m.batch_size = size
            m.batch_note = (f"{size} launches a batch for every row of the problem: {who.name} enqueues {who.kernels} "
                            f"kernels a launch, and {size} of them fill CUDA's launch queue")

    def _lower_batch(self, size: int, who: str, launchers, results, spent) -> None:
        """A launcher found, by starving, that it needs smaller batches than the problem's and has now been timed
        at `size`: every other row samples in batches of that size too, its samples at the larger size dropped (a
        row that had stopped on its noise target or a cap starts again; one given up or failed stays so)."""
        for ln in launchers:
            m = results[ln.name]
            m.batch_note = (f"{size} launches a batch for every row of the problem: {who} starved in larger ones "
                            f"(its launches enqueue many kernels, or wait for the GPU)")
            if ln.name == who or m.launches_per_batch(self.s.batch) <= size:
                continue
            m.batch_size = size
            if m.error is not None or (m.done and not m.samples_ms):
                continue
            if m.samples_ms:
                m.restarts += 1
            m.samples_ms, m.sample_ids, spent[ln.name] = [], [], 0.0
            m.done, m.met, m.stop_reason = False, False, ""

    def _phase(self, name: str):
        return self.phase(name) if self.phase is not None else contextlib.nullcontext()

    def _rounds(self, launchers, results, graphs, spent, index, fail, stage) -> None:
        while True:
            active = [ln for ln in launchers if not results[ln.name].done]
            if not active:
                break
            for ln in active:
                m = results[ln.name]
                if m.done:  # stopped by another launcher's fatal error in this round
                    continue
                if stage:
                    stage(ln.name, "timing")
                size = m.launches_per_batch(self.s.batch)
                try:
                    before = len(m.samples_ms)
                    self.run_batch(ln, m, size, graphs.get(ln.name), index[ln.name])
                    spent[ln.name] += sum(m.samples_ms[before:])
                except Exception as exc:  # noqa: BLE001
                    if fail(ln, exc):
                        return
                    continue
                if not before and m.samples_ms and any(results[o.name].launches_per_batch(self.s.batch) > size
                                                       for o in launchers):
                    self._lower_batch(size, ln.name, launchers, results, spent)
                if not m.samples_ms and m.starved_sized >= STARVED_SIZED_STOP and size > 1:
                    # perhaps the launch queue, not a sync: smaller batches, their gates sized afresh
                    m.batch_size, m.starved_sized, m.last_enqueue_ms, m.next_sleep_ms = size // 2, 0, None, 1.0
                    continue
                if not m.samples_ms and (m.batches > 4 * max(1, -(-self.s.max_samples // size))
                                         or m.starved_sized >= STARVED_SIZED_STOP):
                    m.done, m.stop_reason = True, ("every batch starved: the host cannot keep the queue full "
                                                   "(its enqueue time grows with the sleep in front of it: the "
                                                   "launch waits for the GPU"
                                                   + (", also one launch a batch)" if size == 1 else ")"))
                    continue
                n = len(m.samples_ms)
                if n >= self.s.min_samples:
                    ci = median_ci_rel(sorted(m.samples_ms))
                    m.met = ci <= self.s.target_noise
                    waited = "noise target met, sampled on in lockstep to the " if m.met else ""
                    if m.met and not self.s.lockstep:
                        m.done, m.stop_reason = True, f"noise target met (CI of median +-{ci:.2%})"
                    elif n >= self.s.max_samples:
                        m.done, m.stop_reason = True, f"{waited}sample cap {self.s.max_samples} (CI of median +-{ci:.2%})"
                    elif spent[ln.name] >= self.s.max_ms:
                        m.done, m.stop_reason = True, f"{waited}time cap {self.s.max_ms:g} ms (CI of median +-{ci:.2%})"
            if self.clock is not None and self.s.method == "auto":
                self._drop_needless_cupti([results[ln.name] for ln in launchers])
            if self.s.lockstep:
                self._stop_together([results[ln.name] for ln in launchers])

    def _drop_needless_cupti(self, measurements: list[Measurement]) -> None:
        """After a round: when every row has samples and the shortest is CUPTI_NEEDLESS_FACTOR x AUTO_CUPTI_BELOW_MS
        or more by events, `auto` cannot choose CUPTI for this problem; its profiler is stopped and its records
        discarded (no row reports a CUPTI median then, and the receipt's timing says why)."""
        timed = [m.samples_ms for m in measurements if m.error is None and not (m.done and not m.samples_ms)]
        if not timed or not all(timed):
            return  # a row still without samples could be the short one
        shortest, needless = min(min(x) for x in timed), CUPTI_NEEDLESS_FACTOR * AUTO_CUPTI_BELOW_MS
        if shortest < needless:
            return
        with self._phase("cupti_s"):
            self.clock.stop()
        self.clock = None
        self.cupti_dropped = (f"CUPTI stopped once every row had samples: the shortest took {shortest:.3f} "
                              f"ms by events (at least {needless:g} ms), and `auto` reports CUPTI only below "
                              f"{AUTO_CUPTI_BELOW_MS:g} ms")

    @staticmethod
    def _stop_together(measurements: list[Measurement]) -> None:
        """Lockstep: once every row still sampling has met its noise target, all of them stop, together."""
        active = [m for m in measurements if not m.done]
        if active and all(m.met for m in active):
            for m in active:
                ci = median_ci_rel(sorted(m.samples_ms))
                m.done, m.stop_reason = True, (f"noise target met (CI of median +-{ci:.2%}); sampled in lockstep "
                                               f"until every row of the problem stopped ({m.batches} batches)")

    def _assign(self, launchers, results, spans: dict[str, float], error: str | None) -> None:
        """Each measurement's samples of both methods, and the ones the method setting picks. `auto` decides
        once for the launchers timed together (one problem's rows): a % of the baseline compares two figures
        of one method, not an event pair's fixed cost against a CUPTI span."""
        for i, ln in enumerate(launchers):
            m = results[ln.name]
            m.event_samples_ms = list(m.samples_ms)
            if spans:
                m.cupti_samples_ms = [spans.get(sample_tag(i, sid)) for sid in m.sample_ids]
        timed = [results[ln.name] for ln in launchers if results[ln.name].samples_ms]
        setting = self.s.method
        if setting == "auto":
            setting = auto_setting([m.cupti_samples_ms for m in timed])
        for m in timed:
            picked = choose(setting, m.event_samples_ms, m.cupti_samples_ms, error, self.launch_window_ms)
            m.samples_ms, m.method, m.method_note = picked.samples_ms, picked.method, picked.note

    def _capture(self, ln: Launcher) -> list:
        """One CUDA graph per launcher copy (rotate policy: one per input copy)."""
        torch = self.torch
        graphs = []
        for launch in ln.launches:
            g = torch.cuda.CUDAGraph()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                launch()  # one launch outside the capture, as torch recommends
            torch.cuda.current_stream().wait_stream(side)
            with torch.cuda.graph(g):
                launch()
            graphs.append(g)
        torch.cuda.synchronize()
        return graphs

    def describe(self) -> dict[str, Any]:
        return {
            "method": "CUDA events around each launch in one stream" + (", CUDA-graph replay" if self.s.graph else "")
            + ("" if self.s.method == "events" else
               f"; CUPTI kernel records of the same launches (setting {self.s.method}: the row's timing_method "
               f"says which figure it reports)"),
            "queue": "each batch enqueued behind a sleep kernel; batches whose sleep ended before enqueuing finished are discarded",
            "l2_policy": self.s.l2,
            "flush_bytes": 0 if self.flush_buffer is None else self.flush_buffer.numel() * 4,
            "excluded": EXCLUDED,
            "interleaving": "round-robin batches across the problem's implementations"
                            + (", in lockstep: each samples until every one has stopped" if self.s.lockstep else ""),
            **({"cupti": self.cupti_dropped} if self.cupti_dropped else {}),
            **self.s.as_dict(),
        }
