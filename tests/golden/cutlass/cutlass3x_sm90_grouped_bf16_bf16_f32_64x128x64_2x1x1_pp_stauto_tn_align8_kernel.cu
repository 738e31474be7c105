// cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8
//
// CUTLASS 3.x grouped GEMM for SM90 (pointer-array), built with the CollectiveBuilder. Rendered by gemmcompare
// from cutlass_configs/templates/sm90_grouped_kernel.cu.tmpl; do not edit (edit the configuration YAML instead).
//
//   for every group g < args->groups, with M_g = group_offsets[g+1] - group_offsets[g] rows:
//     C_g (M_g x n, row-major, cutlass::bfloat16_t) = alpha * A_g (M_g x k, row-major) * B_g (k x n, column-major)
//   A_g: rows group_offsets[g] .. of A [m, k]; B_g: the [n, k] K-major matrix at b + g * stride_b; C_g: rows
//   group_offsets[g] .. of C [m, n] (gemm_abi.h, grouped problems). cutlass::bfloat16_t in, float
//   accumulate, no C source (ElementC = void, beta = 0).
//
// The kernel (cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong) walks the tiles of all groups with CUTLASS's group scheduler and, when a CTA
// moves to another group, rewrites its TMA descriptors in place from device arrays of per-group problem shapes,
// pointers and strides. gc_grouped_arguments_kernel below builds those arrays from group_offsets, in the
// workspace, on the harness's stream just ahead of the GEMM: so the harness keeps only the offsets on the
// device, and the arrays are part of the timed launch (as an MoE layer builds them from its router's counts).
//
// Empty groups (M_g = 0) are legal and take no work: the group scheduler counts ceil(M_g / tile M) = 0 tiles
// for one and moves past it (sm90_tile_scheduler_group.hpp), so no CTA reads its rows or builds a descriptor
// for it; CUTLASS's own example 68 (..._with_sparse_groups) runs most groups empty. A problem whose groups are
// all empty (m = 0) launches nothing: with host shapes CUTLASS would size a grid of zero CTAs.
//
// Template parameters are compiled in here; the run-time arguments (raster order, swizzle) come from the
// entry TU of each configuration that shares this kernel.
#include <cuda_runtime.h>

#include <climits>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

#include "gemmcompare/gemm_abi.h"

