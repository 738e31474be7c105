// Default instantiation of hopper.cluster: 128x256x64 tile, 4 stages, 2 consumers, persistent, 2x1 clusters multicasting B.
#include "hopper/cluster.cuh"

struct gc_hopper_cluster_tag;  // names the kernels in the ptxas report
using gc_hopper_cluster_config = gc::hopper::Config<128, 256, 64, 4, 2, 2, 8>;

extern "C" int gc_hopper_cluster(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::cluster::run<gc_hopper_cluster_config, gc_hopper_cluster_tag>(args, err, err_len);
}
