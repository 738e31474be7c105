// cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8
//
// CUTLASS 2.x device::GemmUniversal for SM80 (multistage cp.async mainloop). Rendered by gemmcompare
// from cutlass_configs/templates/sm80_kernel.cu.tmpl; do not edit (edit the configuration YAML instead).
//
//   C (m x n, row-major, float) = alpha * A (m x k, row-major) * B (k x n, column-major) + beta * C
//   A, B: cutlass::half_t; accumulate float; split-K: none.
//
// The number of split-K slices is a run-time argument from the entry TU.
#include <cuda_runtime.h>

#include <type_traits>

#include "cutlass/cutlass.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/device/gemm_universal.h"
#include "cutlass/reduction/device/reduce_split_k.h"
#include "cutlass/reduction/kernel/reduce_split_k.h"
#include "cutlass/reduction/thread/reduction_operators.h"

#include "gemmcompare/gemm_abi.h"

namespace {

using ElementA = cutlass::half_t;
using LayoutA = cutlass::layout::RowMajor;
using ElementB = cutlass::half_t;
using LayoutB = cutlass::layout::ColumnMajor;
using ElementOutput = float;
using LayoutC = cutlass::layout::RowMajor;
using ElementAccumulator = float;
using ElementCompute = ElementAccumulator;

constexpr int kAlignmentA = 8;
constexpr int kAlignmentB = 8;
constexpr int kAlignmentC = 4;        // elements per epilogue access of C
constexpr int kAlignmentPartial = 4;  // elements per access of FP32 partial sums

enum class SplitK { kNone, kSerial, kParallel };
constexpr SplitK kSplitK = SplitK::kNone;

// What the GEMM kernel writes: C itself, or (parallel split-K) one slice of partial sums per K partition.
using ElementGemmOut = std::conditional_t<kSplitK == SplitK::kParallel, ElementAccumulator, ElementOutput>;
constexpr int kAlignmentGemmOut = kSplitK == SplitK::kParallel ? kAlignmentPartial : kAlignmentC;

using Gemm = cutlass::gemm::device::GemmUniversal<
    ElementA, LayoutA,
    ElementB, LayoutB,
    ElementGemmOut, LayoutC,
    ElementAccumulator,
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 256, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<ElementGemmOut, kAlignmentGemmOut, ElementAccumulator, ElementCompute>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>,
    3,
    kAlignmentA, kAlignmentB,
    cutlass::arch::OpMultiplyAdd>;

// The reduction of a parallel split-K (see reduce_partials).
using Reduction = cutlass::reduction::device::ReduceSplitK<cutlass::reduction::kernel::ReduceSplitK<
    cutlass::MatrixShape<4, 32 * kAlignmentC>,
    cutlass::epilogue::thread::LinearCombination<ElementOutput, kAlignmentC, ElementAccumulator, ElementCompute>,
    cutlass::reduction::thread::ReduceAdd<ElementAccumulator, ElementAccumulator, kAlignmentC>>>;

// Bytes of partial sums a parallel split-K writes: one m x ldc slice per partition.
size_t partial_bytes(const gc_gemm_args* args, int slices) {
  return size_t(slices) * size_t(args->m) * size_t(args->ldc) * sizeof(ElementAccumulator);
}

typename Gemm::Arguments make_arguments(const gc_gemm_args* args, int slices) {
  const cutlass::gemm::GemmCoord problem(int(args->m), int(args->n), int(args->k));
  const ElementCompute alpha = ElementCompute(args->alpha), beta = ElementCompute(args->beta);
  if constexpr (kSplitK == SplitK::kParallel) {
    // Partials go to the workspace with C's leading dimension; alpha and beta wait for the reduction.
    void* partials = args->workspace;
    return typename Gemm::Arguments(
        cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel, problem, slices,
        {ElementCompute(1), ElementCompute(0)}, args->a, args->b, partials, partials,
        0, 0, 0, int64_t(args->m) * args->ldc,
        args->lda, args->ldb, args->ldc, args->ldc);
  } else {
    // kGemm with slices > 1 is CUTLASS's serial split-K: partitions add into C in turn (semaphore).
    return typename Gemm::Arguments(
        cutlass::gemm::GemmUniversalMode::kGemm, problem, slices,
        {alpha, beta}, args->a, args->b, args->c, args->c,
        0, 0, 0, 0,
        args->lda, args->ldb, args->ldc, args->ldc);
  }
}

int check_args(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->dtype_a != GC_F16 || args->dtype_b != GC_F16 || args->dtype_c != GC_F32 ||
      args->dtype_acc != GC_F32 || args->math != GC_MATH_STRICT || args->order_a != GC_ROW ||
      args->order_b != GC_COL || args->order_c != GC_ROW || args->epilogue != GC_EPI_NONE) {
    return gc_fail(err, err_len, "cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8: compiled for f16 in (A row-major, B column-major), f32 out (row-major), f32 accumulate, math strict; called with another contract");
  }
  return 0;
}

