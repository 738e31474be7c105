// Step 6 -- hopper.best: the cluster kernel with a shared-memory + TMA-store epilogue and no zeroing.
//
// What it adds over cluster:
//   * Epilogue through shared memory: each consumer warpgroup writes its accumulators, 128-byte column
//     slabs at a time, into two swizzled 8 KB buffers of its own and one thread TMA-stores each slab
//     (TmaStoreEpilogue in hopper_common.cuh). Per slab that is a few st.shared per thread and one bulk
//     store, instead of 2 * BN/8 scattered global stores per thread and m64 block; the consumers go
//     back to the next tile's wgmmas while the stores drain (only a buffer's reuse waits for its store
//     to have read it). The TMA store clips at M and N. It needs C 16-byte aligned and ldc * sizeof(C)
//     a multiple of 16; otherwise the same kernel is built with the direct epilogue and chosen at run
//     time (TMA_STORE = false), so no shape is refused for C's sake.
//   * No zeroing of the accumulators per tile: the first k step of every tile issues its wgmmas with
//     scale-d = false (D = A*B), which overwrites whatever the previous tile left.
// Everything else (warp specialisation, setmaxnreg, persistent grouped raster, cluster multicast of B,
// the stage ring) is the cluster step's.
//
// Shared memory at the default 128x256x64, 4 stages, 2 consumers: 4 * 48 KB stages + 2 * 16 KB epilogue
// buffers + barriers + 1 KB alignment slack = 225 KB of the 227 KB.
#pragma once

#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace best {

template <class Cfg, class TOut>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "best needs at least two stages");
  using Epi = TmaStoreEpilogue<TOut, Cfg::BN>;
  using S = Smem<Cfg, Cfg::CONSUMERS * Epi::BYTES_PER_WG>;
  static constexpr int THREADS = 128 * (1 + Cfg::CONSUMERS);
  static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
  static constexpr int CM = Cfg::CLUSTER_M;
  static constexpr int B_SLICE_ROWS = Cfg::BN / CM;
  static constexpr uint16_t ALL_CTAS = static_cast<uint16_t>((1u << CM) - 1u);
};

