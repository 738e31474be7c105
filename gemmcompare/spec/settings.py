"""The `correctness:`, `timing:` and `report:` sections: settings with defaults."""

from __future__ import annotations

from ..contracts.correctness import FIXTURES, CorrectnessSettings
from ..contracts.energy_meter import MAX_BATCH_MS
from ..contracts.precision import PrecisionContract
from ..contracts.timing import L2_POLICIES, TimingSettings
from ..contracts.timing_methods import METHODS as TIMING_METHODS
from ..report.kinds import PLOT_NAMES as PLOTS
from .checker import _flag, _number
from .experiment import ReportSettings
from .issues import nearest


CORRECTNESS_KEYS = {"fixtures", "seed", "c", "length_factor", "check_timed_output"}


def _correctness(ck, raw) -> CorrectnessSettings:
    path = ("correctness",)
    raw = ck.mapping(raw, path, "correctness")
    if raw is None:
        return CorrectnessSettings()
    ck.unknown_keys(raw, CORRECTNESS_KEYS, path, "correctness")
    fixtures = raw.get("fixtures", list(CorrectnessSettings().fixtures))
    if not isinstance(fixtures, list) or not fixtures:
        ck.error(path + ("fixtures",), f"fixtures must be a non-empty list from {list(FIXTURES)}")
        fixtures = ["uniform"]
    for i, f in enumerate(fixtures):
        if f not in FIXTURES:
            ck.error(path + ("fixtures", i), f"unknown fixture {f!r}; expected one of {list(FIXTURES)}", nearest(str(f), FIXTURES))
    seed = raw.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        ck.error(path + ("seed",), f"seed must be an integer or null (fresh each run), got {seed!r}")
        seed = None
    lf = raw.get("length_factor", "sqrt")
    if lf not in ("sqrt", "linear"):
        ck.error(path + ("length_factor",), f"length_factor must be 'sqrt' or 'linear', got {lf!r}", nearest(str(lf), ["sqrt", "linear"]))
        lf = "sqrt"
    check_timed = _flag(ck, raw, "check_timed_output", path, True)
    return CorrectnessSettings(
        fixtures=tuple(f for f in fixtures if f in FIXTURES) or ("uniform",),
        seed=seed,
        c=float(_number(ck, raw, "c", path, 4.0, minimum=0)),
        length_factor=lf,
        check_timed_output=check_timed,
    )


TIMING_KEYS = {"l2", "warmup", "samples", "max_ms", "target_noise", "batch", "graph", "row_timeout_s", "method",
               "launch_window_us", "lockstep", "energy", "oracle"}


def _timing(ck, raw) -> TimingSettings:
    path = ("timing",)
    raw = ck.mapping(raw, path, "timing")
    d = TimingSettings()
    if raw is None:
        return d
    ck.unknown_keys(raw, TIMING_KEYS, path, "timing")
    l2 = raw.get("l2", d.l2)
    if l2 not in L2_POLICIES:
        ck.error(path + ("l2",), f"l2 must be one of {list(L2_POLICIES)}, got {l2!r}", nearest(str(l2), L2_POLICIES))
        l2 = d.l2
    warm = ck.mapping(raw.get("warmup"), path + ("warmup",), "warmup") or {}
    ck.unknown_keys(warm, {"count", "ms"}, path + ("warmup",), "warmup")
    samples = ck.mapping(raw.get("samples"), path + ("samples",), "samples") or {}
    ck.unknown_keys(samples, {"min", "max"}, path + ("samples",), "samples")
    min_s = _number(ck, samples, "min", path + ("samples",), d.min_samples, integer=True, minimum=1)
    max_s = _number(ck, samples, "max", path + ("samples",), d.max_samples, integer=True, minimum=1)
    if max_s < min_s:
        ck.error(path + ("samples",), f"samples.max ({max_s}) is below samples.min ({min_s})")
    method = raw.get("method", d.method)
    if method not in TIMING_METHODS:
        ck.error(path + ("method",), f"method must be one of {list(TIMING_METHODS)}, got {method!r}",
                 nearest(str(method), TIMING_METHODS))
        method = d.method
    window = _number(ck, raw, "launch_window_us", path, None, minimum=0) if "launch_window_us" in raw else None
    energy_batches, energy_ms = _energy(ck, raw.get("energy"), path + ("energy",), d)
    return TimingSettings(
        l2=l2,
        warmup_count=_number(ck, warm, "count", path + ("warmup",), d.warmup_count, integer=True, minimum=0),
        warmup_ms=float(_number(ck, warm, "ms", path + ("warmup",), d.warmup_ms, minimum=0)),
        min_samples=min_s,
        max_samples=max_s,
        max_ms=float(_number(ck, raw, "max_ms", path, d.max_ms, minimum=1)),
        target_noise=float(_number(ck, raw, "target_noise", path, d.target_noise, minimum=0)),
        batch=_number(ck, raw, "batch", path, d.batch, integer=True, minimum=1),
        graph=_flag(ck, raw, "graph", path, d.graph),
        row_timeout_s=float(_number(ck, raw, "row_timeout_s", path, d.row_timeout_s, minimum=1)),
        method=method,
        launch_window_us=None if window is None else float(window),
        lockstep=_flag(ck, raw, "lockstep", path, d.lockstep),
        energy_batches=energy_batches,
        energy_min_batch_ms=energy_ms,
        oracle=_flag(ck, raw, "oracle", path, d.oracle),
    )


