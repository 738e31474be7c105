// library.cublas: cublasGemmEx with the compute type fixed by the precision contract; a batched problem
// (gc_batch(args) > 1) is one cublasGemmStridedBatchedEx call with the harness's batch strides.
//
// This is a .cpp (host compiler), not a kernel TU: it borrows torch's cuBLAS handle (and the workspace
// torch attached to it for the current stream), so it may include ATen's CUDA context header.
// cuBLAS is column-major; a row-major C is computed as C^T = B^T A^T, which is the same memory.
#include <cuda_fp16.h>

#include "library/cublas_common.h"

namespace {

using gc_cublas::to_cuda_type;

// op for an operand stored in `order`, when cuBLAS is to see the *logical* matrix (column-major view).
cublasOperation_t op_for(gc_order order) { return order == GC_COL ? CUBLAS_OP_N : CUBLAS_OP_T; }
// op when cuBLAS is to see the *transposed* logical matrix (row-major C trick).
cublasOperation_t op_for_transposed(gc_order order) { return order == GC_ROW ? CUBLAS_OP_N : CUBLAS_OP_T; }

}  // namespace

extern "C" int gc_library_cublas(const gc_gemm_args* args, char* err, size_t err_len) {
  cudaDataType_t ta, tb, tc;
  if (!to_cuda_type(args->dtype_a, &ta) || !to_cuda_type(args->dtype_b, &tb) || !to_cuda_type(args->dtype_c, &tc))
    return gc_fail(err, err_len, "unsupported dtype code");
  if (args->epilogue != GC_EPI_NONE) return gc_fail(err, err_len, "cublasGemmEx has no fused epilogue");

  // The compute type is the contract's accumulator; TF32 only when the contract's math mode allows it.
  cublasComputeType_t compute;
  float alpha32 = static_cast<float>(args->alpha), beta32 = static_cast<float>(args->beta);
  __half alpha16 = __float2half(alpha32), beta16 = __float2half(beta32);
  double alpha64 = args->alpha, beta64 = args->beta;
  const void* alpha = &alpha32;
  const void* beta = &beta32;
  switch (args->dtype_acc) {
    case GC_F32:
      compute = args->math == GC_MATH_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case GC_F16:
      compute = CUBLAS_COMPUTE_16F;
      alpha = &alpha16;
      beta = &beta16;
      break;
    case GC_F64:
      compute = CUBLAS_COMPUTE_64F;
      alpha = &alpha64;
      beta = &beta64;
      break;
    default:
      return gc_fail(err, err_len, "unsupported accumulator");
  }

  cublasHandle_t handle;
  cublasStatus_t st = gc_cublas::bind_handle(args->stream, &handle);
  if (st != CUBLAS_STATUS_SUCCESS) {
    snprintf(err, err_len, "cublas setup: %s", cublasGetStatusString(st));
    return 3;
  }

  const int m = static_cast<int>(args->m), n = static_cast<int>(args->n), k = static_cast<int>(args->k);
  const int lda = static_cast<int>(args->lda), ldb = static_cast<int>(args->ldb), ldc = static_cast<int>(args->ldc);
  const int64_t batch = gc_batch(args);
  // cuBLAS's operands in its order: (first, second) = (A, B) for a column-major C, (B, A) for C^T = B^T A^T
  const bool col = args->order_c == GC_COL;
  const cublasOperation_t op1 = col ? op_for(args->order_a) : op_for_transposed(args->order_b);
  const cublasOperation_t op2 = col ? op_for(args->order_b) : op_for_transposed(args->order_a);
  const int rows = col ? m : n, cols = col ? n : m;
  const void* p1 = col ? args->a : args->b;
  const void* p2 = col ? args->b : args->a;
  const cudaDataType_t t1 = col ? ta : tb, t2 = col ? tb : ta;
  const int ld1 = col ? lda : ldb, ld2 = col ? ldb : lda;
  const long long s1 = col ? args->stride_a : args->stride_b, s2 = col ? args->stride_b : args->stride_a;
  const char* call = batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx";
  if (batch > 1) {  // one call for every matrix: strides in elements, as the harness lays the batch out
    st = cublasGemmStridedBatchedEx(handle, op1, op2, rows, cols, k, alpha, p1, t1, ld1, s1, p2, t2, ld2, s2, beta,
                                    args->c, tc, ldc, static_cast<long long>(args->stride_c),
                                    static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT);
  } else {
    st = cublasGemmEx(handle, op1, op2, rows, cols, k, alpha, p1, t1, ld1, p2, t2, ld2, beta, args->c, tc, ldc,
                      compute, CUBLAS_GEMM_DEFAULT);
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    snprintf(err, err_len, "%s: %s", call, cublasGetStatusString(st));
    return 4;
  }
  return 0;
}
