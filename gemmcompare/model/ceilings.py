"""Issue-rate ceilings: the highest rate a kernel's math instruction can reach on a device.

A datasheet peak is reached only by the device's native matrix instruction. On Hopper that is wgmma
(sm_90a); a kernel built on mma.sync (or WMMA, which lowers to the same HMMA instructions) cannot issue
fast enough to reach it, whatever its tiling: on the lent H200 a register-resident mma.sync loop tops out
near 630 TFLOP/s against the 989 of the datasheet (measured on the lent H200, 2026-11-29). Plain FFMA loops likewise stay below the
FP32 peak. This module keeps those measured ceilings, each with where it was measured, and falls back to
the datasheet peak (saying so) where nothing was measured.

Even the native instruction does not reach the datasheet on real data: on the lent H200 an 8192^3 BF16
product through PyTorch (cuBLAS, wgmma) ran at 788 TFLOP/s on random data (769-798 over two machines;
894 on zeros) against the datasheet's 989.4, the card holding its power limit. So the wgmma ceiling on
the H200 is that measured 790, a rate for random data, not the datasheet figure: the models predict what
a kernel reaches on the inputs gemmcompare times (random), and 790 is the best any kernel was seen to do
there. A library runs the device's native instruction (wgmma for FP16/BF16 on sm_90, FFMA for strict FP32),
so it gets that instruction's ceiling.

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

# Where each figure comes from, as a receipt's device_sources carries it: measurements on the lent H200 that
# are not committed receipts say when and how they were made, so that no source names a file outside the repository.
_H200_DEVICE_MD = ("measured on the lent H200 (2026-11-29) with a register-resident loop over the whole GPU at "
                   "1980 MHz, no throttling (a probe, not a committed receipt)")
_H100_FROM_H200 = "the H200's measurement: the same GH100 SM at the same 1980 MHz boost"
_H200_RANDOM = ("wgmma (cuBLAS) on random BF16 data: 788 TFLOP/s for 8192^3 through PyTorch on the lent H200, "
                "769-798 on a second machine, the card at its power limit (probes, not committed receipts); the "
                "datasheet's 989.4 is not reached on random data")

# (device key, instruction, math class) -> (TFLOP/s, source)
MEASURED_CEILINGS: dict[tuple[str, str, str], tuple[float, str]] = {
    ("h200_sxm", "mma_sync", "f16_tensor"): (630.0, "mma.sync m16n8k16 FP16 in, FP32 accumulate: " + _H200_DEVICE_MD),
    ("h200_sxm", "mma_sync", "f16_tensor_f16acc"): (645.0, "mma.sync m16n8k16 FP16 accumulate: " + _H200_DEVICE_MD),
    ("h200_sxm", "ffma", "f32_simt"): (55.5, "FFMA: " + _H200_DEVICE_MD),
    ("h100_sxm", "mma_sync", "f16_tensor"): (630.0, _H100_FROM_H200),
    ("h100_sxm", "mma_sync", "f16_tensor_f16acc"): (645.0, _H100_FROM_H200),
    ("h100_sxm", "ffma", "f32_simt"): (55.5, _H100_FROM_H200),
    ("h200_sxm", "wgmma", "f16_tensor"): (790.0, _H200_RANDOM),
    ("h100_sxm", "wgmma", "f16_tensor"): (790.0, "the H200's measurement on random data (same GH100 SM, same 700 W "
                                                 "limit): " + _H200_RANDOM),
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
        if math_class == "fp8_tensor":
            raise ValueError(f"no FP8 peak for {device.name} in the device table (no datasheet figure taken)")
        raise ValueError(f"{device.name} has no {math_class} peak in the device table")
    cc = device.compute_capability
    if instruction in ARCH_ONLY and cc not in ARCH_ONLY[instruction]:
        raise ValueError(f"{instruction} does not exist on {device.arch}")
    if math_class == "f32_simt" and instruction not in ("ffma", "library"):
        raise ValueError(f"strict FP32 runs on FFMA, not {instruction}")
    looked_up = _SAME_AS.get(instruction, instruction)
    if instruction == "library":  # the library picks the device's native instruction for the math class
        looked_up = "ffma" if math_class == "f32_simt" else NATIVE_TENSOR_INSTRUCTION.get(cc, "library")
    hit = MEASURED_CEILINGS.get((device.key, looked_up, math_class))
    if hit is not None:
        tflops, source = hit
        if instruction == "library":
            source = f"a library runs {looked_up}, the native instruction: " + source
        elif looked_up != instruction:
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
