// Step 5 -- hopper.cluster: clusters of CLUSTER_M CTAs along M sharing one B tile through TMA multicast.
//
// Persistent, warp-specialised as before. What it adds: the CTAs of a cluster compute the vertically
// adjacent tiles (CLUSTER_M * ctm + rank, tn) of one "cluster tile", which need the same B tile. Rather
// than each CTA loading all of B from L2, CTA `rank` loads rows [rank, rank + 1) * BN / CLUSTER_M of it and
// multicasts them into the same shared-memory offset of every CTA in the cluster (and signals each CTA's
// full barrier there). B traffic out of L2 drops by CLUSTER_M; A is still loaded per CTA.
//
// Synchronisation that the sharing needs:
//   * a stage may only be refilled when it is free in every CTA of the cluster, because this CTA's
//     multicast writes into all of them: empty[s] counts the releases of every consumer warp of the
//     cluster (4 * CONSUMERS * CLUSTER_M arrivals), each warp arriving on the barrier of each CTA
//     (mapa + mbarrier.arrive.release.cluster);
//   * each CTA's full[s] expects the whole stage (its A + all B slices), whoever sent them;
//   * the barriers are initialised before any CTA of the cluster can multicast into them (cluster
//     barrier after init), and no CTA exits while another can still arrive on its barriers or write its
//     shared memory (cluster barrier at the end, all threads).
// All CTAs of a cluster walk the same cluster tiles and k tiles, so every multicast lands in a stage its
// consumers will wait for. When tiles_m is not a multiple of CLUSTER_M the last cluster tile has CTAs
// past M: they load zeros for A, still send their B slice, and store nothing.
#pragma once

#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace cluster {

template <class Cfg>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "cluster needs at least two stages");
  using S = Smem<Cfg>;
  static constexpr int THREADS = 128 * (1 + Cfg::CONSUMERS);
  static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
  static constexpr int CM = Cfg::CLUSTER_M;
  static constexpr int B_SLICE_ROWS = Cfg::BN / CM;  // rows of B this CTA loads and multicasts
  static constexpr uint16_t ALL_CTAS = static_cast<uint16_t>((1u << CM) - 1u);
};

