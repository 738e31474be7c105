"""`compare`'s energy verdict, beside the time verdict, by the same noise rule (verdict_rule.py): with
r = candidate J per GEMM / base J per GEMM, d = ln r, the interval from the rows' per-batch energies
(energy_samples_j, Mann-Whitney / Hodges-Lehmann, at least MIN_SAMPLES a side) or else from their stored CIs
(energy_ci_rel), simultaneous over the rows judged (the same Bonferroni confidence as the time's):

  MORE_ENERGY / LESS_ENERGY   beyond the threshold and significant
  SAME                        within the threshold, the interval no wider than it
  UNKNOWN                     otherwise (within the noise, or too noisy)
  ''                          either row has no energy figure (energy off, no NVML, an older run)

An energy verdict does not change the exit code: energy at a power cap follows the card's state as time does, and
a time regression is what CI gates on. Rows from different GPUs are not judged on energy (different boards).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .verdict_rule import MIN_SAMPLES, _positive, _symmetric, judge, median_log_halfwidth, shift_interval

ENERGY_WORDS = {"SLOWER": "MORE_ENERGY", "FASTER": "LESS_ENERGY", "SAME": "SAME", "UNKNOWN": "UNKNOWN"}


def _value(row: pd.Series) -> float | None:
    v = row.get("energy_j_per_gemm")
    return float(v) if v is not None and np.isfinite(v) and v > 0 else None


def energy_fields(b: pd.Series, c: pd.Series, normalised: bool, threshold: float, conf: float) -> dict[str, Any]:
    """energy_verdict, energy_detail and energy_ratio (with its interval) for a pair of PASS rows."""
    bv, cv = _value(b), _value(c)
    if normalised:
        return dict(energy_verdict="", energy_detail="different GPUs: energy not judged")
    if bv is None or cv is None:
        missing = " and ".join(side for side, v in (("base", bv), ("candidate", cv)) if v is None)
        return dict(energy_verdict="", energy_detail=f"no energy figure in the {missing}")
    d = math.log(cv / bv)
    bs, cs = _positive(b.get("energy_samples_j")), _positive(c.get("energy_samples_j"))
    if len(bs) >= MIN_SAMPLES and len(cs) >= MIN_SAMPLES:
        interval = shift_interval(bs, cs, conf)
    else:
        interval = _symmetric(d, [median_log_halfwidth(None, r.get("energy_ci_rel"), conf) for r in (b, c)])
    verdict, reason = judge(d, interval, threshold)
    lo, hi = interval if interval else (None, None)
    text = f"{100 * math.expm1(d):+.1f}% J per GEMM"
    if lo is not None:
        text += f" (CI {100 * math.expm1(lo):+.1f}..{100 * math.expm1(hi):+.1f}%)"
    sources = {str(b.get("energy_source") or ""), str(c.get("energy_source") or "")}
    if len(sources) > 1:
        text += f", read from {' vs '.join(sorted(sources))}"
    return dict(energy_verdict=ENERGY_WORDS[verdict], energy_detail=f"{text}: {reason}", energy_ratio=math.exp(d),
                energy_ratio_lo=None if lo is None else math.exp(lo), energy_ratio_hi=None if hi is None else math.exp(hi))
