"""Choosing a tuned row's winner: the model narrows the candidates (with NVIDIA's nvidia-matmul-heuristics as a
second opinion where it is installed), a brief race ranks the rest, and a runoff re-measures the closest.

The race is short on purpose (BRIEF: a few samples each, interleaved, under the run's L2 policy and timing
method): its samples only rank the candidates. A short race can misrank close candidates, and not only by
noise (at 16x8192x8192, evicted, the race read a CUTLASS mode 14% slow that measures 5% faster than the one it
picked: docs/tuning.md), so the candidates whose race medians lie within RUNOFF_MARGIN of the best are timed
again with the run's own sampling protocol (the runoff), and the runoff's lowest median wins. The winner's
reported time comes from the row's own measurement afterwards, on a fresh draw, so that a candidate that drew
a lucky sample in the race is not also reported at that sample (the winner's curse: the minimum of several
noisy medians is biased low).

`timing: {oracle: true}` (or `run --oracle`) measures every candidate that passes its check with the full
protocol too, after the pick is made and without changing it: a study can then show how far each pick is from
the true best (Pick.oracle_gap).
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

# the race: at least BRIEF_MIN and at most BRIEF_MAX samples per candidate, no noise target (it ranks, it
# does not report)
BRIEF_MIN, BRIEF_MAX = 5, 15
KEEP_PREDICTED = 8  # candidates the model ranks best that go into the race (with every one it cannot predict)
# the runoff: race medians within 10% of the best are re-measured, the best four at most, each with at most
# RUNOFF_MAX_MS of device time (the 14% misranking above was the race's; 10% takes in what noise could flip)
RUNOFF_MARGIN, RUNOFF_MAX, RUNOFF_MAX_MS = 0.10, 4, 1000.0


def brief_settings(settings):
    """The run's TimingSettings, cut down for the race (rotate becomes flush: the race makes no input copies)."""
    return dataclasses.replace(settings, min_samples=BRIEF_MIN, max_samples=BRIEF_MAX, target_noise=0.0,
                               warmup_count=1, max_ms=min(settings.max_ms, 500.0),
                               l2="flush" if settings.l2 == "rotate" else settings.l2)


def runoff_settings(settings):
    """The run's own sampling protocol (warmup, samples, noise target) for the runoff, capped at RUNOFF_MAX_MS
    a candidate; rotate becomes flush (no input copies) and no energy is measured: it ranks, it does not report."""
    return dataclasses.replace(settings, max_ms=min(settings.max_ms, RUNOFF_MAX_MS), energy_batches=0,
                               l2="flush" if settings.l2 == "rotate" else settings.l2)


def oracle_settings(settings):
    """The run's full protocol for the oracle's every-candidate measurement (rotate raced as flush, as above)."""
    return dataclasses.replace(settings, energy_batches=0, l2="flush" if settings.l2 == "rotate" else settings.l2)


def contenders(medians: dict[str, float], margin: float = RUNOFF_MARGIN, most: int = RUNOFF_MAX) -> list[str]:
    """The race's closest: every candidate whose median is within `margin` of the best, fastest first, at most
    `most`; none when only the winner is that close (there is nothing to re-measure)."""
    if not medians:
        return []
    best = min(medians.values())
    close = sorted((ms, name) for name, ms in medians.items() if ms <= best * (1 + margin))
    names = [name for _, name in close][:most]
    return names if len(names) > 1 else []


