// cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_rasterM_swz1
//
// Entry point of one SM90 grouped (pointer-array) configuration: the compiled kernel cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16
// with its run-time arguments. Rendered by gemmcompare from cutlass_configs/templates/sm90_grouped_entry.cu.tmpl.
// Called with a grouped problem only (gemm_abi.h, ABI 4: groups, group_offsets, group_m_host).
#include "gemmcompare/gemm_abi.h"

// Defined in cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_kernel.cu (sm90_grouped_kernel.cu.tmpl).
extern "C" size_t gc_kernel_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_workspace_bytes(const gc_gemm_args* args, int raster_order, int max_swizzle);
extern "C" int gc_kernel_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16(const gc_gemm_args* args, int raster_order, int max_swizzle, char* err,
                                size_t err_len);

extern "C" int gc_kernel_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len);

namespace {
constexpr int kRasterOrder = 1;  // along_m
constexpr int kMaxSwizzle = 1;
}  // namespace

// The per-group arrays the entry builds on the device (shapes, pointers, strides) plus CUTLASS's own workspace.
extern "C" size_t gc_cutlass_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_rasterM_swz1_workspace_bytes(const gc_gemm_args* args) {
  return gc_kernel_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_workspace_bytes(args, kRasterOrder, kMaxSwizzle);
}

extern "C" int gc_cutlass_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_rasterM_swz1(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_kernel_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16(args, kRasterOrder, kMaxSwizzle, err, err_len);
}

extern "C" int gc_cutlass_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_rasterM_swz1_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_kernel_cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_128x128x128_1x1x1_coop_stauto_tn_align16_occupancy(args, out, err, err_len);
}
