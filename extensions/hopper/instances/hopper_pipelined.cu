// Default instantiation of step 2 (hopper.pipelined): 128x128x64 tile, 3 stages (two CTAs fit on an SM), one warpgroup.
#include "hopper/pipelined.cuh"

struct gc_hopper_pipelined_tag;  // names the kernels in the ptxas report
using gc_hopper_pipelined_config = gc::hopper::Config<128, 128, 64, 3, 1, 1, 8>;

extern "C" int gc_hopper_pipelined(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::pipelined::run<gc_hopper_pipelined_config, gc_hopper_pipelined_tag>(args, err, err_len);
}
