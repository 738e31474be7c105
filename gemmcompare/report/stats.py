"""Confidence intervals that report plots draw as error bars, from each row's raw samples (samples_ms).

The median's interval is distribution-free: order statistics j and n-j+1 of the n sorted samples, with j from
the binomial (normal approximation), so it needs no assumption about the shape of the time distribution
(throttling makes it skewed or bimodal). Rates and ratios carry it through: TFLOP/s = flops / time, and % of
baseline = baseline median / median, whose interval combines the two medians' intervals in log space.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

CONFIDENCE = 0.95
MIN_SAMPLES = 5  # fewer samples give no interval: the error bar is left out rather than invented


def samples_of(value: Any) -> np.ndarray:
    """The finite positive samples of a row's samples_ms (a list, or anything else: none)."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        return np.array([])
    arr = np.asarray(value, dtype=float)
    return arr[np.isfinite(arr) & (arr > 0)]


def median_ci(samples: Any, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """(lo, hi) of a `confidence` interval of the median time, in the samples' unit; None with too few samples."""
    arr = np.sort(samples_of(samples))
    n = len(arr)
    if n < MIN_SAMPLES:
        return None
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    j = max(1, int(math.floor(n / 2 - z * math.sqrt(n) / 2)))
    return float(arr[j - 1]), float(arr[n - j])


def rate_ci(work: float, samples: Any, unit: float = 1e12, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """(lo, hi) of work / time, for `work` per launch (FLOPs or bytes) and times in ms, in `unit`s per second
    (1e12: TFLOP/s from FLOPs; 1e9: GB/s from bytes)."""
    ci = median_ci(samples, confidence)
    if ci is None or not work or not math.isfinite(work):
        return None
    lo_ms, hi_ms = ci
    return work / (hi_ms * 1e-3) / unit, work / (lo_ms * 1e-3) / unit


def _log_halfwidth(samples: Any, confidence: float) -> float | None:
    ci = median_ci(samples, confidence)
    return None if ci is None else (math.log(ci[1]) - math.log(ci[0])) / 2


def percent_ci(pct: float, samples: Any, baseline_samples: Any, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """(lo, hi) around a % of baseline: the row's and the baseline's median intervals (log half-widths)
    combined as independent errors; None when either has too few samples."""
    h = [_log_halfwidth(s, confidence) for s in (samples, baseline_samples)]
    if any(x is None for x in h) or not (pct > 0 and math.isfinite(pct)):
        return None
    half = math.hypot(*h)
    return pct * math.exp(-half), pct * math.exp(half)