ENERGY_BATCHES = 7  # `energy: true`: enough batches for the median's CI (6 at least)


def _energy(ck, raw, path, d: TimingSettings) -> tuple[int, float]:
    """`energy: false` or absent (no energy batches), `true` (ENERGY_BATCHES), or {batches: N, min_batch_ms: MS}."""
    if raw is None or raw is False:
        return d.energy_batches, d.energy_min_batch_ms
    if raw is True:
        return ENERGY_BATCHES, d.energy_min_batch_ms
    raw = ck.mapping(raw, path, "energy (true, false or a mapping)")
    if raw is None:
        return d.energy_batches, d.energy_min_batch_ms
    ck.unknown_keys(raw, {"batches", "min_batch_ms"}, path, "energy")
    batches = _number(ck, raw, "batches", path, ENERGY_BATCHES, integer=True, minimum=0)
    if 0 < batches < 6:  # the median's CI (timing.median_ci_rel) needs six
        ck.error(path + ("batches",), f"energy.batches must be 0 (off) or at least 6 for a confidence interval, "
                                      f"got {batches}")
    min_ms = float(_number(ck, raw, "min_batch_ms", path, d.energy_min_batch_ms, minimum=1))
    if min_ms > MAX_BATCH_MS:  # a batch is never made longer than this, so a longer first size is a mistake
        ck.error(path + ("min_batch_ms",), f"energy.min_batch_ms must be at most {MAX_BATCH_MS:g} (the longest "
                                           f"energy batch), got {min_ms:g}")
        min_ms = d.energy_min_batch_ms
    return batches, min_ms


def _report(ck, raw, contracts: list[PrecisionContract]) -> ReportSettings:
    path = ("report",)
    raw = ck.mapping(raw, path, "report")
    if raw is None:
        return ReportSettings()
    ck.unknown_keys(raw, {"plots", "threshold", "across"}, path, "report")
    across = raw.get("across")
    names = [c.name for c in contracts]
    if across is not None and across not in names:
        ck.error(path + ("across",), f"across names the contract the others are compared with: one of the "
                                     f"spec's contracts {names}, got {across!r}", nearest(str(across), names))
        across = None
    plots = raw.get("plots", list(ReportSettings().plots))
    threshold = float(_number(ck, raw, "threshold", path, ReportSettings().threshold, minimum=0, below=1))
    if threshold <= 0:  # `compare` takes a threshold in (0, 1) and would ignore this one
        ck.error(path + ("threshold",), f"threshold must be above 0 (a fraction such as 0.03), got {threshold}")
        threshold = ReportSettings().threshold
    if not isinstance(plots, list):
        ck.error(path + ("plots",), f"plots must be a list from {list(PLOTS)}")
        return ReportSettings(threshold=threshold, across=across)
    for i, p in enumerate(plots):
        if p not in PLOTS:
            ck.error(path + ("plots", i), f"unknown plot {p!r}; expected one of {list(PLOTS)}", nearest(str(p), PLOTS))
    return ReportSettings(tuple(p for p in plots if p in PLOTS), threshold, across)
