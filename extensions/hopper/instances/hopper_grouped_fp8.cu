// Default instantiation of hopper.grouped_fp8: 128x128x128 tile (BN <= 128: block scales), 6 stages, a producer and two consumer warpgroups, one CTA per SM walking every group's tiles, FP8 sums promoted to FP32 every 128 of K.
#include "hopper/grouped_fp8.cuh"

struct gc_hopper_grouped_fp8_tag;  // names the kernels in the ptxas report
using gc_hopper_grouped_fp8_config = gc::hopper::Config<128, 128, 128, 6, 2, 1, 8>;

extern "C" int gc_hopper_grouped_fp8(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::grouped_fp8::run<gc_hopper_grouped_fp8_config, gc_hopper_grouped_fp8_tag>(args, err, err_len);
}
