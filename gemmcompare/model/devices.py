"""The device table: datasheet peaks and the per-SM limits that decide occupancy, per GPU model.

Two layers:
- `ArchitectureLimits`: what the compute capability fixes (threads, blocks, registers and shared memory per
  SM, allocation granularities, the driver's per-CTA shared-memory reservation). The numbers are those of
  CUDA 13.0's occupancy calculator (cuda_occupancy.h) and the Programming Guide's table of technical
  specifications per compute capability; the occupancy model must match cudaOccupancyMaxActiveBlocksPerMultiprocessor.
- `DeviceSpec`: one product: SM count, clock, memory, bandwidth, L2, and dense peak rates per math class.
  Peak rates come from gemmcompare.peaks (the table "% of peak" already uses) wherever it has the product,
  so the two cannot drift apart; the L4, which peaks.py lacks, carries its own datasheet figures here.

Math classes are peaks.compute_class's: 'f32_simt' (FP32 on CUDA cores), 'tf32_tensor', 'f16_tensor'
(FP16/BF16 inputs, FP32 accumulate), 'f16_tensor_f16acc' (FP16 accumulate), 'f64', 'fp8_tensor' (e4m3/e5m2
inputs; only where peaks.py has the datasheet figure). Every rate is the
vendor's dense figure (no structured sparsity) in TFLOP/s; bandwidth in bytes per second.

`with_live_properties` replaces the product facts a live device reports (name, SM count, L2, memory, compute
capability, per-SM limits) from a plain dict, so this module never needs torch: pass
`vars(torch.cuda.get_device_properties(0))`-like data or a gemmcompare.device.DeviceInfo's fields.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .. import peaks as _peaks

MATH_CLASSES = ("f32_simt", "tf32_tensor", "f16_tensor", "f16_tensor_f16acc", "f64", "fp8_tensor")
KIB = 1024


@dataclass(frozen=True)
class ArchitectureLimits:
    """Per-SM and per-block limits of one compute capability (the occupancy calculator's inputs)."""

    compute_capability: tuple[int, int]
    max_threads_per_sm: int
    max_blocks_per_sm: int
    shared_memory_per_sm: int  # bytes at the largest carveout (cudaDeviceProp.sharedMemPerMultiprocessor)
    shared_memory_per_block_optin: int  # bytes a block may opt into (sharedMemPerBlockOptin)
    shared_memory_configs_kib: tuple[int, ...]  # carveouts the SM can be configured to, in KiB
    block_barrier_factor: int  # block barriers per SM = factor * max blocks (cudaOccMaxBlocksPerSMBlockBarrierLimit)
    max_threads_per_block: int = 1024
    warp_size: int = 32
    registers_per_sm: int = 65536
    registers_per_block: int = 65536
    max_registers_per_thread: int = 255  # what ptxas allocates at most
    register_allocation_unit: int = 256  # registers are allocated per warp, in units of 256
    sub_partitions: int = 4  # each SM quarter holds a quarter of the register file
    shared_memory_per_block: int = 48 * KIB  # without opt-in (sharedMemPerBlock)
    reserved_shared_memory_per_block: int = 1 * KIB  # the driver's per-CTA reservation, sm_80 and later
    shared_memory_allocation_unit: int = 128  # bytes, sm_80 and later (256 before)

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size


def _limits(cc, threads, blocks, smem_kib, optin_kib, configs, barrier_factor) -> ArchitectureLimits:
    return ArchitectureLimits(cc, threads, blocks, smem_kib * KIB, optin_kib * KIB, configs, barrier_factor)


_AMPERE_A100_CONFIGS = (0, 8, 16, 32, 64, 100, 132, 164)
_SMALL_L1_CONFIGS = (0, 8, 16, 32, 64, 100)
_HOPPER_CONFIGS = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)

