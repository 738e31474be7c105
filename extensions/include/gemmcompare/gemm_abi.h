// gemmcompare kernel ABI: the one C interface every GEMM entry point exposes.
//
// Kernel translation units include this header and CUDA (or CUTLASS) headers only, never torch:
// that keeps each .cu build in seconds. gemmcompare generates one thin torch binding per extension
// that fills a gc_gemm_args from the harness's tensors and the harness's current stream, then calls
// the entry through this ABI.
//
//   extern "C" int NAME(const gc_gemm_args* args, char* err, size_t err_len);
//       Enqueue C = alpha * op(A) op(B) + beta * C on args->stream. Returns 0 on success. On failure
//       writes a one-line reason (CUDA error string, CUTLASS status, unsupported layout...) into err
//       and returns non-zero. Must not synchronize the device and must not allocate.
//   extern "C" size_t NAME_workspace_bytes(const gc_gemm_args* args);      (optional)
//       Device workspace the entry needs for this problem; gemmcompare allocates it once per problem,
//       outside the timed region, and passes it in args->workspace.
//   extern "C" int NAME_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len);
//       (optional) The launch NAME would make for args (its kernel, block size, dynamic shared memory),
//       and what the runtime says of it: cudaFuncGetAttributes and
//       cudaOccupancyMaxActiveBlocksPerMultiprocessor, after raising the kernel's dynamic shared-memory
//       limit as the launch would. Launches nothing and reads no operand, so the pointers may be null.
//       A symbol of its own: the entry's launch path is unchanged (gc_query_occupancy below fills it).
#pragma once

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// 2: FP8 scales (scaling, scale_a, scale_b); 3: batch and batch strides; 4: grouped problems (groups,
// group_offsets, group_m_host, group_layout)
#define GC_ABI_VERSION 4

// Storage order of one operand. A is m x k, B is k x n, C is m x n (logical shapes).
// GC_ROW: element (i, j) at ptr[i * ld + j]; GC_COL: at ptr[j * ld + i].
typedef enum gc_order { GC_ROW = 0, GC_COL = 1 } gc_order;

// GC_E4M3 / GC_E5M2: FP8 inputs, which come with FP32 scales (gc_scaling, scale_a and scale_b below).
typedef enum gc_dtype { GC_F16 = 0, GC_BF16 = 1, GC_F32 = 2, GC_F64 = 3, GC_E4M3 = 4, GC_E5M2 = 5 } gc_dtype;

// GC_MATH_STRICT: products and sums in the accumulator type, no reduced-precision fast path.
// GC_MATH_TF32: FP32 operands may be rounded to TF32 inside the multiply (tensor cores).
typedef enum gc_math { GC_MATH_STRICT = 0, GC_MATH_TF32 = 1 } gc_math;

// What happens to alpha*AB + beta*C before it is stored. GC_EPI_BIAS_RELU: C = max(0, alpha*AB + beta*C
// + bias[j]) with bias an FP32 vector of length n (one value per output column).
typedef enum gc_epilogue { GC_EPI_NONE = 0, GC_EPI_BIAS_RELU = 1 } gc_epilogue;

// The shape of the FP32 dequantization scales of FP8 inputs (A ~= q * scale; docs/fp8.md). Dense FP32 arrays
// in the logical problem's shapes, whatever lda/ldb/ldc are; with kb = ceil(k/128), nb = ceil(n/128), the scale
// of A[i][kk] and of B[kk][j] is:
//   GC_SCALING_TENSOR  scale_a[0]                        scale_b[0]
//   GC_SCALING_ROWCOL  scale_a[i]             (m of A)   scale_b[j]                     (n of B)
//   GC_SCALING_BLOCK   scale_a[i * kb + kk/128] (1 x 128) scale_b[(kk/128) * nb + j/128]  (128 x 128)
// (block: both row-major; the last block of k or n is partial). Tensor and row/column scales factor out of the
// sum over k, so a kernel may apply them once, to the sum; block scales change every 128 of k, so each 128-k
// partial sum is scaled as it is added. GC_SCALING_NONE: not an FP8 contract (scale_a and scale_b are NULL).
// A `custom` entry lists the shapes its kernel applies in `scalings:` (experiments/byo_kernel/fp8_own.yaml).
typedef enum gc_scaling {
  GC_SCALING_NONE = 0, GC_SCALING_TENSOR = 1, GC_SCALING_ROWCOL = 2, GC_SCALING_BLOCK = 3
} gc_scaling;

