"""Operand traffic (the panel model) and the raster-order HBM estimate against seed 001's DRAM reads."""

import pytest

from gemmcompare.model.traffic import raster_tile, tile_traffic, wave_footprint_hbm
from gemmcompare.problems import GemmProblem


def test_tile_traffic_is_mnk_s_times_inverse_tile_sides_plus_the_output():
    p = GemmProblem(4096, 4096, 4096)
    t = tile_traffic(p, 128, 256, 2, 2, 4)
    m = n = k = 4096
    assert t.operand_bytes == m * n * k * 2 * (1 / 256 + 1 / 128)
    assert t.total_bytes == t.operand_bytes + m * n * 4
    assert t.panel_intensity == pytest.approx(256 / 3)
    assert p.flops / t.operand_bytes == pytest.approx(t.panel_intensity)  # the inverse view of the same model


def test_ragged_tiles_read_only_real_rows():
    p = GemmProblem(130, 300, 64)
    t = tile_traffic(p, 128, 256, 2, 2, 2)
    assert t.a_bytes == 2 * 130 * 64 * 2  # A read once per tile column (2 of them)
    assert t.b_bytes == 2 * 64 * 300 * 2  # B read once per tile row (2 of them)


def test_raster_orders():
    order = [raster_tile(pid, 3, 4, group=1) for pid in range(12)]
    assert order[:5] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]  # row-major: blockIdx.x walks N
    grouped = [raster_tile(pid, 3, 4, group=2) for pid in range(12)]
    assert grouped[:4] == [(0, 0), (1, 0), (0, 1), (1, 1)]  # two tile rows, column by column
    assert grouped[8:] == [(2, 0), (2, 1), (2, 2), (2, 3)]  # the last, partial group
    assert sorted(grouped) == sorted(order)
    assert [raster_tile(pid, 3, 4, group=1, along="m") for pid in range(3)] == [(0, 0), (1, 0), (2, 0)]


def _seed001_kernel(n, group):
    # RTX 4060 Laptop: 24 SMs x 2 CTAs of the 8-warp 128x128x32 FP16 kernel
    return wave_footprint_hbm(GemmProblem(n, n, n), 128, 128, 2, 2, 2, ctas_per_wave=48, group=group)


def test_row_major_raster_at_8192_reads_about_9_16_gb_34x_the_minimum():
    est = _seed001_kernel(8192, group=1)
    assert est.read_bytes == pytest.approx(9.16e9, rel=0.05)
    assert est.read_amplification == pytest.approx(34, rel=0.05)
    assert est.unique_read_bytes == 2 * 8192**2 * 2


def test_grouped_raster_at_8192_reads_about_4_70_gb():
    est = _seed001_kernel(8192, group=2)
    assert est.read_bytes == pytest.approx(4.70e9, rel=0.05)
    assert est.read_bytes < _seed001_kernel(8192, group=1).read_bytes / 1.8


def test_the_model_ignores_cross_wave_reuse_so_it_overestimates_when_an_operand_fits_l2():
    # at 4096 the 32 MiB B panel fits the 32 MiB L2 and measured 527 MB; the model, without reuse across
    # waves, says more: a known limit, kept visible
    est = _seed001_kernel(4096, group=1)
    assert est.read_bytes > 527e6
    assert est.read_bytes >= est.unique_read_bytes


def test_one_wave_reads_each_operand_once():
    est = wave_footprint_hbm(GemmProblem(1024, 1024, 512), 128, 128, 2, 2, 4, ctas_per_wave=64)
    assert est.waves == 1 and est.read_bytes == est.unique_read_bytes
    assert est.write_bytes == 1024 * 1024 * 4
