"""The predicted time: its terms, its inputs kept, rows read into kernels, and a check against every H200
row this project has measured (the prediction is a ceiling: no PASS row may beat it)."""

import csv
import glob
import gzip
import json
import os
from pathlib import Path
import subprocess
import sys

import pytest

from gemmcompare.model.devices import DEVICES
from gemmcompare.model.kernels import KernelShape, contract_dtypes, kernel_from_row
from gemmcompare.model.predict import LAUNCH_LATENCY_MS, predict, predict_row
from gemmcompare.problems import GemmProblem

H200 = DEVICES["h200_sxm"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mma_sync(block=(128, 256, 64), registers=252, smem=147568, **kw):
    return KernelShape("mma_sync", "mma_sync", "f16", "f32", "f32", block_tile=block, threads_per_block=256,
                       registers_per_thread=registers, dynamic_shared_bytes=smem, raster_group=8, **kw)


def test_mma_sync_at_4096_cubed_on_the_h200_term_by_term():
    p = predict(GemmProblem(4096, 4096, 4096), _mma_sync(), H200)
    assert p.rate_tflops == 630.0 and p.peak_tflops == 989.4 and p.ceiling.measured
    assert p.occupancy.ctas_per_sm == 1
    assert p.waves.ctas == 512 and round(p.wave_efficiency, 4) == 0.9697
    assert p.tile_flops == 2 * 128 * 256 * 4096
    assert p.tiles_on_busiest_sm == 4 and p.sm_share == 1.0
    assert p.compute_ms == pytest.approx(4 * p.tile_flops / (630e12 / 132) * 1e3)
    assert p.bound == "compute"
    assert p.predicted_ms == pytest.approx(p.compute_ms + LAUNCH_LATENCY_MS)
    assert p.memory_ms == pytest.approx(p.hbm_bytes / 4.8e12 * 1e3)
    assert p.hbm_bytes >= p.unique_bytes == 4096**2 * (2 + 2 + 4)
    assert p.tile_traffic.operand_bytes == 4096**3 * 2 * (1 / 256 + 1 / 128)
    assert p.machine_efficiency == pytest.approx(512 / 528)
    # the ceiling leaves mma.sync at ~611 TFLOP/s of useful work: 84% of what wgmma kernels reach
    assert 600 < p.predicted_tflops < 620


def test_wgmma_and_library_kernels_run_at_the_measured_random_data_rate_not_the_datasheet():
    problem = GemmProblem(4096, 4096, 4096)
    wgmma = KernelShape("coop", "wgmma", "f16", "f32", "f32", block_tile=(128, 256, 64), threads_per_block=384,
                        registers_per_thread=168, dynamic_shared_bytes=229440, persistent=True)
    lib = KernelShape("cublas", "library", "f16", "f32", "f32")
    pw, pl = predict(problem, wgmma, H200), predict(problem, lib, H200)
    assert pw.rate_tflops == pl.rate_tflops == 790.0 and pw.peak_tflops == 989.4
    assert pw.roofline.peak_tflops == 989.4  # the plain roofline keeps the datasheet
    assert pl.waves is None and pl.wave_efficiency == 1.0 and pl.compute_ms == pytest.approx(problem.flops / 790e9)
    assert pw.compute_ms == pytest.approx(pl.compute_ms / (512 / 528))


def test_padding_kernels_execute_the_padded_problem_and_ragged_tiles_run_whole():
    wmma = KernelShape("lab.wmma_padded", "wmma", "f16", "f32", "f32", block_tile=(16, 16, 16),
                       threads_per_block=32, registers_per_thread=64, pad_to=(16, 16, 16))
    p = predict(GemmProblem(257, 263, 251), wmma, H200)
    assert p.work.executed_flops == 37879808 and p.work.logical_flops == 33930682
    assert p.tile_work_flops == p.work.executed_flops
    ragged = predict(GemmProblem(4097, 4096, 4096), _mma_sync(), H200)
    assert ragged.waves.ctas == 33 * 16 and ragged.tile_work_flops == 33 * 16 * ragged.tile_flops


def test_a_lone_small_cta_cannot_drive_a_whole_sm():
    one_warp = KernelShape("w", "wmma", "f16", "f32", "f32", block_tile=(16, 16, 16), threads_per_block=32,
                           registers_per_thread=64)
    p = predict(GemmProblem(16, 16, 4096), one_warp, H200)
    assert p.sm_share == 0.25
    assert p.compute_ms == pytest.approx(p.tile_flops / (630e12 / 132 * 0.25) * 1e3)


def test_memory_bound_problems_and_an_explicit_l2_bandwidth():
    lib = KernelShape("cublas", "library", "f16", "f32", "f32")
    skinny = predict(GemmProblem(4096, 16, 4096), lib, H200, l2_bandwidth=1e12)
    assert skinny.bound == "memory" and skinny.operand_ms is None  # no tile, no operand term
    assert skinny.memory_ms == pytest.approx(skinny.unique_bytes / 4.8e12 * 1e3)
    # the same shape on a 128x256 tile runs 32 whole tiles, 94% of them padding along N: compute-bound
    tiled = predict(GemmProblem(4096, 16, 4096), _mma_sync(), H200)
    assert tiled.bound == "waves" and tiled.waves.sm_efficiency < 0.75 and tiled.tile_work_flops == 16 * tiled.work.logical_flops
    fed = predict(GemmProblem(4096, 4096, 4096), _mma_sync(), H200, l2_bandwidth=1e12)
    assert fed.bound == "l2" and fed.operand_ms == pytest.approx(fed.tile_traffic.total_bytes / 1e12 * 1e3)
    # why panel traffic is not charged to HBM by default: at 4.8 TB/s it would take 0.35 ms, yet CUTLASS's
    # 128x256 cooperative kernel measured 0.1876 ms there (experiments/studies/library-vs-handwritten/h200-fourth-session)
    at_hbm = predict(GemmProblem(4096, 4096, 4096), _mma_sync(), H200, l2_bandwidth=H200.memory_bandwidth)
    assert round(at_hbm.operand_ms, 2) == 0.35 and at_hbm.operand_ms > 0.1876


def test_a_kernel_that_fits_no_cta_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="no CTA fits"):
        predict(GemmProblem(512, 512, 512), _mma_sync(smem=300 * 1024), H200)


