"""Optional adapter to NVIDIA's nvidia-matmul-heuristics, used only when it is importable.

Not a project requirement: install it yourself (`pip install nvidia-matmul-heuristics`) to get its
estimates next to ours; every function here returns None when it is missing.

What the package is (read from the 0.1.0.27 wheel: nvMatmulHeuristics.h and its ctypes wrapper, module
`nvMatmulHeuristics`): a closed-source library with an analytical performance model. Given a problem (M, N,
K, batch, layout) and a precision string ('HSS' = FP16 A/B, FP32 compute, FP32 C/D) it
- proposes kernel configurations for a target (GENERIC, CUTLASS (2.x), CUTLASS3, TRITON, NVFUSER): CTA tile,
  warp tile, instruction shape, split-K, load stages, grid swizzle, CTA order and cluster;
- estimates one configuration's runtime (seconds) and "silicon metrics" (compute, load and store time,
  L2 hit rate, global/L2/shared-memory bytes, static latencies, energy), documented as estimates meant for
  ranking more than for absolute times;
- runs without a GPU for predefined GPUs (A100 SXM 80GB, L4, RTX 4090, H100 SXM, H200 SXM, B200 and
  others), or reads the current device; internal "discovery sets" recalibrate it per target, precision
  and layout (loadInternalDiscoverySet), or measured runtimes can be committed to it.

Does it serve our CUTLASS configurations on sm_90? Only partly. Probed on this project's CPU machine for the
H200 (tn layout = its NT_ROW_MAJOR, f16_f32acc = 'HSS', 4096^3):
- its configuration has no mainloop schedule (cooperative, pingpong, tma_ws), no epilogue choice, no
  tile scheduler (persistent, stream-K) and only a row/column CTA order: configurations of ours that differ
  there get the same estimate; a 2x1 cluster estimated the same as 1x1;
- the CUTLASS3 target rejects FP16 tile K = 32 (estimate 0), which our Sm90Config accepts; the CUTLASS
  target rejects SIMT (instruction 1x1x1) configurations;
- estimates did not move with stages, warp tile or instruction shape;
- absolute times depend on calibration: CUTLASS3 128x256x64 was 0.1699 ms (809 TFLOP/s) uncalibrated and
  0.2564 ms (536) with the internal discovery set, against 0.1876 ms (733) measured for our cooperative
  kernel; at 8192^3 1.179 / 1.902 ms against 1.49 to 1.51 measured. CUTLASS 2 128x256x32, 3 stages: 0.3023 ms
  uncalibrated (455) against 0.3128 measured (439);
- on the RTX 4090 'HSS' came out only 8% slower than 'HHH', not the 2x of GeForce's halved FP32-accumulate
  rate.
So it can rank tiles and clusters for one schedule; it cannot tell our sm_90 schedules apart, and its
absolute times on our H200 rows are off by -21% to +37% (uncalibrated: -21% to -3%; calibrated: +28% to
+37%). The estimate is uncalibrated unless asked.
(Its wrapper's NvMatmulHeuristicsInterfaceEx.estimateRuntime is broken in 0.1.0.27, calling a base method
that does not exist; this adapter calls the C function directly.)
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
from dataclasses import dataclass

from ..problems import GemmProblem
from .devices import DeviceSpec
from .kernels import KernelShape

MODULE = "nvMatmulHeuristics"

# Our device keys -> the package's predefined GPUs (NvMatmulHeuristicsNvidiaGpu names).
NVIDIA_GPUS = {"a100_sxm_80gb": "A100_SXM_80GB", "h100_sxm": "H100_SXM", "h200_sxm": "H200_SXM", "l4": "L4",
               "rtx_4090": "RTX_4090", "b200": "B200"}
TARGETS = ("generic", "cutlass", "cutlass3", "triton", "nvfuser")

# Our layout letters (A then B; t = row-major, n = column-major; C row-major) -> the package's row-major
# layouts, whose letters say which operand is stored transposed: our tn (B column-major) is its NT.
LAYOUT_CODES = {"tt": 0, "tn": 1, "nt": 2, "nn": 3}  # NN_, NT_, TN_, TT_ROW_MAJOR

_LETTERS = {"f16": "H", "bf16": "T", "f32": "S", "f64": "D"}
_METRICS = {"runtime": 0, "l2_hit_rate": 1, "compute": 2, "load": 3, "store": 4, "gmem_load_bytes": 5,
            "gmem_store_bytes": 6, "static_latencies": 8}


def available() -> bool:
    """Whether nvidia-matmul-heuristics can be imported."""
    return importlib.util.find_spec(MODULE) is not None


def precision_string(input_dtype: str, accumulator: str, output_dtype: str, math: str = "strict") -> str:
    """The package's three-letter precision: A/B type, compute type ('F' = TF32 tensor cores), C/D type.
    f16 in, f32 accumulate, f32 out -> 'HSS'; bf16 out bf16 -> 'TST'; strict FP32 -> 'SSS'; TF32 -> 'SFS'."""
    compute = "F" if math == "tf32" else _LETTERS[accumulator]
    return _LETTERS[input_dtype] + compute + _LETTERS[output_dtype]


@dataclass(frozen=True)
class HeuristicsEstimate:
    """What the package's model says about one configuration (times in milliseconds)."""

    runtime_ms: float
    compute_ms: float
    load_ms: float
    store_ms: float
    static_latency_ms: float
    l2_hit_rate: float
    gmem_load_bytes: float
    gmem_store_bytes: float
    gpu: str
    target: str
    precision: str
    layout: str
    cta: tuple[int, int, int]
    warp: tuple[int, int, int]
    instruction: tuple[int, int, int]
    stages: int
    split_k: int
    swizzle: int
    cta_order: int
    cluster: tuple[int, int]
    calibrated: bool  # whether the package's internal discovery set was loaded


