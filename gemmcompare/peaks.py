"""Datasheet peaks per GPU: the denominators of "% of peak" and the ceilings of the roofline.

Every figure is the vendor's published *dense* rate (no structured sparsity) at boost clock, in TFLOP/s,
and the published memory bandwidth in bytes per second. A measured kernel can run below these (clocks under
load) but never meaningfully above them; they are context, not targets.

The compute peak a row is held against follows its precision contract:
  - f16 / bf16 inputs (any layout)           -> dense tensor-core rate for that accumulator
  - f32 inputs, math mode `tf32`             -> dense TF32 tensor-core rate
  - f32 inputs, math mode `strict`           -> FP32 CUDA-core (SIMT) rate
  - f64 inputs                               -> FP64 rate (tensor-core FP64 where the part has it)
  - e4m3 / e5m2 (FP8) inputs                 -> dense FP8 tensor-core rate, where the table has it (None: unknown)
GeForce Ada halves the tensor rate when accumulating in FP32 (the RTX 4090's 165 vs 330 TFLOP/s), so the
accumulator is part of the lookup; datacenter parts publish one rate for both accumulator widths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

@dataclass(frozen=True)
class DevicePeaks:
    """Published dense peaks of one GPU model. Rates in TFLOP/s, bandwidth in bytes per second."""

    name: str
    f16_tensor: float  # f16/bf16 inputs, f32 accumulate, dense
    tf32_tensor: float  # dense
    f32_simt: float  # FP32 on CUDA cores
    bandwidth: float  # bytes/s (HBM or GDDR)
    f16_tensor_f16acc: float | None = None  # only where it differs from f16_tensor (GeForce)
    f64: float | None = None
    fp8_tensor: float | None = None  # FP8 inputs, dense; None where not taken from a datasheet
    source: str = "datasheet"


# Ordered: the first pattern that matches a device name (case-insensitive search) wins, so the more
# specific spellings (PCIe, NVL, 40GB) come before the generic ones.
_TABLE: list[tuple[str, DevicePeaks]] = [
    # NVIDIA H200 datasheet (SXM): same compute as H100 SXM, 141 GB HBM3e at 4.8 TB/s.
    (r"h200\s*nvl", DevicePeaks("H200 NVL", 835.5, 417.5, 60.0, 4.8e12, f64=60.0,
                                source="datasheet (H200 NVL; sparse figures halved)")),
    # FP8 (H100/H200 SXM datasheets): 3,958 TFLOP/s with sparsity, 1,979 dense; H100 PCIe 3,026 -> 1,513.
    (r"h200", DevicePeaks("H200 SXM", 989.4, 494.7, 67.0, 4.8e12, f64=67.0, fp8_tensor=1979.0,
                          source="datasheet (H200 SXM)")),
    # NVIDIA H100 datasheet: SXM 989.4 / 494.7 / 67.0 TFLOP/s, 3.35 TB/s; PCIe 756 / 378 / 51, 2.0 TB/s;
    # NVL 835.5 / 417.5 / 60, 3.9 TB/s (the datasheet lists sparse rates: halved here).
    (r"h100.*pcie", DevicePeaks("H100 PCIe", 756.5, 378.0, 51.0, 2.0e12, f64=51.0, fp8_tensor=1513.0,
                                source="datasheet (H100 PCIe)")),
    (r"h100\s*nvl", DevicePeaks("H100 NVL", 835.5, 417.5, 60.0, 3.9e12, f64=60.0,
                                source="datasheet (H100 NVL; sparse figures halved)")),
    (r"h100", DevicePeaks("H100 SXM", 989.4, 494.7, 67.0, 3.35e12, f64=67.0, fp8_tensor=1979.0,
                          source="datasheet (H100 SXM)")),
    # NVIDIA A100 datasheet: 312 / 156 / 19.5 TFLOP/s; 80GB SXM 2.039 TB/s, 80GB PCIe 1.935, 40GB 1.555.
    (r"a100.*(pcie.*80|80.*pcie)", DevicePeaks("A100 80GB PCIe", 312.0, 156.0, 19.5, 1.935e12, f64=19.5,
                                               source="datasheet (A100 80GB PCIe)")),
    (r"a100.*40", DevicePeaks("A100 40GB", 312.0, 156.0, 19.5, 1.555e12, f64=19.5, source="datasheet (A100 40GB)")),
    (r"a100", DevicePeaks("A100 80GB SXM", 312.0, 156.0, 19.5, 2.039e12, f64=19.5,
                          source="datasheet (A100 80GB SXM)")),
    # NVIDIA L40S datasheet: FP16/BF16 tensor 362.05, TF32 183, FP32 91.6 TFLOP/s, 864 GB/s.
    (r"l40s", DevicePeaks("L40S", 362.05, 183.0, 91.6, 0.864e12, source="datasheet (L40S)")),
    # NVIDIA Ada architecture whitepaper, RTX 4090: FP16 tensor 165.2 with FP32 accumulate, 330.3 with FP16
    # accumulate; TF32 82.6; FP32 82.6; 1008 GB/s; FP64 1.29.
    (r"rtx\s*4090", DevicePeaks("GeForce RTX 4090", 165.2, 82.6, 82.6, 1.008e12, f16_tensor_f16acc=330.3, f64=1.29,
                                source="datasheet (Ada whitepaper, RTX 4090)")),
    # NVIDIA HGX B200 datasheet (8-GPU figures with sparsity): per GPU dense FP16/BF16 2250, TF32 1125,
    # FP32 75, FP64 37 TFLOP/s, 8 TB/s HBM3e. Less settled than the others: check against the current sheet.
    (r"b200", DevicePeaks("B200", 2250.0, 1125.0, 75.0, 8.0e12, f64=37.0, source="datasheet (HGX B200)")),
]


def device_peaks(gpu_name: str | None) -> DevicePeaks | None:
    """The peaks of a device by its name as torch/NVML spell it ('NVIDIA H200', 'NVIDIA A100-SXM4-80GB'), or None."""
    if not gpu_name:
        return None
    text = str(gpu_name).lower()
    for pattern, peaks in _TABLE:
        if re.search(pattern, text):
            return peaks
    return None


def _field(contract: Any, key: str) -> str | None:
    if contract is None:
        return None
    if hasattr(contract, "as_dict"):
        contract = contract.as_dict()
    value = contract.get(key) if isinstance(contract, dict) else getattr(contract, key, None)
    value = getattr(value, "value", value)  # enums -> their spelling
    return None if value is None else str(value).lower()


def compute_class(contract: Any) -> str | None:
    """Which compute peak a contract runs against: 'f16_tensor', 'f16_tensor_f16acc', 'tf32_tensor', 'f32_simt',
    'f64', 'fp8_tensor' or None (unknown dtypes). `contract` is a PrecisionContract, its as_dict(), or a dict with a, b, acc, math."""
    a, b = _field(contract, "a"), _field(contract, "b") or _field(contract, "a")
    acc, math = _field(contract, "acc"), _field(contract, "math") or "strict"
    inputs = {a, b}
    if None in inputs:
        return None
    if "f64" in inputs:
        return "f64"
    if "f32" in inputs:  # a mixed f16 x f32 contract runs at the rate of its f32 operand
        return "tf32_tensor" if math == "tf32" else "f32_simt"
    if inputs <= {"f16", "bf16"}:
        return "f16_tensor_f16acc" if acc == "f16" else "f16_tensor"
    if inputs <= {"e4m3", "e5m2"}:
        return "fp8_tensor"
    return None


def peak_for(gpu_name: str | None, contract: Any) -> tuple[float, float] | None:
    """(peak TFLOP/s for this contract's math, memory bandwidth in bytes/s) on the named GPU, or None when the GPU
    or the contract's math is not in the table."""
    peaks = device_peaks(gpu_name)
    cls = compute_class(contract)
    if peaks is None or cls is None:
        return None
    if cls == "f16_tensor_f16acc":
        tflops = peaks.f16_tensor_f16acc or peaks.f16_tensor
    else:
        tflops = getattr(peaks, cls)
    if tflops is None:
        return None
    return float(tflops), float(peaks.bandwidth)


def bandwidth_for(gpu_name: str | None) -> float | None:
    """Published memory bandwidth (bytes/s) of the named GPU, or None."""
    peaks = device_peaks(gpu_name)
    return None if peaks is None else peaks.bandwidth
