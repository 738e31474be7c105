// Step 2 -- hopper.pipelined: a ring of STAGES shared-memory stages, loads running ahead of the math.
//
// Still one warpgroup per CTA, one CTA per tile. What it adds over wgmma_tma:
//   full[s]  (1 arrival + TMA bytes): "stage s holds k tile t"    -- thread 0 arms it, TMA completes it
//   empty[s] (4 arrivals, one per warp): "every warp is done reading stage s"
// Thread 0 first fills all STAGES stages; from then on, as soon as the wgmmas of k tile t-1 are known to
// be finished, each warp releases that stage and thread 0 refills it with k tile t-1+STAGES. So up to
// STAGES-1 TMA loads are in flight while the tensor core works, instead of none.
//
// The wgmmas are pipelined too: after issuing tile t's batch, wgmma.wait_group 1 waits only for tile
// t-1's batch, so tile t keeps the tensor core busy while the warps release t-1 and wait for t+1.
//
// Phases: k tile t uses stage t % STAGES in pass t / STAGES; full[s] completes once per pass, so the
// consumer waits for parity (t / STAGES) & 1. empty[s] completes once per pass too: before refilling
// stage s with tile t + STAGES thread 0 waits for the completion that released tile t, parity
// (t / STAGES) & 1 as well.
#pragma once

#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace pipelined {

template <class Cfg>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "pipelined needs at least two stages");
  static_assert(Cfg::CONSUMERS == 1, "pipelined is one warpgroup (warp specialisation is the next step)");
  static_assert(Cfg::CLUSTER_M == 1, "pipelined does not use clusters");
  using S = Smem<Cfg>;
  static constexpr int THREADS = 128;
};

template <class Cfg, class TIn, class TOut, class Tag>
__global__ void __launch_bounds__(128, 1) kernel(const __grid_constant__ Params p) {
  using S = typename Traits<Cfg>::S;
  constexpr int STAGES = Cfg::STAGES;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = align1024(smem_u32(smem));
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  int tm, tn;
  grouped_raster(blockIdx.x, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
  const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
  const int k_tiles = p.k_tiles;

  // Thread 0 loads k tile t into stage s (the caller has made sure the stage is free).
  auto load = [&](int t, uint32_t s) {
    const uint32_t full = S::full(base, s);
    mbar_arrive_expect_tx(full, S::TX_BYTES);
#pragma unroll
    for (int kb = 0; kb < Cfg::KB; ++kb) {
      const int k0 = t * Cfg::BK + kb * 64;
      tma_load_2d(S::a(base, s) + kb * S::A_KBLOCK, &p.tma_a, full, k0, m0);
      tma_load_2d(S::b(base, s) + kb * S::B_KBLOCK, &p.tma_b, full, k0, n0);
    }
  };

  if (tid == 0) {
    prefetch_tmap(&p.tma_a);
    prefetch_tmap(&p.tma_b);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(S::full(base, s), 1);
      mbar_init(S::empty(base, s), 4);
    }
    fence_barrier_init();
  }
  __syncthreads();

  // Prologue: every stage gets a k tile (no waiting: nothing has used them yet).
  if (tid == 0) {
    for (int t = 0; t < STAGES && t < k_tiles; ++t) load(t, t);
  }
  __syncwarp();

  float acc[Cfg::MI][Cfg::BN / 2];
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
    for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;

  PipeState<STAGES> rd;  // the stage and pass of k tile t
  uint32_t prev_stage = 0;
  for (int t = 0; t < k_tiles; ++t) {
    mbar_wait(S::full(base, rd.stage), rd.phase);
    wgmma_fence();
    mma_stage<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(acc, S::a(base, rd.stage), S::b(base, rd.stage), 1u);
    wgmma_commit();
    wgmma_wait<1>();  // tile t-1's wgmmas are done (tile t's may still run)
    fence_regs(acc);
    if (t > 0) {
      // Release tile t-1's stage: each warp has seen its wgmmas complete.
      __syncwarp();
      if (lane == 0) mbar_arrive(S::empty(base, prev_stage));
      // Refill it with tile t-1+STAGES once all four warps have released it.
      const int next = t - 1 + STAGES;
      if (tid == 0 && next < k_tiles) {
        mbar_wait(S::empty(base, prev_stage), static_cast<uint32_t>((t - 1) / STAGES) & 1u);
        load(next, prev_stage);
      }
      __syncwarp();
    }
    prev_stage = rd.stage;
    rd.advance();
  }
  wgmma_wait<0>();
  fence_regs(acc);

  const bool fast = direct_fast<Cfg::BM, Cfg::BN>(p, m0, n0);
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
    store_block_direct<TOut, Cfg::BN>(acc[mi], p, m0 + mi * 64 + 16 * warp + lane / 4, n0 + 2 * (lane % 4), fast);
}

template <class Cfg, class Tag = void>
struct Step {
  static constexpr const char* name = "hopper.pipelined";

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
    if (tiles > INT32_MAX) return gc_fail(err, err_len, "hopper.pipelined: too many tiles for a 1-D grid");
    auto k = kernel<Cfg, TIn, TOut, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(tiles), 128, S::DYNAMIC, args->stream, 1, p));
    return gc_check_launch(err, err_len, name);
  }
};

// run, run_typed and occupancy of this step (hopper_common.cuh).
GC_HOPPER_STEP_ENTRIES(Step)

}  // namespace pipelined
}  // namespace hopper
}  // namespace gc