def _module():
    try:
        return importlib.import_module(MODULE)
    except Exception:  # missing, or its shared library does not load here
        return None


def _interface(nmh, target: str, gpu_key: str, precision: str, layout: str, calibrated: bool):
    target_enum = getattr(nmh.NvMatmulHeuristicsTarget, target.upper())
    gpu = getattr(nmh.NvMatmulHeuristicsNvidiaGpu, NVIDIA_GPUS[gpu_key])
    iface = nmh.NvMatmulHeuristicsInterfaceEx(backend=target_enum, gpu=gpu, load_discovery_implicitly=False)
    loaded = bool(iface.loadInternalDiscoverySet(LAYOUT_CODES[layout], precision)) if calibrated else False
    return iface, target_enum, loaded


def estimate(problem: GemmProblem, *, device_key: str, precision: str, layout: str = "tn",
             target: str = "cutlass3", cta: tuple[int, int, int], warp: tuple[int, int, int],
             instruction: tuple[int, int, int], stages: int, split_k: int = 1, swizzle: int = 1,
             cta_order: int = 0, cluster: tuple[int, int] = (1, 1),
             calibrated: bool = False) -> HeuristicsEstimate | None:
    """The package's estimate for one explicit configuration, or None when the package is missing, the GPU
    is not one of its predefined ones, or it rejects the configuration (it answers 0 then)."""
    nmh = _module()
    if nmh is None or device_key not in NVIDIA_GPUS or target not in TARGETS or layout not in LAYOUT_CODES:
        return None
    iface, target_enum, loaded = _interface(nmh, target, device_key, precision, layout, calibrated)
    config = iface.nvmmhKernelConfiguration()
    config.cta[:] = cta
    config.warp[:] = warp
    config.instr[:] = instruction
    config.splitK, config.loadStages, config.gridSwizzle, config.ctaOrder = split_k, stages, swizzle, cta_order
    config.cluster[:] = cluster
    prob = iface.makeNvMatmulHeuristicsProblem(problem.m, problem.n, problem.k, LAYOUT_CODES[layout], problem.batch)
    backend = iface.createBackend(target_enum)
    try:
        def metric(name: str) -> float:
            return float(iface.nvMatmulHeuristicsEstimateSiliconMetricEx(
                iface.handle, precision.encode("ascii"), backend, ctypes.byref(prob), ctypes.byref(config),
                ctypes.c_int(_METRICS[name]), iface.hardware_descriptor))

        values = {name: metric(name) for name in _METRICS}
    finally:
        iface.destroyBackend(backend)
    if values["runtime"] <= 0:
        return None
    return HeuristicsEstimate(
        runtime_ms=values["runtime"] * 1e3, compute_ms=values["compute"] * 1e3, load_ms=values["load"] * 1e3,
        store_ms=values["store"] * 1e3, static_latency_ms=values["static_latencies"] * 1e3,
        l2_hit_rate=values["l2_hit_rate"], gmem_load_bytes=values["gmem_load_bytes"],
        gmem_store_bytes=values["gmem_store_bytes"], gpu=NVIDIA_GPUS[device_key], target=target,
        precision=precision, layout=layout, cta=tuple(cta), warp=tuple(warp), instruction=tuple(instruction),
        stages=stages, split_k=split_k, swizzle=swizzle, cta_order=cta_order, cluster=tuple(cluster),
        calibrated=loaded,
    )


