// cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_rasterH_swz1_splitk4
//
// Entry point of one SM90 configuration: the compiled kernel cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab
// with its run-time arguments. Rendered by gemmcompare from cutlass_configs/templates/sm90_entry.cu.tmpl.
#include "gemmcompare/gemm_abi.h"

// Defined in cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_kernel.cu (sm90_kernel.cu.tmpl).
extern "C" size_t gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_workspace_bytes(
    const gc_gemm_args* args, int raster_order, int max_swizzle, int decomposition, int splits);
extern "C" int gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab(
    const gc_gemm_args* args, int raster_order, int max_swizzle, int decomposition, int splits,
    char* err, size_t err_len);

extern "C" int gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len);

namespace {
constexpr int kRasterOrder = 0;  // heuristic
constexpr int kMaxSwizzle = 1;
constexpr int kDecomposition = 2;  // split_k (stream-K scheduler only)
constexpr int kSplits = 4;  // (stream-K scheduler only)
}  // namespace

extern "C" size_t gc_cutlass_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_rasterH_swz1_splitk4_workspace_bytes(const gc_gemm_args* args) {
  return gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_workspace_bytes(args, kRasterOrder, kMaxSwizzle, kDecomposition, kSplits);
}

extern "C" int gc_cutlass_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_rasterH_swz1_splitk4(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab(args, kRasterOrder, kMaxSwizzle, kDecomposition, kSplits, err, err_len);
}

extern "C" int gc_cutlass_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_rasterH_swz1_splitk4_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_kernel_cutlass3x_sm90_tensorop_f16_f32_f32_128x16x128_1x1x1_coop_epitma_stauto_streamk_tn_align8_swapab_occupancy(args, out, err, err_len);
}
