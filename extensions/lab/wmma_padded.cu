// lab.wmma_padded: the lab's own WMMA kernel. One warp per block, one 16x16 tile of C per warp,
// fragments straight from global memory.
//
// The lab makes every shape legal by padding: the harness copies A and B into zero-filled buffers
// whose m, n, k are rounded up to multiples of 16 and crops C afterwards (both outside the timed
// region; the implementation declares Constraints(pad_to=(16, 16, 16)), and the row reports the
// executed, padded FLOPs next to the useful ones). Zeros in the padding add nothing to any dot
// product, so the cropped C is exact. The kernel itself therefore only ever sees multiples of 16.
#include "lab/lab_common.cuh"
#include "lab/wmma_tile.cuh"

template <bool B_COL>
__global__ void __launch_bounds__(32) gc_lab_wmma_padded_kernel(const __half* __restrict__ a,
                                                                const __half* __restrict__ b, float* __restrict__ c,
                                                                int k, int64_t lda, int64_t ldb, int64_t ldc) {
  gc::lab::wmma_tile_16x16<B_COL>(a, b, c, blockIdx.y * 16, blockIdx.x * 16, k, lda, ldb, ldc);
}

// The entry and its occupancy query share this body (gemm_abi.h: NAME_occupancy).
static int gc_lab_wmma_padded_run(const gc_gemm_args* args, gc_occupancy* query, char* err, size_t err_len) {
  gc::lab::Problem p;
  if (int rc = gc::lab::check_args(args, GC_F16, "lab.wmma_padded", &p, err, err_len)) return rc;
  if (p.a_col) return gc_fail(err, err_len, "lab.wmma_padded: A must be row-major (layouts tn, tt)");
  if (p.m % 16 || p.n % 16 || p.k % 16)
    return gc_fail(err, err_len, "lab.wmma_padded: expects the harness to pad m, n, k to multiples of 16");
  if (p.lda % 8 || p.ldb % 8 || p.ldc % 4 || !gc::lab::aligned(args->a, 32) || !gc::lab::aligned(args->b, 32) ||
      !gc::lab::aligned(args->c, 32))
    return gc_fail(err, err_len, "lab.wmma_padded: needs 32-byte aligned A, B, C and lda, ldb % 8 == 0, ldc % 4 == 0");
  if (p.empty()) return 0;
  const dim3 block(32);
  const dim3 grid(gc::lab::blocks(p.n, 16), gc::lab::blocks(p.m, 16));
  if (grid.y > 65535) return gc_fail(err, err_len, "lab.wmma_padded: m too large for the grid's y dimension");
  const __half* a = static_cast<const __half*>(args->a);
  const __half* b = static_cast<const __half*>(args->b);
  float* c = static_cast<float*>(args->c);
  if (query) {
    const void* kernel = p.b_col ? (const void*)gc_lab_wmma_padded_kernel<true> : (const void*)gc_lab_wmma_padded_kernel<false>;
    return gc_query_occupancy(kernel, static_cast<int>(block.x), 0, query, err, err_len);
  }
  if (p.b_col) {
    gc_lab_wmma_padded_kernel<true><<<grid, block, 0, args->stream>>>(a, b, c, p.k, p.lda, p.ldb, p.ldc);
  } else {
    gc_lab_wmma_padded_kernel<false><<<grid, block, 0, args->stream>>>(a, b, c, p.k, p.lda, p.ldb, p.ldc);
  }
  return gc_check_launch(err, err_len, "gc_lab_wmma_padded_kernel");
}

extern "C" int gc_lab_wmma_padded(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_lab_wmma_padded_run(args, nullptr, err, err_len);
}

extern "C" int gc_lab_wmma_padded_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_lab_wmma_padded_run(args, out, err, err_len);
}
