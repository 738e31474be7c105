"""One result row per (run, problem, contract, implementation), and the columns every store and report uses.

Values are kept at full precision (times in milliseconds); rounding happens only when displaying.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any


class Status(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"
    BUILD_ERROR = "BUILD_ERROR"
    CRASH = "CRASH"
    TIMEOUT = "TIMEOUT"


@dataclass
class Result:
    run_id: str
    problem: str  # label "MxNxK" ("MxNxKxB" batched; a grouped problem's: grouped.py)
    m: int
    n: int
    k: int
    batch: int
    contract: str
    implementation: str  # procedural name, the identity of the implementation
    family: str
    params: dict[str, Any]
    status: Status
    reason: str = ""
    is_baseline: bool = False
    # correctness: errors over every fixture, against the rounded-input reference (judges) and the
    # original-input reference (reported); worst_bound_ratio = max |C-R| / tolerance (<= 1 passes)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    max_abs_err_orig: float | None = None
    max_rel_err_orig: float | None = None
    worst_bound_ratio: float | None = None
    checks: list[dict] = field(default_factory=list)  # one entry per fixture (and the timed-output re-check)
    # timing (milliseconds)
    samples_ms: list[float] = field(default_factory=list)
    median_ms: float | None = None
    mean_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    stdev_ms: float | None = None
    cv: float | None = None
    iqr_ms: float | None = None
    median_ci_rel: float | None = None  # relative half-width of the 95% CI of the median
    n_samples: int = 0
    # derived rates
    flops: int = 0  # logical (useful) work
    executed_flops: int | None = None  # when the implementation pads
    tflops: float | None = None  # logical FLOPs / median
    executed_tflops: float | None = None
    pct_of_baseline: float | None = None  # baseline median / this median * 100, same run+contract+problem
    baseline: str | None = None
    peak_tflops: float | None = None
    pct_of_peak: float | None = None
    unique_bytes: int | None = None
    # the contract's storage policy and the leading dimensions (elements) it handed this row; the same for
    # every row of one (problem, contract), so % of baseline compares one problem (contracts/storage.py)
    storage: str = ""
    lda: int | None = None
    ldb: int | None = None
    ldc: int | None = None
    # build resources (from ptxas -v)
    registers: int | None = None
    smem_bytes: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    stack_bytes: int | None = None
    arch: str | None = None
    build_flags: list[str] = field(default_factory=list)
    build_seconds: float | None = None
    # which method made the figure: "events" (CUDA events) or "cupti" (CUPTI kernel records); the other one's
    # median is in timing (event_median_ms, cupti_median_ms)
    timing_method: str = ""
    # the SM clock the samples ran at (median of NVML samples taken while each batch ran), the device's
    # maximum, and the median time scaled to that maximum: median_ms * sm_clock_mhz / max_sm_clock_mhz (what
    # a clock-bound kernel would take unthrottled; a memory-bound one gains less)
    sm_clock_mhz: float | None = None
    max_sm_clock_mhz: float | None = None
    median_ms_at_max_clock: float | None = None
    # energy per GEMM (contracts/energy.py; docs/timing.md, "Energy"): the median over energy batches of the
    # joules one launch took, with its CI's relative half-width (as median_ci_rel), each batch's figure, the
    # average power, GFLOP per joule (= GFLOP/s per watt), where it came from (counter, power_samples, none; ''
    # before energy was measured), the SM clock and throttled share of the energy batches, and their receipt
    energy_j_per_gemm: float | None = None
    energy_ci_rel: float | None = None
    energy_samples_j: list[float] = field(default_factory=list)
    avg_power_w: float | None = None
    gflop_per_j: float | None = None
    energy_source: str = ""
    energy_sm_clock_mhz: float | None = None
    energy_throttled_fraction: float | None = None
    energy: dict[str, Any] = field(default_factory=dict)
    # timing method and environment
    timing: dict[str, Any] = field(default_factory=dict)  # method, l2 policy, warm-up, sample counts
    tolerance: dict[str, Any] = field(default_factory=dict)  # rule, atol, rtol, c, length factor
    telemetry: dict[str, Any] = field(default_factory=dict)  # clocks, power, temperature, throttle reasons
    throttled_fraction: float | None = None
    notes: str = ""
    started_at: str = ""
    finished_at: str = ""
    # prediction (gemmcompare.model, runner/predictions.py): what the kernel's structure allows on this device
    predicted_ms: float | None = None
    predicted_tflops: float | None = None  # logical FLOPs / predicted_ms
    predicted_bound: str | None = None  # compute, memory, l1, l2 or waves
    occupancy_ctas_per_sm: int | None = None
    occupancy: float | None = None  # resident warps / the SM's warp slots
    occupancy_limited_by: str | None = None  # registers, shared_memory, threads, blocks (every limiting one)
    wave_efficiency: float | None = None  # waves / waves rounded up (1.0 without a tile)
    measured_over_predicted: float | None = None  # median_ms / predicted_ms: 2.5 means at 40% of its bound
    prediction: dict[str, Any] = field(default_factory=dict)  # the model's inputs and intermediates, or its error
    # the GPU that measured the row (its group and its baseline with it): nvidia-smi's index on its host
    # and the UUID, which names it in the run's receipt (receipt["gpus"]); None in rows of older stores
    gpu_index: int | None = None
    gpu_uuid: str | None = None
    # a grouped problem (grouped.py: its group Ms, layout, capacity and routing draw, as_dict); empty for a dense
    # one. Its m is the total rows (sum of the group Ms), so flops = 2*m*n*k still holds
    grouped: dict[str, Any] = field(default_factory=dict)

    def add_note(self, note: str) -> None:
        """Append a note ('; ' between notes); a note the row already carries is not repeated, part by part (a
        Python row's note is several parts, and each fixture's check prepares the row again)."""
        parts = self.notes.split("; ") if self.notes else []
        for part in note.split("; ") if note else []:
            if part and part not in parts:
                parts.append(part)
        self.notes = "; ".join(parts)

    def to_record(self) -> dict[str, Any]:
        """A flat dict: scalars as they are, lists and dicts as JSON text (for SQLite and CSV)."""
        rec = asdict(self)
        rec["status"] = self.status.value
        for key in JSON_COLUMNS:
            rec[key] = json.dumps(rec[key], default=_json_default)
        for key, value in rec.items():
            if isinstance(value, float) and not math.isfinite(value):
                rec[key] = None if math.isnan(value) else value
        return rec


JSON_COLUMNS = ("params", "checks", "samples_ms", "build_flags", "timing", "tolerance", "telemetry", "prediction",
                "energy_samples_j", "energy", "grouped")

COLUMNS = list(Result.__dataclass_fields__)


def _json_default(obj):
    if isinstance(obj, enum.Enum):
        return obj.value
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def decode_record(rec: dict[str, Any]) -> dict[str, Any]:
    """Inverse of to_record for the JSON columns (used when reading rows back)."""
    out = dict(rec)
    for key in JSON_COLUMNS:
        if isinstance(out.get(key), str):
            out[key] = json.loads(out[key])
    return out


def concat_rows(frames: list) -> "pd.DataFrame":
    """Several frames of rows (runs, sources) as one, every column kept. A column that is empty in one frame
    (all NaN there: an older run without it) is left out of that frame before joining, as pandas 2 did and pandas
    3 will not (pandas 2.2 warns), so the column's type comes from the frames that have it."""
    import pandas as pd

    columns = list(dict.fromkeys(c for f in frames for c in f.columns))
    kept = [f.dropna(axis=1, how="all") for f in frames]
    return pd.concat(kept, ignore_index=True).reindex(columns=columns)
