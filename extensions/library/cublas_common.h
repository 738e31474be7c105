// What the cuBLAS rows share (cublas_gemm.cpp, cublas_grouped.cpp): the ABI's dtype codes as cuBLAS data types,
// and torch's cuBLAS handle bound to the harness's stream with exactly the contract's math.
// Host compiler only (it includes ATen's CUDA context header through its users).
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>

#include "gemmcompare/gemm_abi.h"

namespace gc_cublas {

inline bool to_cuda_type(gc_dtype t, cudaDataType_t* out) {
  switch (t) {
    case GC_F16: *out = CUDA_R_16F; return true;
    case GC_BF16: *out = CUDA_R_16BF; return true;
    case GC_F32: *out = CUDA_R_32F; return true;
    case GC_F64: *out = CUDA_R_64F; return true;
  }
  return false;
}

// torch's handle comes bound to torch's current stream (the harness's) with torch's workspace for it;
// cublasSetStream would reset that workspace to cuBLAS's default pool, so it is called only if the streams
// differ. Default math, and no reduced-precision reductions (split-K partials kept in the compute type):
// exactly the contract, whatever torch's global TF32 / reduced-precision flags say.
inline cublasStatus_t bind_handle(cudaStream_t stream, cublasHandle_t* out) {
  cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
  cudaStream_t bound = nullptr;
  cublasStatus_t st = cublasGetStream(handle, &bound);
  if (st == CUBLAS_STATUS_SUCCESS && bound != stream) st = cublasSetStream(handle, stream);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasSetMathMode(handle, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                                             CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  *out = handle;
  return st;
}

}  // namespace gc_cublas
