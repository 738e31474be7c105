// Default instantiation of hopper.grouped: 128x256x64 tile, 4 stages, a producer and two consumer warpgroups, one CTA per SM walking every group's tiles.
#include "hopper/grouped.cuh"

struct gc_hopper_grouped_tag;  // names the kernels in the ptxas report
using gc_hopper_grouped_config = gc::hopper::Config<128, 256, 64, 4, 2, 1, 8>;

extern "C" int gc_hopper_grouped(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::grouped::run<gc_hopper_grouped_config, gc_hopper_grouped_tag>(args, err, err_len);
}