@dataclass
class Pick:
    winner: str
    race_ms: dict[str, float]  # candidate -> median of its race samples
    race_samples: dict[str, int] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)  # candidate -> why it was not in the race
    predicted_ms: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    cached: bool = False
    nvidia_ms: dict[str, float] = field(default_factory=dict)  # nvidia-matmul-heuristics' estimates, where installed
    # the runoff: the race's closest candidates re-measured with the run's protocol; the winner is its best
    runoff_ms: dict[str, float] = field(default_factory=dict)
    runoff_samples: dict[str, int] = field(default_factory=dict)
    race_winner: str | None = None  # the race's own best, where the runoff overturned it
    # the oracle (timing.oracle): every checked candidate measured with the full protocol, medians and the
    # relative half-width of each median's 95% CI
    oracle_ms: dict[str, float] = field(default_factory=dict)
    oracle_ci_rel: dict[str, float] = field(default_factory=dict)

    @property
    def oracle_best(self) -> str | None:
        return min(self.oracle_ms, key=lambda n: (self.oracle_ms[n], n)) if self.oracle_ms else None

    @property
    def oracle_gap(self) -> float | None:
        """How much slower the pick measured than the oracle's best (0.0: it is the best); None without an
        oracle, or when the pick itself has no oracle time."""
        best = self.oracle_best
        if best is None or self.winner not in self.oracle_ms:
            return None
        return self.oracle_ms[self.winner] / self.oracle_ms[best] - 1.0

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        if self.oracle_ms:  # derived, for a reader of the receipt (from_dict drops them)
            out.update(oracle_best=self.oracle_best, oracle_gap=self.oracle_gap)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], **changes) -> "Pick":
        """A pick as as_dict wrote it (the pick cache): derived and unknown keys dropped, fields it lacks (a
        cache written before they existed) at their defaults."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in {**data, **changes}.items() if k in names})

    def note(self, limit: int = 5) -> str:
        """The row's note: the winner, the race's best times, how long tuning took (or that it was cached)."""
        ranked = sorted(self.race_ms.items(), key=lambda kv: kv[1])
        times = ", ".join(f"{name} {ms:.4f} ms" for name, ms in ranked[:limit])
        more = f" (+{len(ranked) - limit} more)" if len(ranked) > limit else ""
        how = "pick reused from the pick cache (no tuning)" if self.cached else f"tuned in {self.seconds:.1f} s"
        out = f"tuned: {self.winner} of {len(ranked)} raced; {how}; race medians: {times}{more}"
        if self.excluded:
            out += f"; {len(self.excluded)} candidates left out (timing.tuning.excluded says why)"
        if self.nvidia_ms:
            out += f"; narrowed with nvidia-matmul-heuristics too ({len(self.nvidia_ms)} estimated)"
        if self.runoff_ms:
            ran = ", ".join(f"{n} {ms:.4f} ms" for n, ms in sorted(self.runoff_ms.items(), key=lambda kv: kv[1]))
            turned = f", overturning the race's {self.race_winner}" if self.race_winner else ""
            out += f"; runoff of the {len(self.runoff_ms)} closest{turned}: {ran}"
        gap, best = self.oracle_gap, self.oracle_best
        if gap is not None:
            where = "the pick is the best" if best == self.winner else \
                f"best {best} {self.oracle_ms[best]:.4f} ms, the pick {100 * gap:.1f}% slower"
            out += f"; oracle over {len(self.oracle_ms)}: {where}"
        return out


def _kept(estimates: dict[str, float], keep: int) -> set[str]:
    """The `keep` names estimated fastest, and every one tied with the last of those."""
    known = sorted((ms, name) for name, ms in estimates.items())
    cut = known[keep - 1][0] if len(known) >= keep else float("inf")
    return {name for ms, name in known if ms <= cut}


def narrow(predicted: dict[str, float | None], keep: int = KEEP_PREDICTED,
           nvidia: dict[str, float] | None = None) -> tuple[list[str], dict[str, str]]:
    """The candidates to race: the `keep` the model predicts fastest, every one it predicts no slower than the
    last of those (a tie at the cut is not broken by name: at 8192x6144x4096 the model gave eleven CUTLASS tiles
    one time, and a cut by name left out the 128x256 tiles that win every other prefill problem), and every one
    it cannot predict (None). `nvidia`: NVIDIA's estimates (nvidia-matmul-heuristics, where installed) of the
    candidates it can describe; the `keep` it ranks first are raced too, so a candidate goes out only when
    neither model ranks it near the top. Returns (raced, left out with the reason)."""
    known = {name: ms for name, ms in predicted.items() if ms is not None}
    nvidia = {name: ms for name, ms in (nvidia or {}).items() if name in predicted and ms is not None}
    chosen = _kept(known, keep) | _kept(nvidia, keep)
    raced = [name for ms, name in sorted((ms, name) for name, ms in known.items()) if name in chosen] \
        + [name for name in predicted if name not in known]
    left = {}
    for name, ms in known.items():
        if name in chosen:
            continue
        why = f"the model predicts {ms:.4f} ms, slower than the {keep} it ranks first"
        if name in nvidia:
            why += f"; nvidia-matmul-heuristics estimates {nvidia[name]:.4f} ms, slower than the {keep} it ranks first"
        left[name] = why
    return raced, left


def race(names: Sequence[str], measure: Callable[[Sequence[str]], dict[str, Any]]):
    """Time the candidates together with `measure(names) -> {name: measurement}` (a Timer's measure over
    their launchers, each measurement with `samples_ms` and `error`); the winner is the lowest median.
    Returns (winner or None, {name: median ms}, {name: samples}, {name: why it has no time})."""
    got = measure(list(names))
    medians, counts, failed = {}, {}, {}
    for name in names:
        m = got.get(name)
        samples = list(getattr(m, "samples_ms", None) or [])
        if m is None or getattr(m, "error", None) is not None or not samples:
            failed[name] = f"no race time: {getattr(m, 'error', None) or getattr(m, 'stop_reason', 'not measured')}"
            continue
        medians[name], counts[name] = statistics.median(samples), len(samples)
    winner = min(medians, key=lambda n: (medians[n], names.index(n))) if medians else None
    return winner, medians, counts, failed
