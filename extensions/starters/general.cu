// ${name}.cu: a GEMM behind the gemmcompare C ABI (extensions/include/gemmcompare/gemm_abi.h).
// C = alpha * A B + beta * C for the contract named in ${name}.yaml (${contract}: FP16 A row-major,
// B column-major, FP32 C row-major). Replace the kernel; keep the entry point's signature.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemmcompare/gemm_abi.h"

namespace {

__global__ void ${name}_kernel(const __half* a, const __half* b, float* c, int64_t m, int64_t n, int64_t k,
                               int64_t lda, int64_t ldb, int64_t ldc, float alpha, float beta) {
  const int64_t row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int64_t kk = 0; kk < k; ++kk) acc += __half2float(a[row * lda + kk]) * __half2float(b[col * ldb + kk]);
  float* out = c + row * ldc + col;
  *out = alpha * acc + (beta != 0.0f ? beta * *out : 0.0f);
}

}  // namespace

extern "C" int ${name}(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW)
    return gc_fail(err, err_len, "${name}: A row-major, B column-major, C row-major only");
  const dim3 block(32, 8), grid((args->n + 31) / 32, (args->m + 7) / 8);
  ${name}_kernel<<<grid, block, 0, args->stream>>>(
      static_cast<const __half*>(args->a), static_cast<const __half*>(args->b), static_cast<float*>(args->c), args->m,
      args->n, args->k, args->lda, args->ldb, args->ldc, static_cast<float>(args->alpha), static_cast<float>(args->beta));
  return gc_check_launch(err, err_len, "${name}_kernel");
}
