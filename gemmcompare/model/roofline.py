"""The roofline bound: a kernel can go no faster than its math at peak rate, nor than its bytes at peak
bandwidth, whichever takes longer: time >= max(flops / peak, bytes / bandwidth).

The ridge point (peak / bandwidth, in FLOP per byte) is where the two roofs meet: an operation whose
intensity is below it cannot reach the compute peak from that memory level. Seed 000's A100 figures:
19,500 / 2,039 = 9.56 FLOP/B for FP32 and 312,000 / 2,039 = 153.0 for dense FP16. Crossing the ridge does
not guarantee the peak; it only removes the memory roof as the reason not to.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RooflineBound:
    """Lower bound on the time of `flops` of work moving `bytes_moved` bytes."""

    flops: float
    bytes_moved: float
    peak_tflops: float
    bandwidth: float  # bytes/s
    compute_ms: float
    memory_ms: float

    @property
    def bound_ms(self) -> float:
        return max(self.compute_ms, self.memory_ms)

    @property
    def bound(self) -> str:
        """'compute' or 'memory': which roof the bound sits on."""
        return "compute" if self.compute_ms >= self.memory_ms else "memory"

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes_moved

    @property
    def ridge_intensity(self) -> float:
        return ridge_intensity(self.peak_tflops, self.bandwidth)

    @property
    def attainable_tflops(self) -> float:
        """min(peak, bandwidth x intensity): the roofline's rate at this intensity."""
        return attainable_tflops(self.intensity, self.peak_tflops, self.bandwidth)


def ridge_intensity(peak_tflops: float, bandwidth: float) -> float:
    """FLOP per byte where bandwidth x intensity reaches the peak."""
    return peak_tflops * 1e12 / bandwidth


def attainable_tflops(intensity: float, peak_tflops: float, bandwidth: float) -> float:
    """The roofline: min(peak, bandwidth x intensity), in TFLOP/s."""
    return min(peak_tflops, bandwidth * intensity / 1e12)


def roofline_bound(flops: float, bytes_moved: float, peak_tflops: float, bandwidth: float) -> RooflineBound:
    """The roofline lower bound on time, in milliseconds."""
    if peak_tflops <= 0 or bandwidth <= 0:
        raise ValueError("the roofline needs a positive peak and bandwidth")
    return RooflineBound(flops, bytes_moved, peak_tflops, bandwidth,
                         compute_ms=flops / (peak_tflops * 1e12) * 1e3,
                         memory_ms=bytes_moved / bandwidth * 1e3)
