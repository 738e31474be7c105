// Default instantiation of hopper.persistent: 128x256x64 tile, 4 stages, a producer and two consumer warpgroups, one CTA per SM.
#include "hopper/persistent.cuh"

struct gc_hopper_persistent_tag;  // names the kernels in the ptxas report
using gc_hopper_persistent_config = gc::hopper::Config<128, 256, 64, 4, 2, 1, 8>;

extern "C" int gc_hopper_persistent(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::persistent::run<gc_hopper_persistent_config, gc_hopper_persistent_tag>(args, err, err_len);
}
