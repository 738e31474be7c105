// Checks gemmcompare/model/occupancy.py against the runtime: for kernels capped at several register
// counts (__maxnreg__) and with several static shared-memory sizes, it asks
// cudaOccupancyMaxActiveBlocksPerMultiprocessor for every block size in a list and every dynamic
// shared-memory size in a list, with the dynamic limit raised to the opt-in maximum. One CSV line each.
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

template <int REGS, int STATIC_SMEM>
__global__ void __maxnreg__(REGS) pressure(float* out, int n) {
  __shared__ float s[STATIC_SMEM / 4 > 0 ? STATIC_SMEM / 4 : 1];
  float acc[192];
#pragma unroll
  for (int i = 0; i < 192; ++i) acc[i] = out[(threadIdx.x * 7 + i) % n];
  for (int k = 0; k < n; ++k) {
#pragma unroll
    for (int i = 0; i < 192; ++i) acc[i] = acc[i] * acc[(i + k) % 192] + 1.0f;
  }
  float t = 0;
#pragma unroll
  for (int i = 0; i < 192; ++i) t += acc[i];
  if (STATIC_SMEM > 0) { s[threadIdx.x % (STATIC_SMEM / 4 > 0 ? STATIC_SMEM / 4 : 1)] = t; __syncthreads(); t += s[(threadIdx.x + 1) % (STATIC_SMEM / 4 > 0 ? STATIC_SMEM / 4 : 1)]; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = t;
}

template <int REGS, int STATIC_SMEM>
int probe(const cudaDeviceProp& p) {
  auto k = pressure<REGS, STATIC_SMEM>;
  cudaFuncAttributes a;
  CHECK(cudaFuncGetAttributes(&a, k));
  int max_dyn = (int)p.sharedMemPerBlockOptin - (int)a.sharedSizeBytes;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dyn));
  CHECK(cudaFuncGetAttributes(&a, k));
  const int threads[] = {32, 64, 96, 128, 160, 192, 256, 288, 384, 512, 640, 768, 1024};
  const int dyn[] = {0, 1, 1024, 4096, 16384, 20000, 32768, 49152, 65536, 98304, 114688, 116736, 150000, 200000, 232448};
  for (int t : threads) {
    if (t > a.maxThreadsPerBlock) continue;
    for (int d : dyn) {
      if (d > max_dyn) continue;
      int blocks = -1;
      CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, t, d));
      std::printf("%d,%d,%zu,%d,%d,%d,%d\n", REGS, a.numRegs, a.sharedSizeBytes, a.maxDynamicSharedSizeBytes, t, d, blocks);
    }
  }
  return 0;
}

int main() {
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("# %s cc %d.%d sms %d smem/sm %zu optin %zu reserved %zu regs/sm %d threads/sm %d blocks/sm %d l2 %d\n",
              p.name, p.major, p.minor, p.multiProcessorCount, p.sharedMemPerMultiprocessor, p.sharedMemPerBlockOptin,
              p.reservedSharedMemPerBlock, p.regsPerMultiprocessor, p.maxThreadsPerMultiProcessor,
              p.maxBlocksPerMultiProcessor, p.l2CacheSize);
  std::printf("cap,registers,static_smem,max_dynamic_smem,threads,dynamic_smem,blocks\n");
  int r = 0;
  r |= probe<32, 0>(p); r |= probe<40, 4096>(p); r |= probe<64, 0>(p); r |= probe<72, 10000>(p);
  r |= probe<96, 0>(p); r |= probe<128, 2048>(p); r |= probe<168, 0>(p); r |= probe<200, 40960>(p);
  r |= probe<224, 0>(p); r |= probe<255, 16384>(p);
  r |= probe<37, 0>(p); r |= probe<57, 30000>(p); r |= probe<129, 0>(p); r |= probe<150, 0>(p);
  return r;
}