def estimate_kernel(problem: GemmProblem, kernel: KernelShape, device: DeviceSpec, layout: str = "tn", *,
                    calibrated: bool = False) -> HeuristicsEstimate | None:
    """The package's estimate for one of our kernels: wgmma kernels as CUTLASS3 configurations, mma.sync
    ones as CUTLASS (2.x) configurations. None when it cannot say (no package, no tile, a library kernel,
    FFMA or WMMA, a GPU it does not know, or a configuration it rejects)."""
    if kernel.block_tile is None or kernel.instruction not in ("wgmma", "mma_sync"):
        return None
    if kernel.swap_ab:  # the kernel's own GEMM: (n, m, k), A = B^T and B = A^T (t <-> n, the letters exchanged)
        problem, kernel = kernel.unswapped(problem)
        flip = {"t": "n", "n": "t"}
        layout = flip[layout[1]] + flip[layout[0]] if len(layout) == 2 and set(layout) <= {"t", "n"} else layout
    bm, bn, bk = kernel.block_tile
    tf32 = kernel.math == "tf32"
    if kernel.instruction == "wgmma":
        target, instruction = "cutlass3", (64, 8, 8 if tf32 else 16)
    else:
        target, instruction = "cutlass", (16, 8, 8 if tf32 else 16)
    warp = (min(64, bm), min(64, bn), bk)
    precision = precision_string(kernel.input_dtype, kernel.accumulator, kernel.output_dtype, kernel.math)
    return estimate(problem, device_key=device.key, precision=precision, layout=layout, target=target,
                    cta=(bm, bn, bk), warp=warp, instruction=instruction, stages=kernel.stages or 4,
                    split_k=kernel.split_k, swizzle=min(kernel.raster_group, 255),
                    cta_order=1 if kernel.raster_along == "m" else 0, cluster=kernel.cluster,
                    calibrated=calibrated)


def suggest(problem: GemmProblem, *, device_key: str, precision: str, layout: str = "tn", target: str = "cutlass3",
            count: int = 4, calibrated: bool = False) -> list[dict] | None:
    """The package's top `count` configurations for a problem, each a dict of its fields plus runtime_ms;
    None without the package or for a GPU it does not know."""
    nmh = _module()
    if nmh is None or device_key not in NVIDIA_GPUS or target not in TARGETS or layout not in LAYOUT_CODES:
        return None
    iface, _, _ = _interface(nmh, target, device_key, precision, layout, calibrated)
    prob = iface.makeNvMatmulHeuristicsProblem(problem.m, problem.n, problem.k, LAYOUT_CODES[layout], problem.batch)
    out = []
    for found in iface.get(prob, count, precision=precision):
        cfg = found["kernel"]
        out.append({
            "cta": (cfg.cta_tile_m, cfg.cta_tile_n, cfg.cta_tile_k),
            "warp": (cfg.warp_tile_m, cfg.warp_tile_n, cfg.warp_tile_k),
            "instruction": (cfg.instr_tile_m, cfg.instr_tile_n, cfg.instr_tile_k),
            "stages": cfg.stages, "split_k": cfg.split_k, "swizzle": cfg.swizzle_factor,
            "cta_order": cfg.cta_order, "cluster": (cfg.cluster_m, cfg.cluster_n),
            "runtime_ms": found["runtime"] * 1e3,
        })
    return out
