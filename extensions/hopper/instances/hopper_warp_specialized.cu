// Default instantiation of step 3 (hopper.warp_specialized): 128x256x64 tile, 4 stages, a producer and
// two consumer warpgroups.
#include "hopper/warp_specialized.cuh"

struct gc_hopper_warp_specialized_tag;  // names the kernels in the ptxas report
using gc_hopper_warp_specialized_config = gc::hopper::Config<128, 256, 64, 4, 2, 1, 8>;

extern "C" int gc_hopper_warp_specialized(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::warp_specialized::run<gc_hopper_warp_specialized_config, gc_hopper_warp_specialized_tag>(args, err,
                                                                                                               err_len);
}
