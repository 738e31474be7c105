"""The predicted time of one kernel on one problem and device, with every input and intermediate kept.

The model, term by term (all times in milliseconds):

  rate        = min(datasheet peak of the kernel's math class, the issue ceiling of its instruction)
  compute_ms  = tiles on the busiest SM x FLOPs of one tile / (rate / SMs x share)
                One tile executes 2*BM*BN*K' FLOPs with K' the K loop rounded up to BK: ragged edge tiles
                run whole (zero-filled), and a kernel that pads the problem runs the padded one. The busiest
                SM runs ceil(tiles / SMs) tiles (CTAs-per-SM x ceil(tiles / workers) for a persistent
                kernel; CTAs per SM from the occupancy calculator), so wave quantization is in it. `share`
                caps what the CTAs resident on an SM can drive: one warp feeds one of the SM's four
                sub-partitions, so fewer than four resident warps cannot reach the SM's rate.
                Without a tile (a library), compute_ms = executed FLOPs / rate.
  memory_ms   = HBM bytes / bandwidth, HBM bytes from the wave-footprint model of the raster order
                (at least the unique bytes: each operand read once, the output written once)
  l1_ms       = for the lab kernels, the L1/shared-memory data path (model/datapath.py): tiles on the
                busiest SM x K tiles x 128-byte wavefronts per CTA per K tile / clock. The scalar and
                shared-memory kernels are bound here, not by the FFMA rate.
  operand_ms  = tile (operand) traffic / L2 bandwidth, only when an L2 bandwidth is given: the panel
                model's M*N*K*s*(1/BN + 1/BM) + output bytes, which the SMs request from L2. No datasheet
                gives an L2 bandwidth, so it is off by default. Charging that traffic to HBM instead
                (l2_bandwidth=device.memory_bandwidth) is refuted by measurement: it predicts 0.35 ms for
                4096^3 FP16 with 128x256 tiles on the H200, where cuBLAS and CUTLASS measured 0.19 ms.
  predicted   = max(compute_ms, memory_ms, l1_ms, operand_ms) + launch_ms
                (the mainloop overlaps loads with math, so the terms overlap; the launch does not)

The bound is the largest term: 'compute', 'memory', 'l1' or 'l2' (the operand term); a compute-bound
launch whose tile quantization leaves more than a quarter of the busiest SM's time idle
(waves.sm_efficiency < 0.75) is 'waves'.

Rates are what the hardware was measured to reach on random data where that is known (790 TFLOP/s for
wgmma on the H200, not the datasheet's 989.4; model/ceilings.py), so the prediction is an estimate of
the best this kernel's structure allows, not a strict upper bound: a kernel can beat it by the spread of
those measurements (a few per cent). Latency, pipeline bubbles, barriers and epilogues are not in it. A
measured row far below its prediction is the interesting one.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from ..problems import GemmProblem
from .ceilings import IssueCeiling, issue_ceiling
from .datapath import LoopWavefronts, Operands, datapath_ms, lab_loop_wavefronts
from .devices import DeviceSpec, device_spec
from .kernels import KernelShape, kernel_from_row
from .occupancy import Occupancy, occupancy
from .roofline import RooflineBound, roofline_bound
from .traffic import HbmEstimate, TileTraffic, tile_traffic, wave_footprint_hbm
from .waves import WaveQuantization, wave_quantization
from .work import GemmWork, element_bytes, gemm_work

# A fixed cost every timed launch pays (launch, ramp-up, drain). On the lent H200 the smallest timed kernels
# of this project's results took 4.4 to 4.8 us (lab.wmma_padded at 64x64x64 and 31x29x37, cuBLAS at 31x29x37
# 4.9 us, experiments/studies), whatever their math: 4 us is below all of them. An explicit argument.
LAUNCH_LATENCY_MS = 0.004
SUB_PARTITIONS = 4  # one warp issues to one of an SM's four sub-partitions

# The wave-footprint model walks every tile; past this many it falls back to the unique bytes.
MAX_TILES_FOR_FOOTPRINT = 1 << 20
# A compute-bound launch whose busiest SM idles more than this share of its time on a partial wave is
# reported as bound by waves.
WAVE_BOUND_EFFICIENCY = 0.75


@dataclass(frozen=True)
class Prediction:
    """Why a kernel can take no less than `predicted_ms`: every input and intermediate of the model."""

    device: str
    device_name: str
    problem: GemmProblem
    kernel: KernelShape
    math_class: str
    peak_tflops: float
    ceiling: IssueCeiling
    rate_tflops: float  # min(peak, ceiling)
    work: GemmWork
    occupancy: Occupancy | None
    waves: WaveQuantization | None
    wave_efficiency: float  # the wave bound: waves / waves rounded up (1.0 without a tile)
    tile_flops: int | None  # FLOPs one tile (CTA) executes: 2*BM*BN*K' with K' rounded up to BK
    tile_work_flops: int  # tiles x tile_flops (the executed FLOPs without a tile)
    tiles_on_busiest_sm: float | None
    sm_share: float  # fraction of an SM's rate its resident CTAs can drive (<= 1)
    compute_ms: float
    unique_bytes: int
    tile_traffic: TileTraffic | None
    hbm: HbmEstimate | None
    hbm_bytes: int
    bandwidth: float
    memory_ms: float
    l1: LoopWavefronts | None  # the data-path count of a lab kernel's main loop
    clock_mhz: float | None
    l1_ms: float | None
    l2_bandwidth: float | None
    operand_ms: float | None
    launch_ms: float
    roofline: RooflineBound  # the plain bound: logical FLOPs at the datasheet peak, unique bytes at bandwidth
    predicted_ms: float
    bound: str  # 'compute', 'memory', 'l1', 'l2' or 'waves' (see the module docstring)
    notes: tuple[str, ...]

    @property
    def predicted_tflops(self) -> float:
        """Useful-work rate at the predicted time (logical FLOPs / predicted_ms)."""
        return self.work.logical_flops / (self.predicted_ms * 1e-3) / 1e12

    @property
    def fraction_of_peak(self) -> float:
        return self.predicted_tflops / self.peak_tflops

    @property
    def machine_efficiency(self) -> float:
        """Useful FLOPs over what the SMs could do at `rate` in compute_ms: quantization, padding and
        ragged tiles together."""
        return self.work.logical_flops / (self.rate_tflops * 1e12 * self.compute_ms * 1e-3)

    def measured_fraction(self, measured_ms: float) -> float:
        """How close a measurement came to the prediction (predicted / measured; 1.0 means at the ceiling)."""
        return self.predicted_ms / measured_ms

    def as_dict(self) -> dict[str, Any]:
        """Every field, nested dataclasses as dicts, plus the derived rates (for reports and JSON)."""
        out = dataclasses.asdict(self)
        out["predicted_tflops"] = self.predicted_tflops
        out["fraction_of_peak"] = self.fraction_of_peak
        out["machine_efficiency"] = self.machine_efficiency
        if self.waves is not None:
            out["waves"].update(waves=self.waves.waves, wave_count=self.waves.wave_count,
                                tail_fill=self.waves.tail_fill, efficiency=self.waves.efficiency,
                                sm_efficiency=self.waves.sm_efficiency)
        if self.occupancy is not None:
            out["occupancy"].update(occupancy=self.occupancy.occupancy, active_warps=self.occupancy.active_warps)
        return out


def _occupancy_of(kernel: KernelShape, device: DeviceSpec, notes: list[str]):
    """(the occupancy of the kernel's block, or None when its resources are unknown; CTAs per SM)."""
    if kernel.block_resources is None:
        if kernel.block_tile is not None:
            notes.append("block size unknown: one CTA per SM assumed")
        return None, 1
    occ = occupancy(device, kernel.block_resources)
    notes.extend(occ.notes)
    if occ.ctas_per_sm == 0:
        raise ValueError(f"{kernel.name}: no CTA fits an SM of {device.name} ({'; '.join(occ.notes)})")
    return occ, occ.ctas_per_sm


def _l1_term(kernel: KernelShape, padded: GemmProblem, busiest, device: DeviceSpec, notes: list[str]):
    """(the lab loop's L1 wavefront count, its time on the busiest SM), or (None, None) for other kernels."""
    if kernel.lab_loop is None or busiest is None:
        return None, None
    if device.boost_clock_mhz is None:
        notes.append(f"{device.name} has no clock in the device table: the L1 data-path term is left out")
        return None, None
    ops = Operands(lda=padded.m if kernel.a_col else padded.k, ldb=padded.k if kernel.b_col else padded.n,
                   a_col=kernel.a_col, b_col=kernel.b_col)
    loop = lab_loop_wavefronts(kernel.lab_loop, ops, kernel.warp_tile)
    return loop, datapath_ms(loop, busiest, padded.k, device.boost_clock_mhz)


def predict(problem: GemmProblem, kernel: KernelShape, device: DeviceSpec, *,
            launch_ms: float = LAUNCH_LATENCY_MS, l2_bandwidth: float | None = None) -> Prediction:
    """Predict the time of `kernel` on `problem` on `device`. Raises ValueError when the device has no peak
    for the kernel's math class or the kernel fits no CTA on an SM."""
    notes: list[str] = list(kernel.notes)
    if kernel.swap_ab:  # its tiles, waves and traffic are those of the transposed problem, with A and B exchanged
        problem, kernel = kernel.unswapped(problem)
        notes.append("A and B swapped: modelled as the transposed problem")
    math_class = kernel.math_class
    ceiling = issue_ceiling(device, kernel.instruction, math_class)
    peak = ceiling.peak_tflops
    rate = ceiling.tflops
    if not ceiling.measured and kernel.instruction not in ("library", "ffma"):
        notes.append(ceiling.source)
    work = gemm_work(problem, kernel.pad_to)
    a_size = element_bytes(kernel.input_dtype)
    c_size = element_bytes(kernel.output_dtype)

    occ, ctas_per_sm = _occupancy_of(kernel, device, notes)

    waves = None
    efficiency, share = 1.0, 1.0
    tile_flops = busiest = None
    tile_work = work.executed_flops
    traffic = hbm = None
    padded = GemmProblem(work.padded_m, work.padded_n, work.padded_k, problem.batch)
    if kernel.block_tile is not None:
        bm, bn, bk = kernel.block_tile
        waves = wave_quantization(padded.m, padded.n, bm, bn, device.sm_count, ctas_per_sm, batch=problem.batch,
                                  split_k=kernel.split_k, cluster=kernel.cluster, persistent=kernel.persistent,
                                  stream_k=kernel.stream_k)
        efficiency = waves.efficiency
        k_per_unit = -(-padded.k // kernel.split_k)
        tile_flops = 2 * bm * bn * (-(-k_per_unit // bk) * bk)
        tile_work = waves.ctas * tile_flops
        busiest = waves.tiles_on_busiest_sm
        resident = ctas_per_sm if kernel.persistent else min(ctas_per_sm, max(1, math.ceil(busiest)))
        warps = occ.warps_per_cta if occ is not None else SUB_PARTITIONS
        share = min(1.0, resident * warps / SUB_PARTITIONS)
        compute_ms = busiest * tile_flops / (rate * 1e12 / device.sm_count * share) * 1e3
        traffic = tile_traffic(padded, bm, bn, a_size, a_size, c_size)
        if waves.tiles_m * waves.tiles_n <= MAX_TILES_FOR_FOOTPRINT:
            hbm = wave_footprint_hbm(padded, bm, bn, a_size, a_size, c_size, waves.ctas_per_wave,
                                     kernel.raster_group, kernel.raster_along)
    else:
        compute_ms = work.executed_flops / (rate * 1e12) * 1e3

    unique = problem.unique_bytes(a_size, a_size, c_size)
    hbm_bytes = max(unique, hbm.total_bytes) if hbm is not None else unique
    if device.memory_bandwidth is None:
        raise ValueError(f"{device.name} has no memory bandwidth in the device table")
    memory_ms = hbm_bytes / device.memory_bandwidth * 1e3
    operand_ms = None
    if l2_bandwidth is not None and traffic is not None:
        operand_ms = traffic.total_bytes / l2_bandwidth * 1e3

    loop, l1_ms = _l1_term(kernel, padded, busiest, device, notes)

    terms = {"compute": compute_ms, "memory": memory_ms, "l1": l1_ms or 0.0, "l2": operand_ms or 0.0}
    bound = max(terms, key=terms.get)
    predicted = terms[bound] + launch_ms
    if bound == "compute" and waves is not None and waves.sm_efficiency < WAVE_BOUND_EFFICIENCY:
        bound = "waves"
    plain = roofline_bound(work.logical_flops, unique, peak, device.memory_bandwidth)
    return Prediction(
        device=device.key, device_name=device.name, problem=problem, kernel=kernel, math_class=math_class,
        peak_tflops=peak, ceiling=ceiling, rate_tflops=rate, work=work, occupancy=occ, waves=waves,
        wave_efficiency=efficiency, tile_flops=tile_flops, tile_work_flops=tile_work, tiles_on_busiest_sm=busiest,
        sm_share=share, compute_ms=compute_ms, unique_bytes=unique, tile_traffic=traffic, hbm=hbm,
        hbm_bytes=hbm_bytes, bandwidth=device.memory_bandwidth, memory_ms=memory_ms, l1=loop,
        clock_mhz=device.boost_clock_mhz, l1_ms=l1_ms, l2_bandwidth=l2_bandwidth,
        operand_ms=operand_ms, launch_ms=launch_ms, roofline=plain, predicted_ms=predicted, bound=bound,
        notes=tuple(dict.fromkeys(notes)),
    )


def predict_row(row: Any, device: DeviceSpec | str, **kwargs) -> Prediction:
    """Predict a result row (a Result or its record): the kernel from its family parameters, registers and
    shared memory, the problem from m, n, k, batch. Rows do not name their GPU; the run's receipt does, so
    pass `device` as a DeviceSpec or a name (gemmcompare.report.data.gpu_name(receipt)). Raises ValueError
    when the device or the kernel is unknown to the models."""
    rec = row if isinstance(row, dict) else {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}
    if not isinstance(device, DeviceSpec):
        spec = device_spec(device)
        if spec is None:
            raise ValueError(f"device {device!r} is not in the device table")
        device = spec
    if rec.get("grouped"):  # per-group tiles and waves are not modelled: a stated error, never a dense guess
        raise ValueError("no prediction for grouped problems: the model counts the tiles and waves of one dense "
                         "GEMM, not per-group M tiles scheduled in one launch")
    problem = GemmProblem(int(rec["m"]), int(rec["n"]), int(rec["k"]), int(rec.get("batch") or 1))
    return predict(problem, kernel_from_row(rec), device, **kwargs)
