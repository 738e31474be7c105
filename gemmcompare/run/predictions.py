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
