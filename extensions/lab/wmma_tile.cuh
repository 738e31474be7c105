// One warp, one 16x16 tile of C, fragments straight from global memory: the WMMA loop that
// lab.wmma_global (4 warps per block, shapes in multiples of 16) and lab.wmma_padded (1 warp per
// block, on the harness's zero-padded copies) share. A row-major; B column- (B_COL) or row-major;
// C row-major FP32. row, col: the tile's top-left element; k a multiple of 16.
#pragma once

#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

#include <type_traits>

namespace gc {
namespace lab {

template <bool B_COL>
__device__ __forceinline__ void wmma_tile_16x16(const __half* __restrict__ a, const __half* __restrict__ b,
                                                float* __restrict__ c, int row, int col, int k, int64_t lda,
                                                int64_t ldb, int64_t ldc) {
  using namespace nvcuda;
  using BLayout = typename std::conditional<B_COL, wmma::col_major, wmma::row_major>::type;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k0 = 0; k0 < k; k0 += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, BLayout> fb;
    wmma::load_matrix_sync(fa, a + static_cast<int64_t>(row) * lda + k0, static_cast<unsigned>(lda));
    // column-major B: element (k, n) at b[n * ldb + k]; row-major: b[k * ldb + n]
    const __half* bp = B_COL ? b + static_cast<int64_t>(col) * ldb + k0 : b + static_cast<int64_t>(k0) * ldb + col;
    wmma::load_matrix_sync(fb, bp, static_cast<unsigned>(ldb));
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + static_cast<int64_t>(row) * ldc + col, acc, static_cast<unsigned>(ldc), wmma::mem_row_major);
}

}  // namespace lab
}  // namespace gc