template <class Cfg, class TIn, class TOut, bool TMA_STORE, class Tag>
__global__ void __launch_bounds__(Traits<Cfg, TOut>::THREADS, 1) kernel(const __grid_constant__ Params p) {
  using T = Traits<Cfg, TOut>;
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
    if constexpr (TMA_STORE) prefetch_tmap(&p.tma_c);
    for (int s = 0; s < Cfg::STAGES; ++s) {
      mbar_init(S::full(base, s), 1);
      mbar_init(S::empty(base, s), 4 * Cfg::CONSUMERS * CM);
    }
    fence_barrier_init();
  }
  if constexpr (CM > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  if (wg == 0) {
    // ---- producer (as in cluster) ----------------------------------------------------------------
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
    const uint32_t epi_bufs = base + S::EPI + c * T::Epi::BYTES_PER_WG;  // this warpgroup's two buffers
    uint32_t slab_ctr = 0;
    auto release = [&](uint32_t stage) {
      if constexpr (CM > 1) {
        if (lane < CM) mbar_arrive_cluster(S::empty(base, stage), static_cast<uint32_t>(lane));
      } else {
        if (lane == 0) mbar_arrive(S::empty(base, stage));
      }
    };

    // Defined once so the first wgmma's (ignored) accumulator inputs are not uninitialised values;
    // every tile then starts with scale-d = false instead of a zeroing pass.
    float acc[Cfg::MI][Cfg::BN / 2];
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
      for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;

    PipeState<Cfg::STAGES> rd;
    for (int ct = cluster_id; ct < ctiles; ct += clusters) {
      int ctm, tn;
      grouped_raster(ct, p.ctiles_m, p.tiles_n, Cfg::GROUP, ctm, tn);
      const int m0 = (ctm * CM + static_cast<int>(rank)) * Cfg::BM, n0 = tn * Cfg::BN;

      uint32_t prev_stage = 0;
      for (int t = 0; t < p.k_tiles; ++t) {
        mbar_wait(S::full(base, rd.stage), rd.phase);
        wgmma_fence();
        mma_stage<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(acc, S::a(base, rd.stage) + a_rows, S::b(base, rd.stage),
                                                      t > 0 ? 1u : 0u);
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

      if constexpr (TMA_STORE) {
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
          T::Epi::store_block(acc[mi], p, &p.tma_c, epi_bufs, slab_ctr, m0 + c * Cfg::WM + mi * 64, n0, wt,
                              1u + static_cast<uint32_t>(c));
      } else {
        const bool fast = direct_fast<Cfg::BM, Cfg::BN>(p, m0, n0);
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
          store_block_direct<TOut, Cfg::BN>(acc[mi], p, m0 + c * Cfg::WM + mi * 64 + 16 * warp + lane / 4,
                                            n0 + 2 * (lane % 4), fast);
      }
    }
    // The last TMA stores must have finished with their buffers before the CTA's shared memory goes away.
    if constexpr (TMA_STORE) {
      if (wt == 0) bulk_wait<0>();
    }
  }

  if constexpr (CM > 1) cluster_sync();
}

template <class Cfg, class Tag = void>
struct Step {
  static constexpr const char* name = "hopper.best";

  // The occupancy of the launch run() makes (gemm_abi.h NAME_occupancy): nothing is launched.
  template <class TIn, class TOut>
  static int occupancy(const gc_gemm_args*, gc_occupancy* out, char* err, size_t err_len) {
    return query_occupancy(kernel<Cfg, TIn, TOut, true, Tag>, Traits<Cfg, TOut>::THREADS, Traits<Cfg, TOut>::S::DYNAMIC, out, err, err_len);
  }

  template <class TIn, class TOut>
  static int run(const gc_gemm_args* args, char* err, size_t err_len) {
    using T = Traits<Cfg, TOut>;
    using S = typename T::S;
    Params p;
    if (int rc = prepare<TIn, TOut, Tag>(args, name, p, err, err_len)) return rc < 0 ? 0 : rc;
    set_tiles<Cfg>(args, p);
    if (int rc = make_operand_maps<Cfg, TIn>(args, p, err, err_len)) return rc;
    const int64_t ctiles = static_cast<int64_t>(p.ctiles_m) * p.tiles_n;
    if (ctiles * T::CM > INT32_MAX) return gc_fail(err, err_len, "hopper.best: too many tiles");

    // TMA store of C when its address and row stride allow it; the direct epilogue otherwise.
    const bool tma_store = reinterpret_cast<uintptr_t>(args->c) % 16 == 0 && (args->ldc * sizeof(TOut)) % 16 == 0;
    if (tma_store) {
      if (int rc = make_tma_2d(&p.tma_c, TypeInfo<TOut>::tma, args->c, args->n, args->m, args->ldc * sizeof(TOut),
                               T::Epi::SLAB_COLS, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE, "C", err, err_len))
        return rc;
    }
    auto k = tma_store ? kernel<Cfg, TIn, TOut, true, Tag> : kernel<Cfg, TIn, TOut, false, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    static int fit_cache[2][64] = {};  // per instantiation, epilogue variant and device
    const int fit = T::CM > 1 ? max_active_clusters(k, T::THREADS, S::DYNAMIC, T::CM, fit_cache[tma_store ? 1 : 0])
                              : device_sm_count();
    const int64_t clusters = ctiles < fit ? ctiles : (fit > 0 ? fit : 1);
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(clusters * T::CM), T::THREADS, S::DYNAMIC, args->stream, T::CM, p));
    return gc_check_launch(err, err_len, name);
  }
};

// run, run_typed and occupancy of this step (hopper_common.cuh).
GC_HOPPER_STEP_ENTRIES(Step)

}  // namespace best
}  // namespace hopper
}  // namespace gc
