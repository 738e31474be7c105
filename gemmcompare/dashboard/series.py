"""One series page's data: every implementation's figure over the runs of one (GPU, contract, problem), with
its 95% CI, the baseline's own drift, the recorded SM clock and THROTTLED flags, and the steps between
consecutive runs (steps.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..report.data import THROTTLED_MOSTLY
from ..report.stats import median_ci, rate_ci
from .runs import Run
from .steps import series_steps

METRICS = {"tflops": "TFLOP/s (logical)", "pct_of_peak": "% of the GPU's peak",
           "gflop_per_j": "GFLOP per joule (energy per GEMM)"}


@dataclass
class Series:
    gpu: str
    contract: str
    problem: str
    runs: list[Run]  # the runs with a row here, oldest first; x = the index in this list
    points: pd.DataFrame  # one row per (run, implementation)
    steps: pd.DataFrame  # steps.STEP_COLUMNS, plus x (the later run's position)
    metric: str  # a key of METRICS

    @property
    def baseline(self) -> str | None:
        names = self.points.loc[self.points["is_baseline"], "implementation"]
        return names.iloc[-1] if len(names) else None


def _peak_share(values: list[float], peak: float) -> list[float]:
    return [100 * v / peak if math.isfinite(peak) and peak > 0 else math.nan for v in values]


def _per_joule(r) -> list[float]:
    """GFLOP per joule with its 95% CI (the energy's relative CI, turned over); NaN without an energy figure."""
    value = r.get("gflop_per_j", math.nan) if r["status"] == "PASS" else math.nan
    rel = r.get("energy_ci_rel", math.nan)
    if value is None or not np.isfinite(value):
        return [math.nan] * 3
    if rel is None or not np.isfinite(rel) or rel >= 1:
        return [value, math.nan, math.nan]
    return [value, value / (1 + rel), value / (1 - rel)]


def series_points(runs: list[Run], contract: str, problem: str, metric: str = "tflops") -> pd.DataFrame:
    """value / lo / hi are the metric (TFLOP/s, or % of the GPU's peak) and its 95% CI from the raw samples;
    median_ms with its CI (ms_lo, ms_hi); the run's SM clock and whether the row was THROTTLED."""
    records = []
    for x, run in enumerate(runs):
        for _, r in run.rows_at(contract, problem).iterrows():
            ci = rate_ci(r["flops"], r["samples_ms"])
            tf = r["tflops"] if r["status"] == "PASS" else math.nan
            value, lo, hi = tf, *(ci if ci else (math.nan, math.nan))
            if metric == "pct_of_peak":
                value, lo, hi = _peak_share([value, lo, hi], r["peak_tflops"])
            elif metric == "gflop_per_j":
                value, lo, hi = _per_joule(r)
            ms_ci = median_ci(r["samples_ms"])
            throttled = r["throttled_fraction"]
            records.append({
                "x": x, "run_id": run.run_id, "label": run.label, "implementation": r["implementation"],
                "is_baseline": bool(r["is_baseline"]), "status": r["status"], "value": value, "lo": lo, "hi": hi,
                "median_ms": r["median_ms"], "ms_lo": ms_ci[0] if ms_ci else math.nan,
                "ms_hi": ms_ci[1] if ms_ci else math.nan, "sm_clock_mhz": r["sm_clock_mhz"],
                "max_sm_clock_mhz": r["max_sm_clock_mhz"],
                "throttled": bool(np.isfinite(throttled) and throttled > THROTTLED_MOSTLY)})
    return pd.DataFrame(records)


def build_series(runs: list[Run], gpu: str, contract: str, problem: str, metric: str = "tflops",
                 threshold: float | None = None) -> Series:
    """The series of (gpu, contract, problem) over `runs` (all of one GPU, oldest first)."""
    here = [r for r in runs if len(r.rows_at(contract, problem))]
    points = series_points(here, contract, problem, metric)
    steps = series_steps(here, contract, problem, threshold)
    position = {r.run_id: i for i, r in enumerate(here)}
    steps["x"] = steps["cand_run"].map(position)
    return Series(gpu, contract, problem, here, points, steps, metric)
