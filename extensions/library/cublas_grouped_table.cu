// library.cublas_grouped's pointer table: cublasGemmGroupedBatchedEx takes device arrays of per-problem operand
// pointers. They are made on the device, on the call's stream, from the harness's device row offsets (ABI 4's
// group_offsets), into the entry's workspace: nothing is copied from the host, so a launch stays one enqueue
// (and could be captured in a CUDA graph). The host only says which expert each problem slot is.
#include <cuda_runtime.h>

#include <cstdint>

#include "cublas_grouped_table.h"

namespace {

__global__ void fill_table(gc_cublas_grouped_slots slots, const int64_t* offsets, const char* a, const char* b,
                           char* c, int64_t a_row_bytes, int64_t b_group_bytes, int64_t c_row_bytes,
                           const void** table) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= slots.count) return;
  const int g = slots.expert[i];
  // cuBLAS computes C^T = B^T A^T (column-major): its first operand is the expert's weight, its second the rows
  table[i] = b + g * b_group_bytes;
  table[slots.count + i] = a + offsets[g] * a_row_bytes;
  table[2 * slots.count + i] = c + offsets[g] * c_row_bytes;
}

}  // namespace

extern "C" cudaError_t gc_cublas_grouped_fill_table(const gc_cublas_grouped_slots* slots, const int64_t* offsets,
                                                    const void* a, const void* b, void* c, int64_t a_row_bytes,
                                                    int64_t b_group_bytes, int64_t c_row_bytes, void* table,
                                                    cudaStream_t stream) {
  if (slots->count == 0) return cudaSuccess;
  const int threads = 256, blocks = (slots->count + threads - 1) / threads;
  fill_table<<<blocks, threads, 0, stream>>>(*slots, offsets, static_cast<const char*>(a),
                                             static_cast<const char*>(b), static_cast<char*>(c), a_row_bytes,
                                             b_group_bytes, c_row_bytes, static_cast<const void**>(table));
  return cudaGetLastError();
}
