"""Tile and wave quantization, and the roofline bound."""

import pytest

from gemmcompare.model.roofline import attainable_tflops, ridge_intensity, roofline_bound
from gemmcompare.model.waves import tile_grid, wave_quantization


def test_4096_cubed_with_128x256_tiles_on_132_sms_is_3_88_waves_and_97_percent():
    w = wave_quantization(4096, 4096, 128, 256, sm_count=132, ctas_per_sm=1)
    assert (w.tiles_m, w.tiles_n, w.ctas) == (32, 16, 512)
    assert w.ctas_per_wave == 132
    assert w.waves == pytest.approx(512 / 132) and round(w.waves, 2) == 3.88
    assert (w.wave_count, w.full_waves, w.tail_ctas) == (4, 3, 116)
    assert w.tail_fill == pytest.approx(116 / 132)
    assert w.efficiency == pytest.approx(512 / 528) and round(100 * w.efficiency) == 97


def test_a_persistent_kernel_has_the_same_quantization_per_sm():
    data_parallel = wave_quantization(4096, 4096, 128, 256, 132)
    persistent = wave_quantization(4096, 4096, 128, 256, 132, persistent=True)
    assert persistent.efficiency == data_parallel.efficiency
    assert persistent.max_tiles_per_worker == 4 and persistent.tiles_on_busiest_sm == 4


def test_full_waves_are_fully_efficient_and_stream_k_removes_quantization():
    w = wave_quantization(132 * 128, 256, 128, 256, 132)
    assert w.ctas == 132 and w.efficiency == 1.0 and w.tail_fill == 1.0 and w.tail_ctas == 0
    sk = wave_quantization(4096, 4096, 128, 256, 132, stream_k=True)
    assert sk.efficiency == 1.0 and sk.sm_efficiency == 1.0


def test_ragged_edges_batches_split_k_and_clusters_multiply_or_round_the_ctas():
    assert tile_grid(4097, 4096, 128, 256) == (33, 16)
    assert wave_quantization(4096, 4096, 128, 256, 132, batch=3, split_k=2).ctas == 512 * 6
    assert tile_grid(33 * 128, 4096, 128, 256, cluster=(2, 1)) == (34, 16)  # rounded up to whole clusters
    w = wave_quantization(4096, 4096, 128, 256, 132, cluster=(1, 4))
    assert w.ctas_per_wave == 132  # 132 is a multiple of 4
    assert wave_quantization(4096, 4096, 128, 256, 130, cluster=(2, 2)).ctas_per_wave == 128
    with pytest.raises(ValueError):
        wave_quantization(4096, 4096, 128, 256, 132, ctas_per_sm=0)


def test_wave_and_per_sm_bounds_differ_only_with_several_ctas_per_sm():
    one = wave_quantization(300 * 128, 128, 128, 128, 132, ctas_per_sm=1)
    assert one.efficiency == one.sm_efficiency == pytest.approx(300 / 396)
    two = wave_quantization(300 * 128, 128, 128, 128, 132, ctas_per_sm=2)
    assert two.efficiency == pytest.approx(300 / 528)  # two waves of 264, the second nearly empty
    assert two.tiles_on_busiest_sm == 3 and two.sm_efficiency == pytest.approx(300 / 396)


def test_roofline_bound_takes_the_larger_of_compute_and_memory_time():
    # 4096^3 FP16 in, FP32 out on the H200: 137 GFLOP at 989.4 TFLOP/s against 134 MB at 4.8 TB/s
    flops, unique = 2 * 4096**3, 4096**2 * (2 + 2 + 4)
    r = roofline_bound(flops, unique, 989.4, 4.8e12)
    assert r.compute_ms == pytest.approx(flops / 989.4e12 * 1e3)
    assert r.memory_ms == pytest.approx(unique / 4.8e12 * 1e3)
    assert r.bound == "compute" and r.bound_ms == r.compute_ms
    small = roofline_bound(2 * 64**3, 64 * 64 * 8, 989.4, 4.8e12)
    assert small.bound == "memory" and small.attainable_tflops < 989.4


def test_attainable_rate_and_the_128x256_panel_below_the_a100_knee():
    knee = ridge_intensity(312, 2039e9)
    assert round(knee, 1) == 153.0
    panel = 2 * 128 * 256 / (2 * (128 + 256))
    assert panel < knee  # seed 000: 85.3 FLOP/B, below the 153 HBM knee
    assert attainable_tflops(panel, 312, 2039e9) == pytest.approx(2039e9 * panel / 1e12)
    assert attainable_tflops(1000, 312, 2039e9) == 312
