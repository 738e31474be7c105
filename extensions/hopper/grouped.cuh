// Step 9 -- hopper.grouped: one persistent launch for every group of a grouped GEMM (an MoE layer's experts).
//
//   C_g = alpha * A_g B_g + beta * C_g,  g = 0 .. groups-1, one N and K, each group its own M_g >= 0
//
// in gemm_abi.h's grouped form (ABI 4, GC_GROUPS_CONTIGUOUS): A [m, K] row-major with group g's rows
// group_offsets[g] .. group_offsets[g+1] - 1 (m = sum of the M_g), B [groups, N, K] (each group's B K-major,
// stride_b elements apart), C [m, N] row-major, stacked as A. A step off the persistent step (4): the same
// producer warpgroup, consumer warpgroups, stage ring and direct epilogue. What changes:
//
// * The tile space is every group's tiles, concatenated (grouped_walk.cuh): CTA b takes flat tiles b, b + grid,
//   ... and maps each to (group, tile row, tile column) with a forward-only cursor over the DEVICE offsets, the
//   prefix sum of tile counts computed as it goes (why the kernel and not the host: grouped_walk.cuh). Empty
//   groups have no tiles; the grid is min(tiles, SMs), the tiles counted from group_m_host when the harness hands
//   it, else bounded by floor(m / BM) + groups tile rows (the walk itself ends where the tiles end, so the grid
//   only has to be enough).
// * A is ONE 2-D tensor map over the whole stack {K, m}, not one per group. A tile of group g loads rows
//   row0_g + tm * BM .. + BM - 1 of the stack; in the group's last tile some of them may be the next group's rows
//   (or past m: zeros). Row r of the product depends on row r of A only, so those rows of the accumulators are
//   products nobody asked for, and the epilogue drops them: it stores rows below the group's end row only
//   (store_block_direct's m_end = offsets[g+1]). Why not per-group maps: they must be built on the host with
//   cuTensorMapEncodeTiled from the group's row offset, which lives on the device (a host round trip, or the
//   host counts, which may be NULL), and copied into device memory inside every timed launch -- or rewritten on the
//   device with tensormap.replace and fenced (CUTLASS's pointer-array way), machinery this step does not need:
//   the clip at the group's end is what makes a store into another group's rows impossible, and the clip is there
//   anyway for M not a multiple of BM.
// * B is ONE 3-D tensor map {K, N, groups} (row stride ldb, group stride stride_b): a box {64, BN, 1} at
//   (k0, n0, g) reads group g's weight only; columns past N are zero-filled inside the group (they cannot be the
//   next group's rows) and are not stored. The box lands in shared memory exactly as the 2-D box of the other
//   steps, so the wgmma descriptors are unchanged.
// * K == 0: C = beta * C on rows 0 .. m-1, which are exactly the groups' rows (empty groups own none); m == 0
//   (every group empty): nothing.
//
// * The epilogue of a tile wholly inside its group goes through shared memory and TMA stores (hopper.best's
//   TmaStoreEpilogue): the consumers write a slab into a swizzled buffer and go back to the next tile's wgmmas while
//   the store drains, instead of 2 * BN / 8 scattered global stores per thread and m64 block with the tensor cores
//   idle. A TMA box writes all its 64 rows below the map's M (the whole stack's), so a tile that reaches past its
//   group's end row would write the next group's rows: those tiles (a group's last, when M_g is not a multiple of
//   BM) keep the direct epilogue and its clip at m_end. Where it matters: at 16,384 tokens with K = 768-2,048 (Qwen3,
//   DeepSeek-V3 down) a tile's main loop is 12-32 k steps and the direct epilogue was a fifth of it; hopper.grouped
//   read 74-87% of the best library row there while CUTLASS's TMA-store epilogue read 102-110% (H100, 92f7279,
//   experiments/studies/moe-shapes/h100/bf16-92f7279). C not 16-byte aligned, or ldc * sizeof(C) not a multiple of
//   16: the same kernel with the direct epilogue everywhere (TMA_STORE = false), as in hopper.best.
// * No zeroing of the accumulators per tile: a tile's first k step issues its wgmmas with scale-d = false.
//
// The stage ring and its phases run on across tiles and across groups, as in the persistent step.
#pragma once

#include "grouped_walk.cuh"
#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace grouped {