# cuda_occupancy.h (CUDA 13.0): cudaOccMaxBlocksPerMultiprocessor, cudaOccAlignUpShmemSizeVoltaPlus,
# cudaOccMaxBlocksPerSMBlockBarrierLimit; threads and shared memory per SM from the Programming Guide.
ARCHITECTURES: dict[tuple[int, int], ArchitectureLimits] = {
    (8, 0): _limits((8, 0), 2048, 32, 164, 163, _AMPERE_A100_CONFIGS, 2),
    (8, 6): _limits((8, 6), 1536, 16, 100, 99, _SMALL_L1_CONFIGS, 1),
    (8, 7): _limits((8, 7), 1536, 16, 164, 163, _AMPERE_A100_CONFIGS, 1),
    (8, 9): _limits((8, 9), 1536, 24, 100, 99, _SMALL_L1_CONFIGS, 1),
    (9, 0): _limits((9, 0), 2048, 32, 228, 227, _HOPPER_CONFIGS, 2),
    (10, 0): _limits((10, 0), 2048, 32, 228, 227, _HOPPER_CONFIGS, 2),
    (12, 0): _limits((12, 0), 1536, 24, 100, 99, _SMALL_L1_CONFIGS, 1),
}


def architecture_limits(compute_capability: tuple[int, int]) -> ArchitectureLimits:
    """The limits of one compute capability; raises KeyError for one the table does not have (an occupancy
    figure from a guessed capability would be believed, so there is no fallback)."""
    cc = tuple(compute_capability)
    if cc not in ARCHITECTURES:
        raise KeyError(f"no architecture limits for compute capability {cc[0]}.{cc[1]} "
                       f"(have {', '.join(f'{a}.{b}' for a, b in ARCHITECTURES)})")
    return ARCHITECTURES[cc]


@dataclass(frozen=True)
class DeviceSpec:
    """One GPU product: what the models need, each group of numbers with a one-line source note."""

    key: str
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    boost_clock_mhz: float | None  # datasheet maximum boost clock; None where the datasheet gives none
    memory_bytes: int
    memory_bandwidth: float | None  # bytes/s
    l2_bytes: int
    peak_tflops: Mapping[str, float]  # math class -> dense TFLOP/s
    limits: ArchitectureLimits
    sources: Mapping[str, str] = field(default_factory=dict)
    overridden: tuple[str, ...] = ()  # fields replaced by a live device's report

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    def peak(self, math_class: str) -> float | None:
        """Dense peak TFLOP/s of one math class, or None when the product has no such rate."""
        return self.peak_tflops.get(math_class)

    def ridge_intensity(self, math_class: str) -> float | None:
        """FLOP per byte where the memory roof meets the compute roof (peak / bandwidth)."""
        peak = self.peak(math_class)
        if peak is None or not self.memory_bandwidth:
            return None
        return peak * 1e12 / self.memory_bandwidth


def _rates_from_peaks_table(gpu_name: str) -> dict[str, float]:
    """Dense rates of a product from gemmcompare.peaks, keyed by math class."""
    p = _peaks.device_peaks(gpu_name)
    if p is None:
        raise KeyError(f"gemmcompare.peaks has no entry for {gpu_name!r}")
    rates = {"f32_simt": p.f32_simt, "tf32_tensor": p.tf32_tensor, "f16_tensor": p.f16_tensor,
             "f16_tensor_f16acc": p.f16_tensor_f16acc or p.f16_tensor}
    if p.f64 is not None:
        rates["f64"] = p.f64
    if p.fp8_tensor is not None:
        rates["fp8_tensor"] = p.fp8_tensor
    return rates


def _spec(key, name, peaks_name, cc, sms, clock, memory, l2, sources, *, rates=None, bandwidth=None) -> DeviceSpec:
    if rates is None:
        rates = _rates_from_peaks_table(peaks_name)
        bandwidth = _peaks.bandwidth_for(peaks_name)
    return DeviceSpec(key, name, cc, sms, clock, memory, bandwidth, l2, rates, architecture_limits(cc), sources)


_LIMITS_NOTE = "per-SM limits: CUDA 13.0 cuda_occupancy.h and the Programming Guide's compute-capability table"

