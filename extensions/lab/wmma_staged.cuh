// lab.wmma_staged: WMMA fed from padded shared-memory tiles, any m, n, k, no global padding.
//
//   global --16-byte loads when aligned, else guarded halves (zero past every edge)--> registers
//          --> shared (two buffers, rows padded by 8 halves) --load_matrix_sync--> fragments
//          --mma_sync (f16 in, f32 accumulate)--> accumulators
//          --store_matrix_sync: straight to C for whole in-bounds tiles, through a per-warp shared
//            scratch tile and guarded stores on the ragged edge--> C
//
// Block tile 128x128, BK = 32 (two 16-wide steps per barrier). The warp tile WM x WN is the template
// parameter swept by the capstone: 32x32 (16 warps), 32x64 (8 warps), 64x64 (4 warps). A warp reuses
// each A fragment WN/16 times and each B fragment WM/16 times.
//
// Pipeline: the next k tile is loaded into registers while the current one is multiplied, then stored
// to the other buffer; one barrier per k tile orders both the RAW (new buffer) and the WAR (old one).
// This needs no cp.async, so it runs on sm_70 too.
//
// Edges: a k tile past K, rows past M and columns past N are written as zeros into shared memory, so
// every fragment is a full 16x16 tile and the zeros add nothing. Only the store needs a mask.
//
// Padding: rows of 40 (A, column-major B) or 136 (row-major B) halves keep load_matrix_sync's
// rules (leading dimension a multiple of 8 halves, 32-byte aligned fragment pointers: fragment rows
// start at multiples of 16) and put 8 consecutive rows on 8 different 16-byte bank groups.
#pragma once

#include <cuda_fp16.h>
#include <mma.h>

#include <type_traits>

#include "lab/lab_common.cuh"

namespace gc {
namespace lab {
namespace staged {

constexpr int BM = 128, BN = 128, BK = 32, PAD = 8;
constexpr int A_LD = BK + PAD;   // as[m][k]
constexpr int BT_LD = BN + PAD;  // row-major B: bs[k][n]
constexpr int BN_LD = BK + PAD;  // column-major B: bs[n][k]

template <bool B_COL>
struct Smem {
  static constexpr int A_HALVES = BM * A_LD;
  static constexpr int B_HALVES = B_COL ? BN * BN_LD : BK * BT_LD;
  static constexpr int BYTES = 2 * (A_HALVES + B_HALVES) * 2;  // two buffers
};

// 8 halves (16 bytes) of one row, from element (row, col) on; elements outside the matrix read as 0.
__device__ __forceinline__ uint4 load_chunk(const __half* __restrict__ p, int64_t ld, int row, int col,
                                            int rows, int cols, bool vec) {
  const __half* src = p + static_cast<int64_t>(row) * ld + col;
  if (vec && row < rows && col + 8 <= cols) return *reinterpret_cast<const uint4*>(src);
  const unsigned short* e = reinterpret_cast<const unsigned short*>(src);
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t lo = (row < rows && col + 2 * j < cols) ? e[2 * j] : 0u;
    const uint32_t hi = (row < rows && col + 2 * j + 1 < cols) ? e[2 * j + 1] : 0u;
    w[j] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <int WM, int WN, bool B_COL, class Tag>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32) gc_lab_wmma_staged_kernel(
    const __half* __restrict__ a, const __half* __restrict__ b, float* __restrict__ c, int m, int n, int k,
    int64_t lda, int64_t ldb, int64_t ldc, bool a_vec, bool b_vec, bool c_direct) {
  using namespace nvcuda;
  constexpr int WARPS_N = BN / WN;
  constexpr int THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int FM = WM / 16, FN = WN / 16;  // fragments per warp
  // Each operand tile is 512 chunks of 8 halves (128 x 32 or 32 x 128).
  constexpr int CHUNKS = 512, PER_THREAD = CHUNKS / THREADS;
  static_assert(CHUNKS % THREADS == 0, "every thread copies the same number of chunks");
  using BLayout = typename std::conditional<B_COL, wmma::col_major, wmma::row_major>::type;

  __shared__ __align__(128) unsigned char smem[Smem<B_COL>::BYTES];
  __half* as = reinterpret_cast<__half*>(smem);                    // [2][BM][A_LD]
  __half* bs = as + 2 * Smem<B_COL>::A_HALVES;                     // [2][BN][BN_LD] or [2][BK][BT_LD]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  // Chunk q of a tile: A and column-major B are 128 rows x 4 chunks, row-major B is 32 rows x 16.
  uint4 ra[PER_THREAD], rb[PER_THREAD];
  auto load_tiles = [&](int k0) {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const int q = i * THREADS + tid;
      ra[i] = load_chunk(a, lda, m0 + q / 4, k0 + (q % 4) * 8, m, k, a_vec);
      if (B_COL) {
        rb[i] = load_chunk(b, ldb, n0 + q / 4, k0 + (q % 4) * 8, n, k, b_vec);  // rows n, columns k
      } else {
        rb[i] = load_chunk(b, ldb, k0 + q / 16, n0 + (q % 16) * 8, k, n, b_vec);  // rows k, columns n
      }
    }
  };
  auto store_tiles = [&](int buf) {
    __half* sa = as + buf * Smem<B_COL>::A_HALVES;
    __half* sb = bs + buf * Smem<B_COL>::B_HALVES;
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const int q = i * THREADS + tid;
      *reinterpret_cast<uint4*>(sa + (q / 4) * A_LD + (q % 4) * 8) = ra[i];
      if (B_COL) {
        *reinterpret_cast<uint4*>(sb + (q / 4) * BN_LD + (q % 4) * 8) = rb[i];
      } else {
        *reinterpret_cast<uint4*>(sb + (q / 16) * BT_LD + (q % 16) * 8) = rb[i];
      }
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int k_tiles = (k + BK - 1) / BK;
  if (k_tiles > 0) {
    load_tiles(0);
    store_tiles(0);
  }
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int cur = kt & 1;
    if (kt + 1 < k_tiles) load_tiles((kt + 1) * BK);  // in flight during the MMAs below
    const __half* sa = as + cur * Smem<B_COL>::A_HALVES;
    const __half* sb = bs + cur * Smem<B_COL>::B_HALVES;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, BLayout> fb[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(fa[i], sa + (warp_m * WM + i * 16) * A_LD + kk, A_LD);
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        if (B_COL) {
          wmma::load_matrix_sync(fb[j], sb + (warp_n * WN + j * 16) * BN_LD + kk, BN_LD);
        } else {
          wmma::load_matrix_sync(fb[j], sb + kk * BT_LD + warp_n * WN + j * 16, BT_LD);
        }
      }
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    if (kt + 1 < k_tiles) store_tiles(cur ^ 1);  // that buffer's last reader finished before the barrier of kt-1
    __syncthreads();
  }

