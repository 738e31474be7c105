// Step 3 -- hopper.warp_specialized: a producer warpgroup and CONSUMERS math warpgroups.
//
// Block = (1 + CONSUMERS) warpgroups; still one CTA per tile. What it adds over pipelined:
//   warpgroup 0 (producer): one thread does nothing but wait for a free stage (empty[s]) and TMA-load
//       the next k tile into it; it never waits for the math, so the ring stays as full as it can be.
//   warpgroups 1.. (consumers): consumer c owns rows [c*WM, (c+1)*WM) of the tile and all BN columns;
//       per k tile it waits for full[s], issues its wgmmas, and releases the previous stage (one arrival
//       per warp on empty[s], after its own wgmma.wait_group 1: count = 4 * CONSUMERS).
// With two consumers on a 128 x 256 tile each warpgroup issues m64n256k16 -- the widest wgmma, which
// reads the least shared memory per flop -- and while one waits for a barrier the other's wgmmas keep
// the tensor core busy.
//
// Registers: the block is launched with the 65536 / 384 = 168 registers per thread that
// __launch_bounds__(384, 1) allows. The producer needs few, the consumers hold 128 accumulators each,
// so with two consumers the producer gives registers back (setmaxnreg.dec 40) and the consumers take
// them (setmaxnreg.inc 232): 128 * 40 + 256 * 232 = 64512 <= 65536. (One consumer: 256 threads get
// 255 registers each at launch, enough for everyone; no setmaxnreg.)
#pragma once

#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace warp_specialized {

template <class Cfg>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "warp_specialized needs at least two stages");
  static_assert(Cfg::CLUSTER_M == 1, "warp_specialized does not use clusters");
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

  int tm, tn;
  grouped_raster(blockIdx.x, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
  const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;

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
      for (int t = 0; t < p.k_tiles; ++t) {
        mbar_wait(S::empty(base, wr.stage), wr.phase ^ 1u);  // first pass: returns at once
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
  } else {
    // ---- consumers -----------------------------------------------------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_inc<T::CONSUMER_REGS>();
    const int c = wg - 1;
    const int wt = threadIdx.x % 128, warp = wt / 32, lane = wt % 32;
    const uint32_t a_rows = c * Cfg::WM * S::LINE;  // this warpgroup's rows inside an A k block

    float acc[Cfg::MI][Cfg::BN / 2];
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
      for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;

    PipeState<Cfg::STAGES> rd;
    uint32_t prev_stage = 0;
    for (int t = 0; t < p.k_tiles; ++t) {
      mbar_wait(S::full(base, rd.stage), rd.phase);
      wgmma_fence();
      mma_stage<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(acc, S::a(base, rd.stage) + a_rows, S::b(base, rd.stage), 1u);
      wgmma_commit();
      wgmma_wait<1>();  // tile t-1's wgmmas are done
      fence_regs(acc);
      if (t > 0 && lane == 0) mbar_arrive(S::empty(base, prev_stage));
      prev_stage = rd.stage;
      rd.advance();
    }
    wgmma_wait<0>();
    fence_regs(acc);
    // (No release of the last stage: nothing is loaded after it in this CTA.)

    const bool fast = direct_fast<Cfg::BM, Cfg::BN>(p, m0, n0);
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
      store_block_direct<TOut, Cfg::BN>(acc[mi], p, m0 + c * Cfg::WM + mi * 64 + 16 * warp + lane / 4,
                                        n0 + 2 * (lane % 4), fast);
  }
}

template <class Cfg, class Tag = void>
struct Step {
  static constexpr const char* name = "hopper.warp_specialized";

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
    if (tiles > INT32_MAX) return gc_fail(err, err_len, "hopper.warp_specialized: too many tiles for a 1-D grid");
    auto k = kernel<Cfg, TIn, TOut, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(tiles), T::THREADS, S::DYNAMIC, args->stream, 1, p));
    return gc_check_launch(err, err_len, name);
  }
};

// run, run_typed and occupancy of this step (hopper_common.cuh).
GC_HOPPER_STEP_ENTRIES(Step)

}  // namespace warp_specialized
}  // namespace hopper
}  // namespace gc
