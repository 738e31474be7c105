// Step 4 -- hopper.persistent: one CTA per SM, each walking many tiles.
//
// Same warpgroups, barriers and registers as warp_specialized. What it adds: the grid is
// min(tiles, SMs) CTAs and CTA b takes tiles b, b + grid, b + 2*grid, ... of the grouped raster order
// (GROUP tile rows walked column by column, so the tiles in flight at one time share panels of A and B in
// L2). Producer and consumers walk the same sequence independently, and the stage ring and its phases
// run on across tiles: while the consumers store tile i, the producer is already filling the free
// stages with tile i+1's first k tiles, so the epilogue overlaps loads instead of a whole CTA's
// start-up (launch, barrier init, pipeline fill) as in the previous steps.
//
// Consumers now also release the last stage of each tile (the producer reuses it for the next tile).
#pragma once

#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace persistent {

template <class Cfg>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "persistent needs at least two stages");
  static_assert(Cfg::CLUSTER_M == 1, "persistent does not use clusters (the cluster step adds them)");
  using S = Smem<Cfg>;
  static constexpr int THREADS = 128 * (1 + Cfg::CONSUMERS);
  static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
};

template <class Cfg, class TIn, class TOut, class Tag>
__global__ void __launch_bounds__(Traits<Cfg>::THREADS, 1) kernel(const __grid_constant__ Params p) {
  using T = Traits<Cfg>;
  using S = typename T::S;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = align1024(smem_u32(smem));
  const int wg = warpgroup_index();
  const int tiles = p.tiles_m * p.tiles_n;

  if (threadIdx.x == 0) {
    prefetch_tmap(&p.tma_a);
    prefetch_tmap(&p.tma_b);
    for (int s = 0; s < Cfg::STAGES; ++s) {
      mbar_init(S::full(base, s), 1);
      mbar_init(S::empty(base, s), 4 * Cfg::CONSUMERS);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    // ---- producer ------------------------------------------------------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      PipeState<Cfg::STAGES> wr;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int tm, tn;
        grouped_raster(tile, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
        const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
        for (int t = 0; t < p.k_tiles; ++t) {
          mbar_wait(S::empty(base, wr.stage), wr.phase ^ 1u);
          const uint32_t full = S::full(base, wr.stage);
          mbar_arrive_expect_tx(full, S::TX_BYTES);
#pragma unroll
          for (int kb = 0; kb < Cfg::KB; ++kb) {
            const int k0 = t * Cfg::BK + kb * 64;
            tma_load_2d(S::a(base, wr.stage) + kb * S::A_KBLOCK, &p.tma_a, full, k0, m0);
            tma_load_2d(S::b(base, wr.stage) + kb * S::B_KBLOCK, &p.tma_b, full, k0, n0);
          }
          wr.advance();
        }
      }
    }
  } else {
    // ---- consumers -----------------------------------------------------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_inc<T::CONSUMER_REGS>();
    const int c = wg - 1;
    const int wt = threadIdx.x % 128, warp = wt / 32, lane = wt % 32;
    const uint32_t a_rows = c * Cfg::WM * S::LINE;

    float acc[Cfg::MI][Cfg::BN / 2];
    PipeState<Cfg::STAGES> rd;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int tm, tn;
      grouped_raster(tile, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
      const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;

#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
        for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;

      uint32_t prev_stage = 0;
      for (int t = 0; t < p.k_tiles; ++t) {
        mbar_wait(S::full(base, rd.stage), rd.phase);
        wgmma_fence();
        mma_stage<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(acc, S::a(base, rd.stage) + a_rows, S::b(base, rd.stage), 1u);
        wgmma_commit();
        wgmma_wait<1>();
        fence_regs(acc);
        if (t > 0 && lane == 0) mbar_arrive(S::empty(base, prev_stage));
        prev_stage = rd.stage;
        rd.advance();
      }
      wgmma_wait<0>();
      fence_regs(acc);
      if (lane == 0) mbar_arrive(S::empty(base, prev_stage));  // the next tile's loads may use it

      const bool fast = direct_fast<Cfg::BM, Cfg::BN>(p, m0, n0);
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
        store_block_direct<TOut, Cfg::BN>(acc[mi], p, m0 + c * Cfg::WM + mi * 64 + 16 * warp + lane / 4,
                                          n0 + 2 * (lane % 4), fast);
    }
  }
}

template <class Cfg, class Tag = void>
struct Step {
  static constexpr const char* name = "hopper.persistent";

  // The occupancy of the launch run() makes (gemm_abi.h NAME_occupancy): nothing is launched.
  template <class TIn, class TOut>
  static int occupancy(const gc_gemm_args*, gc_occupancy* out, char* err, size_t err_len) {
    return query_occupancy(kernel<Cfg, TIn, TOut, Tag>, Traits<Cfg>::THREADS, Traits<Cfg>::S::DYNAMIC, out, err, err_len);
  }

  template <class TIn, class TOut>
  static int run(const gc_gemm_args* args, char* err, size_t err_len) {
    using T = Traits<Cfg>;
    using S = typename T::S;
    Params p;
    if (int rc = prepare<TIn, TOut, Tag>(args, name, p, err, err_len)) return rc < 0 ? 0 : rc;
    set_tiles<Cfg>(args, p);
    if (int rc = make_operand_maps<Cfg, TIn>(args, p, err, err_len)) return rc;
    const int64_t tiles = static_cast<int64_t>(p.tiles_m) * p.tiles_n;
    if (tiles > INT32_MAX) return gc_fail(err, err_len, "hopper.persistent: too many tiles");
    const int sms = device_sm_count();
    const int64_t grid = tiles < sms ? tiles : (sms > 0 ? sms : 1);
    auto k = kernel<Cfg, TIn, TOut, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(grid), T::THREADS, S::DYNAMIC, args->stream, 1, p));
    return gc_check_launch(err, err_len, name);
  }
};

// run, run_typed and occupancy of this step (hopper_common.cuh).
GC_HOPPER_STEP_ENTRIES(Step)

}  // namespace persistent
}  // namespace hopper
}  // namespace gc