DEVICES: dict[str, DeviceSpec] = {
    "a100_sxm_80gb": _spec(
        "a100_sxm_80gb", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", (8, 0), 108, 1410.0, 80 * 2**30,
        40 * 2**20, {
            "rates": "gemmcompare.peaks (A100 datasheet: 312 FP16/BF16, 156 TF32, 19.5 FP32 TFLOP/s dense; "
                     "one FP16 rate for both accumulators)",
            "bandwidth": "A100 datasheet: 2,039 GB/s HBM2e (80GB SXM), via gemmcompare.peaks",
            "sm_count": "A100 whitepaper: 108 SMs, 1410 MHz boost",
            "l2_bytes": "A100 whitepaper: 40 MB L2",
            "limits": _LIMITS_NOTE,
        }),
    "h100_sxm": _spec(
        "h100_sxm", "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", (9, 0), 132, 1980.0, 80 * 2**30,
        50 * 2**20, {
            "rates": "gemmcompare.peaks (H100 SXM datasheet: 989.4 FP16/BF16, 494.7 TF32, 67 FP32 TFLOP/s dense)",
            "bandwidth": "H100 SXM datasheet: 3.35 TB/s HBM3, via gemmcompare.peaks",
            "sm_count": "H100 whitepaper: 132 SMs (SXM5); 1980 MHz maximum boost",
            "l2_bytes": "H100 whitepaper: 50 MB L2 (SXM5)",
            "limits": _LIMITS_NOTE,
        }),
    "h200_sxm": _spec(
        "h200_sxm", "NVIDIA H200", "NVIDIA H200", (9, 0), 132, 1980.0, 143771 * 2**20, 60 * 2**20, {
            "rates": "gemmcompare.peaks (H200 SXM datasheet: the H100 SXM's compute, 989.4 FP16/BF16 dense)",
            "bandwidth": "H200 datasheet: 4.8 TB/s HBM3e, via gemmcompare.peaks",
            "sm_count": "132 SMs as every H200 receipt records (experiments/studies/*/h200/); 1980 MHz, the "
                        "SM clock its rows record under load",
            "l2_bytes": "60 MB as every H200 receipt records (experiments/studies/*/h200/); the datasheet lists none",
            "memory_bytes": "143771 MiB as nvidia-smi reported there (141 GB on the datasheet)",
            "limits": _LIMITS_NOTE,
        }),
    "l4": _spec(
        "l4", "NVIDIA L4", None, (8, 9), 58, 2040.0, 24 * 2**30, 48 * 2**20, {
            "rates": "L4 datasheet: 30.3 FP32; TF32 120 and FP16/BF16 242 TFLOP/s with sparsity, halved here to "
                     "the dense 60 and 121 (= 58 SMs x 1024 FLOP/clk x 2040 MHz); a datacenter Ada part, so "
                     "not halved again for FP32 accumulate (the Ada whitepaper lists equal rates for the L40)",
            "bandwidth": "L4 datasheet: 300 GB/s GDDR6",
            "sm_count": "58 SMs (7,424 CUDA cores) at 2040 MHz boost",
            "l2_bytes": "48 MB L2",
            "limits": _LIMITS_NOTE,
        },
        rates={"f32_simt": 30.3, "tf32_tensor": 60.0, "f16_tensor": 121.0, "f16_tensor_f16acc": 121.0},
        bandwidth=300e9),
    "rtx_4090": _spec(
        "rtx_4090", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", (8, 9), 128, 2520.0, 24 * 2**30,
        72 * 2**20, {
            "rates": "gemmcompare.peaks (Ada whitepaper, RTX 4090: FP16 tensor 165.2 with FP32 accumulate, "
                     "330.3 with FP16 accumulate: GeForce halves the FP32-accumulate rate, seed 001 measured "
                     "512 vs 1024 FLOP/clk/SM)",
            "bandwidth": "Ada whitepaper: 1,008 GB/s GDDR6X, via gemmcompare.peaks",
            "sm_count": "Ada whitepaper: 128 SMs, 2520 MHz boost",
            "l2_bytes": "Ada whitepaper: 72 MB L2",
            "limits": _LIMITS_NOTE,
        }),
    "b200": _spec(
        "b200", "NVIDIA B200", "NVIDIA B200", (10, 0), 148, None, 192 * 10**9, 132644864, {
            "rates": "gemmcompare.peaks (HGX B200 datasheet, sparse 8-GPU figures halved per GPU: 2250 FP16/BF16, "
                     "1125 TF32, 75 FP32 TFLOP/s; less settled than the others)",
            "bandwidth": "HGX B200 datasheet: 8 TB/s HBM3e via gemmcompare.peaks (a driver query of the bus width "
                         "gives 7.67 TB/s: pytorch/ao#4002)",
            "sm_count": "148 SMs and 126.5 MiB L2 as cudaGetDeviceProperties reports (pytorch/ao#4002); the "
                        "datasheet gives no clock",
            "l2_bytes": "126.5 MiB (cudaGetDeviceProperties, pytorch/ao#4002)",
            "memory_bytes": "192 GB HBM3e (product page)",
            "limits": _LIMITS_NOTE,
        }),
}

