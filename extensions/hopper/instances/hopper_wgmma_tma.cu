// Default instantiation of step 1 (hopper.wgmma_tma): 128x128x64 tile, one stage, one warpgroup.
#include "hopper/wgmma_tma.cuh"

struct gc_hopper_wgmma_tma_tag;  // names the kernels in the ptxas report
using gc_hopper_wgmma_tma_config = gc::hopper::Config<128, 128, 64, 1, 1, 1, 8>;

extern "C" int gc_hopper_wgmma_tma(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::wgmma_tma::run<gc_hopper_wgmma_tma_config, gc_hopper_wgmma_tma_tag>(args, err, err_len);
}
