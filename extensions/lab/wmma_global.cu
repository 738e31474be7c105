// lab.wmma_global: tensor cores through WMMA, every fragment loaded straight from global memory.
//
// A 128-thread block is 2x2 warps; each warp owns one 16x16 tile of C and walks K 16 at a time,
// loading its A and B fragments from global memory (no shared memory, no reuse across warps: the
// neighbouring warp loads the same A fragment again). FP16 inputs, FP32 accumulator and output.
//
// WMMA loads and stores take no masks, so the kernel declares m, n, k multiples of 16 (the harness
// skips other shapes), and load_matrix_sync's rules apply: 32-byte aligned fragment pointers, leading
// dimensions a multiple of 8 halves (A, B) and of 4 floats (C). The entry checks them at launch.
#include "lab/lab_common.cuh"
#include "lab/wmma_tile.cuh"

template <bool B_COL>
__global__ void __launch_bounds__(128) gc_lab_wmma_global_kernel(const __half* __restrict__ a,
                                                                 const __half* __restrict__ b, float* __restrict__ c,
                                                                 int m, int n, int k, int64_t lda, int64_t ldb,
                                                                 int64_t ldc) {
  const int warp = threadIdx.x / 32;
  const int row = blockIdx.y * 32 + (warp / 2) * 16;
  const int col = blockIdx.x * 32 + (warp % 2) * 16;
  if (row >= m || col >= n) return;  // the same for all 32 lanes: the warp leaves whole (no barriers here)
  gc::lab::wmma_tile_16x16<B_COL>(a, b, c, row, col, k, lda, ldb, ldc);
}

// The entry and its occupancy query share this body (gemm_abi.h: NAME_occupancy).
static int gc_lab_wmma_global_run(const gc_gemm_args* args, gc_occupancy* query, char* err, size_t err_len) {
  gc::lab::Problem p;
  if (int rc = gc::lab::check_args(args, GC_F16, "lab.wmma_global", &p, err, err_len)) return rc;
  if (p.a_col) return gc_fail(err, err_len, "lab.wmma_global: A must be row-major (layouts tn, tt)");
  if (p.m % 16 || p.n % 16 || p.k % 16)
    return gc_fail(err, err_len, "lab.wmma_global: m, n and k must be multiples of 16 (WMMA has no masks)");
  if (p.lda % 8 || p.ldb % 8 || p.ldc % 4 || !gc::lab::aligned(args->a, 32) || !gc::lab::aligned(args->b, 32) ||
      !gc::lab::aligned(args->c, 32))
    return gc_fail(err, err_len, "lab.wmma_global: needs 32-byte aligned A, B, C and lda, ldb % 8 == 0, ldc % 4 == 0");
  if (p.empty()) return 0;
  const dim3 block(128);
  const dim3 grid(gc::lab::blocks(p.n, 32), gc::lab::blocks(p.m, 32));
  if (grid.y > 65535) return gc_fail(err, err_len, "lab.wmma_global: m too large for the grid's y dimension");
  const __half* a = static_cast<const __half*>(args->a);
  const __half* b = static_cast<const __half*>(args->b);
  float* c = static_cast<float*>(args->c);
  if (query) {
    const void* kernel = p.b_col ? (const void*)gc_lab_wmma_global_kernel<true> : (const void*)gc_lab_wmma_global_kernel<false>;
    return gc_query_occupancy(kernel, static_cast<int>(block.x), 0, query, err, err_len);
  }
  if (p.b_col) {
    gc_lab_wmma_global_kernel<true><<<grid, block, 0, args->stream>>>(a, b, c, p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  } else {
    gc_lab_wmma_global_kernel<false><<<grid, block, 0, args->stream>>>(a, b, c, p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  }
  return gc_check_launch(err, err_len, "gc_lab_wmma_global_kernel");
}

extern "C" int gc_lab_wmma_global(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_lab_wmma_global_run(args, nullptr, err, err_len);
}

extern "C" int gc_lab_wmma_global_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_lab_wmma_global_run(args, out, err, err_len);
}
