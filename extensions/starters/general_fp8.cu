// ${name}.cu: an FP8 GEMM behind the gemmcompare C ABI (extensions/include/gemmcompare/gemm_abi.h), for the
// contracts named in ${name}.yaml (${contract} and its twins): A e4m3 row-major (m x k), B e4m3 column-major
// (k x n), C bf16 row-major, C = alpha * (A * scale_a)(B * scale_b) with the contract's FP32 dequantization
// scales, read from args->scale_a / scale_b (their shapes and offsets: gemm_abi.h, gc_scaling).
// Naive and correct: one thread per output, FP32 accumulation, each 128 of K summed apart and then added
// into the total (the promotion strict FP8 contracts model; block scales change there). Replace the kernel;
// keep the entry point's signature, and keep `scalings:` in the spec to what it applies.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "gemmcompare/gemm_abi.h"

namespace {

constexpr int64_t kBlockK = 128;  // the k-block of block scales (1 x 128 of A, 128 x 128 of B)

__global__ void ${name}_kernel(const gc_gemm_args args) {
  const int64_t row = blockIdx.y * int64_t(blockDim.y) + threadIdx.y, col = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (row >= args.m || col >= args.n) return;
  const auto* a = static_cast<const __nv_fp8_e4m3*>(args.a);
  const auto* b = static_cast<const __nv_fp8_e4m3*>(args.b);
  const int64_t kblocks = (args.k + kBlockK - 1) / kBlockK, nblocks = (args.n + kBlockK - 1) / kBlockK;
  float total = 0.0f;
  for (int64_t kb = 0; kb < kblocks; ++kb) {
    float partial = 0.0f;  // FP8 products are exact in FP32: only the sums round
    for (int64_t kk = kb * kBlockK; kk < args.k && kk < (kb + 1) * kBlockK; ++kk)
      partial += float(a[row * args.lda + kk]) * float(b[col * args.ldb + kk]);
    if (args.scaling == GC_SCALING_BLOCK)
      partial *= args.scale_a[row * kblocks + kb] * args.scale_b[kb * nblocks + col / kBlockK];
    total += partial;
  }
  if (args.scaling == GC_SCALING_TENSOR) total *= args.scale_a[0] * args.scale_b[0];
  if (args.scaling == GC_SCALING_ROWCOL) total *= args.scale_a[row] * args.scale_b[col];
  auto* out = static_cast<__nv_bfloat16*>(args.c) + row * args.ldc + col;
  const float beta = static_cast<float>(args.beta);
  *out = __float2bfloat16_rn(static_cast<float>(args.alpha) * total + (beta != 0.0f ? beta * __bfloat162float(*out) : 0.0f));
}

}  // namespace

extern "C" int ${name}(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW)
    return gc_fail(err, err_len, "${name}: A row-major, B column-major, C row-major only");
  if (args->dtype_a != GC_E4M3 || args->dtype_b != GC_E4M3 || args->dtype_c != GC_BF16)
    return gc_fail(err, err_len, "${name}: e4m3 inputs and a bf16 output only");
  if (args->scaling == GC_SCALING_NONE || !args->scale_a || !args->scale_b)
    return gc_fail(err, err_len, "${name}: needs an FP8 contract's scales");
  const dim3 block(32, 8), grid((args->n + 31) / 32, (args->m + 7) / 8);
  ${name}_kernel<<<grid, block, 0, args->stream>>>(*args);
  return gc_check_launch(err, err_len, "${name}_kernel");
}
