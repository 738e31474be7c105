// lab.scalar_strided: one thread per output, threadIdx.x walking ROWS of C.
//
// With a 16x16 block, lanes 0-15 of a warp own rows 0-15 of one column and lanes 16-31 rows 0-15 of
// the next: for row-major A every lane of a half-warp reads a different row (16 sectors per request)
// and the C store touches 16 sectors. The first rung of the ladder, kept slow on purpose.
#include "lab/lab_common.cuh"

template <bool A_COL, bool B_COL>
__global__ void gc_lab_scalar_strided_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                             float* __restrict__ c, int m, int n, int k, int64_t lda,
                                             int64_t ldb, int64_t ldc) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;  // the strided choice: x -> row
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;  // no barrier in this kernel, so leaving early is fine
  float acc = 0.0f;
  for (int kk = 0; kk < k; ++kk) acc += gc::lab::at<A_COL>(a, lda, row, kk) * gc::lab::at<B_COL>(b, ldb, kk, col);
  c[static_cast<int64_t>(row) * ldc + col] = acc;
}

// The entry and its occupancy query share this body (gemm_abi.h: NAME_occupancy).
static int gc_lab_scalar_strided_run(const gc_gemm_args* args, gc_occupancy* query, char* err, size_t err_len) {
  gc::lab::Problem p;
  if (int rc = gc::lab::check_args(args, GC_F32, "lab.scalar_strided", &p, err, err_len)) return rc;
  if (p.empty()) return 0;
  const dim3 block(16, 16);
  const dim3 grid(gc::lab::blocks(p.m, 16), gc::lab::blocks(p.n, 16));
  if (grid.y > 65535) return gc_fail(err, err_len, "lab.scalar_strided: n too large for the grid's y dimension");
  GC_LAB_LAUNCH_OR_QUERY_4(query, p, gc_lab_scalar_strided_kernel, grid, block, 0, args->stream, static_cast<const float*>(args->a),
                  static_cast<const float*>(args->b), static_cast<float*>(args->c), p.m, p.n, p.k, p.lda, p.ldb,
                  p.ldc);
  return gc_check_launch(err, err_len, "gc_lab_scalar_strided_kernel");
}

extern "C" int gc_lab_scalar_strided(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_lab_scalar_strided_run(args, nullptr, err, err_len);
}

extern "C" int gc_lab_scalar_strided_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_lab_scalar_strided_run(args, out, err, err_len);
}
