// The current mma_sync kernel with the stage copy issued at once (not spread): A/B study only.
#define GC_MMA_SPREAD_COPIES 0
#include "mma_sync_new.cuh"
struct burst_256x128x64_s3_tag;
using BurstCfg = gc::mma::Config<256, 128, 64, 64, 64, 3, gc::mma::Smem::Swizzle, 8, 16, false, gc::mma::Epi::Plain, true, false>;
extern "C" int burst_256x128x64_s3(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::mma::launch<BurstCfg, burst_256x128x64_s3_tag>(args, "burst_256x128x64_s3", err, err_len);
}