namespace {

// One (M_g, n, k) per group; int extents, as CUTLASS's grouped examples use (offsets stay int64 strides).
using ProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;
using GroupShape = typename ProblemShape::UnderlyingProblemShape;

using ElementA = cutlass::bfloat16_t;
using LayoutA = cutlass::layout::RowMajor;
constexpr int AlignmentA = 8;

using ElementB = cutlass::bfloat16_t;
using LayoutB = cutlass::layout::ColumnMajor;
constexpr int AlignmentB = 8;

using ElementD = cutlass::bfloat16_t;
using LayoutD = cutlass::layout::RowMajor;
constexpr int AlignmentD = 8;

using ElementAccumulator = float;
using ElementCompute = float;  // alpha is applied in FP32

using TileShape = cute::Shape<cute::_64, cute::_128, cute::_64>;
using ClusterShape = cute::Shape<cute::_2, cute::_1, cute::_1>;
using KernelSchedule = cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong;
using EpilogueSchedule = cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong;

// The `Layout*` tags ask the builders for the pointer-array collectives: one pointer and one stride per group.
// No C operand: with ElementC = void the epilogue neither reads C nor reserves shared memory for it.
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    TileShape, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto,
    ElementAccumulator, ElementCompute,
    void, LayoutD*, AlignmentD,
    ElementD, LayoutD*, AlignmentD,
    EpilogueSchedule>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA*, AlignmentA,
    ElementB, LayoutB*, AlignmentB,
    ElementAccumulator,
    TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    KernelSchedule>::CollectiveOp;

// GroupProblemShape selects CUTLASS's group tile scheduler (PersistentTileSchedulerSm90Group).
using GemmKernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, CollectiveMainloop, CollectiveEpilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

// The stage count comes from the builder, which subtracts only the epilogue and its own carve-out; the
// pointer-array kernel also keeps its TMA descriptors in shared memory. CUTLASS checks the total only at run
// time (cudaFuncSetAttribute in initialize()): check it here, where a compile test sees it.
static_assert(GemmKernel::SharedStorageSize <= 232448,
              "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: shared memory over the 232448 bytes a CTA may opt in to on sm_90");

using StrideA = typename GemmKernel::InternalStrideA;  // one group's stride; the kernel takes an array of them
using StrideB = typename GemmKernel::InternalStrideB;
using StrideD = typename GemmKernel::InternalStrideD;

// The entry TU passes CUTLASS's enumerator values as ints (it cannot include CUTLASS).
using RasterOrder = cutlass::gemm::kernel::detail::RasterOrderOptions;
static_assert(int(RasterOrder::Heuristic) == 0 && int(RasterOrder::AlongM) == 1 && int(RasterOrder::AlongN) == 2,
              "raster codes changed: update gemmcompare/cutlass/tags.py SM90_RASTER");

// A stride with its leading dimension `ld`: the dynamic one of the contiguous operand's two modes (the L mode
// is static 0: groups are separate pointers, not a batch stride).
template <class Stride>
CUTLASS_HOST_DEVICE Stride with_leading_dimension(int64_t ld) {
  Stride stride{};
  if constexpr (cute::is_static_v<cute::remove_cvref_t<decltype(cute::get<0>(stride))>>) {
    cute::get<1>(stride) = ld;  // mode 0 is contiguous: the leading dimension strides mode 1
  } else {
    cute::get<0>(stride) = ld;
  }
  return stride;
}

// The per-group arrays the kernel reads, at the start of the workspace, each on a 128-byte boundary; CUTLASS's
// own workspace (its per-SM TMA descriptors) follows them.
constexpr size_t kArrayAlignment = 128;

size_t aligned(size_t bytes) { return (bytes + kArrayAlignment - 1) / kArrayAlignment * kArrayAlignment; }

struct GroupArrays {
  GroupShape* shapes = nullptr;
  const ElementA** ptr_a = nullptr;
  const ElementB** ptr_b = nullptr;
  ElementD** ptr_d = nullptr;
  StrideA* stride_a = nullptr;
  StrideB* stride_b = nullptr;
  StrideD* stride_d = nullptr;
};

size_t group_arrays_bytes(int64_t groups) {
  const size_t g = static_cast<size_t>(groups);
  return aligned(g * sizeof(GroupShape)) + aligned(g * sizeof(ElementA*)) + aligned(g * sizeof(ElementB*)) +
         aligned(g * sizeof(ElementD*)) + aligned(g * sizeof(StrideA)) + aligned(g * sizeof(StrideB)) +
         aligned(g * sizeof(StrideD));
}

GroupArrays carve_group_arrays(void* workspace, int64_t groups) {
  const size_t g = static_cast<size_t>(groups);
  char* at = static_cast<char*>(workspace);
  auto take = [&](size_t bytes) { char* p = at; at += aligned(bytes); return p; };
  GroupArrays arrays;
  arrays.shapes = reinterpret_cast<GroupShape*>(take(g * sizeof(GroupShape)));
  arrays.ptr_a = reinterpret_cast<const ElementA**>(take(g * sizeof(ElementA*)));
  arrays.ptr_b = reinterpret_cast<const ElementB**>(take(g * sizeof(ElementB*)));
  arrays.ptr_d = reinterpret_cast<ElementD**>(take(g * sizeof(ElementD*)));
  arrays.stride_a = reinterpret_cast<StrideA*>(take(g * sizeof(StrideA)));
  arrays.stride_b = reinterpret_cast<StrideB*>(take(g * sizeof(StrideB)));
  arrays.stride_d = reinterpret_cast<StrideD*>(take(g * sizeof(StrideD)));
  return arrays;
}

// One thread per group: its problem shape, operand pointers and strides, from the cumulative row offsets.
__global__ void gc_grouped_arguments_kernel(GroupArrays arrays, const int64_t* __restrict__ offsets, int groups,
                                            int n, int k, const ElementA* a, int64_t lda, const ElementB* b,
                                            int64_t ldb, int64_t stride_b, ElementD* d, int64_t ldc) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  const int64_t row = offsets[g];
  arrays.shapes[g] = GroupShape{static_cast<int>(offsets[g + 1] - row), n, k};
  arrays.ptr_a[g] = a + row * lda;
  arrays.ptr_b[g] = b + static_cast<int64_t>(g) * stride_b;
  arrays.ptr_d[g] = d + row * ldc;
  arrays.stride_a[g] = with_leading_dimension<StrideA>(lda);
  arrays.stride_b[g] = with_leading_dimension<StrideB>(ldb);
  arrays.stride_d[g] = with_leading_dimension<StrideD>(ldc);
}

