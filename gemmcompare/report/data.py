"""Shared helpers for reports and comparisons: tidy result rows, read receipts, name things for display.

Rows arrive from three places (the SQLite store, a run folder's results.json, a committed results.csv) with
slightly different types (booleans as 0/1 or "True", JSON columns as text or objects, missing columns in
old files). `normalise_rows` gives every consumer the same frame.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable

import pandas as pd

from ..receipt import gpu_name, receipt_value  # noqa: F401  (re-exported for report modules)
from ..grouped import label_volume
from ..results import COLUMNS, JSON_COLUMNS

NUMERIC_COLUMNS = [
    "m", "n", "k", "batch", "max_abs_err", "max_rel_err", "max_abs_err_orig", "max_rel_err_orig",
    "worst_bound_ratio", "median_ms", "mean_ms", "min_ms", "max_ms", "stdev_ms", "cv", "iqr_ms", "median_ci_rel",
    "n_samples", "flops", "executed_flops", "tflops", "executed_tflops", "pct_of_baseline", "peak_tflops",
    "pct_of_peak", "unique_bytes", "registers", "smem_bytes", "spill_stores", "spill_loads", "stack_bytes",
    "build_seconds", "throttled_fraction", "predicted_ms", "predicted_tflops", "occupancy_ctas_per_sm", "occupancy",
    "wave_efficiency", "measured_over_predicted", "lda", "ldb", "ldc", "sm_clock_mhz", "max_sm_clock_mhz",
    "median_ms_at_max_clock", "energy_j_per_gemm", "energy_ci_rel", "avg_power_w", "gflop_per_j",
    "energy_sm_clock_mhz", "energy_throttled_fraction",
]
_JSON_DEFAULTS = {"params": dict, "checks": list, "samples_ms": list, "build_flags": list, "timing": dict,
                  "tolerance": dict, "telemetry": dict, "prediction": dict,
                 "energy_samples_j": list, "energy": dict, "grouped": dict}

# what a row is, for the report's summary and the bar colours: the families grouped into four kinds
KINDS = ("library", "CUTLASS", "hand-written", "custom")
_KIND_OF_FAMILY = {"library": "library", "cutlass": "CUTLASS", "lab": "hand-written", "mma_sync": "hand-written",
                   "hopper": "hand-written", "decode": "hand-written", "gemv": "hand-written",
                   "custom": "custom", "python": "custom"}


def kind_of(family: str) -> str:
    """'library', 'CUTLASS', 'hand-written' or 'custom' for the families gemmcompare has; another family
    (one added later) is its own kind. A tuned row's family is the tuned entry's name ('hopper.best',
    'hopper.grouped', 'mma_sync'): a dotted one is read by its first part."""
    family = family or ""
    return _KIND_OF_FAMILY.get(family) or _KIND_OF_FAMILY.get(family.split(".")[0], family or "other")


THROTTLED_MOSTLY = 0.5  # a row whose samples were mostly taken while throttled is marked in reports


def is_missing(value: Any) -> bool:
    """None or NaN: a value a row does not have."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _decode(value: Any, default: type) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return default()
    return default() if is_missing(value) else value


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return False if is_missing(value) else bool(value)


NORMALISED = "gemmcompare_normalised"  # a frame's attrs mark: normalise_rows made it (pandas carries attrs to slices)


def normalise_rows(df: pd.DataFrame | None) -> pd.DataFrame:
    """A copy with every result column present, numbers numeric, JSON columns decoded, is_baseline boolean.
    A frame this made (or a slice of one) is only copied: the dashboard compares the same runs' rows hundreds
    of times, and decoding them again was a tenth of its time."""
    if df is not None and df.attrs.get(NORMALISED) and set(COLUMNS) <= set(df.columns):
        return df.reset_index(drop=True)  # reset_index copies
    df = pd.DataFrame() if df is None else df.copy()
    for col in COLUMNS:
        if col not in df.columns:
            df[col] = None
    for col in NUMERIC_COLUMNS:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    for col in JSON_COLUMNS:
        df[col] = [_decode(v, _JSON_DEFAULTS[col]) for v in df[col]]
    df["is_baseline"] = [_as_bool(v) for v in df["is_baseline"]]
    for col in ("problem", "contract", "implementation", "family", "status", "reason", "notes", "run_id",
                "predicted_bound", "occupancy_limited_by"):
        values = ["" if is_missing(v) else str(v) for v in df[col]]
        df[col] = pd.Series([v.upper() for v in values] if col == "status" else values, index=df.index, dtype=object)
    # copy(): one block per dtype instead of one per column set above; the dashboard slices and compares
    # these frames hundreds of times, and each slice of 72 blocks was 72 copies (compare took twice as long)
    df = df.reset_index(drop=True).copy()
    df.attrs[NORMALISED] = True
    return df


# -- receipts --------------------------------------------------------------------------------------------

def timing_summary(receipt: dict | None, rows: pd.DataFrame | None = None) -> dict:
    """The timing settings (method, L2 policy, ...) from the receipt, else from the first row that has them."""
    value = receipt_value(receipt, "timing", "timing_settings")
    if isinstance(value, dict) and value:
        return value
    if rows is not None and "timing" in rows:
        for t in rows["timing"]:
            if isinstance(t, dict) and t:
                return t
    return {}


def run_label(receipt: dict | None, rows: pd.DataFrame | None = None, fallback: str = "run") -> str:
    """A short name for a run in titles: its id (from the receipt or the rows) or the fallback."""
    value = receipt_value(receipt, "run_id", "run.id", "run.run_id")
    if value:
        return str(value)
    if rows is not None and len(rows) and "run_id" in rows:
        ids = [r for r in rows["run_id"].dropna().unique() if r]
        if len(ids) == 1:
            return str(ids[0])
    return fallback


def attach_run(df: pd.DataFrame, receipt: dict | None, run: dict | None = None) -> pd.DataFrame:
    """Normalised rows with the run's GPU name in a `gpu` column (from the receipt, else the store's runs row)."""
    df = normalise_rows(df)
    name = gpu_name(receipt) or gpu_name(run or {})
    df["gpu"] = name or "unknown GPU"
    return df


# -- problems -------------------------------------------------------------------------------------------

def problem_sort_key(label: str) -> tuple:
    """Sort problems by size (m*n*k*batch), then by label; labels are 'MxNxK' or 'MxNxKxB', or a grouped
    problem's (grouped.py: its size is the sum of its group Ms times N times K)."""
    grouped = label_volume(label)
    if grouped is not None:
        return (grouped, str(label))
    parts = [int(p) for p in re.findall(r"\d+", str(label))]
    volume = math.prod(parts) if parts else 0
    return (volume, str(label))


def sorted_problems(labels: Iterable[str]) -> list[str]:
    return sorted(set(labels), key=problem_sort_key)


def fmt_bytes(n: float | None) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return ""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"
