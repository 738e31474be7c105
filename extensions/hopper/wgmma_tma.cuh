// Step 1 -- hopper.wgmma_tma: the Hopper data path with nothing overlapped.
//
// One warpgroup (128 threads) per CTA, one CTA per BM x BN tile of C, one shared-memory stage:
//   thread 0: arrive.expect_tx(bytes) on the stage's mbarrier, then TMA-load the A and B boxes of the k
//             tile (128B swizzle; out-of-range elements arrive as zeros: the M, N and K tails)
//   all:      wait for the barrier's phase -> wgmma (A and B straight from shared memory through
//             descriptors, MI x (BK/16) instructions of m64nBNk16) -> commit -> wait for all of them
//             -> __syncthreads so the stage can be refilled
// then the accumulators go straight to global memory (guarded stores).
//
// What it adds over an Ampere kernel: no per-thread copy code at all (one thread moves the whole tile),
// no ldmatrix and no register fragments for A and B (the tensor core reads shared memory itself), and
// 64 x BN x 16 per instruction instead of 16 x 8 x 16. What it lacks: the TMA latency is fully exposed
// every k tile (the next steps hide it).
#pragma once

#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace wgmma_tma {

template <class Cfg>
struct Traits {
  static_assert(Cfg::STAGES == 1, "wgmma_tma has one stage (the pipelined step adds more)");
  static_assert(Cfg::CONSUMERS == 1, "wgmma_tma is one warpgroup");
  static_assert(Cfg::CLUSTER_M == 1, "wgmma_tma does not use clusters");
  using S = Smem<Cfg>;
  static constexpr int THREADS = 128;
};

template <class Cfg, class TIn, class TOut, class Tag>
__global__ void __launch_bounds__(128, 1) kernel(const __grid_constant__ Params p) {
  using S = typename Traits<Cfg>::S;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = align1024(smem_u32(smem));  // 128B-swizzled tiles need 1024-byte alignment
  const uint32_t full = S::full(base, 0);
  const int tid = threadIdx.x;

  int tm, tn;
  grouped_raster(blockIdx.x, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
  const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;

  if (tid == 0) {
    prefetch_tmap(&p.tma_a);
    prefetch_tmap(&p.tma_b);
    mbar_init(full, 1);  // one arrival per phase: thread 0's arrive.expect_tx
    fence_barrier_init();
  }
  __syncthreads();

  float acc[Cfg::MI][Cfg::BN / 2];
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
    for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;

  uint32_t phase = 0;
  for (int kt = 0; kt < p.k_tiles; ++kt) {
    if (tid == 0) {
      mbar_arrive_expect_tx(full, S::TX_BYTES);
#pragma unroll
      for (int kb = 0; kb < Cfg::KB; ++kb) {
        const int k0 = kt * Cfg::BK + kb * 64;
        tma_load_2d(S::a(base, 0) + kb * S::A_KBLOCK, &p.tma_a, full, k0, m0);
        tma_load_2d(S::b(base, 0) + kb * S::B_KBLOCK, &p.tma_b, full, k0, n0);
      }
    }
    __syncwarp();
    mbar_wait(full, phase);  // the bytes of this k tile have landed
    phase ^= 1u;

    wgmma_fence();  // the accumulators were last touched by ordinary instructions (the zeroing)
    mma_stage<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(acc, S::a(base, 0), S::b(base, 0), 1u);
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(acc);
    __syncthreads();  // every warp is done with the stage before thread 0 refills it
  }

  // Epilogue: rows m0 + mi*64 + 16*warp + lane/4 (+8), columns n0 + 2*(lane%4) (+8j, +1).
  const int warp = tid / 32, lane = tid % 32;
  const bool fast = direct_fast<Cfg::BM, Cfg::BN>(p, m0, n0);
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
    store_block_direct<TOut, Cfg::BN>(acc[mi], p, m0 + mi * 64 + 16 * warp + lane / 4, n0 + 2 * (lane % 4), fast);
}

template <class Cfg, class Tag = void>
struct Step {
  static constexpr const char* name = "hopper.wgmma_tma";

  // The occupancy of the launch run() makes (gemm_abi.h NAME_occupancy): nothing is launched.
  template <class TIn, class TOut>
  static int occupancy(const gc_gemm_args*, gc_occupancy* out, char* err, size_t err_len) {
    return query_occupancy(kernel<Cfg, TIn, TOut, Tag>, 128, Traits<Cfg>::S::DYNAMIC, out, err, err_len);
  }

  template <class TIn, class TOut>
  static int run(const gc_gemm_args* args, char* err, size_t err_len) {
    using S = typename Traits<Cfg>::S;
    Params p;
    if (int rc = prepare<TIn, TOut, Tag>(args, name, p, err, err_len)) return rc < 0 ? 0 : rc;
    set_tiles<Cfg>(args, p);
    if (int rc = make_operand_maps<Cfg, TIn>(args, p, err, err_len)) return rc;
    const int64_t tiles = static_cast<int64_t>(p.tiles_m) * p.tiles_n;
    if (tiles > INT32_MAX) return gc_fail(err, err_len, "hopper.wgmma_tma: too many tiles for a 1-D grid");
    auto k = kernel<Cfg, TIn, TOut, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(tiles), 128, S::DYNAMIC, args->stream, 1, p));
    return gc_check_launch(err, err_len, name);
  }
};

// run, run_typed and occupancy of this step (hopper_common.cuh).
GC_HOPPER_STEP_ENTRIES(Step)

}  // namespace wgmma_tma
}  // namespace hopper
}  // namespace gc
