// A kernel of known duration, to check every timing method against (gemmcompare/profilers/spin.py).
//
// Not a GEMM: it speaks the gemmcompare C ABI only to be built and bound like every kernel here.
//   args->m  nanoseconds to spin, read from %globaltimer (the GPU's global nanosecond clock)
//   args->c  two int64: the nanoseconds it really spun (last timer read minus first) and the smallest
//            step it saw the timer take (its granularity: a spin cannot be finer than that)
// One thread of one block: its launch and exit are as cheap as a kernel's can be, so a method's fixed
// cost shows up as the intercept of measured time against spin length.
#include <stdint.h>

#include "gemmcompare/gemm_abi.h"

namespace {

__device__ __forceinline__ uint64_t global_timer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(int64_t ns, long long* out) {
  const uint64_t start = global_timer();
  uint64_t now = start, step = ~0ull;
  while (now - start < static_cast<uint64_t>(ns)) {
    const uint64_t next = global_timer();
    if (next != now && next - now < step) step = next - now;
    now = next;
  }
  if (out) {
    out[0] = static_cast<long long>(now - start);
    out[1] = step == ~0ull ? 0 : static_cast<long long>(step);
  }
}

}  // namespace

extern "C" int gc_timing_spin(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->m < 0) return gc_fail(err, err_len, "gc_timing_spin: m (nanoseconds) must not be negative");
  (void)cudaGetLastError();
  spin_kernel<<<1, 1, 0, args->stream>>>(args->m, static_cast<long long*>(args->c));
  return gc_check_launch(err, err_len, "spin_kernel");
}
