// Default instantiation of hopper.split_k: 64x128x64 tile, 6 stages, 1 consumer, K split chosen per problem.
#include "hopper/split_k.cuh"

struct gc_hopper_split_k_tag;  // names the kernels in the ptxas report
using gc_hopper_split_k_config = gc::hopper::Config<64, 128, 64, 6, 1, 1, 8, 0>;

extern "C" int gc_hopper_split_k(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::split_k::run<gc_hopper_split_k_config, gc_hopper_split_k_tag>(args, err, err_len);
}

extern "C" size_t gc_hopper_split_k_workspace_bytes(const gc_gemm_args* args) {
  return gc::hopper::split_k::workspace_bytes<gc_hopper_split_k_config, gc_hopper_split_k_tag>(args);
}