int cutlass_fail(const char* step, cutlass::Status status, char* err, size_t err_len) {
  if (err && err_len) snprintf(err, err_len, "cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8: %s: %s", step, cutlassGetStatusString(status));
  return 3;
}

// Parallel split-K only: a second kernel sums the partials, applies alpha and beta and converts to the
// output type. (A template, so the reduction kernel is instantiated only where it runs.)
template <SplitK kMode = kSplitK>
int reduce_partials(const gc_gemm_args* args, int slices, char* err, size_t err_len) {
  if constexpr (kMode == SplitK::kParallel) {
    using OutputRef = typename Reduction::OutputTensorRef;
    using WorkspaceRef = typename Reduction::WorkspaceTensorRef;
    const auto ld = typename LayoutC::Stride::Index(args->ldc);
    typename Reduction::Arguments reduction_args(
        cutlass::MatrixCoord(int(args->m), int(args->n)), slices, size_t(args->m) * size_t(args->ldc),
        WorkspaceRef(static_cast<ElementAccumulator*>(args->workspace), LayoutC(ld)),
        OutputRef(static_cast<ElementOutput*>(args->c), LayoutC(ld)),
        OutputRef(static_cast<ElementOutput*>(args->c), LayoutC(ld)),
        {ElementCompute(args->alpha), ElementCompute(args->beta)});
    Reduction reduction_op;
    cutlass::Status status = reduction_op.initialize(reduction_args, nullptr, args->stream);
    if (status != cutlass::Status::kSuccess) return cutlass_fail("reduction initialize", status, err, err_len);
    status = reduction_op.run(args->stream);
    if (status != cutlass::Status::kSuccess) return cutlass_fail("reduction run", status, err, err_len);
  }
  return 0;
}

}  // namespace

extern "C" size_t gc_kernel_cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8_workspace_bytes(
    const gc_gemm_args* args, int slices) {
  if constexpr (kSplitK == SplitK::kParallel) return partial_bytes(args, slices);
  return Gemm::get_workspace_size(make_arguments(args, slices));
}

extern "C" int gc_kernel_cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8(
    const gc_gemm_args* args, int slices, char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  typename Gemm::Arguments arguments = make_arguments(args, slices);
  Gemm gemm_op;
  cutlass::Status status = gemm_op.can_implement(arguments);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("can_implement", status, err, err_len);
  if (gc_kernel_cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8_workspace_bytes(args, slices) > args->workspace_bytes) {
    return gc_fail(err, err_len, "cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8: workspace smaller than needed");
  }
  // The parallel mode's workspace holds the partials, not a semaphore: the GEMM itself gets none.
  void* gemm_workspace = kSplitK == SplitK::kParallel ? nullptr : args->workspace;
  status = gemm_op.initialize(arguments, gemm_workspace, args->stream);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("initialize", status, err, err_len);
  status = gemm_op.run(args->stream);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("run", status, err, err_len);

  if (int rc = reduce_partials(args, slices, err, err_len)) return rc;
  return gc_check_launch(err, err_len, "cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8");
}

// The occupancy query (gemm_abi.h: NAME_occupancy): the GEMM kernel GemmUniversalBase launches
// (Kernel2<GemmKernel>, kThreadCount threads, sizeof(SharedStorage) bytes); a parallel split-K's
// reduction kernel is not in it.
extern "C" int gc_kernel_cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  using Kernel = typename Gemm::GemmKernel;
  return gc_query_occupancy((const void*)cutlass::Kernel2<Kernel>, int(Kernel::kThreadCount),
                            sizeof(typename Kernel::SharedStorage), out, err, err_len);
}
