// lab.shared_16x16: a 16x16 block stages 16x16 tiles of A and B in shared memory and reuses each
// loaded value 16 times.
//
// Two barriers per k tile, and every thread passes both:
//   RAW: nobody reads a tile before every thread has written its element of it;
//   WAR: nobody overwrites a tile (next iteration) before every thread has finished reading it.
// So a thread whose output lies outside C does not return early: it still owns one element of the A
// and B tiles that valid outputs need. Loads outside A or B write zero (a zero adds nothing to a dot
// product); only the final store is predicated on the output being inside C.
#include "lab/lab_common.cuh"

constexpr int kTile = 16;

template <bool A_COL, bool B_COL>
__global__ void __launch_bounds__(kTile * kTile) gc_lab_shared_16x16_kernel(
    const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n, int k,
    int64_t lda, int64_t ldb, int64_t ldc) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    const int ak = k0 + tx, bk = k0 + ty;
    as[ty][tx] = (row < m && ak < k) ? gc::lab::at<A_COL>(a, lda, row, ak) : 0.0f;
    bs[ty][tx] = (bk < k && col < n) ? gc::lab::at<B_COL>(b, ldb, bk, col) : 0.0f;
    __syncthreads();  // RAW
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
    __syncthreads();  // WAR
  }
  if (row < m && col < n) c[static_cast<int64_t>(row) * ldc + col] = acc;
}

// The entry and its occupancy query share this body (gemm_abi.h: NAME_occupancy).
static int gc_lab_shared_16x16_run(const gc_gemm_args* args, gc_occupancy* query, char* err, size_t err_len) {
  gc::lab::Problem p;
  if (int rc = gc::lab::check_args(args, GC_F32, "lab.shared_16x16", &p, err, err_len)) return rc;
  if (p.empty()) return 0;
  const dim3 block(kTile, kTile);
  const dim3 grid(gc::lab::blocks(p.n, kTile), gc::lab::blocks(p.m, kTile));
  if (grid.y > 65535) return gc_fail(err, err_len, "lab.shared_16x16: m too large for the grid's y dimension");
  GC_LAB_LAUNCH_OR_QUERY_4(query, p, gc_lab_shared_16x16_kernel, grid, block, 0, args->stream, static_cast<const float*>(args->a),
                  static_cast<const float*>(args->b), static_cast<float*>(args->c), p.m, p.n, p.k, p.lda, p.ldb,
                  p.ldc);
  return gc_check_launch(err, err_len, "gc_lab_shared_16x16_kernel");
}

extern "C" int gc_lab_shared_16x16(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_lab_shared_16x16_run(args, nullptr, err, err_len);
}

extern "C" int gc_lab_shared_16x16_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_lab_shared_16x16_run(args, out, err, err_len);
}
