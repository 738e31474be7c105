"""The L1/shared data-path counts of the lab kernels: wavefront rules and per-kernel totals by hand."""

import pytest

from gemmcompare.model.datapath import (Operands, datapath_ms, global_wavefronts, lab_loop_wavefronts,
                                        shared_wavefronts)

ROW_MAJOR = Operands(lda=4096, ldb=4096)


def test_wavefront_rules():
    assert global_wavefronts([4 * lane for lane in range(32)], 4) == 1  # one coalesced line
    assert global_wavefronts([4096 * 4 * lane for lane in range(16)], 4) == 16  # 16 rows, 16 lines
    assert global_wavefronts([0] * 32, 4) == 1  # a broadcast
    assert shared_wavefronts([0] * 32, 4) == 1
    assert shared_wavefronts([4 * 32 * lane for lane in range(32)], 4) == 32  # a column: 32-way
    assert shared_wavefronts([4 * 33 * lane for lane in range(32)], 4) == 1  # padded
    assert shared_wavefronts([16 * (lane % 16) for lane in range(32)], 16) == 2  # 256 distinct bytes: two passes
    assert shared_wavefronts([16 * lane for lane in range(32)], 16) == 4


def test_lab_kernel_counts_by_hand():
    strided = lab_loop_wavefronts("scalar_strided", ROW_MAJOR)
    assert strided.per_cta_tile == 8 * (16 + 1)  # per warp and k: 16 rows of A, B's two columns in one line
    assert lab_loop_wavefronts("scalar_coalesced", ROW_MAJOR).per_cta_tile == 8 * (1 + 1)
    shared = lab_loop_wavefronts("shared_16x16", ROW_MAJOR)
    assert shared.per_cta_tile == 8 * (16 * 2 + 2 + 2 + 1 + 1)
    reg = lab_loop_wavefronts("register_16x64", ROW_MAJOR)
    assert reg.by_access["B store (shared)"] == 8 * 4 * 2  # two rows of a 64-word tile share banks: 2-way
    assert reg.per_cta_tile == 8 * (16 * (1 + 4) + 2 + 4 * 2 + 1 + 4 * 2)
    wmma = lab_loop_wavefronts("wmma_global", ROW_MAJOR)
    assert wmma.per_cta_tile == 4 * 8 * 8  # 4 warps x 8 LDG.E per step x 8 rows each


def test_lab_kernels_outside_the_model_are_refused():
    with pytest.raises(KeyError):
        lab_loop_wavefronts("mystery", ROW_MAJOR)


def test_time_is_tiles_times_k_tiles_times_wavefronts_over_the_clock():
    loop = lab_loop_wavefronts("scalar_strided", ROW_MAJOR)
    assert datapath_ms(loop, 497, 4096, 1980.0) == pytest.approx(497 * 4096 * 136 / 1.98e9 * 1e3)