template <class Cfg, class TOut>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "grouped needs at least two stages");
  static_assert(Cfg::CLUSTER_M == 1, "grouped does not use clusters (a cluster's CTAs would need tiles of one group)");
  using Epi = TmaStoreEpilogue<TOut, Cfg::BN>;
  using S = Smem<Cfg, Cfg::CONSUMERS * Epi::BYTES_PER_WG>;
  static constexpr int THREADS = 128 * (1 + Cfg::CONSUMERS);
  static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
};

template <class Cfg, class TIn, class TOut, bool TMA_STORE, class Tag>
__global__ void __launch_bounds__(Traits<Cfg, TOut>::THREADS, 1) kernel(const __grid_constant__ Params p) {
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
    // ---- producer ------------------------------------------------------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      TileWalk<Cfg::BM, Cfg::GROUP> walk(p.group_offsets, p.groups, p.tiles_n, p.m);
      PipeState<Cfg::STAGES> wr;
      GroupTile tile;
      for (int64_t t = blockIdx.x; walk.seek(t, tile); t += gridDim.x) {
        const int m0 = tile.row0 + tile.tm * Cfg::BM, n0 = tile.tn * Cfg::BN;
        for (int kt = 0; kt < p.k_tiles; ++kt) {
          mbar_wait(S::empty(base, wr.stage), wr.phase ^ 1u);
          const uint32_t full = S::full(base, wr.stage);
          mbar_arrive_expect_tx(full, S::TX_BYTES);
#pragma unroll
          for (int kb = 0; kb < Cfg::KB; ++kb) {
            const int k0 = kt * Cfg::BK + kb * 64;
            tma_load_2d(S::a(base, wr.stage) + kb * S::A_KBLOCK, &p.tma_a, full, k0, m0);
            tma_load_3d(S::b(base, wr.stage) + kb * S::B_KBLOCK, &p.tma_b, full, k0, n0, tile.group);
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
    const uint32_t epi_bufs = base + S::EPI + c * T::Epi::BYTES_PER_WG;  // this warpgroup's two buffers
    uint32_t slab_ctr = 0;

    // Defined once so the first wgmma's (ignored) accumulator inputs are not uninitialised values; every tile then
    // starts with scale-d = false instead of a zeroing pass.
    float acc[Cfg::MI][Cfg::BN / 2];
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
      for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;
    PipeState<Cfg::STAGES> rd;
    TileWalk<Cfg::BM, Cfg::GROUP> walk(p.group_offsets, p.groups, p.tiles_n, p.m);
    GroupTile tile;
    for (int64_t t = blockIdx.x; walk.seek(t, tile); t += gridDim.x) {
      const int m0 = tile.row0 + tile.tm * Cfg::BM, n0 = tile.tn * Cfg::BN;
      const int m_end = tile.row0 + tile.rows;  // the group's end: no row at or past it is stored

      uint32_t prev_stage = 0;
      for (int kt = 0; kt < p.k_tiles; ++kt) {
        mbar_wait(S::full(base, rd.stage), rd.phase);
        wgmma_fence();
        mma_stage<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(acc, S::a(base, rd.stage) + a_rows, S::b(base, rd.stage),
                                                      kt > 0 ? 1u : 0u);
        wgmma_commit();
        wgmma_wait<1>();
        fence_regs(acc);
        if (kt > 0 && lane == 0) mbar_arrive(S::empty(base, prev_stage));
        prev_stage = rd.stage;
        rd.advance();
      }
      wgmma_wait<0>();
      fence_regs(acc);
      if (lane == 0) mbar_arrive(S::empty(base, prev_stage));  // the next tile's loads may use it

      // Whole: every row of the tile is its group's (the same for all threads: the choice is the tile's).
      const bool whole = m0 + Cfg::BM <= m_end;
      if (TMA_STORE && whole) {
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
          T::Epi::store_block(acc[mi], p, &p.tma_c, epi_bufs, slab_ctr, m0 + c * Cfg::WM + mi * 64, n0, wt,
                              1u + static_cast<uint32_t>(c));
      } else {
        // The fast path (unguarded vector stores) only for a tile wholly inside its group and C.
        const bool fast = p.c_vec2 && !p.read_c && whole && n0 + Cfg::BN <= p.n;
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
          store_block_direct<TOut, Cfg::BN>(acc[mi], p, m0 + c * Cfg::WM + mi * 64 + 16 * warp + lane / 4,
                                            n0 + 2 * (lane % 4), fast, m_end);
      }
    }
    // The last TMA stores must have finished with their buffers before the CTA's shared memory goes away.
    if constexpr (TMA_STORE) {
      if (wt == 0) bulk_wait<0>();
    }
  }
}

// The 3-D map of B: {K, N, groups}, rows ldb elements apart, groups stride_b apart, boxes {one 128-byte line of K
// (64 16-bit elements, 128 FP8 ones: grouped_fp8.cuh), BN, 1}.
template <class Cfg, class TIn>
int make_grouped_b_map(const gc_gemm_args* a, Params& p, char* err, size_t err_len) {
  const EncodeTiledFn encode = encode_tiled_fn();
  if (!encode) return gc_fail(err, err_len, "hopper: cuTensorMapEncodeTiled is not available from the driver (driver too old?)");
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(a->k), static_cast<cuuint64_t>(a->n),
                              static_cast<cuuint64_t>(a->groups)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(a->ldb) * sizeof(TIn),
                                 static_cast<cuuint64_t>(a->stride_b) * sizeof(TIn)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(128 / sizeof(TIn)), static_cast<cuuint32_t>(Cfg::BN), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult rc = encode(&p.tma_b, TypeInfo<TIn>::tma, 3, const_cast<void*>(a->b), dims, strides, box, elem_strides,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    char msg[256];
    snprintf(msg, sizeof msg, "hopper.grouped: cuTensorMapEncodeTiled failed for B (CUresult %d): dims {%lld, %lld, %lld}, "
             "strides %lld, %lld B", static_cast<int>(rc), static_cast<long long>(a->k), static_cast<long long>(a->n),
             static_cast<long long>(a->groups), static_cast<long long>(a->ldb * sizeof(TIn)),
             static_cast<long long>(a->stride_b * sizeof(TIn)));
    return gc_fail(err, err_len, msg);
  }
  return 0;
}

// What both grouped steps (this one and grouped_fp8.cuh) set up after prepare(): the tile counts, the device offsets,
// A's 2-D map over the whole stack {K, m} and B's 3-D map {K, N, groups} (boxes of one 128-byte line of K), and the
// persistent grid, min(tiles, SMs) CTAs; 0 when no group has a tile (nothing to launch).
template <class Cfg, class TIn>
int map_groups(const gc_gemm_args* args, Params& p, int64_t& grid, char* err, size_t err_len) {
  set_tiles<Cfg>(args, p);  // k_tiles and tiles_n (tiles_m is the whole stack's: unused here)
  p.group_offsets = args->group_offsets;
  p.groups = static_cast<int>(args->groups);
  if (int rc = make_tma_2d(&p.tma_a, TypeInfo<TIn>::tma, args->a, args->k, args->m, args->lda * sizeof(TIn),
                           128 / sizeof(TIn), Cfg::BM, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "A", err, err_len))
    return rc;
  if (int rc = make_grouped_b_map<Cfg, TIn>(args, p, err, err_len)) return rc;
  const int64_t tiles = args->group_m_host ? total_tiles<Cfg::BM>(args->group_m_host, args->groups, p.tiles_n)
                                           : tiles_bound<Cfg::BM>(args->m, args->groups, p.tiles_n);
  const int sms = device_sm_count();
  grid = tiles == 0 ? 0 : tiles < sms ? tiles : (sms > 0 ? sms : 1);
  return 0;
}

// What the grouped form must hold before anything else is read (the dense checks follow in prepare()).
template <class Cfg>
int check_groups(const gc_gemm_args* a, const char* name, char* err, size_t err_len) {
  char msg[320];
  if (!a) return gc_fail(err, err_len, "null arguments");
  if (!gc_is_grouped(a)) {
    snprintf(msg, sizeof msg, "%s: grouped problems only (groups > 0); hopper.persistent runs one dense GEMM", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->group_layout != GC_GROUPS_CONTIGUOUS) {
    snprintf(msg, sizeof msg, "%s: the contiguous group layout only (GC_GROUPS_CONTIGUOUS)", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->group_offsets == nullptr) {
    snprintf(msg, sizeof msg, "%s: group_offsets is null", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->groups > INT32_MAX || gc_batch(a) != 1) {
    snprintf(msg, sizeof msg, "%s: at most 2^31 - 1 groups, and no batch of grouped problems", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->group_m_host) {  // the host counts, when handed: each >= 0, summing to m (the device offsets cannot be read)
    int64_t rows = 0;
    for (int64_t g = 0; g < a->groups; ++g) {
      if (a->group_m_host[g] < 0) {
        snprintf(msg, sizeof msg, "%s: group %lld has M = %lld", name, static_cast<long long>(g),
                 static_cast<long long>(a->group_m_host[g]));
        return gc_fail(err, err_len, msg);
      }
      rows += a->group_m_host[g];
    }
    if (rows != a->m) {
      snprintf(msg, sizeof msg, "%s: group_m_host sums to %lld, m is %lld", name, static_cast<long long>(rows),
               static_cast<long long>(a->m));
      return gc_fail(err, err_len, msg);
    }
  }
  // B's groups: 16-byte-aligned group starts for TMA, and no group's weight overlapping the next.
  if (a->stride_b < a->n * a->ldb || a->stride_b % 8) {
    snprintf(msg, sizeof msg, "%s: stride_b = %lld must be at least n * ldb = %lld and a multiple of 8 elements (16 bytes)",
             name, static_cast<long long>(a->stride_b), static_cast<long long>(a->n * a->ldb));
    return gc_fail(err, err_len, msg);
  }
  // Tile rows start at row0 + tm * BM < m + BM (a TMA coordinate: int32), and flat tile indices stay below 2^31.
  const int64_t tiles_n = (a->n + Cfg::BN - 1) / Cfg::BN;
  if (a->m > INT32_MAX - Cfg::BM || tiles_bound<Cfg::BM>(a->m, a->groups, static_cast<int>(tiles_n)) > INT32_MAX) {
    snprintf(msg, sizeof msg, "%s: too many rows or tiles (m = %lld, %lld groups)", name, static_cast<long long>(a->m),
             static_cast<long long>(a->groups));
    return gc_fail(err, err_len, msg);
  }
  return 0;
}

template <class Cfg, class Tag = void>
struct Step {
  static constexpr const char* name = "hopper.grouped";

  // The occupancy of the launch run() makes (gemm_abi.h NAME_occupancy): nothing is launched.
  template <class TIn, class TOut>
  static int occupancy(const gc_gemm_args*, gc_occupancy* out, char* err, size_t err_len) {
    return query_occupancy(kernel<Cfg, TIn, TOut, true, Tag>, Traits<Cfg, TOut>::THREADS, Traits<Cfg, TOut>::S::DYNAMIC,
                           out, err, err_len);
  }

  template <class TIn, class TOut>
  static int run(const gc_gemm_args* args, char* err, size_t err_len) {
    using T = Traits<Cfg, TOut>;
    using S = typename T::S;
    if (int rc = check_groups<Cfg>(args, name, err, err_len)) return rc;
    Params p;
    // Layout, types, math, dimensions, K == 0 (C = beta * C over every group's rows), TMA alignment of A and B.
    if (int rc = prepare<TIn, TOut, Tag>(args, name, p, err, err_len)) return rc < 0 ? 0 : rc;
    // A: the whole stack {K, m}, boxes {64, BM}; B: {K, N, groups}, boxes {64, BN, 1}; the grid.
    int64_t grid = 0;
    if (int rc = map_groups<Cfg, TIn>(args, p, grid, err, err_len)) return rc;
    if (grid == 0) return 0;
    // TMA stores of whole tiles when C's address and row stride allow it (the whole stack {N, m}, boxes of 128 bytes
    // of columns by 64 rows); the direct epilogue everywhere otherwise.
    const bool tma_store = reinterpret_cast<uintptr_t>(args->c) % 16 == 0 && (args->ldc * sizeof(TOut)) % 16 == 0;
    if (tma_store) {
      if (int rc = make_tma_2d(&p.tma_c, TypeInfo<TOut>::tma, args->c, args->n, args->m, args->ldc * sizeof(TOut),
                               T::Epi::SLAB_COLS, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE, "C", err, err_len))
        return rc;
    }
    auto k = tma_store ? kernel<Cfg, TIn, TOut, true, Tag> : kernel<Cfg, TIn, TOut, false, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(grid), T::THREADS, S::DYNAMIC, args->stream, 1, p));
    return gc_check_launch(err, err_len, name);
  }
};

// run, run_typed and occupancy of this step (hopper_common.cuh).
GC_HOPPER_STEP_ENTRIES(Step)

}  // namespace grouped
}  // namespace hopper
}  // namespace gc
