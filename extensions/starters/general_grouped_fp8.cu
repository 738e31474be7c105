// ${name}.cu: a grouped FP8 GEMM behind the gemmcompare C ABI's grouped form (gemm_abi.h, ABI 4; docs/grouped.md),
// DeepSeek-V3's recipe, for the contract named in ${name}.yaml (${contract}): one GEMM per group,
// C_g = alpha * (A_g * scale_a)(B_g * scale_b)^T (+ beta * C_g), the contiguous layout:
//   A [m, k] e4m3 (m = sum of the groups' M), group g's rows group_offsets[g] .. group_offsets[g+1] - 1
//   B [groups, n, k] e4m3, group g's weight at b + g * stride_b, element (kk, j) at + j * ldb + kk
//   C [m, n] bf16, rows stacked as A's
//   scale_a [m, kb] FP32, 1 x 128 of K per row (A's rows); scale_b [groups, kb, nb] FP32, 128 x 128 blocks of each
//   group's weight (kb = ceil(k/128), nb = ceil(n/128)): the block scales gemm_abi.h defines for grouped problems
// Naive and correct: one thread per element of C, which finds its group by a binary search of the device offsets,
// FP32 sums, each 128 of K summed apart, scaled and added into the total (the promotion strict contracts model).
// Replace the kernel; keep the entry point's signature.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "gemmcompare/gemm_abi.h"

namespace {

constexpr int64_t kBlockK = 128;  // the k-block of the scales (1 x 128 of A, 128 x 128 of B)

__global__ void ${name}_kernel(const gc_gemm_args args) {
  const int64_t row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= args.m || col >= args.n) return;
  // the last group g with group_offsets[g] <= row (an empty group holds no row: offsets[g] == offsets[g+1])
  int64_t lo = 0, hi = args.groups - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (args.group_offsets[mid] <= row) lo = mid; else hi = mid - 1;
  }
  const auto* a = static_cast<const __nv_fp8_e4m3*>(args.a) + row * args.lda;
  const auto* b = static_cast<const __nv_fp8_e4m3*>(args.b) + lo * args.stride_b + col * args.ldb;
  const int64_t kblocks = (args.k + kBlockK - 1) / kBlockK, nblocks = (args.n + kBlockK - 1) / kBlockK;
  const float* scale_b = args.scale_b + lo * kblocks * nblocks + col / kBlockK;  // group lo's, this column's block
  float total = 0.0f;
  for (int64_t kb = 0; kb < kblocks; ++kb) {
    float partial = 0.0f;  // FP8 products are exact in FP32: only the sums round
    for (int64_t kk = kb * kBlockK; kk < args.k && kk < (kb + 1) * kBlockK; ++kk) partial += float(a[kk]) * float(b[kk]);
    total += partial * args.scale_a[row * kblocks + kb] * scale_b[kb * nblocks];
  }
  auto* out = static_cast<__nv_bfloat16*>(args.c) + row * args.ldc + col;
  const float beta = static_cast<float>(args.beta);
  *out = __float2bfloat16_rn(static_cast<float>(args.alpha) * total + (beta != 0.0f ? beta * __bfloat162float(*out) : 0.0f));
}

}  // namespace

extern "C" int ${name}(const gc_gemm_args* args, char* err, size_t err_len) {
  if (!gc_is_grouped(args)) return gc_fail(err, err_len, "${name}: a grouped kernel called without groups");
  if (args->group_layout != GC_GROUPS_CONTIGUOUS)
    return gc_fail(err, err_len, "${name}: the contiguous group layout only (GC_GROUPS_CONTIGUOUS)");
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW)
    return gc_fail(err, err_len, "${name}: A row-major, B K-major (column-major), C row-major only");
  if (args->dtype_a != GC_E4M3 || args->dtype_b != GC_E4M3 || args->dtype_c != GC_BF16)
    return gc_fail(err, err_len, "${name}: e4m3 inputs and a bf16 output only");
  if (args->group_offsets == nullptr) return gc_fail(err, err_len, "${name}: group_offsets is null");
  if (args->group_m_host != nullptr) {  // the host copy of the counts, when handed: it must sum to m
    int64_t rows = 0;
    for (int64_t g = 0; g < args->groups; ++g) rows += args->group_m_host[g];
    if (rows != args->m) return gc_fail(err, err_len, "${name}: group_m_host does not sum to m");
  }
  if (args->m == 0) return 0;  // every group empty: nothing to compute (the scales may be empty too)
  if (args->scaling != GC_SCALING_BLOCK || !args->scale_a || !args->scale_b)
    return gc_fail(err, err_len, "${name}: needs block scales (the grouped FP8 scales gemm_abi.h defines)");
  if ((args->m + 7) / 8 > 65535) return gc_fail(err, err_len, "${name}: m over 524,280 rows (the grid's y limit)");
  const dim3 block(32, 8), grid((args->n + 31) / 32, (args->m + 7) / 8);
  ${name}_kernel<<<grid, block, 0, args->stream>>>(*args);
  return gc_check_launch(err, err_len, "${name}_kernel");
}
