"""NVML telemetry around measurements: clocks, power, temperature and clock-event (throttle) reasons.

Read-only: gemmcompare never changes clocks or power limits. Without NVML (no driver, no nvidia-ml-py)
every sample is an empty dict and nothing is flagged.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

# NVML clock-event reason bits (nvmlClocksEventReason*): these mean the clock was held down by power
# or heat rather than by idleness or an application setting.
THROTTLE_BITS = {
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake",
}
OTHER_BITS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x100: "display_clock_setting"}


class Telemetry:
    def __init__(self, device_index: int = 0, uuid: str | None = None):
        """The GPU by its UUID when known: NVML numbers GPUs its own way and ignores CUDA_VISIBLE_DEVICES,
        so in a worker that sees one GPU as device 0, index 0 would be some other GPU."""
        self.handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = (pynvml.nvmlDeviceGetHandleByUUID(uuid) if uuid
                           else pynvml.nvmlDeviceGetHandleByIndex(device_index))
        except Exception:  # noqa: BLE001 - telemetry is optional
            self.handle = None

    @property
    def available(self) -> bool:
        return self.handle is not None

    def sample(self) -> dict[str, Any]:
        if self.handle is None:
            return {}
        n, h = self.nvml, self.handle
        out: dict[str, Any] = {"t": time.time()}
        for key, fn in (
            ("sm_clock_mhz", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
            ("mem_clock_mhz", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
            ("power_w", lambda: n.nvmlDeviceGetPowerUsage(h) / 1000.0),
            ("temperature_c", lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
            ("reasons", lambda: _reasons(n, h)),
        ):
            try:
                out[key] = fn()
            except Exception:  # noqa: BLE001 - a counter this driver does not offer
                out[key] = None
        reasons = out.get("reasons") or 0
        out["throttled"] = bool(reasons & sum(THROTTLE_BITS))
        out["reason_names"] = [name for bit, name in {**THROTTLE_BITS, **OTHER_BITS}.items() if reasons & bit]
        return out

    def energy_counter_mj(self) -> int | None:
        """NVML's total-energy counter (mJ since the driver loaded, unsigned 64-bit); None where this GPU or
        driver does not offer it (NotSupported: Volta and later do), remembered so that a poll loop does not
        ask again."""
        if self.handle is None or getattr(self, "_no_energy_counter", False):
            return None
        try:
            return int(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except Exception:  # noqa: BLE001 - NotSupported, or an old nvidia-ml-py without the call
            self._no_energy_counter = True
            return None

    def power_now_w(self) -> float | None:
        """One power read in watts (the fallback when the energy counter is missing), None when unreadable."""
        if self.handle is None:
            return None
        try:
            return self.nvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0
        except Exception:  # noqa: BLE001
            return None

    def max_sm_clock_mhz(self) -> float | None:
        """The SM clock the device can reach (NVML's maximum), the reference of median_ms_at_max_clock."""
        if self.handle is None:
            return None
        try:
            return float(self.nvml.nvmlDeviceGetMaxClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))
        except Exception:  # noqa: BLE001
            return None

    def driver_version(self) -> str | None:
        if self.handle is None:
            return None
        try:
            v = self.nvml.nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else v
        except Exception:  # noqa: BLE001
            return None


def _reasons(n, h) -> int:
    fn = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
    return int(fn(h))


def at_max_clock(median_ms: float | None, sm_clock_mhz: float | None, max_sm_clock_mhz: float | None) -> float | None:
    """The median time scaled to the maximum SM clock: median_ms * sm_clock / max_clock. Exact for a kernel
    whose time is all SM cycles; a memory-bound kernel gains less. None when a clock is unknown."""
    if not (median_ms and sm_clock_mhz and max_sm_clock_mhz):
        return None
    return median_ms * sm_clock_mhz / max_sm_clock_mhz


def summarize_samples(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-row telemetry: ranges of clocks, power and temperature, the median SM clock, and the throttled
    fraction (the executor samples while each batch runs: the state the samples were taken in)."""
    samples = [s for s in samples if s]
    if not samples:
        return {}

    def rng(key):
        vals = [s[key] for s in samples if s.get(key) is not None]
        return [min(vals), max(vals)] if vals else None

    names = sorted({n for s in samples for n in s.get("reason_names", [])})
    clocks = [s["sm_clock_mhz"] for s in samples if s.get("sm_clock_mhz")]
    return {
        "samples": len(samples),
        "sm_clock_mhz": rng("sm_clock_mhz"),
        "sm_clock_mhz_median": statistics.median(clocks) if clocks else None,
        "mem_clock_mhz": rng("mem_clock_mhz"),
        "power_w": rng("power_w"),
        "temperature_c": rng("temperature_c"),
        "reasons_seen": names,
        "throttled_fraction": sum(1 for s in samples if s.get("throttled")) / len(samples),
    }
