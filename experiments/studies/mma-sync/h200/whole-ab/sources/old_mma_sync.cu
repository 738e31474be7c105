// The mma_sync kernel as it was before the copy spreading / persistent changes (A/B study only): the kernel before the interior epilogue path.
#include "mma_sync_old.cuh"
struct old_256x128x64_s3_tag;
struct old_128x256x64_s4_tag;
using OldCfgA = gc::mma_old::Config<256, 128, 64, 64, 64, 3, gc::mma_old::Smem::Swizzle, 8, 16, false, gc::mma_old::Epi::Plain, true>;
using OldCfgB = gc::mma_old::Config<128, 256, 64, 64, 64, 4, gc::mma_old::Smem::Swizzle, 8, 16, false, gc::mma_old::Epi::Plain, true>;
extern "C" int old_256x128x64_s3(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::mma_old::launch<OldCfgA, old_256x128x64_s3_tag>(args, "old_256x128x64_s3", err, err_len);
}
extern "C" int old_128x256x64_s4(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::mma_old::launch<OldCfgB, old_128x256x64_s4_tag>(args, "old_128x256x64_s4", err, err_len);
}