def test_the_prediction_keeps_every_input_and_serializes():
    p = predict(GemmProblem(4096, 4096, 4096), _mma_sync(), H200)
    d = json.loads(json.dumps(p.as_dict()))
    for key in ("peak_tflops", "rate_tflops", "ceiling", "occupancy", "waves", "compute_ms", "memory_ms",
                "hbm_bytes", "unique_bytes", "tile_traffic", "launch_ms", "predicted_ms", "bound", "kernel", "work"):
        assert key in d, key
    assert d["waves"]["efficiency"] == pytest.approx(512 / 528)
    assert d["occupancy"]["limited_by"] == ["registers", "shared_memory"]
    assert d["predicted_tflops"] == pytest.approx(p.predicted_tflops)


@pytest.mark.parametrize("name, dtypes", [
    ("f16_f32acc_tn", ("f16", "f32", "f32", "strict")), ("bf16_bf16out_f32acc_tt", ("bf16", "bf16", "f32", "strict")),
    ("f16_f16acc_tn", ("f16", "f16", "f16", "strict")), ("f32_strict_tt", ("f32", "f32", "f32", "strict")),
    ("f32_tf32_tn", ("f32", "f32", "f32", "tf32")), ("f16_f32acc_bias_relu_tn", ("f16", "f32", "f32", "strict")),
])
def test_contract_spellings(name, dtypes):
    d = contract_dtypes(name)
    assert (d["input"], d["output"], d["accumulator"], d["math"]) == dtypes


def test_rows_of_each_family_become_kernels():
    lab = kernel_from_row({"family": "lab", "implementation": "lab.wmma_staged[warp_tile=64x64]",
                           "params": '{"warp_tile": [64, 64]}', "contract": "f16_f32acc_tn", "registers": "128",
                           "smem_bytes": "40960"})
    assert lab.threads_per_block == 128 and lab.block_tile == (128, 128, 32) and lab.instruction == "wmma"
    strided = kernel_from_row({"family": "lab", "implementation": "lab.scalar_strided", "params": "{}",
                               "contract": "f32_strict_tt", "registers": 32, "smem_bytes": 0})
    assert strided.instruction == "ffma" and strided.math_class == "f32_simt"
    canary = kernel_from_row({"family": "mma_sync", "implementation": "mma_sync[acc=f16]", "contract": "f16_f32acc_tn",
                              "params": {"block": [128, 256, 64], "warps": 8, "acc": "f16", "group": 8, "stages": 3},
                              "registers": 194, "smem_bytes": 147568})
    assert canary.math_class == "f16_tensor_f16acc" and canary.threads_per_block == 256 and canary.stages == 3
    sm90 = kernel_from_row({"family": "cutlass", "implementation": "cutlass.x", "contract": "f16_f32acc_tn",
                            "params": {"template": "sm90", "dtype": "f16", "out": "f32", "acc": "f32", "tile": [128, 256, 64],
                                       "cluster": [2, 1], "schedule": "cooperative", "scheduler": "stream_k",
                                       "stages": "auto", "swizzle": 4, "raster": "along_m"},
                            "registers": 168, "smem_bytes": 229440})
    assert (sm90.instruction, sm90.threads_per_block, sm90.cluster, sm90.stream_k) == ("wgmma", 384, (2, 1), True)
    assert sm90.raster_along == "m" and sm90.raster_group == 4 and sm90.stages is None
    simt = kernel_from_row({"family": "cutlass", "implementation": "cutlass.y", "contract": "f32_strict_tn",
                            "params": {"family": "sm80", "dtype": "f32", "out": "f32", "acc": "f32", "tile": [128, 128, 8],
                                       "warp": [32, 64, 8], "instruction": [1, 1, 1], "stages": 4, "swizzle": 8,
                                       "split_k": "serial", "slices": 3}})
    assert (simt.instruction, simt.threads_per_block, simt.split_k, simt.math_class) == ("ffma", 256, 3, "f32_simt")
    tf32 = kernel_from_row({"family": "cutlass", "implementation": "cutlass.z", "contract": "f16_f32acc_tn",
                            "params": {"family": "cute_sm80", "dtype": "tf32", "out": "f32", "acc": "f32",
                                       "tile": [128, 128, 32], "warps": [2, 2], "stages": 3, "swizzle": 8}})
    assert tf32.math_class == "tf32_tensor" and tf32.threads_per_block == 128
    with pytest.raises(ValueError):
        kernel_from_row({"family": "custom", "implementation": "custom.mine", "contract": "f16_f32acc_tn"})