// How the groups of a grouped problem lie in memory (ABI 4; the fields at the end of gc_gemm_args). One layout
// so far: GC_GROUPS_CONTIGUOUS, the groups' rows of A and C stacked (below). An entry refuses any other value.
typedef enum gc_group_layout { GC_GROUPS_CONTIGUOUS = 0 } gc_group_layout;

typedef struct gc_gemm_args {
  const void* a;
  const void* b;
  void* c;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;  // leading dimensions, in elements
  gc_order order_a, order_b, order_c;
  gc_dtype dtype_a, dtype_b, dtype_c, dtype_acc;
  gc_math math;
  double alpha, beta;
  gc_epilogue epilogue;
  const float* bias;  // length n when epilogue == GC_EPI_BIAS_RELU, else NULL
  void* workspace;  // may be NULL when workspace_bytes == 0
  size_t workspace_bytes;
  cudaStream_t stream;  // the harness's stream: every launch goes here
  // FP8 only: device pointers to the scales, read by the kernel inside its launch (as cuBLASLt reads its
  // own): C = alpha * (A_q * scale_a) (B_q * scale_b). NULL otherwise, and in an occupancy query.
  gc_scaling scaling;
  const float* scale_a;
  const float* scale_b;
  // Batched problems (ABI 3; docs/kernels.md "Batched problems"): `batch` matrices of the same m, n, k, matrix i
  // of A at a + i * stride_a elements (of B, C likewise), each laid out as lda/ldb/ldc and the orders say; the
  // bias, when there is one, is the same for every matrix. A 2-D problem has batch 1 and strides 0. Only an
  // entry declared batched (`batched: true` in a custom entry) is ever called with batch > 1; added last, so
  // that an entry written for ABI 2 reads every field it knows where it was. Read the count with gc_batch():
  // a zero-initialized gc_gemm_args (an occupancy query, an older filler) means one matrix.
  int64_t batch;
  int64_t stride_a, stride_b, stride_c;  // batch strides, in elements
  // Grouped problems (ABI 4; docs/cutlass.md "Grouped GEMM (SM90, pointer-array)"): `groups` GEMMs with one n and
  // k and a row count M_g each (an MoE layer: one group per expert, M_g the tokens routed to it; M_g = 0 is
  // legal and common). Added last, as batch was, so an entry written for ABI 3 reads every field where it was;
  // a zero-initialized gc_gemm_args has groups == 0: not a grouped problem (gc_is_grouped). Only an entry
  // declared grouped (the sm90_grouped CUTLASS configurations) is ever called with groups > 0.
  // What the harness fills for GC_GROUPS_CONTIGUOUS (alpha, beta, dtypes, math, stream, workspace as always;
  // epilogue GC_EPI_NONE, bias NULL, batch 0 or 1, stride_a = stride_c = 0):
  //   m              sum of M_g: the rows of A and of C, all groups together
  //   n, k           every group's n and k
  //   a, lda         A [m, k] row-major (order_a GC_ROW): group g's rows are rows group_offsets[g] ..
  //                  group_offsets[g+1] - 1, i.e. its A starts at a + group_offsets[g] * lda
  //   b, ldb,        B [groups, n, k], each group's B K-major (order_b GC_COL, the [n, k] weight of one expert):
  //   stride_b       element (kk, j) of group g at b + g * stride_b + j * ldb + kk (stride_b >= n * ldb)
  //   c, ldc         C [m, n] row-major (order_c GC_ROW), rows stacked as A's: group g's C at c + group_offsets[g] * ldc
  //   group_offsets  DEVICE pointer, groups + 1 int64 cumulative row offsets: group_offsets[0] = 0,
  //                  group_offsets[g+1] = group_offsets[g] + M_g, group_offsets[groups] = m. Read on the device
  //                  inside the launch, like scale_a: the harness may change the counts between launches
  //                  without a host round trip (as long as group_m_host says the same, below).
  //   group_m_host   HOST pointer, groups int64: M_g again (group_offsets' differences), or NULL. CUTLASS's
  //                  grouped scheduler sizes its grid from host problem shapes when it has them (one CTA per
  //                  tile, up to the SM count; can_implement checks each group), else launches one CTA per SM
  //                  that read the shapes on the device. Read during the call only; it must agree with
  //                  group_offsets (an entry checks that it sums to m, it cannot read the device array).
  //   group_layout   GC_GROUPS_CONTIGUOUS
  //   scale_a,       FP8 block scales (scaling GC_SCALING_BLOCK), FP32 row-major as for one GEMM (gc_scaling, with
  //   scale_b        kb = ceil(k/128), nb = ceil(n/128)), the groups stacked: scale_a [m, kb], its rows A's (group
  //                  g's at scale_a + group_offsets[g] * kb); scale_b [groups, kb, nb] (group g's at
  //                  scale_b + g * kb * nb). Other scalings of a grouped problem are not defined yet.
  // Pointer-array kernels (CUTLASS's grouped GEMM) take device arrays of per-group problem shapes, operand
  // pointers and strides. They are not part of the ABI: the entry builds them on the device from group_offsets
  // with a small kernel it enqueues on args->stream ahead of the GEMM, in its own workspace (sized by
  // NAME_workspace_bytes, which reads groups), so the offsets are all the harness keeps on the device.
  int64_t groups;
  const int64_t* group_offsets;
  const int64_t* group_m_host;
  gc_group_layout group_layout;
} gc_gemm_args;

