// Default instantiation of hopper.stream_k: 128x256x64 tile, 4 stages, 2 consumers, TMA-store epilogue, the
// data-parallel + stream-K schedule chosen per problem (AUTO: hybrid when the last wave is under 80% full).
#include "hopper/stream_k.cuh"

struct gc_hopper_stream_k_tag;  // names the kernels in the ptxas report
using gc_hopper_stream_k_config = gc::hopper::Config<128, 256, 64, 4, 2, 1, 8>;

extern "C" int gc_hopper_stream_k(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::stream_k::run<gc_hopper_stream_k_config, gc_hopper_stream_k_tag>(args, err, err_len);
}

extern "C" size_t gc_hopper_stream_k_workspace_bytes(const gc_gemm_args* args) {
  return gc::hopper::stream_k::workspace_bytes<gc_hopper_stream_k_config, gc_hopper_stream_k_tag>(args);
}