# Name patterns as torch/NVML spell products; only the variants in the table match (an A100 PCIe or 40GB,
# an H100 PCIe or NVL, a GB200 are different products and get no entry rather than a wrong one).
_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"a100(?!.*pcie)(?!.*40\s*gb)", "a100_sxm_80gb"),
    (r"h100(?!.*(pcie|nvl))", "h100_sxm"),
    (r"h200(?!.*nvl)", "h200_sxm"),
    (r"(?<![a-z0-9])l4(?![a-z0-9])", "l4"),
    (r"rtx\s*4090", "rtx_4090"),
    (r"(?<![a-z0-9])b200(?![a-z0-9])", "b200"),
)


def device_spec(name_or_key: str | None) -> DeviceSpec | None:
    """The table entry for a table key ('h200_sxm') or a device name as torch/NVML report it
    ('NVIDIA H200', 'NVIDIA A100-SXM4-80GB'), or None."""
    if not name_or_key:
        return None
    text = str(name_or_key).strip().lower()
    if text in DEVICES:
        return DEVICES[text]
    for pattern, key in _PATTERNS:
        if re.search(pattern, text):
            return DEVICES[key]
    return None


# Live-report keys (torch's _CudaDeviceProperties and cudaDeviceProp spellings, and DeviceInfo's) -> field.
_PRODUCT_KEYS: dict[str, tuple[str, ...]] = {
    "name": ("name",),
    "sm_count": ("sm_count", "multi_processor_count", "multiProcessorCount"),
    "l2_bytes": ("l2_bytes", "L2_cache_size", "l2_cache_size", "l2CacheSize"),
    "memory_bytes": ("memory_bytes", "total_memory", "total_memory_bytes", "totalGlobalMem"),
    "memory_bandwidth": ("memory_bandwidth",),
    "boost_clock_mhz": ("boost_clock_mhz",),
}
_LIMIT_KEYS: dict[str, tuple[str, ...]] = {
    "max_threads_per_sm": ("max_threads_per_multi_processor", "maxThreadsPerMultiProcessor", "max_threads_per_sm"),
    "max_blocks_per_sm": ("max_blocks_per_multi_processor", "maxBlocksPerMultiProcessor", "max_blocks_per_sm"),
    "registers_per_sm": ("regs_per_multiprocessor", "regsPerMultiprocessor", "registers_per_sm"),
    "registers_per_block": ("regs_per_block", "regsPerBlock"),
    "shared_memory_per_sm": ("shared_memory_per_multiprocessor", "sharedMemPerMultiprocessor"),
    "shared_memory_per_block": ("shared_memory_per_block", "sharedMemPerBlock"),
    "shared_memory_per_block_optin": ("shared_memory_per_block_optin", "sharedMemPerBlockOptin"),
    "reserved_shared_memory_per_block": ("reserved_shared_memory_per_block", "reservedSharedMemPerBlock"),
    "warp_size": ("warp_size", "warpSize"),
    "max_threads_per_block": ("max_threads_per_block", "maxThreadsPerBlock"),
}


