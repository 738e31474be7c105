// Default instantiation of hopper.best: 128x256x64 tile, 4 stages, 2 consumers, persistent, 2x1 clusters, TMA-store epilogue.
#include "hopper/best.cuh"

struct gc_hopper_best_tag;  // names the kernels in the ptxas report
using gc_hopper_best_config = gc::hopper::Config<128, 256, 64, 4, 2, 2, 8>;

extern "C" int gc_hopper_best(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::best::run<gc_hopper_best_config, gc_hopper_best_tag>(args, err, err_len);
}