def _measured_h200_rows():
    """The committed H200 receipts' PASS rows (every study's h200*/ run folders, compressed ones too)."""
    from gemmcompare.store.run_folder import RESULT_FILES, load_result_file

    studies = Path(REPO) / "experiments" / "studies"
    folders = sorted({p.parent for name in RESULT_FILES for p in studies.rglob(name)
                      if any(part.startswith("h200") for part in p.relative_to(studies).parts)})
    for folder in folders:
        _, df = load_result_file(folder)
        for row in df.to_dict("records"):
            # a tuned row has no prediction of its own (its parameters are a grid; docs/tuning.md)
            if (row.get("status") == "PASS" and row.get("median_ms") == row.get("median_ms")
                    and row.get("median_ms") is not None and row.get("family") != "custom"
                    and ".tuned[" not in str(row.get("implementation", ""))):
                yield folder, row


# Rows measured more than 10% faster than predicted, each explained in docs/predictions.md: the L1 count of
# the strided kernel (17 wavefronts per warp step) holds at 4096^3 (141.9 ms measured, 139.8 predicted) but
# not at the lab's small shape, where the SM's L1 served its 16-row requests about twice as fast.
# lab.wmma_padded under the tn layout (B column-major) in the alignment study (honest-numbers/alignment/): the
# L1 count of model/datapath.py holds for the lab ladder's tt rows, but these tn rows ran 30-35% faster than
# it at 3999x5001x4097 and 4096x4096x4100; not explained yet (docs/predictions.md lists it as a miss).
# cuBLAS at 256x256x1 and 256x256x33 (first-contact/, 2026-12-01): 3.3-3.7 us measured (CUPTI + the launch
# window) against 4.03-4.06 us predicted, nearly all of it the model's fixed launch latency: a launch this small
# ends sooner than the constant assumes.
KNOWN_FASTER = {("lab.scalar_strided", "257x263x251"), ("lab.wmma_padded", "3999x5001x4097"),
                ("lab.wmma_padded", "4096x4096x4100"), ("library.cublas", "256x256x1"),
                ("library.cublas", "256x256x33")}


def test_no_measured_h200_row_beats_its_prediction_by_more_than_ten_percent():
    """The rates are measured means (790 TFLOP/s for wgmma spans 769-798), so a row may beat its prediction
    by a few per cent, and the L1 wavefront counts are estimates (lab.shared_16x16 at 4096^3 measured 8% below
    its count); by more than 10% only the rows listed in KNOWN_FASTER."""
    rows = list(_measured_h200_rows())
    if not rows:
        pytest.skip("no H200 results in experiments/studies")
    checked, faster = 0, set()
    for path, row in rows:
        try:
            p = predict_row(row, H200)
        except ValueError:
            continue  # a kernel the model cannot describe (or one that fits no CTA)
        if float(row["median_ms"]) < 0.90 * p.predicted_ms:
            faster.add((row["implementation"], row["problem"]))
        checked += 1
    assert faster == KNOWN_FASTER
    assert checked >= 100


def test_the_models_import_without_torch():
    code = ("import sys; import gemmcompare.model.predict, gemmcompare.model.access, gemmcompare.model.heuristics; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
