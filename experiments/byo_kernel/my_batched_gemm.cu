// A small, correct batched GEMM of "my own", written against the general ABI (gemm_abi.h) and declared
// `batched: true` in experiments/byo_kernel/batched.yaml: it reads the batch count and the batch strides (ABI 3).
//   C[i] = A[i] @ B[i] for i < gc_batch(args); A row-major f16 (tn: lda), B column-major f16 (ldb),
//   C row-major f32 (ldc); matrix i of A starts stride_a elements after matrix i - 1 (B, C likewise).
//
// One 16 x 16 thread block per 16 x 16 tile of C, blockIdx.z the matrix: the batch is one launch. Shared
// tiles of depth 16, zero-filled past every edge, so any m, n, k works. Plain FP32 FMAs: correct, not fast.
#include <cuda_fp16.h>

#include "gemmcompare/gemm_abi.h"

namespace {

constexpr int kTile = 16;

__global__ void batched_kernel(const __half* __restrict__ a, const __half* __restrict__ b, float* __restrict__ c,
                               int m, int n, int k, int64_t lda, int64_t ldb, int64_t ldc, int64_t stride_a,
                               int64_t stride_b, int64_t stride_c) {
  __shared__ float As[kTile][kTile + 1];  // As[row][kk]
  __shared__ float Bs[kTile][kTile + 1];  // Bs[col][kk]
  // this block's matrix: the batch index times the harness's batch strides (never assume packed matrices)
  a += blockIdx.z * stride_a;
  b += blockIdx.z * stride_b;
  c += blockIdx.z * stride_c;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  const int brow = blockIdx.y * kTile + tx;  // the A row this thread loads (transposed roles: coalesced on k)
  const int bcol = blockIdx.x * kTile + ty;  // the B column this thread loads
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    const int kk = k0 + ty, kb = k0 + tx;
    As[tx][ty] = (brow < m && kk < k) ? __half2float(a[brow * lda + kk]) : 0.0f;
    Bs[ty][tx] = (bcol < n && kb < k) ? __half2float(b[bcol * ldb + kb]) : 0.0f;
    __syncthreads();  // tiles written before anyone reads them
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc = fmaf(As[ty][i], Bs[tx][i], acc);
    __syncthreads();  // everyone done reading before the next tiles overwrite them
  }
  if (row < m && col < n) c[row * ldc + col] = acc;
}

}  // namespace

extern "C" int my_batched_gemm(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW)
    return gc_fail(err, err_len, "my_batched_gemm: tn with a row-major C only");
  if (args->dtype_a != GC_F16 || args->dtype_b != GC_F16 || args->dtype_c != GC_F32)
    return gc_fail(err, err_len, "my_batched_gemm: f16 inputs and an f32 output only");
  if (args->alpha != 1.0 || args->beta != 0.0) return gc_fail(err, err_len, "my_batched_gemm: alpha 1, beta 0 only");
  const int64_t batch = gc_batch(args);
  if (batch > 65535) return gc_fail(err, err_len, "my_batched_gemm: at most 65535 matrices (gridDim.z)");
  const int m = static_cast<int>(args->m), n = static_cast<int>(args->n), k = static_cast<int>(args->k);
  const dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile, static_cast<unsigned>(batch));
  batched_kernel<<<grid, dim3(kTile, kTile), 0, args->stream>>>(
      static_cast<const __half*>(args->a), static_cast<const __half*>(args->b), static_cast<float*>(args->c), m, n,
      k, args->lda, args->ldb, args->ldc, args->stride_a, args->stride_b, args->stride_c);
  return gc_check_launch(err, err_len, "my_batched_gemm");
}
