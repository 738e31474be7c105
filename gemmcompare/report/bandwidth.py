"""Achieved HBM bandwidth per row: unique bytes (A and B read once, C written, and read when beta != 0) over
the median time, in GB/s (1e9 bytes per second), and that as a percentage of the device's HBM ceiling, the
figure the model's roofline uses (gemmcompare.model.devices). A memory-bound problem (16x4096x4096 BF16:
32 MiB of B for 0.5 GFLOP) is judged by how close it comes to streaming its bytes, not by TFLOP/s.

Derived at report time from what every row already stores (unique_bytes, median_ms, peak_tflops, flops, the
GPU name, the prediction's bandwidth), so a committed receipt gets the figures when its report is rebuilt.
A figure that is missing (no HBM ceiling for the GPU, no time) is NaN, never a guess.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..model.devices import device_spec
from .data import is_missing


def hbm_ceiling(gpu: str | None, prediction: Any = None) -> float | None:
    """Bytes/s the roofline allows: the bandwidth the model used for this row (its prediction), else the device
    table's figure for the GPU, else None."""
    if isinstance(prediction, dict) and _positive(prediction.get("bandwidth")):
        return float(prediction["bandwidth"])
    spec = device_spec(gpu) if gpu else None
    return spec.memory_bandwidth if spec is not None and _positive(spec.memory_bandwidth) else None


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not is_missing(v) and v > 0


def _peak_tflops(peak: Any, prediction: Any) -> float | None:
    if _positive(peak):
        return float(peak)
    roof = prediction.get("roofline") if isinstance(prediction, dict) else None
    return float(roof["peak_tflops"]) if isinstance(roof, dict) and _positive(roof.get("peak_tflops")) else None


def memory_rates(df: pd.DataFrame) -> pd.DataFrame:
    """Per row of `df` (normalised rows with a `gpu` column): achieved_gbs and pct_of_hbm_roofline (PASS rows
    with a time; NaN otherwise), and
    memory_bound (True where the plain roofline puts the problem on the memory roof: its unique bytes at the
    HBM ceiling take longer than its logical FLOPs at the datasheet peak; False where it is compute-bound or
    a figure is missing)."""
    prediction = df["prediction"] if "prediction" in df else [None] * len(df)
    gbs, pct, bound = [], [], []
    for status, b, t, flops, peak, gpu, p in zip(df["status"], df["unique_bytes"], df["median_ms"], df["flops"],
                                                 df["peak_tflops"], df["gpu"], prediction):
        ceiling = hbm_ceiling(gpu, p)
        timed = status == "PASS" and _positive(b) and _positive(t)  # a wrong result may not have moved its bytes
        rate = b / (t * 1e-3) / 1e9 if timed else math.nan
        gbs.append(rate)
        pct.append(100.0 * rate * 1e9 / ceiling if ceiling and not math.isnan(rate) else math.nan)
        top = _peak_tflops(peak, p)
        bound.append(bool(ceiling and top and _positive(b) and _positive(flops)
                          and b / ceiling > flops / (top * 1e12)))
    return pd.DataFrame({"achieved_gbs": gbs, "pct_of_hbm_roofline": pct, "memory_bound": bound}, index=df.index)