constexpr int kArgumentsThreads = 128;

// `host_shapes` may be null (then the scheduler reads the shapes on the device only and launches one CTA per SM).
typename Gemm::Arguments make_arguments(const gc_gemm_args* args, const GroupArrays& arrays,
                                        const GroupShape* host_shapes, int raster_order, int max_swizzle) {
  cutlass::KernelHardwareInfo hw_info;
  cudaGetDevice(&hw_info.device_id);
  hw_info.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hw_info.device_id);

  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGrouped,
      {static_cast<int>(args->groups), arrays.shapes, host_shapes},
      {arrays.ptr_a, arrays.stride_a, arrays.ptr_b, arrays.stride_b},
      {{}, nullptr, nullptr, arrays.ptr_d, arrays.stride_d},
      hw_info};
  // one alpha for every group: the fusion's scalar (its per-group pointer array stays null, dAlpha 0)
  arguments.epilogue.thread.alpha = ElementCompute(args->alpha);
  arguments.scheduler.raster_order = static_cast<RasterOrder>(raster_order);
  arguments.scheduler.max_swizzle_size = max_swizzle;
  return arguments;
}

// The contract it was compiled for (the occupancy query checks this much: it describes no problem).
int check_contract(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->dtype_a != GC_BF16 || args->dtype_b != GC_BF16 || args->dtype_c != GC_BF16 ||
      args->dtype_acc != GC_F32 || args->math != GC_MATH_STRICT || args->order_a != GC_ROW ||
      args->order_b != GC_COL || args->order_c != GC_ROW || args->epilogue != GC_EPI_NONE ||
      args->scaling != GC_SCALING_NONE) {
    return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: compiled for bf16 in (A row-major, B column-major), bf16 out (row-major), f32 accumulate, math strict; called with another contract");
  }
  if (args->beta != 0.0) return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: has no C source, beta must be 0");
  return 0;
}

// The contract and the grouped form of the ABI (gemm_abi.h, ABI 4).
int check_args(const gc_gemm_args* args, char* err, size_t err_len) {
  if (int rc = check_contract(args, err, err_len)) return rc;
  if (!gc_is_grouped(args)) {
    return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: a grouped kernel called without groups (gc_gemm_args.groups = 0)");
  }
  if (args->group_layout != GC_GROUPS_CONTIGUOUS) {
    return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: takes the contiguous group layout only (GC_GROUPS_CONTIGUOUS)");
  }
  if (gc_batch(args) != 1) return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: a grouped problem has batch 1");
  // m bounds every group's M, which gc_grouped_arguments_kernel narrows to an int without a check of its own
  if (args->groups > INT_MAX || args->n > INT_MAX || args->k > INT_MAX || args->m < 0 || args->m > INT_MAX) {
    return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: groups, m, n and k must fit an int (CUTLASS's group problem shape)");
  }
  return 0;
}

// What CUTLASS's grouped can_implement does not see: it checks each group's extents against packed strides,
// not the leading dimensions and base pointers every group's TMA descriptor is built from.
int check_alignment(const gc_gemm_args* args, char* err, size_t err_len) {
  const bool lds = args->lda % AlignmentA == 0 && args->ldb % AlignmentB == 0 && args->ldc % AlignmentD == 0 &&
                   args->stride_b % AlignmentB == 0;
  const bool bases = reinterpret_cast<uintptr_t>(args->a) % 16 == 0 && reinterpret_cast<uintptr_t>(args->b) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(args->c) % 16 == 0;
  if (!lds || !bases) {
    return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: TMA needs 16-byte aligned operands, leading dimensions and "
                                 "B's group stride");
  }
  if (args->group_offsets == nullptr) return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: group_offsets is null");
  return 0;
}

