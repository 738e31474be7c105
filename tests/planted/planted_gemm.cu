// Planted bad kernels for the integrity tests: one correct tiled GEMM (general gemmcompare ABI, contract
// f16_f32acc_tn) and, selected by a -DDEFECT_* flag, one defect each. Every defect must be caught by
// the harness: FAIL with what was seen, CRASH, or TIMEOUT.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemmcompare/gemm_abi.h"

namespace {

constexpr int kTile = 16;

__global__ void planted_kernel(const __half* a, const __half* b, float* c, int m, int n, int k, int lda, int ldb,
                               int ldc) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
#if defined(DEFECT_TRAP)
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) asm volatile("trap;");
#endif
#if defined(DEFECT_HANG)  // spins on the clock, which the compiler cannot prove ever stops
  const long long start = clock64();
  while (clock64() - start >= 0) {
  }
#endif
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    const int ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < m && ak < k) ? __half2float(a[(size_t)row * lda + ak]) : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (col < n && bk < k) ? __half2float(b[(size_t)col * ldb + bk]) : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk) acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];
#if !defined(DEFECT_RACE)  // the race: no write-after-read barrier before the next tile overwrites As/Bs
    __syncthreads();
#endif
  }
#if defined(DEFECT_ILLEGAL_ADDRESS)
  if (row == 0 && col == 0) c[-(1ll << 36)] = acc;
#endif
#if defined(DEFECT_ZEROS)
  acc = 0.0f;
#endif
#if defined(DEFECT_SKIP_LAST_COLUMN)
  if (col == n - 1) return;
#endif
  if (row < m && col < n) c[(size_t)row * ldc + col] = acc;
}

}  // namespace

extern "C" int planted_gemm(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW)
    return gc_fail(err, err_len, "planted_gemm: tn only");
#if defined(DEFECT_CACHED)  // computes once, then replays "the answer" by doing nothing
  static bool computed = false;
  if (computed) return 0;
  computed = true;
#endif
  cudaStream_t stream = args->stream;
#if defined(DEFECT_OTHER_STREAM)
  stream = 0;  // the legacy default stream, not the harness's
#endif
  const dim3 block(kTile, kTile), grid((args->n + kTile - 1) / kTile, (args->m + kTile - 1) / kTile);
  planted_kernel<<<grid, block, 0, stream>>>(static_cast<const __half*>(args->a), static_cast<const __half*>(args->b),
                                             static_cast<float*>(args->c), (int)args->m, (int)args->n, (int)args->k,
                                             (int)args->lda, (int)args->ldb, (int)args->ldc);
  return gc_check_launch(err, err_len, "planted_kernel");
}
