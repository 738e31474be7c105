// cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_swz8
//
// Entry point of one CuTe SM90 configuration: the compiled kernel cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn
// with its run-time arguments. Rendered by gemmcompare from cutlass_configs/templates/cute_sm90_entry.cu.tmpl.
#include "gemmcompare/gemm_abi.h"

// Defined in cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_kernel.cu (cute_sm90_kernel.cu.tmpl).
extern "C" size_t gc_kernel_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_workspace_bytes(
    const gc_gemm_args* args, int group_m);
extern "C" int gc_kernel_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn(
    const gc_gemm_args* args, int group_m, char* err, size_t err_len);

extern "C" int gc_kernel_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len);

namespace {
constexpr int kGroupM = 8;  // rows of tiles walked together
}  // namespace

extern "C" size_t gc_cutlass_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_swz8_workspace_bytes(const gc_gemm_args* args) {
  return gc_kernel_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_workspace_bytes(args, kGroupM);
}

extern "C" int gc_cutlass_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_swz8(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_kernel_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn(args, kGroupM, err, err_len);
}

extern "C" int gc_cutlass_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_swz8_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_kernel_cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_occupancy(args, out, err, err_len);
}
