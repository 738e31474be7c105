"""Work and intensity models against seed 000's worked numbers (the GEMM lab)."""

import pytest

from gemmcompare.model.work import (
    ELEMENT_BYTES, arithmetic_intensity, element_bytes, gemm_work, ideal_square_intensity, pad_to_multiple,
    panel_intensity, panel_intensity_with_store, scalar_operand_bytes, tile_intensity, unique_bytes,
)
from gemmcompare.problems import GemmProblem


def test_the_2x2x3_example_counts_24_flops_and_its_two_traffic_models():
    p = GemmProblem(2, 2, 3)
    work = gemm_work(p)
    assert work.logical_flops == 24 == work.executed_flops
    assert round(arithmetic_intensity(24, scalar_operand_bytes(p, "f32")), 3) == 0.214
    assert round(arithmetic_intensity(24, unique_bytes(p, "f32", "f32", "f32")), 3) == 0.375


def test_square_fp32_unique_byte_intensity_at_4096_is_682_7():
    assert round(ideal_square_intensity(4096, "f32"), 1) == 682.7
    p = GemmProblem(4096, 4096, 4096)
    assert ideal_square_intensity(4096, "f32") == pytest.approx(p.flops / unique_bytes(p, "f32", "f32", "f32"))


def test_wmma_padding_of_the_default_lab_shape():
    work = gemm_work(GemmProblem(257, 263, 251), pad_to=(16, 16, 16))
    assert (work.padded_m, work.padded_n, work.padded_k) == (272, 272, 256)
    assert work.logical_flops == 33930682
    assert work.executed_flops == 37879808


def test_odd_shape_padding_costs_37_3_percent():
    work = gemm_work(GemmProblem(73, 61, 67), pad_to=(16, 16, 16))
    assert (work.logical_flops, work.executed_flops) == (596702, 819200)
    assert round(100 * work.padding_overhead, 1) == 37.3


def test_padding_to_one_changes_nothing_and_bad_multiples_are_refused():
    assert pad_to_multiple(17, 1) == 17 and pad_to_multiple(17, 16) == 32 and pad_to_multiple(32, 16) == 32
    with pytest.raises(ValueError):
        pad_to_multiple(5, 0)


@pytest.mark.parametrize("tile, size, expected, kernel", [
    ((16, 16), 4, 4.0, "shared_16x16: 16x16 FP32 block tile"),
    ((16, 64), 4, 6.4, "register_16x64: 16x64 FP32 block tile"),
    ((16, 16), 2, 8.0, "wmma_f16_f32: 16x16 FP16 warp tile"),
])
def test_panel_intensities_of_the_three_lab_tiles(tile, size, expected, kernel):
    assert panel_intensity(*tile, size) == expected, kernel


def test_wide_fp16_tile_is_85_3_flop_per_byte():
    value = panel_intensity(128, 256, 2)
    assert value == pytest.approx(256 / 3, rel=1e-15)
    assert round(value, 1) == 85.3


def test_shared_tile_step_is_8192_flops_over_2048_bytes():
    assert 2 * 16**3 == 8192 and 2 * 256 * 4 == 2048
    assert tile_intensity(16, 16, 4) == 8192 / 2048


def test_register_tiles_and_scalar_demand():
    assert tile_intensity(1, 1, 4) == 0.25  # one output per thread: two floats per FMA
    assert tile_intensity(8, 8, 4) == 128 / 64 == 2.0  # 8x8 register tile: 8x reduction of operand loads
    assert tile_intensity(1, 4, 4) == pytest.approx(0.4)  # the lab's 1x4 tile: 8 FLOPs from 20 bytes
    assert tile_intensity(1, 4, 4) / tile_intensity(1, 1, 4) == pytest.approx(1.6)


def test_wmma_tile_with_its_fp32_store_is_8k_over_k_plus_16():
    assert panel_intensity_with_store(16, 16, 16, 2, 4) == 4.0
    for k in (32, 256, 4096):
        assert panel_intensity_with_store(16, 16, k, 2, 4) == pytest.approx(8 * k / (k + 16))
    assert panel_intensity_with_store(16, 16, 10**9, 2, 4) == pytest.approx(8.0, rel=1e-6)


def test_element_sizes_accept_enums_and_refuse_unknown_types():
    class Fake:
        value = "bf16"

    assert element_bytes(Fake()) == 2 and element_bytes("tf32") == 4
    with pytest.raises(ValueError):
        element_bytes("f8")


def test_element_sizes_match_gemmcompare_dtypes():
    from gemmcompare.dtypes import DTYPE_INFO

    for dtype, info in DTYPE_INFO.items():
        assert ELEMENT_BYTES[dtype.value] == info.itemsize == element_bytes(dtype)
