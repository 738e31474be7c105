"""Energy per GEMM from NVML, beside the time (docs/timing.md, "Energy"): the arithmetic, free of CUDA so that it
is tested on the CPU with a fake counter. energy_meter.py runs the batches on the GPU and feeds this.

NVML's total-energy counter (nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded, unsigned
64-bit) is not continuous: its value moves in steps, once per update of the board's power telemetry. A difference
of two reads taken at arbitrary times is therefore off by up to one update's energy at each end. So a batch is
read between two *update instants*: the host polls the counter while the batch's launches run, and the first read
that shows a new value marks an update, known to within the poll gap before it. The energy between the first and
the last update seen inside the batch over the host time between them is the batch's average power, with the
launches running throughout; times the batch's event-timed span per launch, it is the energy of one GEMM.

Where the counter is missing (NotSupported), the power samples polled over the same window are integrated
(trapezoids) instead, and the row says so (`energy_source: power_samples`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .timing import summarize

COUNTER_MODULUS = 2 ** 64  # nvmlDeviceGetTotalEnergyConsumption is an unsigned long long of mJ
# A step of the counter implying more than this average power is not energy but a reset (the driver reloaded):
# the board powers of the GPUs gemmcompare knows are at most ~1.2 kW.
MAX_PLAUSIBLE_W = 5000.0
# The host's uncertainty on where an update fell (the poll gaps at both ends) may be at most this share of the
# window between the two updates; a batch that cannot meet it is too short for the counter's resolution.
MAX_WINDOW_ERROR = 0.01
MIN_POWER_SAMPLES = 3  # the fallback integrates at least this many samples inside the batch
SOURCES = ("counter", "power_samples", "none")


def counter_delta_mj(start: int, end: int) -> int:
    """Millijoules between two reads of the 64-bit counter, across a wrap-around."""
    return (int(end) - int(start)) % COUNTER_MODULUS


@dataclass(frozen=True)
class Window:
    """The average power over part of one batch, between two reference points inside it."""

    power_w: float | None
    window_ms: float = 0.0
    updates: int = 0  # counter updates seen inside the batch (counter source)
    error: float | None = None  # relative bound from where the updates fell within the poll gaps
    reason: str = ""  # why there is no power (too short, counter reset, too few samples)


def counter_window(reads: Sequence[tuple[float, int]]) -> Window:
    """Average power between the first and the last counter update seen in `reads`: (host time in s, mJ) pairs
    polled while the batch's launches ran, in order. The first read cannot mark an update (its value may be
    old), so updates are the reads whose value differs from the read before."""
    updates = [(i, reads[i]) for i in range(1, len(reads)) if reads[i][1] != reads[i - 1][1]]
    if len(updates) < 2:
        return Window(None, updates=len(updates),
                      reason=f"the counter updated {len(updates)} time(s) inside the batch; 2 are needed")
    (i0, (_, e0)), (i1, (_, e1)) = updates[0], updates[-1]
    # each update happened somewhere in the gap between the read that showed it and the read before: taken at
    # the gap's middle, it is off by at most half the gap
    t0, t1 = ((reads[i][0] + reads[i - 1][0]) / 2 for i in (i0, i1))
    span_s = t1 - t0
    if span_s <= 0:
        return Window(None, updates=len(updates), reason="the host clock did not advance between updates")
    delta = counter_delta_mj(e0, e1)
    power = delta / 1e3 / span_s
    if power > MAX_PLAUSIBLE_W:
        return Window(None, span_s * 1e3, len(updates), reason=(
            f"the counter stepped {delta} mJ in {span_s * 1e3:.1f} ms ({power:.3g} W): a reset (driver reload), "
            f"not energy"))
    error = ((reads[i0][0] - reads[i0 - 1][0]) + (reads[i1][0] - reads[i1 - 1][0])) / 2 / span_s
    if error > MAX_WINDOW_ERROR:
        return Window(None, span_s * 1e3, len(updates), error, reason=(
            f"{span_s * 1e3:.1f} ms between the first and last counter updates is too short for the poll gaps "
            f"({100 * error:.1f}% > {100 * MAX_WINDOW_ERROR:g}%)"))
    return Window(power, span_s * 1e3, len(updates), error)


def samples_window(samples: Sequence[tuple[float, float]]) -> Window:
    """Average power over (host time in s, W) samples taken inside the batch: their trapezoid integral over the
    time they span."""
    pts = [(t, w) for t, w in samples if w is not None and math.isfinite(w)]
    if len(pts) < MIN_POWER_SAMPLES:
        return Window(None, reason=f"{len(pts)} power sample(s) inside the batch; {MIN_POWER_SAMPLES} are needed")
    span_s = pts[-1][0] - pts[0][0]
    if span_s <= 0:
        return Window(None, reason="the power samples span no time")
    joules = sum((t1 - t0) * (w0 + w1) / 2 for (t0, w0), (t1, w1) in zip(pts, pts[1:]))
    return Window(joules / span_s, span_s * 1e3)


@dataclass(frozen=True)
class EnergyBatch:
    """One energy batch of one launcher: `launches` back to back, their event-timed span, and the average power
    over the window read inside it."""

    launches: int
    span_ms: float
    source: str  # counter or power_samples
    window: Window
    sample_power_w: float | None = None  # the power samples' average over the same batch (a cross-check)

    @property
    def ok(self) -> bool:
        return self.window.power_w is not None and self.span_ms > 0 and self.launches > 0

    @property
    def j_per_gemm(self) -> float | None:
        return self.window.power_w * self.span_ms / 1e3 / self.launches if self.ok else None


def launches_for(launch_ms: float, min_batch_ms: float, max_launches: int) -> int:
    """Launches for a batch that lasts at least min_batch_ms at the measured launch time (at most max_launches)."""
    if not (launch_ms > 0 and math.isfinite(launch_ms)):
        raise ValueError(f"launch time must be positive, got {launch_ms}")
    return max(1, min(max_launches, math.ceil(min_batch_ms / launch_ms)))


def summarize_energy(batches: Sequence[EnergyBatch], flops: int, source: str,
                     telemetry: dict[str, Any] | None = None, note: str = "",
                     warmup: Sequence[EnergyBatch] = ()) -> dict[str, Any]:
    """The row's energy fields (Result.energy_*), from its batches. The median over batches with its CI are
    computed as the time's are (timing.summarize); a row none of whose batches gave a figure has none, with
    the reason. The warm-up batches (energy_meter.WARMUP_ROUNDS) are recorded beside them, not counted."""
    if source not in SOURCES:
        raise ValueError(f"energy source must be one of {SOURCES}, got {source!r}")
    good = [b for b in batches if b.ok]
    detail: dict[str, Any] = {
        "source": source, "batches": len(batches), "measured_batches": len(good),
        "launches_per_batch": [b.launches for b in batches], "batch_ms": [b.span_ms for b in batches],
        "window_ms": [b.window.window_ms for b in batches], "counter_updates": [b.window.updates for b in batches],
        "window_error": [b.window.error for b in batches],
        "sample_power_w": [b.sample_power_w for b in batches],
        **({"telemetry": telemetry} if telemetry else {}), **({"note": note} if note else {})}
    if warmup:
        detail["warmup"] = {"launches_per_batch": [b.launches for b in warmup],
                            "batch_ms": [b.span_ms for b in warmup],
                            "sample_power_w": [b.sample_power_w for b in warmup],
                            "j_per_gemm": [b.j_per_gemm for b in warmup]}
    reasons = sorted({b.window.reason for b in batches if not b.ok and b.window.reason})
    if reasons:
        detail["not_measured"] = reasons
    out: dict[str, Any] = {"energy_source": source if good else "none", "energy": detail,
                           "energy_samples_j": [b.j_per_gemm for b in good]}
    if not good:
        detail["reason"] = note or ("; ".join(reasons) if reasons else "no energy batch ran")
        return out
    s = summarize(out["energy_samples_j"])
    out.update(energy_j_per_gemm=s.median, energy_ci_rel=s.median_ci_rel,
               avg_power_w=statistics.median(b.window.power_w for b in good),
               gflop_per_j=flops / s.median / 1e9 if flops else None)
    tel = telemetry or {}
    out.update(energy_sm_clock_mhz=tel.get("sm_clock_mhz_median"),
               energy_throttled_fraction=tel.get("throttled_fraction"))
    return out


# -- polling one batch (the loop energy_meter runs while the launches execute; clocks injected for tests) ------

@dataclass
class Polled:
    """What the host read while one batch ran: counter reads and power samples, (host time s, value)."""

    counter: list[tuple[float, int]] = field(default_factory=list)
    power: list[tuple[float, float]] = field(default_factory=list)


def poll_batch(running: Callable[[], bool], counter: Callable[[], int | None] | None,
               power: Callable[[], float | None], now: Callable[[], float], sleep: Callable[[float], None],
               power_every_s: float = 0.01, counter_every_s: float = 0.0002,
               started: Callable[[], bool] = lambda: True) -> Polled:
    """Poll the counter (every counter_every_s) and the power (every power_every_s) until `running()` says the
    batch is done. A read is kept only when the launches had started before it (`started()`, checked before the
    read) and were still running after it (checked after), so every kept value was read while they ran."""
    out = Polled()
    next_power = now()
    while True:
        began = started()
        t = now()
        c = counter() if counter is not None else None
        p = power() if t >= next_power else None
        if not running():
            return out
        if not began:
            sleep(counter_every_s)
            continue
        if c is not None:
            out.counter.append((t, c))
        if p is not None:
            out.power.append((t, p))
            next_power = t + power_every_s
        sleep(counter_every_s if counter is not None else power_every_s)
