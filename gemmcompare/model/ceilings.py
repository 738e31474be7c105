"""Issue-rate ceilings: the highest rate a kernel's math instruction can reach on a device.

A datasheet peak is reached only by the device's native matrix instruction. On Hopper that is wgmma
(sm_90a); a kernel built on mma.sync (or WMMA, which lowers to the same HMMA instructions) cannot issue
fast enough to reach it, whatever its tiling: on the lent H200 a register-resident mma.sync loop tops out
near 630 TFLOP/s against the 989 of the datasheet (DEVICE.md). Plain FFMA loops likewise stay below the
FP32 peak. This module keeps those measured ceilings, each with where it was measured, and falls back to
the datasheet peak (saying so) where nothing was measured.

Instruction names: 'ffma' (FP32 SIMT), 'wmma', 'mma_sync', 'wgmma', 'tcgen05', and 'library' (a vendor
library that picks the native instruction itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from .devices import DeviceSpec

INSTRUCTIONS = ("ffma", "wmma", "mma_sync", "wgmma", "tcgen05", "library")

# The matrix instruction that reaches the datasheet peak, per compute-capability major.minor.
NATIVE_TENSOR_INSTRUCTION: dict[tuple[int, int], str] = {
    (8, 0): "mma_sync", (8, 6): "mma_sync", (8, 7): "mma_sync", (8, 9): "mma_sync",
    (9, 0): "wgmma", (10, 0): "tcgen05", (12, 0): "mma_sync",
}
# Instructions that exist only on one architecture's arch-specific target.
ARCH_ONLY: dict[str, tuple[tuple[int, int], ...]] = {"wgmma": ((9, 0),), "tcgen05": ((10, 0),)}

_H200_DEVICE_MD = ("measured on the lent H200 with a register-resident loop over the whole GPU at 1980 MHz, "
                   "no throttling (DEVICE.md)")
_H100_FROM_H200 = "the H200's measurement: the same GH100 SM at the same 1980 MHz boost (DEVICE.md)"

# (device key, instruction, math class) -> (TFLOP/s, source)
MEASURED_CEILINGS: dict[tuple[str, str, str], tuple[float, str]] = {
    ("h200_sxm", "mma_sync", "f16_tensor"): (630.0, "mma.sync m16n8k16 FP16 in, FP32 accumulate: " + _H200_DEVICE_MD),
    ("h200_sxm", "mma_sync", "f16_tensor_f16acc"): (645.0, "mma.sync m16n8k16 FP16 accumulate: " + _H200_DEVICE_MD),
    ("h200_sxm", "ffma", "f32_simt"): (55.5, "FFMA: " + _H200_DEVICE_MD),
    ("h100_sxm", "mma_sync", "f16_tensor"): (630.0, _H100_FROM_H200),
    ("h100_sxm", "mma_sync", "f16_tensor_f16acc"): (645.0, _H100_FROM_H200),
    ("h100_sxm", "ffma", "f32_simt"): (55.5, _H100_FROM_H200),
}
# WMMA lowers to the same HMMA instructions as mma.sync, so it shares mma.sync's ceiling.
_SAME_AS = {"wmma": "mma_sync"}


@dataclass(frozen=True)
class IssueCeiling:
    """The rate one instruction can reach for one math class on one device."""

    device: str
    instruction: str
    math_class: str
    tflops: float
    peak_tflops: float
    measured: bool  # False: the datasheet peak, assumed reachable
    source: str

    @property
    def fraction_of_peak(self) -> float:
        return self.tflops / self.peak_tflops


def issue_ceiling(device: DeviceSpec, instruction: str, math_class: str) -> IssueCeiling:
    """The ceiling of `instruction` on `device` for `math_class`. Raises ValueError when the device has no
    peak for the math class or the instruction does not exist on its architecture."""
    if instruction not in INSTRUCTIONS:
        raise ValueError(f"unknown instruction {instruction!r}; expected one of {INSTRUCTIONS}")
    peak = device.peak(math_class)
    if peak is None:
        raise ValueError(f"{device.name} has no {math_class} peak in the device table")
    cc = device.compute_capability
    if instruction in ARCH_ONLY and cc not in ARCH_ONLY[instruction]:
        raise ValueError(f"{instruction} does not exist on {device.arch}")
    if math_class == "f32_simt" and instruction not in ("ffma", "library"):
        raise ValueError(f"strict FP32 runs on FFMA, not {instruction}")
    looked_up = _SAME_AS.get(instruction, instruction)
    hit = MEASURED_CEILINGS.get((device.key, looked_up, math_class))
    if hit is not None:
        tflops, source = hit
        if looked_up != instruction:
            source = f"{instruction} lowers to {looked_up}'s HMMA instructions; " + source
        return IssueCeiling(device.key, instruction, math_class, min(tflops, peak), peak, True, source)
    native = NATIVE_TENSOR_INSTRUCTION.get(cc)
    if instruction == "library":
        source = "a library picks the native instruction: datasheet peak"
    elif instruction == "ffma" or looked_up == native:
        source = "native instruction, no measured ceiling: datasheet peak"
    else:
        source = (f"no measured ceiling for {instruction} on {device.name}: datasheet peak assumed, an upper bound "
                  f"(on sm_90 mma.sync reached 64% of it)")
    return IssueCeiling(device.key, instruction, math_class, peak, peak, False, source)
