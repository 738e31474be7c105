// A GEMM with a slowdown that can be planted, for checking that `gemmcompare compare` still calls a real
// slowdown SLOWER when the card is power-capped (experiments/planted_slowdown/README.md).
//
// The GEMM is the hand-written mma_sync kernel's default instantiation (128x256x64 block, 3 stages,
// swizzled shared memory), reached through the general C ABI. With -DPLANTED_EXTRA_PERCENT=P the entry
// first runs the same kernel over the first P% of K (rounded down to the 64-deep block), into C, and then
// the whole GEMM over it: every tile does P% more of the same tensor-core work, the power draw is the
// kernel's own, and C is exactly the unplanted result (the full GEMM overwrites every element; beta = 0).
#include "../../extensions/mma_sync/mma_sync.cuh"

#ifndef PLANTED_EXTRA_PERCENT
#define PLANTED_EXTRA_PERCENT 0
#endif

struct planted_gemm_tag;  // names the kernels in the ptxas report
using planted_gemm_config =
    gc::mma::Config<128, 256, 64, 64, 64, 3, gc::mma::Smem::Swizzle, 8, 16, false, gc::mma::Epi::Plain, true>;

extern "C" int planted_gemm(const gc_gemm_args* args, char* err, size_t err_len) {
  if (!args) return gc_fail(err, err_len, "null arguments");
  if (args->beta != 0.0) return gc_fail(err, err_len, "planted_gemm: beta must be 0 (C is overwritten)");
#if PLANTED_EXTRA_PERCENT > 0
  gc_gemm_args extra = *args;
  extra.k = args->k * PLANTED_EXTRA_PERCENT / 100 / 64 * 64;
  if (extra.k > 0) {
    if (int rc = gc::mma::launch<planted_gemm_config, planted_gemm_tag>(&extra, "planted_gemm (planted work)", err,
                                                                        err_len))
      return rc;
  }
#endif
  return gc::mma::launch<planted_gemm_config, planted_gemm_tag>(args, "planted_gemm", err, err_len);
}