  // Epilogue. The loop above ended on a barrier, so the pipeline buffers are free for the scratch
  // tiles (one 16x16 float tile, 1 KB, per warp).
  float* scratch = reinterpret_cast<float*>(smem) + warp * 256;
#pragma unroll
  for (int i = 0; i < FM; ++i) {
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      const int row = m0 + warp_m * WM + i * 16, col = n0 + warp_n * WN + j * 16;
      if (row >= m || col >= n) continue;  // warp-uniform
      if (c_direct && row + 16 <= m && col + 16 <= n) {
        wmma::store_matrix_sync(c + static_cast<int64_t>(row) * ldc + col, acc[i][j], static_cast<unsigned>(ldc),
                                wmma::mem_row_major);
      } else {
        wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
        __syncwarp();
        for (int e = lane; e < 256; e += 32) {
          const int r = row + e / 16, cc = col + e % 16;
          if (r < m && cc < n) c[static_cast<int64_t>(r) * ldc + cc] = scratch[e];
        }
        __syncwarp();  // the next fragment reuses the scratch tile
      }
    }
  }
}

// Host side: check, pick the B order's kernel, launch on the harness's stream.
// With `query` non-null: the occupancy of the launch it would make instead (gemm_abi.h: NAME_occupancy).
template <int WM, int WN, class Tag>
int launch(const gc_gemm_args* args, const char* name, char* err, size_t err_len, gc_occupancy* query = nullptr) {
  Problem p;
  if (int rc = check_args(args, GC_F16, name, &p, err, err_len)) return rc;
  if (p.a_col) return gc_fail(err, err_len, "lab.wmma_staged: A must be row-major (layouts tn, tt)");
  if (p.empty()) return 0;
  const dim3 block((BM / WM) * (BN / WN) * 32);
  const dim3 grid(blocks(p.n, BN), blocks(p.m, BM));
  if (grid.y > 65535) return gc_fail(err, err_len, "lab.wmma_staged: m too large for the grid's y dimension");
  const __half* a = static_cast<const __half*>(args->a);
  const __half* b = static_cast<const __half*>(args->b);
  float* c = static_cast<float*>(args->c);
  const bool a_vec = aligned(a, 16) && p.lda % 8 == 0;
  const bool b_vec = aligned(b, 16) && p.ldb % 8 == 0;
  const bool c_direct = aligned(c, 32) && p.ldc % 4 == 0;  // store_matrix_sync's rules for f32
  if (query) {
    const void* kernel = p.b_col ? (const void*)gc_lab_wmma_staged_kernel<WM, WN, true, Tag>
                                 : (const void*)gc_lab_wmma_staged_kernel<WM, WN, false, Tag>;
    return gc_query_occupancy(kernel, static_cast<int>(block.x), 0, query, err, err_len);
  }
  if (p.b_col) {
    gc_lab_wmma_staged_kernel<WM, WN, true, Tag><<<grid, block, 0, args->stream>>>(a, b, c, p.m, p.n, p.k, p.lda, p.ldb,
                                                                                 p.ldc, a_vec, b_vec, c_direct);
  } else {
    gc_lab_wmma_staged_kernel<WM, WN, false, Tag><<<grid, block, 0, args->stream>>>(a, b, c, p.m, p.n, p.k, p.lda,
                                                                                  p.ldb, p.ldc, a_vec, b_vec, c_direct);
  }
  return gc_check_launch(err, err_len, name);
}

}  // namespace staged
}  // namespace lab
}  // namespace gc
