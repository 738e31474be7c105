"""Sector and bank-conflict models against seed 000 (the lab) and seed 001 (the Ada mma.sync GEMM)."""

import pytest

from gemmcompare.model.access import (
    SCALAR_COALESCED, SCALAR_STRIDED, bank_conflict_degree, column_words, ldmatrix_conflict_degree,
    ldmatrix_row_addresses, padding_overhead, scalar_warp_sectors, sectors_touched, vector_bank_conflict_degree,
    warp_threads, xor_chunk_swizzle, xor_swizzled_column_words,
)


def test_first_warp_sectors_of_the_two_scalar_kernels_at_n_k_64():
    strided = scalar_warp_sectors(SCALAR_STRIDED, 64, 64, 64)
    coalesced = scalar_warp_sectors(SCALAR_COALESCED, 64, 64, 64)
    assert (strided.a, strided.b, strided.c) == (16, 1, 16)
    assert (coalesced.a, coalesced.b, coalesced.c) == (1, 4, 4)
    assert (strided.total, coalesced.total) == (33, 9)
    assert round(100 * (1 - coalesced.total / strided.total), 1) == 72.7


def test_strided_lanes_step_a_by_256_bytes_and_cover_two_rows_of_16():
    lanes = warp_threads((16, 16))
    assert lanes[:3] == [(0, 0, 0), (1, 0, 0), (2, 0, 0)] and lanes[16] == (0, 1, 0)
    rows = [SCALAR_STRIDED.output_of(t) for t in lanes]
    assert rows[1] == (1, 0) and rows[16] == (0, 1)  # lanes 16-31 repeat rows 0-15 in column 1
    a_addresses = [4 * (row * 64) for row, _ in rows]
    assert a_addresses[:3] == [0, 256, 512]


def test_masked_lanes_request_nothing():
    # M = 1: only lanes of row 0 are active in the strided kernel (lanes 0 and 16)
    s = scalar_warp_sectors(SCALAR_STRIDED, 1, 64, 64)
    assert (s.a, s.b, s.c) == (1, 1, 1)
    assert sectors_touched([0, 28, 32, 60], access_bytes=4) == 2
    assert sectors_touched([30], access_bytes=4) == 2  # straddles a sector boundary


def test_bank_conflict_degrees_of_the_lab_patterns():
    k = 3
    shown_a = [(lane // 16) * 16 + k for lane in range(32)]
    shown_b = [k * 16 + lane % 16 for lane in range(32)]
    degrees = [bank_conflict_degree(words) for words in (
        shown_a, shown_b, column_words(k), column_words(k, row_pitch_words=33),
        xor_swizzled_column_words(k, row_mask=lambda row: (row // 4) % 8), xor_swizzled_column_words(k))]
    assert degrees == [1, 1, 32, 1, 4, 1]


@pytest.mark.parametrize("column", range(32))
def test_padding_and_xor_fix_every_column_not_only_one(column):
    assert bank_conflict_degree(column_words(column)) == 32
    assert bank_conflict_degree(column_words(column, row_pitch_words=33)) == 1
    assert bank_conflict_degree(xor_swizzled_column_words(column)) == 1


def test_xor_permutes_row_ones_vector_and_padding_costs():
    assert [col ^ 1 for col in range(4)] == [1, 0, 3, 2]
    words = xor_swizzled_column_words(0, rows=2)
    assert words == [0, 32 + 1]  # row 1's logical column 0 sits at physical column 1
    assert padding_overhead(32, 32, 1) == (128, 0.03125)
    assert padding_overhead(16, 16, 1) == (64, 0.0625)


@pytest.mark.parametrize("chunk", range(4))
def test_ldmatrix_at_bk_32_row_major_is_4_way_padded_1_swizzled_2(chunk):
    # seed 001: a BK=32 half row is 64 B, so 8 rows of one ldmatrix hit two bank groups: 4-way
    assert ldmatrix_conflict_degree(64, chunk) == 4
    assert ldmatrix_conflict_degree(64 + 16, chunk) == 1  # padded by 8 halves
    assert ldmatrix_conflict_degree(64, chunk, swizzle=xor_chunk_swizzle(4)) == 2  # four chunks per row


@pytest.mark.parametrize("chunk", range(8))
def test_ldmatrix_at_bk_64_swizzled_is_conflict_free(chunk):
    assert ldmatrix_conflict_degree(128, chunk, swizzle=xor_chunk_swizzle(8)) == 1
    assert ldmatrix_conflict_degree(128, chunk) == 8  # unswizzled 128-byte rows share one bank group


def test_vector_accesses_are_counted_per_128_byte_phase():
    contiguous = [16 * lane for lane in range(32)]  # a warp reading 512 contiguous bytes: 4 phases, no conflict
    assert vector_bank_conflict_degree(contiguous, 16) == 1
    assert ldmatrix_row_addresses(80)[:2] == [0, 80]
    with pytest.raises(ValueError):
        vector_bank_conflict_degree([8], 16)
