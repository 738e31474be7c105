"""Choosing a tuned row's winner: the model narrows the candidates (with NVIDIA's nvidia-matmul-heuristics as a
second opinion where it is installed), a brief race picks among the rest.

The race is short on purpose (BRIEF: a few samples each, interleaved, under the run's L2 policy and timing
method): its samples only rank the candidates. The winner's reported time comes from the row's own
measurement afterwards, on a fresh draw, so that a candidate that drew a lucky sample in the race is not
also reported at that sample (the winner's curse: the minimum of several noisy medians is biased low).
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


def brief_settings(settings):
    """The run's TimingSettings, cut down for the race (rotate becomes flush: the race makes no input copies)."""
    return dataclasses.replace(settings, min_samples=BRIEF_MIN, max_samples=BRIEF_MAX, target_noise=0.0,
                               warmup_count=1, max_ms=min(settings.max_ms, 500.0),
                               l2="flush" if settings.l2 == "rotate" else settings.l2)


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

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

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
