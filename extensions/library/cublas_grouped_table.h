// The pointer table's interface between cublas_grouped.cpp (host compiler) and cublas_grouped_table.cu (nvcc).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

// Which expert each cuBLAS problem slot is, passed by value as the kernel's argument (2 KB: within the 4 KB
// classic parameter limit). gemmcompare/limits.py MAX_GROUPS is 1024, so every expert fits.
#define GC_CUBLAS_GROUPED_MAX 1024
struct gc_cublas_grouped_slots {
  int count;
  int16_t expert[GC_CUBLAS_GROUPED_MAX];
};

// Writes 3 * slots->count pointers into `table` (device): the weights (B), then A's rows, then C's rows, in slot
// order, on `stream`.
extern "C" cudaError_t gc_cublas_grouped_fill_table(const gc_cublas_grouped_slots* slots, const int64_t* offsets,
                                                    const void* a, const void* b, void* c, int64_t a_row_bytes,
                                                    int64_t b_group_bytes, int64_t c_row_bytes, void* table,
                                                    cudaStream_t stream);
