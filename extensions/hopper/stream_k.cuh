// Step 10 -- hopper.stream_k: hopper.best's kernel (without clusters) with a data-parallel + stream-K schedule,
// for problems whose tiles leave the last wave part-empty.
//
// 8192 x 5120 in 128 x 256 tiles is 1280 tiles for 132 SMs: 9 full waves and a 10th of 92 tiles, so 40 SMs idle
// for a tenth of the run (prefill shapes of this kind read 92-95% of cuBLAS with hopper.best). Here the leftover
// tiles and one more wave are cut by k iterations over *every* CTA (stream_k_walk.cuh has the schedule and why
// no wait can block another): each CTA does the same number of k iterations, and the tiles its range splits are
// put together in-kernel. A contributor stores its f32 sums into its own workspace slot and raises its flag
// (release); the tile's finisher -- the CTA that has its first k iterations -- waits for each flag (acquire), adds
// the slots in CTA order (deterministic: the same sum on every run of one problem on one GPU) and runs the
// epilogue.
//
// Why from hopper.best and not from hopper.cluster: the TMA-store epilogue and scale-d = false are per tile, so a
// finisher uses them unchanged. Clusters are left out: the two CTAs of a cluster must walk the same k iterations
// of neighbouring tiles (one loads the B they share), which a per-CTA range of k iterations breaks.
//
// Residency: a finisher spins until its contributors have run their first segment, so they must be able to run
// while it waits. The grid is at most one CTA per SM (the shared memory allows no second one), and the launch is
// cooperative (cudaLaunchAttributeCooperative): the runtime refuses the launch, rather than letting it hang, if
// the grid could not be resident all at once.
//
// Workspace (NAME_workspace_bytes; 0 when the plan has no stream-K tile): `grid` int flags (zeroed by a
// cudaMemsetAsync before every launch: the harness's workspace is uninitialised memory), then one BM x BN f32 slot
// per CTA, in fragment order (each thread's accumulators as float4s, consecutive threads adjacent: coalesced, and
// no bounds to check, since contributor and finisher hold the same fragment of the same tile).
#pragma once

#include "hopper_common.cuh"
#include "stream_k_walk.cuh"