// What NAME_occupancy reports: the launch's configuration and the runtime's answer for it.
typedef struct gc_occupancy {
  int threads_per_block;
  int dynamic_smem_bytes;
  int registers;               // cudaFuncAttributes::numRegs
  int static_smem_bytes;       // cudaFuncAttributes::sharedSizeBytes
  int max_dynamic_smem_bytes;  // cudaFuncAttributes::maxDynamicSharedSizeBytes, after the launch's opt-in
  int blocks_per_sm;           // cudaOccupancyMaxActiveBlocksPerMultiprocessor
} gc_occupancy;

#ifdef __cplusplus
// The number of matrices of a (batched) problem: 1 when the filler left `batch` zero.
static inline int64_t gc_batch(const gc_gemm_args* args) { return args->batch > 1 ? args->batch : 1; }

// Whether args describe a grouped problem (ABI 4): groups > 0. A zero-initialized gc_gemm_args is not one.
static inline bool gc_is_grouped(const gc_gemm_args* args) { return args->groups > 0; }

// Helpers for entry points. Each returns non-zero (and fills err) on failure so that an entry can
// write `if (int rc = gc_check_launch(err, err_len, "my_kernel")) return rc;`.
static inline int gc_fail(char* err, size_t err_len, const char* what) {
  if (err && err_len) snprintf(err, err_len, "%s", what);
  return 1;
}

static inline int gc_check_cuda(cudaError_t status, char* err, size_t err_len, const char* what) {
  if (status == cudaSuccess) return 0;
  if (err && err_len) snprintf(err, err_len, "%s: %s (%s)", what, cudaGetErrorString(status), cudaGetErrorName(status));
  return 2;
}

// Call right after a <<<...>>> launch: catches bad configurations (too much shared memory, grid too
// large) that would otherwise surface as a silently unwritten output.
static inline int gc_check_launch(char* err, size_t err_len, const char* kernel) {
  return gc_check_cuda(cudaGetLastError(), err, err_len, kernel);
}

// Fill `out` for one kernel launched with `threads` per block and `dynamic_smem` bytes: raise the kernel's
// dynamic shared-memory limit as a launcher does (only when it must), then ask the runtime.
static inline int gc_query_occupancy(const void* kernel, int threads, size_t dynamic_smem, gc_occupancy* out,
                                     char* err, size_t err_len) {
  if (!out) return gc_fail(err, err_len, "null occupancy output");
  cudaFuncAttributes a;
  if (int rc = gc_check_cuda(cudaFuncGetAttributes(&a, kernel), err, err_len, "cudaFuncGetAttributes")) return rc;
  if (dynamic_smem > static_cast<size_t>(a.maxDynamicSharedSizeBytes)) {
    if (int rc = gc_check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    static_cast<int>(dynamic_smem)), err, err_len,
                               "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)")) return rc;
    if (int rc = gc_check_cuda(cudaFuncGetAttributes(&a, kernel), err, err_len, "cudaFuncGetAttributes")) return rc;
  }
  int blocks = -1;
  if (int rc = gc_check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem),
                             err, err_len, "cudaOccupancyMaxActiveBlocksPerMultiprocessor")) return rc;
  out->threads_per_block = threads;
  out->dynamic_smem_bytes = static_cast<int>(dynamic_smem);
  out->registers = a.numRegs;
  out->static_smem_bytes = static_cast<int>(a.sharedSizeBytes);
  out->max_dynamic_smem_bytes = a.maxDynamicSharedSizeBytes;
  out->blocks_per_sm = blocks;
  return 0;
}

#define GC_CHECK_CUDA(expr)                                                  \
  do {                                                                       \
    if (int gc_rc_ = gc_check_cuda((expr), err, err_len, #expr)) return gc_rc_; \
  } while (0)
#endif
