// cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8
//
// CUTLASS 3.x GEMM for SM90 built with the CollectiveBuilder. Rendered by gemmcompare from
// cutlass_configs/templates/sm90_kernel.cu.tmpl; do not edit (edit the configuration YAML instead).
//
//   D (m x n, row-major, float) = alpha * A (m x k, row-major) * B (k x n, column-major)
//   A, B: cutlass::half_t; accumulate float; no C source (ElementC = void, beta = 0).
//
// swap_ab = false. When true the kernel computes D^T = B^T A^T: its A is B^T, its B is A^T and its D is
// D^T, column-major, so the M tokens sit on the tile's N side; make_arguments() swaps operands and extents.
//
// Template parameters are compiled in here; the run-time arguments (raster order, swizzle, stream-K
// decomposition and splits) come from the entry TU of each configuration that shares this kernel.
#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"
#include "cutlass/util/packed_stride.hpp"

#include "gemmcompare/gemm_abi.h"

namespace {

constexpr bool kSwapAB = false;

// The kernel's own operands (the contract's, or with kSwapAB the contract's B^T and A^T).
using ElementA = cutlass::half_t;
using LayoutA = cutlass::layout::RowMajor;
constexpr int AlignmentA = 8;

using ElementB = cutlass::half_t;
using LayoutB = cutlass::layout::ColumnMajor;
constexpr int AlignmentB = 8;

using ElementD = float;
using LayoutD = cutlass::layout::RowMajor;
constexpr int AlignmentD = 4;

using ElementAccumulator = float;
using ElementCompute = float;  // alpha is applied in FP32

using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;
using ClusterShape = cute::Shape<cute::_2, cute::_1, cute::_1>;
using KernelSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
using TileScheduler = cutlass::gemm::PersistentScheduler;

// No C operand: with ElementC = void the epilogue neither reads C nor reserves shared memory for it.
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    TileShape, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto,
    ElementAccumulator, ElementCompute,
    void, LayoutD, AlignmentD,
    ElementD, LayoutD, AlignmentD,
    EpilogueSchedule>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA, AlignmentA,
    ElementB, LayoutB, AlignmentB,
    ElementAccumulator,
    TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    KernelSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<
    cute::Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue, TileScheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

constexpr bool kStreamK = cute::is_same_v<TileScheduler, cutlass::gemm::StreamKScheduler>;

// The entry TU passes CUTLASS's enumerator values as ints (it cannot include CUTLASS).
using RasterOrder = cutlass::gemm::kernel::detail::RasterOrderOptions;
using Decomposition = cutlass::gemm::kernel::detail::DecompositionMode;
static_assert(int(RasterOrder::Heuristic) == 0 && int(RasterOrder::AlongM) == 1 && int(RasterOrder::AlongN) == 2,
              "raster codes changed: update gemmcompare/cutlass/tags.py SM90_RASTER");
static_assert(int(Decomposition::Heuristic) == 0 && int(Decomposition::DataParallel) == 1 &&
                  int(Decomposition::SplitK) == 2 && int(Decomposition::StreamK) == 3,
              "decomposition codes changed: update gemmcompare/cutlass/tags.py SM90_DECOMPOSITION");

// A packed CuTe stride for a (rows, cols, batch) operand, with its leading dimension set to `ld` and, for a
// batch, the distance between its matrices set to `batch_stride` (elements; the harness's batch layout).
template <class Stride>
Stride with_leading_dimension(int rows, int cols, int batch, int64_t ld, int64_t batch_stride) {
  Stride stride = cutlass::make_cute_packed_stride(Stride{}, cute::make_shape(rows, cols, batch));
  if constexpr (cute::is_static_v<cute::remove_cvref_t<decltype(cute::get<0>(stride))>>) {
    cute::get<1>(stride) = ld;  // mode 0 is contiguous: the leading dimension strides mode 1
  } else {
    cute::get<0>(stride) = ld;
  }
  if constexpr (!cute::is_static_v<cute::remove_cvref_t<decltype(cute::get<2>(stride))>>) {
    if (batch > 1) cute::get<2>(stride) = batch_stride;
  }
  return stride;
}

typename Gemm::Arguments make_arguments(const gc_gemm_args* args, int raster_order, int max_swizzle,
                                        int decomposition, int splits) {
  using StrideA = typename GemmKernel::StrideA;
  using StrideB = typename GemmKernel::StrideB;
  using StrideC = typename GemmKernel::StrideC;
  using StrideD = typename GemmKernel::StrideD;
  const int m = int(args->m), n = int(args->n), k = int(args->k);
  const int batch = int(gc_batch(args));  // L: every matrix of a batch in one launch (the schedulers walk L too)

  cutlass::KernelHardwareInfo hw_info;
  cudaGetDevice(&hw_info.device_id);
  hw_info.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hw_info.device_id);