namespace gc {
namespace hopper {
namespace stream_k {

template <class Cfg, class TOut>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "stream_k needs at least two stages");
  static_assert(Cfg::CLUSTER_M == 1, "stream_k does not use clusters (a CTA's k range is its own)");
  using Epi = TmaStoreEpilogue<TOut, Cfg::BN>;
  using S = Smem<Cfg, Cfg::CONSUMERS * Epi::BYTES_PER_WG>;
  static constexpr int THREADS = 128 * (1 + Cfg::CONSUMERS);
  static constexpr int CONSUMER_THREADS = 128 * Cfg::CONSUMERS;
  static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
  static constexpr uint32_t SYNC_BAR = 3;  // named barrier of all consumer threads (1 and 2: the epilogue's)
  static constexpr size_t SLOT_FLOATS = static_cast<size_t>(Cfg::BM) * Cfg::BN;
};

// Workspace layout: flags, then 16-byte-aligned slots.
__host__ __device__ inline size_t flags_bytes(int grid) { return (static_cast<size_t>(grid) * 4 + 255) / 256 * 256; }
template <class Cfg>
__host__ __device__ inline size_t workspace_size(const Plan& plan) {
  return plan.sk_tiles > 0 ? flags_bytes(plan.grid) + static_cast<size_t>(plan.grid) * Cfg::BM * Cfg::BN * 4 : 0;
}

__device__ __forceinline__ void flag_release(int* flag) {
  asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" ::"l"(flag) : "memory");
}
__device__ __forceinline__ int flag_acquire(const int* flag) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

// One consumer thread's accumulators <-> its part of a slot (float4 index ((c * MI + mi) * BN/8 + j) * 128 + wt).
template <class Cfg>
__device__ __forceinline__ void slot_store(float4* slot, const float (&acc)[Cfg::MI][Cfg::BN / 2], int c, int wt) {
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
    for (int j = 0; j < Cfg::BN / 8; ++j)
      __stcg(slot + ((c * Cfg::MI + mi) * (Cfg::BN / 8) + j) * 128 + wt,
             make_float4(acc[mi][4 * j], acc[mi][4 * j + 1], acc[mi][4 * j + 2], acc[mi][4 * j + 3]));
}
template <class Cfg>
__device__ __forceinline__ void slot_add(const float4* slot, float (&acc)[Cfg::MI][Cfg::BN / 2], int c, int wt) {
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
    for (int j = 0; j < Cfg::BN / 8; ++j) {
      const float4 v = __ldcg(slot + ((c * Cfg::MI + mi) * (Cfg::BN / 8) + j) * 128 + wt);
      acc[mi][4 * j] += v.x, acc[mi][4 * j + 1] += v.y, acc[mi][4 * j + 2] += v.z, acc[mi][4 * j + 3] += v.w;
    }
}

template <class Cfg, class TIn, class TOut, bool TMA_STORE, class Tag>
__global__ void __launch_bounds__(Traits<Cfg, TOut>::THREADS, 1) kernel(const __grid_constant__ Params p, Plan plan,
                                                                         int* flags, float* slots) {
  using T = Traits<Cfg, TOut>;
  using S = typename T::S;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = align1024(smem_u32(smem));
  const int wg = warpgroup_index();

  if (threadIdx.x == 0) {
    prefetch_tmap(&p.tma_a);
    prefetch_tmap(&p.tma_b);
    if constexpr (TMA_STORE) prefetch_tmap(&p.tma_c);
    for (int s = 0; s < Cfg::STAGES; ++s) {
      mbar_init(S::full(base, s), 1);
      mbar_init(S::empty(base, s), 4 * Cfg::CONSUMERS);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    // ---- producer: the k iterations of each segment of this CTA's walk ----------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      PipeState<Cfg::STAGES> wr;
      Walk walk(plan, blockIdx.x);
      Segment seg;
      while (walk.next(seg)) {
        int tm, tn;
        grouped_raster(seg.tile, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
        const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
        for (int t = seg.kb; t < seg.ke; ++t) {
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
    // ---- consumers ----------------------------------------------------------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_inc<T::CONSUMER_REGS>();
    const int c = wg - 1;
    const int wt = threadIdx.x % 128, warp = wt / 32, lane = wt % 32;
    const int ct = threadIdx.x - 128;  // 0 .. CONSUMER_THREADS - 1
    const uint32_t a_rows = c * Cfg::WM * S::LINE;
    const uint32_t epi_bufs = base + S::EPI + c * T::Epi::BYTES_PER_WG;
    uint32_t slab_ctr = 0;

    // Defined once so the first wgmma's (ignored) accumulator inputs are not uninitialised values; every
    // segment then starts with scale-d = false.
    float acc[Cfg::MI][Cfg::BN / 2];
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
      for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;

    PipeState<Cfg::STAGES> rd;
    Walk walk(plan, blockIdx.x);
    Segment seg;
    while (walk.next(seg)) {
      int tm, tn;
      grouped_raster(seg.tile, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
      const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;

      uint32_t prev_stage = 0;
      for (int t = seg.kb; t < seg.ke; ++t) {
        mbar_wait(S::full(base, rd.stage), rd.phase);
        wgmma_fence();
        mma_stage<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(acc, S::a(base, rd.stage) + a_rows, S::b(base, rd.stage),
                                                      t > seg.kb ? 1u : 0u);
        wgmma_commit();
        wgmma_wait<1>();
        fence_regs(acc);
        if (t > seg.kb && lane == 0) mbar_arrive(S::empty(base, prev_stage));
        prev_stage = rd.stage;
        rd.advance();
      }
      wgmma_wait<0>();
      fence_regs(acc);
      if (lane == 0) mbar_arrive(S::empty(base, prev_stage));

      if (!seg.finisher()) {
        // Contributor: the partial sums into this CTA's slot, then (every consumer thread's stores ordered
        // before it by the barrier) one release of the flag. Nothing to store into C.
        slot_store<Cfg>(reinterpret_cast<float4*>(slots + blockIdx.x * T::SLOT_FLOATS), acc, c, wt);
        named_barrier_sync(T::SYNC_BAR, T::CONSUMER_THREADS);
        if (ct == 0) flag_release(flags + blockIdx.x);
        continue;
      }
      if (!seg.whole(plan.k_tiles)) {
        // Finisher of a split tile: the next CTAs' partials, in CTA (= k) order. One thread acquires each flag,
        // the barrier passes what it saw on to the others; then everyone reads the slot from L2.
        for (int cc = next_contributor(plan, seg.tile, blockIdx.x + 1); cc >= 0;
             cc = next_contributor(plan, seg.tile, cc + 1)) {
          if (ct == 0) {
            while (flag_acquire(flags + cc) == 0) {
            }
          }
          named_barrier_sync(T::SYNC_BAR, T::CONSUMER_THREADS);
          slot_add<Cfg>(reinterpret_cast<const float4*>(slots + cc * T::SLOT_FLOATS), acc, c, wt);
        }
      }

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
}

template <class Cfg, class Tag = void, int MODE = AUTO>
struct Step {
  static constexpr const char* name = "hopper.stream_k";
  static_assert(MODE >= AUTO && MODE <= STREAM_K, "schedule: AUTO, DATA_PARALLEL, HYBRID or STREAM_K");

  // The plan run() launches (tiles and k tiles as set_tiles computes them, the device's SM count).
  static Plan plan(const gc_gemm_args* args) {
    const int64_t tm = (args->m + Cfg::BM - 1) / Cfg::BM, tn = (args->n + Cfg::BN - 1) / Cfg::BN;
    const int64_t t = tm * tn;
    const int tiles = t > INT32_MAX ? INT32_MAX : static_cast<int>(t);
    return make_plan(tiles, static_cast<int>((args->k + Cfg::BK - 1) / Cfg::BK), device_sm_count(), MODE);
  }

  // gemm_abi.h NAME_workspace_bytes: the flags and slots when the plan has stream-K tiles, else 0.
  static size_t workspace_bytes(const gc_gemm_args* args) {
    if (!args || args->m <= 0 || args->n <= 0 || args->k <= 0) return 0;
    return workspace_size<Cfg>(plan(args));
  }

  template <class TIn, class TOut>
  static int occupancy(const gc_gemm_args*, gc_occupancy* out, char* err, size_t err_len) {
    return query_occupancy(kernel<Cfg, TIn, TOut, true, Tag>, Traits<Cfg, TOut>::THREADS,
                           Traits<Cfg, TOut>::S::DYNAMIC, out, err, err_len);
  }

  template <class TIn, class TOut>
  static int run(const gc_gemm_args* args, char* err, size_t err_len) {
    using T = Traits<Cfg, TOut>;
    using S = typename T::S;
    Params p;
    if (int rc = prepare<TIn, TOut, Tag>(args, name, p, err, err_len)) return rc < 0 ? 0 : rc;
    set_tiles<Cfg>(args, p);
    if (int rc = make_operand_maps<Cfg, TIn>(args, p, err, err_len)) return rc;
    if (static_cast<int64_t>(p.tiles_m) * p.tiles_n > INT32_MAX) return gc_fail(err, err_len, "hopper.stream_k: too many tiles");
    const Plan pl = plan(args);
    int* flags = nullptr;
    float* slots = nullptr;
    if (pl.sk_tiles > 0) {
      const size_t need = workspace_size<Cfg>(pl);
      if (!args->workspace || args->workspace_bytes < need || reinterpret_cast<uintptr_t>(args->workspace) % 16)
        return gc_fail(err, err_len, "hopper.stream_k: the workspace is missing, short or not 16-byte aligned");
      flags = static_cast<int*>(args->workspace);
      slots = reinterpret_cast<float*>(static_cast<char*>(args->workspace) + flags_bytes(pl.grid));
      GC_CHECK_CUDA(cudaMemsetAsync(flags, 0, static_cast<size_t>(pl.grid) * sizeof(int), args->stream));
    }

    // TMA store of C when its address and row stride allow it; the direct epilogue otherwise (as hopper.best).
    const bool tma_store = reinterpret_cast<uintptr_t>(args->c) % 16 == 0 && (args->ldc * sizeof(TOut)) % 16 == 0;
    if (tma_store) {
      if (int rc = make_tma_2d(&p.tma_c, TypeInfo<TOut>::tma, args->c, args->n, args->m, args->ldc * sizeof(TOut),
                               T::Epi::SLAB_COLS, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE, "C", err, err_len))
        return rc;
    }
    auto k = tma_store ? kernel<Cfg, TIn, TOut, true, Tag> : kernel<Cfg, TIn, TOut, false, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(pl.grid));
    cfg.blockDim = dim3(T::THREADS);
    cfg.dynamicSmemBytes = S::DYNAMIC;
    cfg.stream = args->stream;
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeCooperative;  // every CTA resident at once, or the launch fails (no hang)
    attr[0].val.cooperative = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pl.sk_tiles > 0 ? 1 : 0;  // data-parallel plans wait on nobody
    GC_CHECK_CUDA(cudaLaunchKernelEx(&cfg, k, p, pl, flags, slots));
    return gc_check_launch(err, err_len, name);
  }
};

template <class Cfg, class Tag = void, int MODE = AUTO>
int run(const gc_gemm_args* args, char* err, size_t err_len) {
  return dispatch_dtypes<Step<Cfg, Tag, MODE>>(args, Step<Cfg, Tag, MODE>::name, err, err_len);
}

template <class Cfg, class TIn, class TOut, class Tag = void, int MODE = AUTO>
int run_typed(const gc_gemm_args* args, char* err, size_t err_len) {
  return Step<Cfg, Tag, MODE>::template run<TIn, TOut>(args, err, err_len);
}

template <class Cfg, class Tag = void, int MODE = AUTO>
int occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return dispatch_dtypes<Step<Cfg, Tag, MODE>>(args, Step<Cfg, Tag, MODE>::name, err, err_len, out);
}

// NAME_workspace_bytes of an instantiation.
template <class Cfg, class Tag = void, int MODE = AUTO>
size_t workspace_bytes(const gc_gemm_args* args) {
  return Step<Cfg, Tag, MODE>::workspace_bytes(args);
}

}  // namespace stream_k
}  // namespace hopper
}  // namespace gc
