// lab.register_16x64: shared_16x16's pipeline with a 1x4 register tile per thread.
//
// A 16x16 block owns a 16x64 tile of C; thread (tx, ty) keeps the four outputs (ty, tx + 16j),
// j = 0..3, in registers. Each A value read from shared memory feeds four FMAs (0.4 FLOP per byte of
// operand traffic instead of 0.25). Same two barriers, same zero-filled edges, predicated stores.
#include "lab/lab_common.cuh"

constexpr int kRows = 16, kCols = 64, kK = 16, kPerThread = 4;

template <bool A_COL, bool B_COL>
__global__ void __launch_bounds__(256) gc_lab_register_16x64_kernel(
    const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n, int k,
    int64_t lda, int64_t ldb, int64_t ldc) {
  __shared__ float as[kRows][kK];
  __shared__ float bs[kK][kCols];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kRows + ty;
  const int col0 = blockIdx.x * kCols + tx;  // this thread's columns: col0 + 16 j
  float acc[kPerThread] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k0 = 0; k0 < k; k0 += kK) {
    const int ak = k0 + tx, bk = k0 + ty;
    as[ty][tx] = (row < m && ak < k) ? gc::lab::at<A_COL>(a, lda, row, ak) : 0.0f;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int col = col0 + j * 16;
      bs[ty][tx + j * 16] = (bk < k && col < n) ? gc::lab::at<B_COL>(b, ldb, bk, col) : 0.0f;
    }
    __syncthreads();  // RAW
#pragma unroll
    for (int kk = 0; kk < kK; ++kk) {
      const float av = as[ty][kk];  // one shared read feeds four FMAs
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) acc[j] += av * bs[kk][tx + j * 16];
    }
    __syncthreads();  // WAR
  }
  if (row < m) {
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int col = col0 + j * 16;
      if (col < n) c[static_cast<int64_t>(row) * ldc + col] = acc[j];
    }
  }
}

// The entry and its occupancy query share this body (gemm_abi.h: NAME_occupancy).
static int gc_lab_register_16x64_run(const gc_gemm_args* args, gc_occupancy* query, char* err, size_t err_len) {
  gc::lab::Problem p;
  if (int rc = gc::lab::check_args(args, GC_F32, "lab.register_16x64", &p, err, err_len)) return rc;
  if (p.empty()) return 0;
  const dim3 block(16, 16);
  const dim3 grid(gc::lab::blocks(p.n, kCols), gc::lab::blocks(p.m, kRows));
  if (grid.y > 65535) return gc_fail(err, err_len, "lab.register_16x64: m too large for the grid's y dimension");
  GC_LAB_LAUNCH_OR_QUERY_4(query, p, gc_lab_register_16x64_kernel, grid, block, 0, args->stream,
                  static_cast<const float*>(args->a), static_cast<const float*>(args->b),
                  static_cast<float*>(args->c), p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  return gc_check_launch(err, err_len, "gc_lab_register_16x64_kernel");
}

extern "C" int gc_lab_register_16x64(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_lab_register_16x64_run(args, nullptr, err, err_len);
}

extern "C" int gc_lab_register_16x64_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_lab_register_16x64_run(args, out, err, err_len);
}
