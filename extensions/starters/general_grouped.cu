// ${name}.cu: a grouped GEMM behind the gemmcompare C ABI's grouped form (gemm_abi.h, ABI 4; docs/grouped.md).
// One GEMM per group, C_g = alpha * A_g B_g^T (+ beta * C_g), for the contract named in ${name}.yaml (${contract}:
// BF16 A row-major, B K-major, BF16 C row-major; FP32 sums), the contiguous layout:
//   A [m, k] (m = sum of the groups' M), group g's rows group_offsets[g] .. group_offsets[g+1] - 1
//   B [groups, n, k], group g's weight at b + g * stride_b, element (kk, j) at + j * ldb + kk
//   C [m, n], rows stacked as A's
// group_offsets is a device array of groups + 1 int64 offsets (read inside the launch); group_m_host, when not
// NULL, the same counts on the host. A group's M may be 0. Naive: one thread per element of C, which finds its
// group by a binary search of the offsets. Replace the kernel; keep the entry point's signature.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "gemmcompare/gemm_abi.h"

namespace {

__global__ void ${name}_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, const int64_t* offsets,
                               int64_t groups, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                               int64_t stride_b, int64_t ldc, float alpha, float beta) {
  const int64_t row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  // the last group g with offsets[g] <= row: its rows are offsets[g] .. offsets[g+1] - 1 (empty groups skipped,
  // since offsets[g] == offsets[g+1] puts no row in them)
  int64_t lo = 0, hi = groups - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (offsets[mid] <= row) lo = mid; else hi = mid - 1;
  }
  const __nv_bfloat16* bg = b + lo * stride_b + col * ldb;
  float acc = 0.0f;
  for (int64_t kk = 0; kk < k; ++kk) acc += __bfloat162float(a[row * lda + kk]) * __bfloat162float(bg[kk]);
  __nv_bfloat16* out = c + row * ldc + col;
  *out = __float2bfloat16(alpha * acc + (beta != 0.0f ? beta * __bfloat162float(*out) : 0.0f));
}

}  // namespace

extern "C" int ${name}(const gc_gemm_args* args, char* err, size_t err_len) {
  if (!gc_is_grouped(args)) return gc_fail(err, err_len, "${name}: a grouped kernel called without groups");
  if (args->group_layout != GC_GROUPS_CONTIGUOUS)
    return gc_fail(err, err_len, "${name}: the contiguous group layout only (GC_GROUPS_CONTIGUOUS)");
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW)
    return gc_fail(err, err_len, "${name}: A row-major, B K-major (column-major), C row-major only");
  if (args->dtype_a != GC_BF16 || args->dtype_b != GC_BF16 || args->dtype_c != GC_BF16)
    return gc_fail(err, err_len, "${name}: bf16 inputs and a bf16 output only");
  if (args->group_offsets == nullptr) return gc_fail(err, err_len, "${name}: group_offsets is null");
  if (args->group_m_host != nullptr) {  // the host copy of the counts, when handed: it must sum to m
    int64_t rows = 0;
    for (int64_t g = 0; g < args->groups; ++g) rows += args->group_m_host[g];
    if (rows != args->m) return gc_fail(err, err_len, "${name}: group_m_host does not sum to m");
  }
  if (args->m == 0) return 0;  // every group empty: nothing to compute
  if ((args->m + 7) / 8 > 65535) return gc_fail(err, err_len, "${name}: m over 524,280 rows (the grid's y limit)");
  const dim3 block(32, 8), grid((args->n + 31) / 32, (args->m + 7) / 8);
  ${name}_kernel<<<grid, block, 0, args->stream>>>(
      static_cast<const __nv_bfloat16*>(args->a), static_cast<const __nv_bfloat16*>(args->b),
      static_cast<__nv_bfloat16*>(args->c), args->group_offsets, args->groups, args->m, args->n, args->k, args->lda, args->ldb,
      args->stride_b, args->ldc, static_cast<float>(args->alpha), static_cast<float>(args->beta));
  return gc_check_launch(err, err_len, "${name}_kernel");
}