// The host copy of the problem shapes, checked against m. Reused across calls on the host thread (the harness
// calls from one thread), so a launch does not allocate; CUTLASS reads it only during initialize() and run().
int host_shapes(const gc_gemm_args* args, const GroupShape** out, char* err, size_t err_len) {
  *out = nullptr;
  if (args->group_m_host == nullptr) return 0;
  thread_local std::vector<GroupShape> shapes;
  shapes.resize(static_cast<size_t>(args->groups));
  int64_t rows = 0;
  for (int64_t g = 0; g < args->groups; ++g) {
    const int64_t m_g = args->group_m_host[g];
    if (m_g < 0 || m_g > INT_MAX) return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: a group's M is negative or over INT_MAX");
    rows += m_g;
    shapes[g] = GroupShape{static_cast<int>(m_g), static_cast<int>(args->n), static_cast<int>(args->k)};
  }
  if (rows != args->m) return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: group_m_host does not sum to m");
  *out = shapes.data();
  return 0;
}

int cutlass_fail(const char* step, cutlass::Status status, char* err, size_t err_len) {
  if (err && err_len) snprintf(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: %s: %s", step, cutlassGetStatusString(status));
  return 3;
}

}  // namespace

extern "C" size_t gc_kernel_cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8_workspace_bytes(const gc_gemm_args* args, int raster_order, int max_swizzle) {
  if (!gc_is_grouped(args)) return 0;  // check_args refuses the launch with the reason
  return group_arrays_bytes(args->groups) +
         Gemm::get_workspace_size(make_arguments(args, GroupArrays{}, nullptr, raster_order, max_swizzle));
}

extern "C" int gc_kernel_cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8(const gc_gemm_args* args, int raster_order, int max_swizzle, char* err,
                                size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  if (args->m == 0) return 0;  // every group empty: nothing to compute, no CTA to launch
  if (int rc = check_alignment(args, err, err_len)) return rc;
  const GroupShape* shapes_on_host = nullptr;
  if (int rc = host_shapes(args, &shapes_on_host, err, err_len)) return rc;

  const size_t arrays_bytes = group_arrays_bytes(args->groups);
  if (args->workspace == nullptr || args->workspace_bytes < arrays_bytes) {
    return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: workspace smaller than the per-group arrays");
  }
  const GroupArrays arrays = carve_group_arrays(args->workspace, args->groups);
  void* cutlass_workspace = static_cast<char*>(args->workspace) + arrays_bytes;

  const int groups = static_cast<int>(args->groups);
  gc_grouped_arguments_kernel<<<(groups + kArgumentsThreads - 1) / kArgumentsThreads, kArgumentsThreads, 0,
                                args->stream>>>(
      arrays, args->group_offsets, groups, static_cast<int>(args->n), static_cast<int>(args->k),
      static_cast<const ElementA*>(args->a), args->lda, static_cast<const ElementB*>(args->b), args->ldb,
      args->stride_b, static_cast<ElementD*>(args->c), args->ldc);
  if (int rc = gc_check_launch(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: gc_grouped_arguments_kernel")) return rc;

  typename Gemm::Arguments arguments = make_arguments(args, arrays, shapes_on_host, raster_order, max_swizzle);
  Gemm gemm_op;
  cutlass::Status status = gemm_op.can_implement(arguments);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("can_implement", status, err, err_len);
  if (arrays_bytes + Gemm::get_workspace_size(arguments) > args->workspace_bytes) {
    return gc_fail(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8: workspace smaller than the per-group arrays plus get_workspace_size()");
  }
  status = gemm_op.initialize(arguments, cutlass_workspace, args->stream);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("initialize", status, err, err_len);
  status = gemm_op.run(args->stream);
  if (status != cutlass::Status::kSuccess) return cutlass_fail("run", status, err, err_len);
  return gc_check_launch(err, err_len, "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8");
}

// The occupancy query (gemm_abi.h: NAME_occupancy): the GEMM kernel, block and shared memory GemmUniversalAdapter
// launches with (device_kernel<GemmKernel>, MaxThreadsPerBlock, SharedStorageSize); the arguments kernel is tiny.
extern "C" int gc_kernel_cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_2x1x1_pp_stauto_tn_align8_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  if (int rc = check_contract(args, err, err_len)) return rc;
  return gc_query_occupancy((const void*)cutlass::device_kernel<GemmKernel>, int(GemmKernel::MaxThreadsPerBlock),
                            size_t(GemmKernel::SharedStorageSize), out, err, err_len);
}
