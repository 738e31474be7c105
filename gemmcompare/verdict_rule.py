"""The noise rule every `compare` verdict uses (verdicts.py: time; energy_verdicts.py: energy): confidence intervals
of a log ratio from raw samples (Mann-Whitney / Hodges-Lehmann) or from stored CI half-widths, and the verdict
of a log ratio against a threshold. The exact rule is written out in verdicts.py's docstring."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

MIN_SAMPLES = 5
CONFIDENCE = 0.95
MAX_SAMPLES = 2000  # per side, for the pairwise-difference interval (2000 x 2000 differences)


def _positive(samples: Any) -> np.ndarray:
    if not isinstance(samples, (list, tuple, np.ndarray)):
        return np.array([])
    arr = np.asarray(samples, dtype=float)
    arr = arr[np.isfinite(arr) & (arr > 0)]
    if len(arr) > MAX_SAMPLES:  # evenly spaced order statistics keep the distribution's shape
        arr = np.sort(arr)[np.linspace(0, len(arr) - 1, MAX_SAMPLES).round().astype(int)]
    return arr


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def shift_interval(base: np.ndarray, cand: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Confidence interval of the shift ln(cand) - ln(base): the order statistics k and N-k+1 of the N pairwise
    differences, with k from the Mann-Whitney U distribution (normal approximation). None when the samples are
    too few for that confidence."""
    lb, lc = np.log(base), np.log(cand)
    nb, nc = len(lb), len(lc)
    n = nb * nc
    k = int(math.floor(n / 2 - _z(confidence) * math.sqrt(nb * nc * (nb + nc + 1) / 12)))
    if k < 1:
        return None
    diffs = np.sort((lc[:, None] - lb[None, :]).ravel())
    return float(diffs[k - 1]), float(diffs[n - k])


def median_log_halfwidth(samples: Any, stored_rel: Any = None, confidence: float = CONFIDENCE) -> float | None:
    """Half-width, in ln units, of a distribution-free CI of the median (order statistics of the binomial), from
    the raw samples; else from the row's stored relative half-width (a 95% figure, rescaled to `confidence`);
    None when neither is known."""
    arr = np.sort(_positive(samples))
    n = len(arr)
    if n >= MIN_SAMPLES:
        j = int(math.floor(n / 2 - _z(confidence) * math.sqrt(n) / 2))
        if j >= 1:
            return float(math.log(arr[n - j]) - math.log(arr[j - 1])) / 2
    if stored_rel is not None and np.isfinite(stored_rel) and stored_rel >= 0:
        return math.log1p(float(stored_rel)) * _z(confidence) / _z(0.95)
    return None


def judge(d: float, interval: tuple[float, float] | None, threshold: float) -> tuple[str, str]:
    """The verdict for a log ratio d (> 0 is slower) with its interval, and a short reason."""
    tau = math.log1p(threshold)
    if interval is None:
        return "UNKNOWN", "no noise estimate (too few samples)"
    lo, hi = interval
    if abs(d) > tau:
        if lo > 0 or hi < 0:
            return ("SLOWER" if d > 0 else "FASTER"), "beyond the threshold and significant"
        return "UNKNOWN", "beyond the threshold but within the noise"
    if (hi - lo) / 2 <= tau:
        return "SAME", "within the threshold"
    return "UNKNOWN", "within the threshold, but the noise is wider than it"


def _symmetric(d: float, halfwidths: list[float | None]) -> tuple[float, float] | None:
    """d +/- the root sum of squares of independent half-widths; None when any is unknown."""
    if any(h is None for h in halfwidths):
        return None
    h = math.sqrt(sum(x * x for x in halfwidths))
    return d - h, d + h
