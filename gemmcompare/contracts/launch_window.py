"""The launch window: the part of a kernel launch that Nsight Compute's gpu__time_duration counts and a
CUPTI kernel record does not.

Both clocks time a kernel of known duration (extensions/timing/spin.cu spins on %globaltimer) with slope 1
and a fixed intercept of their own: on the H200, ncu reads 1.41 us over the spun time and CUPTI 0.61 us.
CUPTI's record spans the kernel's execution on the SMs; ncu's window also holds the front end's work for
the launch before the first block starts and after the last one ends, which is GPU time the launch takes
whatever runs it. The difference is the same for every kernel (cuBLAS at 256^3 to 4096^3 read CUPTI + the
window within 3% of ncu: docs/timing.md), so a row timed by CUPTI reports CUPTI's span plus this window,
and keeps the raw span beside it (`timing.cupti_median_ms`).

The window is a property of the GPU and its driver: it is measured (experiments/studies/honest-numbers/small_kernel_timing.py,
which needs ncu), not derived. On a device not measured here, CUPTI's figure is reported as it is, and the
row says so; `timing.launch_window_us` in a spec sets it (0 reports CUPTI's span alone).
"""

from __future__ import annotations

from dataclasses import dataclass

# device name (as CUDA reports it) -> (window in microseconds, where it was measured)
MEASURED_US: dict[str, tuple[float, str]] = {
    "NVIDIA H200": (0.80, "spin kernel, ncu intercept 1.41 us - CUPTI intercept 0.61 us, at 5e81498 "
                          "(experiments/studies/honest-numbers/h200/small/small_kernel_timing.md)"),
}


@dataclass(frozen=True)
class LaunchWindow:
    ms: float
    source: str

    def note(self) -> str:
        if self.ms:
            return f"CUPTI span + {self.ms * 1e3:.2f} us launch window ({self.source})"
        return f"CUPTI span alone ({self.source})"


def launch_window(device_name: str, setting_us: float | None = None) -> LaunchWindow:
    """The window a CUPTI-timed row on `device_name` adds to its span: the spec's setting if it has one,
    else the measured value for that device, else 0 with the reason."""
    if setting_us is not None:
        return LaunchWindow(setting_us * 1e-3, "set by the spec's timing.launch_window_us")
    if device_name in MEASURED_US:
        us, where = MEASURED_US[device_name]
        return LaunchWindow(us * 1e-3, f"measured on {device_name}: {where}")
    return LaunchWindow(0.0, f"no launch window measured for {device_name}: reads about 0.8 us below ncu's "
                             f"gpu__time_duration on an H200; set timing.launch_window_us to add one")
