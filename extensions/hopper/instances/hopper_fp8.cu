// Default instantiation of hopper.fp8: 128x128x128 tile, 6 stages, 2 consumers, promotion every 128 of K.
#include "hopper/fp8.cuh"

struct gc_hopper_fp8_tag;  // names the kernels in the ptxas report
using gc_hopper_fp8_config = gc::hopper::Config<128, 128, 128, 6, 2, 1, 8>;

extern "C" int gc_hopper_fp8(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::hopper::fp8::run<gc_hopper_fp8_config, gc_hopper_fp8_tag>(args, err, err_len);
}
