"""Every timed row gets its prediction beside its measurement: the model's time, bound, occupancy and
wave efficiency for the device in use (the device table's entry, overridden by what the device reports),
the measured/predicted ratio, and the model's inputs in the `prediction` column.

Pure Python (gemmcompare.model); a row the model cannot describe (a custom kernel, a device not in the
table) keeps empty prediction columns and says why in `prediction["error"]`: a prediction never fails a row.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..model.devices import DeviceSpec, device_from_properties
from ..model.predict import Prediction, predict_row
from ..results import Result


def model_device(device: Any) -> DeviceSpec:
    """The model's view of a live device (a gemmcompare.device.DeviceInfo or a dict of its properties)."""
    return device_from_properties(device)


def prediction_record(p: Prediction) -> dict[str, Any]:
    """What the `prediction` column keeps: every input and intermediate, JSON-ready."""
    return {"device": p.device, **p.as_dict()}


def apply_prediction(row: Result, p: Prediction) -> None:
    """Fill a row's prediction columns from `p` (and the ratio, when the row was timed)."""
    row.predicted_ms = p.predicted_ms
    row.predicted_tflops = p.predicted_tflops
    row.predicted_bound = p.bound
    if p.occupancy is not None:
        row.occupancy_ctas_per_sm = p.occupancy.ctas_per_sm
        row.occupancy = p.occupancy.occupancy
        row.occupancy_limited_by = ",".join(p.occupancy.limited_by)
    row.wave_efficiency = p.wave_efficiency
    if row.median_ms:
        row.measured_over_predicted = row.median_ms / p.predicted_ms
    row.prediction = prediction_record(p)
    nvidia = nvidia_heuristics(row, p)
    if nvidia is not None:
        row.prediction["nvidia_matmul_heuristics"] = nvidia


def nvidia_heuristics(row: Result, p: Prediction) -> dict[str, Any] | None:
    """NVIDIA's own estimate (nvidia-matmul-heuristics) beside ours, for a CUTLASS row, when that package is
    installed (it is optional: model/heuristics.py says what it covers and how far off it was on the H200);
    None for other rows or without the package, a record with `error` when it cannot serve the configuration."""
    if row.family != "cutlass":
        return None
    from ..model import heuristics
    from ..model.devices import device_spec

    if not heuristics.available():
        return None
    spec = device_spec(p.device)
    if spec is None:
        return {"error": f"{p.device}: not a GPU of the device table"}
    layout = ("n" if p.kernel.a_col else "t") + ("n" if p.kernel.b_col else "t")
    try:
        est = heuristics.estimate_kernel(p.problem, p.kernel, spec, layout)
    except Exception as exc:  # noqa: BLE001 - a closed library's failure is recorded, never the row's
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    if est is None:
        return {"error": "the package does not serve this configuration or GPU (see gemmcompare/model/heuristics.py)"}
    return {"runtime_ms": est.runtime_ms, "target": est.target, "precision": est.precision, "calibrated": est.calibrated,
            "cta": list(est.cta), "cluster": list(est.cluster), "stages": est.stages,
            "measured_over_estimate": (row.median_ms / est.runtime_ms) if row.median_ms else None}


def attach_predictions(rows: Iterable[Result], device: DeviceSpec | Any) -> None:
    """Predict every row on `device` (a DeviceSpec, or a live device's properties)."""
    try:
        spec = device if isinstance(device, DeviceSpec) else model_device(device)
    except (KeyError, ValueError) as exc:  # e.g. a compute capability the occupancy tables lack
        for row in rows:
            row.prediction = {"error": f"no model of this device: {exc}"}
        return
    for row in rows:
        try:
            apply_prediction(row, predict_row(row, spec))
        except (KeyError, ValueError) as exc:
            row.prediction = {"error": str(exc).strip("'\"")}
