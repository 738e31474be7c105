// library.cublas_grouped: a grouped problem (gemm_abi.h, ABI 4, contiguous layout) as one
// cublasGemmGroupedBatchedEx call (cuBLAS 12.5+): the experts with tokens, those of equal M sharing one cuBLAS
// group (cublas_grouped_plan.h), each computed as C_g^T = B_g^T A_g^T in cuBLAS's column-major terms (the
// row-major trick of cublas_gemm.cpp: the same memory). The per-problem operand pointers are made on the device
// from the harness's row offsets (cublas_grouped_table.cu), into this entry's workspace; the shapes, leading
// dimensions and scalars are host arrays, as cuBLAS takes them (the group Ms come from the host: the API needs
// them there, as a loop of cuBLAS calls does).
//
// Types: the pairings cuBLAS documents for this call with CUBLAS_COMPUTE_32F(_FAST_TF32): f16 -> f16, bf16 ->
// bf16, f32 -> f32 (TF32 only under a tf32 contract). The Python row (library_grouped.py) SKIPs the rest first.
#include <cstdio>
#include <vector>

#include "library/cublas_common.h"
#include "library/cublas_grouped_plan.h"
#include "library/cublas_grouped_table.h"

namespace {

size_t elem_bytes(gc_dtype t) { return t == GC_F32 ? 4 : t == GC_F64 ? 8 : 2; }

}  // namespace

extern "C" size_t gc_library_cublas_grouped_workspace_bytes(const gc_gemm_args* args) {
  return args && args->groups > 0 ? 3 * static_cast<size_t>(args->groups) * sizeof(void*) : 0;
}

extern "C" int gc_library_cublas_grouped(const gc_gemm_args* args, char* err, size_t err_len) {
#if !defined(CUBLAS_VERSION) || CUBLAS_VERSION < 120500
  (void)args;
  return gc_fail(err, err_len, "this cuBLAS has no cublasGemmGroupedBatchedEx (cuBLAS 12.5 or newer has it)");
#else
  if (!args || !gc_is_grouped(args)) return gc_fail(err, err_len, "grouped problems only (groups > 0)");
  if (args->group_layout != GC_GROUPS_CONTIGUOUS) return gc_fail(err, err_len, "contiguous group layout only");
  if (!args->group_m_host || !args->group_offsets)
    return gc_fail(err, err_len, "needs the group Ms on the host and the row offsets on the device");
  if (args->groups > GC_CUBLAS_GROUPED_MAX) return gc_fail(err, err_len, "more than 1024 groups");
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW)
    return gc_fail(err, err_len, "grouped problems are TN with a row-major C");
  if (args->epilogue != GC_EPI_NONE) return gc_fail(err, err_len, "no fused epilogue");
  cudaDataType_t ta, tb, tc;
  if (!gc_cublas::to_cuda_type(args->dtype_a, &ta) || !gc_cublas::to_cuda_type(args->dtype_b, &tb) ||
      !gc_cublas::to_cuda_type(args->dtype_c, &tc))
    return gc_fail(err, err_len, "unsupported dtype code");
  if (args->dtype_a != args->dtype_b || args->dtype_c != args->dtype_a || args->dtype_a == GC_F64 ||
      args->dtype_acc != GC_F32)
    return gc_fail(err, err_len, "cublasGemmGroupedBatchedEx: f16, bf16 or f32 in and the same out, f32 compute");
  const cublasComputeType_t compute = args->math == GC_MATH_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;

  gc_cublas_grouped::Plan plan;
  if (!gc_cublas_grouped::make_plan(args->group_m_host, args->groups, &plan))
    return gc_fail(err, err_len, "a group's M is negative or above 2^31 - 1");
  int64_t rows = 0;
  for (int64_t g = 0; g < args->groups; ++g) rows += args->group_m_host[g];
  if (rows != args->m) return gc_fail(err, err_len, "the group Ms do not sum to m");
  if (plan.expert.empty()) return 0;  // every group empty: no rows of C to write
  const size_t table_bytes = 3 * plan.expert.size() * sizeof(void*);
  if (!args->workspace || args->workspace_bytes < table_bytes) return gc_fail(err, err_len, "workspace too small");

  gc_cublas_grouped_slots slots;
  slots.count = static_cast<int>(plan.expert.size());
  for (int i = 0; i < slots.count; ++i) slots.expert[i] = static_cast<int16_t>(plan.expert[i]);
  const int64_t ea = elem_bytes(args->dtype_a), eb = elem_bytes(args->dtype_b), ec = elem_bytes(args->dtype_c);
  cudaError_t ce = gc_cublas_grouped_fill_table(&slots, args->group_offsets, args->a, args->b, args->c,
                                                args->lda * ea, args->stride_b * eb, args->ldc * ec,
                                                args->workspace, args->stream);
  if (ce != cudaSuccess) {
    snprintf(err, err_len, "pointer table: %s", cudaGetErrorString(ce));
    return 3;
  }

  cublasHandle_t handle;
  cublasStatus_t st = gc_cublas::bind_handle(args->stream, &handle);
  if (st != CUBLAS_STATUS_SUCCESS) {
    snprintf(err, err_len, "cublas setup: %s", cublasGetStatusString(st));
    return 3;
  }
  // per cuBLAS group: C^T (n x M) = B^T (n x k; B_g stored [n, k], i.e. column-major k x n: op T) times
  // A^T (k x M; A's rows stored row-major, i.e. column-major k x M: op N)
  const size_t count = plan.m.size();
  std::vector<cublasOperation_t> op_first(count, CUBLAS_OP_T), op_second(count, CUBLAS_OP_N);
  std::vector<int> n_cols(count, static_cast<int>(args->n)), k_depth(count, static_cast<int>(args->k));
  std::vector<int> ld_first(count, static_cast<int>(args->ldb)), ld_second(count, static_cast<int>(args->lda));
  std::vector<int> ld_out(count, static_cast<int>(args->ldc));
  std::vector<float> alpha(count, static_cast<float>(args->alpha)), beta(count, static_cast<float>(args->beta));
  const void* const* table = static_cast<const void* const*>(args->workspace);
  const size_t problems = plan.expert.size();
  st = cublasGemmGroupedBatchedEx(handle, op_first.data(), op_second.data(), n_cols.data(), plan.m.data(),
                                  k_depth.data(), alpha.data(), table, tb, ld_first.data(), table + problems, ta,
                                  ld_second.data(), beta.data(), const_cast<void* const*>(table + 2 * problems), tc,
                                  ld_out.data(), static_cast<int>(count), plan.group_size.data(), compute);
  if (st != CUBLAS_STATUS_SUCCESS) {
    snprintf(err, err_len, "cublasGemmGroupedBatchedEx: %s", cublasGetStatusString(st));
    return 4;
  }
  return 0;
#endif
}