template <class Cfg, class TIn, class TOut, class Tag>
__global__ void __launch_bounds__(Traits<Cfg>::THREADS, 1) kernel(const __grid_constant__ Params p) {
  using T = Traits<Cfg>;
  using S = typename T::S;
  constexpr int CM = T::CM;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = align1024(smem_u32(smem));
  const int wg = warpgroup_index();
  const uint32_t rank = CM > 1 ? cluster_ctarank() : 0u;
  const int cluster_id = blockIdx.x / CM, clusters = gridDim.x / CM;
  const int ctiles = p.ctiles_m * p.tiles_n;

  if (threadIdx.x == 0) {
    prefetch_tmap(&p.tma_a);
    prefetch_tmap(&p.tma_b);
    for (int s = 0; s < Cfg::STAGES; ++s) {
      mbar_init(S::full(base, s), 1);
      mbar_init(S::empty(base, s), 4 * Cfg::CONSUMERS * CM);
    }
    fence_barrier_init();
  }
  if constexpr (CM > 1) {
    cluster_sync();  // every CTA's barriers exist before anyone multicasts into them
  } else {
    __syncthreads();
  }

  if (wg == 0) {
    // ---- producer: the whole first warp runs the loop (so it stays converged up to the final cluster
    // barrier); lane 0 issues. --------------------------------------------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x < 32) {
      const bool leader = threadIdx.x == 0;
      PipeState<Cfg::STAGES> wr;
      for (int ct = cluster_id; ct < ctiles; ct += clusters) {
        int ctm, tn;
        grouped_raster(ct, p.ctiles_m, p.tiles_n, Cfg::GROUP, ctm, tn);
        const int m0 = (ctm * CM + static_cast<int>(rank)) * Cfg::BM, n0 = tn * Cfg::BN;
        const int b_row = n0 + static_cast<int>(rank) * T::B_SLICE_ROWS;
        const uint32_t b_off = rank * T::B_SLICE_ROWS * S::LINE;
        for (int t = 0; t < p.k_tiles; ++t) {
          // Free in every CTA of the cluster (their consumers arrive here too).
          mbar_wait(S::empty(base, wr.stage), wr.phase ^ 1u);
          if (leader) {
            const uint32_t full = S::full(base, wr.stage);
            mbar_arrive_expect_tx(full, S::TX_BYTES);
#pragma unroll
            for (int kb = 0; kb < Cfg::KB; ++kb) {
              const int k0 = t * Cfg::BK + kb * 64;
              tma_load_2d(S::a(base, wr.stage) + kb * S::A_KBLOCK, &p.tma_a, full, k0, m0);
              if constexpr (CM > 1) {
                tma_load_2d_multicast(S::b(base, wr.stage) + kb * S::B_KBLOCK + b_off, &p.tma_b, full, k0, b_row,
                                      T::ALL_CTAS);
              } else {
                tma_load_2d(S::b(base, wr.stage) + kb * S::B_KBLOCK, &p.tma_b, full, k0, n0);
              }
            }
          }
          __syncwarp();
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
    // Release a stage: lane r of each warp arrives on CTA r's empty barrier.
    auto release = [&](uint32_t stage) {
      if constexpr (CM > 1) {
        if (lane < CM) mbar_arrive_cluster(S::empty(base, stage), static_cast<uint32_t>(lane));
      } else {
        if (lane == 0) mbar_arrive(S::empty(base, stage));
      }
    };

    float acc[Cfg::MI][Cfg::BN / 2];
    PipeState<Cfg::STAGES> rd;
    for (int ct = cluster_id; ct < ctiles; ct += clusters) {
      int ctm, tn;
      grouped_raster(ct, p.ctiles_m, p.tiles_n, Cfg::GROUP, ctm, tn);
      const int m0 = (ctm * CM + static_cast<int>(rank)) * Cfg::BM, n0 = tn * Cfg::BN;

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
        if (t > 0) release(prev_stage);
        prev_stage = rd.stage;
        rd.advance();
      }
      wgmma_wait<0>();
      fence_regs(acc);
      release(prev_stage);

      const bool fast = direct_fast<Cfg::BM, Cfg::BN>(p, m0, n0);
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
        store_block_direct<TOut, Cfg::BN>(acc[mi], p, m0 + c * Cfg::WM + mi * 64 + 16 * warp + lane / 4,
                                          n0 + 2 * (lane % 4), fast);
    }
  }

  // No CTA leaves while a peer may still arrive on its empty barriers (or multicast into it).
  if constexpr (CM > 1) cluster_sync();
}

template <class Cfg, class Tag = void>
struct Step {
  static constexpr const char* name = "hopper.cluster";

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
    const int64_t ctiles = static_cast<int64_t>(p.ctiles_m) * p.tiles_n;
    if (ctiles * T::CM > INT32_MAX) return gc_fail(err, err_len, "hopper.cluster: too many tiles");
    auto k = kernel<Cfg, TIn, TOut, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    static int fit_cache[64] = {0};  // per instantiation and device
    const int fit = T::CM > 1 ? max_active_clusters(k, T::THREADS, S::DYNAMIC, T::CM, fit_cache) : device_sm_count();
    const int64_t clusters = ctiles < fit ? ctiles : (fit > 0 ? fit : 1);
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(clusters * T::CM), T::THREADS, S::DYNAMIC, args->stream, T::CM, p));
    return gc_check_launch(err, err_len, name);
  }
};

// run, run_typed and occupancy of this step (hopper_common.cuh).
GC_HOPPER_STEP_ENTRIES(Step)

}  // namespace cluster
}  // namespace hopper
}  // namespace gc
