// cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16
//
// CUTLASS 3.x FP8 GEMM for SM90 with DeepSeek-V3 block scales, built with the CollectiveBuilder. Rendered by
// gemmcompare from cutlass_configs/templates/sm90_fp8_blockwise_kernel.cu.tmpl; do not edit (edit the
// configuration YAML instead).
//
//   D (m x n, row-major, cutlass::bfloat16_t) = alpha * sum over k blocks kb of
//       scale_a[i, kb] * scale_b[kb, j / 128] * (A_q[i, kb] . B_q[kb, j])   (128 of K each)
//   A_q (m x k, row-major), B_q (k x n, column-major): cutlass::float_e4m3_t; accumulate float;
//   no C source (beta = 0). The mainloop (cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8BlockScaledAccum) adds each k block's wgmma partial sums
//   into FP32 registers multiplied by that block's two scales: promotion every 128 of K, scaled.
//   scale_a (m x ceil(k/128)) and scale_b (ceil(k/128) x ceil(n/128)): the harness's FP32 dequantization
//   scales, row-major (docs/fp8.md), device pointers from gc_gemm_args read by the kernel inside the launch.
//
// Template parameters are compiled in here; the run-time arguments (raster order, swizzle, stream-K
// decomposition and splits) come from the entry TU of each configuration that shares this kernel.
#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/detail/blockwise_scale_layout.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"
#include "cutlass/util/packed_stride.hpp"

#include "gemmcompare/gemm_abi.h"

namespace {

using ElementA = cutlass::float_e4m3_t;
using LayoutA = cutlass::layout::RowMajor;
constexpr int AlignmentA = 16;

using ElementB = cutlass::float_e4m3_t;
using LayoutB = cutlass::layout::ColumnMajor;
constexpr int AlignmentB = 16;

using ElementD = cutlass::bfloat16_t;
using LayoutD = cutlass::layout::RowMajor;
constexpr int AlignmentD = 8;

using ElementAccumulator = float;  // also the scales' type (the mainloop requires it)
using ElementCompute = float;  // alpha is applied in FP32

using TileShape = cute::Shape<cute::_128, cute::_128, cute::_128>;
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
using KernelSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8BlockScaledAccum;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
using TileScheduler = cutlass::gemm::PersistentScheduler;

// The scale blocks: 1 x 128 of A (one scale per row and 128 of K), 128 x 128 of B. The majors say which of
// each scale tensor's two modes is contiguous, and so give CUTLASS the strides of the harness's row-major
// scales: scale_a (m, ceil(k/128)) is K-major, offset i * ceil(k/128) + kb; scale_b (ceil(k/128),
// ceil(n/128)) is N-major (MN), offset kb * ceil(n/128) + j / 128 (blockwise_scale_layout.hpp,
// tile_atom_to_shape_SFA/SFB). Neither is copied.
constexpr int ScaleGranularityM = 1;
constexpr int ScaleGranularityN = 128;
constexpr int ScaleGranularityK = 128;
using ScaleConfig = cutlass::detail::Sm90BlockwiseScaleConfig<
    ScaleGranularityM, ScaleGranularityN, ScaleGranularityK, cute::GMMA::Major::K, cute::GMMA::Major::MN>;
using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());
using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());

// D = alpha * acc (the scales are in the accumulator already). No C operand: with ElementC = void the
// epilogue neither reads C nor reserves shared memory for it.
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    TileShape, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto,
    ElementAccumulator, ElementCompute,
    void, LayoutD, AlignmentD,
    ElementD, LayoutD, AlignmentD,
    EpilogueSchedule>::CollectiveOp;

// The builder's blockwise path computes its own stage count (it takes StageCountAutoCarveout only).
using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    ElementA, cute::tuple<LayoutA, LayoutSFA>, AlignmentA,
    ElementB, cute::tuple<LayoutB, LayoutSFB>, AlignmentB,
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

