// Shared by the lab ladder's kernels: operand access in either storage order, argument checks, and
// the launch-by-layout dispatch. CUDA headers and the gemmcompare ABI only (never torch).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "gemmcompare/gemm_abi.h"

namespace gc {
namespace lab {

// Element (r, c) of a matrix stored row-major (COL = false: ptr[r * ld + c]) or column-major
// (COL = true: ptr[c * ld + r]). 64-bit offsets: the product r * ld must not wrap.
template <bool COL, class T>
__device__ __forceinline__ T at(const T* __restrict__ p, int64_t ld, int r, int c) {
  return COL ? p[static_cast<int64_t>(c) * ld + r] : p[static_cast<int64_t>(r) * ld + c];
}

struct Problem {
  int m, n, k;
  int64_t lda, ldb, ldc;
  bool a_col, b_col;
  bool empty() const { return m == 0 || n == 0; }
};

// The checks every lab entry makes before launching: the dtypes it computes, C row-major, alpha = 1,
// beta = 0, no epilogue, dimensions that fit an int, leading dimensions at least a row long.
static inline int check_args(const gc_gemm_args* args, gc_dtype in, const char* name, Problem* p, char* err,
                             size_t err_len) {
  char msg[200];
  if (!args) return gc_fail(err, err_len, "null arguments");
  if (args->dtype_a != in || args->dtype_b != in || args->dtype_c != GC_F32 || args->dtype_acc != GC_F32) {
    snprintf(msg, sizeof msg, "%s: needs %s A and B, f32 C, f32 accumulation", name, in == GC_F32 ? "f32" : "f16");
    return gc_fail(err, err_len, msg);
  }
  if (args->math != GC_MATH_STRICT) {
    snprintf(msg, sizeof msg, "%s: only the strict math mode", name);
    return gc_fail(err, err_len, msg);
  }
  if (args->order_c != GC_ROW || args->alpha != 1.0 || args->beta != 0.0 || args->epilogue != GC_EPI_NONE) {
    snprintf(msg, sizeof msg, "%s: C row-major, alpha = 1, beta = 0 and no epilogue only", name);
    return gc_fail(err, err_len, msg);
  }
  if (args->m < 0 || args->n < 0 || args->k < 0 || args->m > INT32_MAX || args->n > INT32_MAX || args->k > INT32_MAX) {
    snprintf(msg, sizeof msg, "%s: dimensions must be in [0, 2^31)", name);
    return gc_fail(err, err_len, msg);
  }
  p->m = static_cast<int>(args->m);
  p->n = static_cast<int>(args->n);
  p->k = static_cast<int>(args->k);
  p->lda = args->lda;
  p->ldb = args->ldb;
  p->ldc = args->ldc;
  p->a_col = args->order_a == GC_COL;
  p->b_col = args->order_b == GC_COL;
  const int64_t one = 1;
  const int64_t a_row = p->a_col ? args->m : args->k, b_row = p->b_col ? args->k : args->n;
  if (p->lda < (a_row > one ? a_row : one) || p->ldb < (b_row > one ? b_row : one) ||
      p->ldc < (args->n > one ? args->n : one)) {
    snprintf(msg, sizeof msg, "%s: a leading dimension is shorter than its row", name);
    return gc_fail(err, err_len, msg);
  }
  return 0;
}

static inline bool aligned(const void* p, unsigned bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

static inline unsigned blocks(int64_t extent, int tile) { return static_cast<unsigned>((extent + tile - 1) / tile); }

}  // namespace lab
}  // namespace gc

// Launch KERNEL<A_COL, B_COL> for the problem's storage orders (all four are instantiated).
#define GC_LAB_LAUNCH_4(p, KERNEL, grid, block, smem, stream, ...)                                      \
  do {                                                                                                 \
    if (!(p).a_col && !(p).b_col) KERNEL<false, false><<<grid, block, smem, stream>>>(__VA_ARGS__);     \
    else if (!(p).a_col && (p).b_col) KERNEL<false, true><<<grid, block, smem, stream>>>(__VA_ARGS__); \
    else if ((p).a_col && !(p).b_col) KERNEL<true, false><<<grid, block, smem, stream>>>(__VA_ARGS__); \
    else KERNEL<true, true><<<grid, block, smem, stream>>>(__VA_ARGS__);                                \
  } while (0)

// The launch GC_LAB_LAUNCH_4 would make, or, with `query` non-null, the occupancy of that instantiation for
// that block and shared memory instead (NAME_occupancy, gemm_abi.h): one code path for both, so the query
// cannot describe another launch than the real one. Needs `err` and `err_len` in scope; returns on a query.
#define GC_LAB_LAUNCH_OR_QUERY_4(query, p, KERNEL, grid, block, smem, stream, ...)                     \
  do {                                                                                                 \
    if (query) {                                                                                       \
      const void* gc_kernel_ = (!(p).a_col && !(p).b_col) ? (const void*)KERNEL<false, false>          \
                               : (!(p).a_col && (p).b_col) ? (const void*)KERNEL<false, true>          \
                               : ((p).a_col && !(p).b_col) ? (const void*)KERNEL<true, false>          \
                                                           : (const void*)KERNEL<true, true>;          \
      return gc_query_occupancy(gc_kernel_, static_cast<int>((block).x * (block).y * (block).z), (smem), \
                                (query), err, err_len);                                                \
    }                                                                                                  \
    GC_LAB_LAUNCH_4(p, KERNEL, grid, block, smem, stream, __VA_ARGS__);                                \
  } while (0)
