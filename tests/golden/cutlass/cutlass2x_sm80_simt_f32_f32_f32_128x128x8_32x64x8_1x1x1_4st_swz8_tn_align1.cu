// cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1
//
// Entry point of one SM80 configuration: the compiled kernel cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1
// with its run-time arguments. Rendered by gemmcompare from cutlass_configs/templates/sm80_entry.cu.tmpl.
#include "gemmcompare/gemm_abi.h"

// Defined in cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1_kernel.cu (sm80_kernel.cu.tmpl).
extern "C" size_t gc_kernel_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1_workspace_bytes(
    const gc_gemm_args* args, int slices);
extern "C" int gc_kernel_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1(
    const gc_gemm_args* args, int slices, char* err, size_t err_len);

extern "C" int gc_kernel_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len);

namespace {
constexpr int kSlices = 1;  // split-K partitions (1: no split)
}  // namespace

extern "C" size_t gc_cutlass_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1_workspace_bytes(const gc_gemm_args* args) {
  return gc_kernel_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1_workspace_bytes(args, kSlices);
}

extern "C" int gc_cutlass_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_kernel_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1(args, kSlices, err, err_len);
}

extern "C" int gc_cutlass_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_kernel_cutlass2x_sm80_simt_f32_f32_f32_128x128x8_32x64x8_1x1x1_4st_swz8_tn_align1_occupancy(args, out, err, err_len);
}