  // The kernel's problem: (m, n, k), or swapped (n, m, k) with A and B exchanged; D (m x n row-major) seen
  // as D^T (n x m column-major) has the same leading dimension.
  const int km = kSwapAB ? n : m, kn = kSwapAB ? m : n;
  const void* kernel_a = kSwapAB ? args->b : args->a;
  const void* kernel_b = kSwapAB ? args->a : args->b;
  const int64_t ld_a = kSwapAB ? args->ldb : args->lda, ld_b = kSwapAB ? args->lda : args->ldb;
  const int64_t batch_a = kSwapAB ? args->stride_b : args->stride_a, batch_b = kSwapAB ? args->stride_a : args->stride_b;
  typename Gemm::Arguments arguments{
      batch > 1 ? cutlass::gemm::GemmUniversalMode::kBatched : cutlass::gemm::GemmUniversalMode::kGemm,
      {km, kn, k, batch},
      {static_cast<const ElementA*>(kernel_a), with_leading_dimension<StrideA>(km, k, batch, ld_a, batch_a),
       static_cast<const ElementB*>(kernel_b), with_leading_dimension<StrideB>(kn, k, batch, ld_b, batch_b)},
      {{}, nullptr, with_leading_dimension<StrideC>(km, kn, batch, args->ldc, args->stride_c),
       static_cast<ElementD*>(args->c), with_leading_dimension<StrideD>(km, kn, batch, args->ldc, args->stride_c)},
      hw_info};
  arguments.epilogue.thread.alpha = ElementCompute(args->alpha);
  arguments.scheduler.raster_order = static_cast<RasterOrder>(raster_order);
  arguments.scheduler.max_swizzle_size = max_swizzle;
  auto set_stream_k = [&](auto& scheduler) {  // generic: only the stream-K scheduler has these fields
    if constexpr (kStreamK) {
      scheduler.decomposition_mode = static_cast<Decomposition>(decomposition);
      scheduler.splits = splits;
    }
  };
  set_stream_k(arguments.scheduler);
  return arguments;
}

int check_args(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->dtype_a != GC_F16 || args->dtype_b != GC_F16 || args->dtype_c != GC_F32 ||
      args->dtype_acc != GC_F32 || args->math != GC_MATH_STRICT || args->order_a != GC_ROW ||
      args->order_b != GC_COL || args->order_c != GC_ROW || args->epilogue != GC_EPI_NONE) {
    return gc_fail(err, err_len, "cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8: compiled for f16 in (A row-major, B column-major), f32 out (row-major), f32 accumulate, math strict; called with another contract");
  }
  if (args->beta != 0.0) return gc_fail(err, err_len, "cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8: has no C source, beta must be 0");
  return 0;
}

int cutlass_fail(const char* step, cutlass::Status status, char* err, size_t err_len) {
  if (err && err_len) snprintf(err, err_len, "cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8: %s: %s", step, cutlassGetStatusString(status));
  return 3;
}

}  // namespace

extern "C" size_t gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8_workspace_bytes(
    const gc_gemm_args* args, int raster_order, int max_swizzle, int decomposition, int splits) {
  return Gemm::get_workspace_size(make_arguments(args, raster_order, max_swizzle, decomposition, splits));
}

extern "C" int gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8(
    const gc_gemm_args* args, int raster_order, int max_swizzle, int decomposition, int splits,
    char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  typename Gemm::Arguments arguments = make_arguments(args, raster_order, max_swizzle, decomposition, splits);
  Gemm gemm_op;
  cutlass::Status status = gemm_op.can_implement(arguments);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("can_implement", status, err, err_len);
  if (Gemm::get_workspace_size(arguments) > args->workspace_bytes) {
    return gc_fail(err, err_len, "cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8: workspace smaller than get_workspace_size()");
  }
  status = gemm_op.initialize(arguments, args->workspace, args->stream);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("initialize", status, err, err_len);
  status = gemm_op.run(args->stream);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("run", status, err, err_len);
  return gc_check_launch(err, err_len, "cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8");
}

// The occupancy query (gemm_abi.h: NAME_occupancy): the kernel, block and shared memory
// GemmUniversalAdapter launches with (device_kernel<GemmKernel>, MaxThreadsPerBlock, SharedStorageSize).
extern "C" int gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x128x64_2x1x1_pp_epitma_stauto_persistent_tn_align8_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  return gc_query_occupancy((const void*)cutlass::device_kernel<GemmKernel>, int(GemmKernel::MaxThreadsPerBlock),
                            size_t(GemmKernel::SharedStorageSize), out, err, err_len);
}