// A packed CuTe stride for a (rows, cols, 1) operand, with its leading dimension set to `ld`.
template <class Stride>
Stride with_leading_dimension(int rows, int cols, int64_t ld) {
  Stride stride = cutlass::make_cute_packed_stride(Stride{}, cute::make_shape(rows, cols, 1));
  if constexpr (cute::is_static_v<cute::remove_cvref_t<decltype(cute::get<0>(stride))>>) {
    cute::get<1>(stride) = ld;  // mode 0 is contiguous: the leading dimension strides mode 1
  } else {
    cute::get<0>(stride) = ld;
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

  cutlass::KernelHardwareInfo hw_info;
  cudaGetDevice(&hw_info.device_id);
  hw_info.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hw_info.device_id);

  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {m, n, k, 1},
      {static_cast<const ElementA*>(args->a), with_leading_dimension<StrideA>(m, k, args->lda),
       static_cast<const ElementB*>(args->b), with_leading_dimension<StrideB>(n, k, args->ldb),
       args->scale_a, ScaleConfig::tile_atom_to_shape_SFA(cute::make_shape(m, n, k, 1)),
       args->scale_b, ScaleConfig::tile_atom_to_shape_SFB(cute::make_shape(m, n, k, 1))},
      {{}, nullptr, with_leading_dimension<StrideC>(m, n, args->ldc),
       static_cast<ElementD*>(args->c), with_leading_dimension<StrideD>(m, n, args->ldc)},
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
  if (args->dtype_a != GC_E4M3 || args->dtype_b != GC_E4M3 || args->dtype_c != GC_BF16 ||
      args->dtype_acc != GC_F32 || args->math != GC_MATH_STRICT || args->order_a != GC_ROW ||
      args->order_b != GC_COL || args->order_c != GC_ROW || args->epilogue != GC_EPI_NONE ||
      args->scaling != GC_SCALING_BLOCK) {
    return gc_fail(err, err_len, "cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16: compiled for e4m3 in (A row-major, B column-major), bf16 out (row-major), f32 accumulate, math strict, 1x128/128x128 block scales, FP32 promotion; called with another contract");
  }
  if (args->beta != 0.0) return gc_fail(err, err_len, "cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16: has no C source, beta must be 0");
  return 0;
}

int cutlass_fail(const char* step, cutlass::Status status, char* err, size_t err_len) {
  if (err && err_len) snprintf(err, err_len, "cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16: %s: %s", step, cutlassGetStatusString(status));
  return 3;
}

}  // namespace

extern "C" size_t gc_kernel_cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16_workspace_bytes(
    const gc_gemm_args* args, int raster_order, int max_swizzle, int decomposition, int splits) {
  return Gemm::get_workspace_size(make_arguments(args, raster_order, max_swizzle, decomposition, splits));
}

extern "C" int gc_kernel_cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16(
    const gc_gemm_args* args, int raster_order, int max_swizzle, int decomposition, int splits,
    char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  if (args->scale_a == nullptr || args->scale_b == nullptr) {
    return gc_fail(err, err_len, "cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16: block scales scale_a and scale_b are null");
  }
  typename Gemm::Arguments arguments = make_arguments(args, raster_order, max_swizzle, decomposition, splits);
  Gemm gemm_op;
  cutlass::Status status = gemm_op.can_implement(arguments);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("can_implement", status, err, err_len);
  if (Gemm::get_workspace_size(arguments) > args->workspace_bytes) {
    return gc_fail(err, err_len, "cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16: workspace smaller than get_workspace_size()");
  }
  status = gemm_op.initialize(arguments, args->workspace, args->stream);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("initialize", status, err, err_len);
  status = gemm_op.run(args->stream);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("run", status, err, err_len);
  return gc_check_launch(err, err_len, "cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16");
}

// The occupancy query (gemm_abi.h: NAME_occupancy): the kernel, block and shared memory
// GemmUniversalAdapter launches with (device_kernel<GemmKernel>, MaxThreadsPerBlock, SharedStorageSize).
extern "C" int gc_kernel_cutlass3x_sm90_fp8_e4m3_bf16_f32_128x128x128_1x1x1_coop_blockwise_promote_epitma_stauto_persistent_tn_align16_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  return gc_query_occupancy((const void*)cutlass::device_kernel<GemmKernel>, int(GemmKernel::MaxThreadsPerBlock),
                            size_t(GemmKernel::SharedStorageSize), out, err, err_len);
}
