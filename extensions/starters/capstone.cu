// ${name}.cu: a small, correct starting GEMM behind the capstone ABI (replace the kernel, keep the entry):
//   void solve(const __half* a, const __half* b, float* c, size_t m, size_t n, size_t k, cudaStream_t stream)
// A is m x k row-major, B is k x n column-major, C is m x n row-major; FP16 in, FP32 accumulate and out.
//
// Each 256-thread block computes a 64 x 64 tile of C; each thread a 4 x 4 patch. A and B tiles of
// depth 16 are staged in shared memory as FP32, with zero-fill past every edge so any m, n, k works.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#ifndef TILE_K
#define TILE_K 16
#endif

namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) ${name}_kernel(const __half* __restrict__ a, const __half* __restrict__ b,
                                                           float* __restrict__ c, int m, int n, int k) {
  __shared__ float As[TILE_K][kTile + 1];  // As[kk][row]: +1 pads away bank conflicts on the transposed store
  __shared__ float Bs[TILE_K][kTile + 1];  // Bs[kk][col]
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {};

  for (int k0 = 0; k0 < k; k0 += TILE_K) {
    // 64 x 16 elements of each operand, 4 per thread; out-of-range elements load as zero
    for (int i = threadIdx.x; i < kTile * TILE_K; i += kThreads) {
      const int r = i / TILE_K, kk = i % TILE_K;
      const int gr = row0 + r, gc = col0 + r, gk = k0 + kk;
      As[kk][r] = (gr < m && gk < k) ? __half2float(a[static_cast<size_t>(gr) * k + gk]) : 0.0f;
      Bs[kk][r] = (gc < n && gk < k) ? __half2float(b[static_cast<size_t>(gc) * k + gk]) : 0.0f;
    }
    __syncthreads();  // tiles written before anyone reads them
#pragma unroll
    for (int kk = 0; kk < TILE_K; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();  // everyone done reading before the next tiles overwrite them
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = row0 + ty + 16 * i;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int col = col0 + tx + 16 * j;
      if (r < m && col < n) c[static_cast<size_t>(r) * n + col] = acc[i][j];
    }
  }
}

}  // namespace

void solve(const __half* a, const __half* b, float* c, size_t m, size_t n, size_t k, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>((m + kTile - 1) / kTile));
  ${name}_kernel<<<grid, kThreads, 0, stream>>>(a, b, c, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
}