def _as_mapping(props: Any) -> Mapping[str, Any]:
    if isinstance(props, Mapping):
        return props
    if dataclasses.is_dataclass(props):
        return {f.name: getattr(props, f.name) for f in dataclasses.fields(props)}
    return {k: getattr(props, k) for k in dir(props) if not k.startswith("_")}


def _first(props: Mapping[str, Any], keys: tuple[str, ...]):
    for k in keys:
        if k in props and props[k] is not None:
            return props[k]
    return None


def _reported_cc(props: Mapping[str, Any]) -> tuple[int, int] | None:
    cc = props.get("cc") or props.get("compute_capability")
    if cc is not None:
        return int(cc[0]), int(cc[1])
    if props.get("major") is not None and props.get("minor") is not None:
        return int(props["major"]), int(props["minor"])
    return None


def with_live_properties(spec: DeviceSpec | None, props: Any) -> DeviceSpec:
    """`spec` with every fact a live device reports replacing the table's (name, SM count, L2, memory,
    compute capability, per-SM limits). `props` is a plain dict (or a dataclass such as
    gemmcompare.device.DeviceInfo): keys in torch's spelling (multi_processor_count, L2_cache_size,
    total_memory, major, minor, ...), cudaDeviceProp's, or DeviceInfo's (sm_count, l2_bytes, cc, ...).

    With spec None (a product not in the table) the limits come from the reported compute capability and
    there are no peak rates or bandwidth: the occupancy and wave models work, the roofline needs a rate.
    The names of the replaced fields are listed in the result's `overridden`, so a report can say which
    numbers were seen and which were read off a datasheet."""
    props = _as_mapping(props)
    cc = _reported_cc(props)
    if spec is None:
        if cc is None:
            raise ValueError("a device not in the table needs its compute capability (major/minor or cc)")
        name = _first(props, _PRODUCT_KEYS["name"]) or f"unknown sm_{cc[0]}{cc[1]}"
        spec = DeviceSpec(key="live", name=str(name), compute_capability=cc, sm_count=0, boost_clock_mhz=None,
                          memory_bytes=0, memory_bandwidth=None, l2_bytes=0, peak_tflops={},
                          limits=architecture_limits(cc), sources={"rates": "not in the device table: no peaks"})
    changes: dict[str, Any] = {}
    overridden: list[str] = list(spec.overridden)
    for fld, keys in _PRODUCT_KEYS.items():
        value = _first(props, keys)
        if value is None:
            continue
        value = str(value) if fld == "name" else (float(value) if fld in ("memory_bandwidth", "boost_clock_mhz")
                                                  else int(value))
        changes[fld] = value
        overridden.append(fld)
    limits = spec.limits
    if cc is not None and cc != spec.compute_capability:
        changes["compute_capability"] = cc
        overridden.append("compute_capability")
        limits = architecture_limits(cc)
    limit_changes = {}
    for fld, keys in _LIMIT_KEYS.items():
        value = _first(props, keys)
        if value is not None:
            limit_changes[fld] = int(value)
            overridden.append(f"limits.{fld}")
    if limit_changes:
        limits = dataclasses.replace(limits, **limit_changes)
    changes["limits"] = limits
    sources = dict(spec.sources)
    for fld in changes:
        if fld != "limits":
            sources[fld] = "live device report"
    changes["sources"] = sources
    changes["overridden"] = tuple(dict.fromkeys(overridden))
    return dataclasses.replace(spec, **changes)


def device_from_properties(props: Any) -> DeviceSpec:
    """The table entry matching a live device's name, overridden by what the device reports."""
    mapping = _as_mapping(props)
    return with_live_properties(device_spec(_first(mapping, _PRODUCT_KEYS["name"])), mapping)
