// Step 11 -- hopper.grouped_fp8: a grouped GEMM (an MoE layer's experts) with FP8 inputs and block scales, the
// DeepSeek-V3 recipe, in one persistent launch: hopper.grouped's walk over every group's tiles with hopper.fp8's
// promotion.
//
//   C_g = alpha * (A_g,q * scale_a) (B_g,q * scale_b) + beta * C_g,  g = 0 .. groups-1
//
// in gemm_abi.h's grouped form (ABI 4, GC_GROUPS_CONTIGUOUS) with its grouped FP8 scales (GC_SCALING_BLOCK, the
// only scaling the ABI defines for grouped problems): scale_a [m, kb] with A's stacked rows (1 x 128 of K each),
// scale_b [groups, kb, nb] (128 x 128 blocks of each group's weight), kb = ceil(K/128), nb = ceil(N/128).
//
// From hopper.grouped (grouped.cuh): the flat tile space of every group's tiles and the forward-only walk over the
// device offsets (grouped_walk.cuh), ONE 2-D map of A over the whole stack (a group's last tile may load the next
// group's rows; they are never stored), ONE 3-D map of B {K, N, groups} (boxes {128, BN, 1}: one 128-byte line of
// FP8), and its epilogue: whole tiles store through shared memory and TMA (hopper.best's TmaStoreEpilogue), a
// group's last tile when it reaches past the group's end row stores directly, clipped there. From hopper.fp8
// (fp8.cuh): BK = 128, one stage per k block of the scales; each stage's wgmmas go into fresh partial sums, which
// are waited for and added into the FP32 sums times their block scales (scale_a of the thread's two rows at that k
// block, scale_b of the tile's column block in its group): strict FP32 accumulation, as the `e4m3_*_block` contracts
// ask. A tile's columns lie in one 128-wide scale block (BN <= 128), or it is 256 wide and promoted per 128-column
// half (HalfN below). A row of the tile past its group's end reads another group's (or the last row's) scale_a: its
// sums are never stored.
//
// Why its own step and not a mode of hopper.grouped: the FP8 loop (acc and part, two register sets, a wait every
// stage) and the scale loads are fp8.cuh's, the walk and maps grouped.cuh's; this file joins the two and adds only
// the group's scale_b offset.
#pragma once

#include "fp8.cuh"
#include "grouped.cuh"

namespace gc {
namespace hopper {
namespace grouped_fp8 {

using fp8::mma_stage_fp8;

// fp8.cuh's traits, the TMA-store epilogue's buffers included (6 stages of 128x128x128 and both consumers' buffers:
// 230,496 B of the 232,448 a block may have).
using fp8::Traits;

// A tile wider than one 128-column scale block (BN = 256) is promoted per 128-column half: each half's wgmmas go into
// one 64x128 partial set, which is waited for and added into the half's sums times the half's own scale_b. The
// sums of 64 x 256 and one partial set of 64 x 128 are 192 registers a thread, where two full partial sets (or a
// 64x256 one) would be 256; the tile loads a third less A and B per product than two 128x128 tiles. The halves of
// one consumer run one after the other (a wait between them), the other consumer's wgmmas filling the tensor core.
template <class Cfg>
struct HalfN : Cfg {  // the configuration one half's wgmmas see: mma_stage_fp8 over 128 columns
  static constexpr int BN = 128;
};
template <class Cfg>
constexpr int halves() {
  return Cfg::BN > 128 ? Cfg::BN / 128 : 1;
}

template <class Cfg, class TIn, class TOut, bool OVERLAP, bool TMA_STORE, class Tag>
__global__ void __launch_bounds__(Traits<Cfg, TOut>::THREADS, 1) kernel(const __grid_constant__ Params p) {
  using T = Traits<Cfg, TOut>;
  using S = typename T::S;
  constexpr int HALVES = halves<Cfg>(), PN = Cfg::BN / HALVES;  // a partial set's columns
  static_assert(Cfg::BN <= 128 || Cfg::BN % 128 == 0, "block scales: a tile lies in one 128-wide scale block, or "
                "is whole blocks promoted one at a time");
  static_assert(Cfg::ACC + Cfg::MI * PN / 2 <= T::SETS_MAX, "the sums and a partial set (f32 per consumer thread)");
  static_assert(!OVERLAP || (HALVES == 1 && 3 * Cfg::ACC <= T::SETS_MAX),
                "overlap keeps acc and two partial sets: BN <= 128");
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
    // ---- producer: grouped.cuh's, one box of A and one of B per stage (BK = one line of FP8) ------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      grouped::TileWalk<Cfg::BM, Cfg::GROUP> walk(p.group_offsets, p.groups, p.tiles_n, p.m);
      PipeState<Cfg::STAGES> wr;
      grouped::GroupTile tile;
      for (int64_t t = blockIdx.x; walk.seek(t, tile); t += gridDim.x) {
        const int m0 = tile.row0 + tile.tm * Cfg::BM, n0 = tile.tn * Cfg::BN;
        for (int kt = 0; kt < p.k_tiles; ++kt) {
          mbar_wait(S::empty(base, wr.stage), wr.phase ^ 1u);
          const uint32_t full = S::full(base, wr.stage);
          mbar_arrive_expect_tx(full, S::TX_BYTES);
          tma_load_2d(S::a(base, wr.stage), &p.tma_a, full, kt * Cfg::BK, m0);
          tma_load_3d(S::b(base, wr.stage), &p.tma_b, full, kt * Cfg::BK, n0, tile.group);
          wr.advance();
        }
      }
    }
  } else {
    // ---- consumers: fp8.cuh's promoting loop with block scales, grouped.cuh's clipped epilogue -------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_inc<T::CONSUMER_REGS>();
    const int c = wg - 1;
    const int wt = threadIdx.x % 128, warp = wt / 32, lane = wt % 32;
    const uint32_t a_rows = c * Cfg::WM * S::LINE;
    const int k_blocks = p.k_tiles;                   // one 128-wide k block of the scales per stage
    const int64_t n_blocks = (p.n + 127) / 128;
    const int row_base = c * Cfg::WM + 16 * warp + lane / 4;  // + m0 + 64 mi + 8 i: this thread's rows
    const uint32_t epi_bufs = base + S::EPI + c * T::Epi::BYTES_PER_WG;  // this warpgroup's two buffers
    uint32_t slab_ctr = 0;

    float acc[Cfg::MI][Cfg::BN / 2];  // FP32 sums
    float part[Cfg::MI][PN / 2];      // one stage's (or one half's) sums from the tensor core
    float part2[OVERLAP ? Cfg::MI : 1][OVERLAP ? Cfg::BN / 2 : 1];  // OVERLAP: the next stage's, meanwhile
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
      for (int r = 0; r < PN / 2; ++r) part[mi][r] = 0.f;  // defined once: each stage's first wgmma ignores it
    if constexpr (OVERLAP) {
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
        for (int r = 0; r < Cfg::BN / 2; ++r) part2[mi][r] = 0.f;
    }

    PipeState<Cfg::STAGES> rd;
    // Issue one stage's wgmmas into `into` (it waits for the stage's bytes first); returns the stage.
    auto issue = [&](float (&into)[Cfg::MI][Cfg::BN / 2]) {
      const uint32_t stage = rd.stage;
      mbar_wait(S::full(base, stage), rd.phase);
      wgmma_fence();
      mma_stage_fp8<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(into, S::a(base, stage) + a_rows, S::b(base, stage), 0u);
      wgmma_commit();
      rd.advance();
      return stage;
    };
    grouped::TileWalk<Cfg::BM, Cfg::GROUP> walk(p.group_offsets, p.groups, p.tiles_n, p.m);
    grouped::GroupTile tile;
    for (int64_t t = blockIdx.x; walk.seek(t, tile); t += gridDim.x) {
      const int m0 = tile.row0 + tile.tm * Cfg::BM, n0 = tile.tn * Cfg::BN;
      const int m_end = tile.row0 + tile.rows;  // the group's end: no row at or past it is stored
      const float* scale_b = p.scale_b + static_cast<int64_t>(tile.group) * k_blocks * n_blocks + n0 / 128;
      // a half past N (N not a multiple of 256) reads the last block's scale: its columns are never stored
      const int last_half = static_cast<int>(min(static_cast<int64_t>(HALVES), n_blocks - n0 / 128)) - 1;
      const float* scale_a[Cfg::MI][2];  // the scales of this thread's two rows of each m64 block (i = 0, 1)
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int row = min(m0 + row_base + mi * 64 + 8 * i, p.m - 1);  // past the stack: any valid scale
          scale_a[mi][i] = p.scale_a + static_cast<int64_t>(row) * k_blocks;
        }
      // block kb's scales of this thread's rows and the tile's column block in its group
      auto load_scales = [&](int kb) {
        fp8::BlockScales<Cfg::MI, HALVES> s;
#pragma unroll
        for (int h = 0; h < HALVES; ++h)
          s.b[h] = __ldg(scale_b + static_cast<int64_t>(kb) * n_blocks + min(h, last_half));
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
          for (int i = 0; i < 2; ++i) s.a[mi][i] = __ldg(scale_a[mi][i] + kb);
        return s;
      };
      // Half h's sums (the whole tile's when HALVES is 1), once waited for, join the FP32 ones times their scales:
      // fragment element r of a 128-column set is element h * 64 + r of the tile's (its column 128 h + 8 (r / 4) ...).
      using Scales = fp8::BlockScales<Cfg::MI, HALVES>;
      auto add_scaled = [&](const float (&from)[Cfg::MI][PN / 2], const Scales& s, int h) {
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi) {
          const float f[2] = {s.a[mi][0] * s.b[h], s.a[mi][1] * s.b[h]};
#pragma unroll
          for (int r = 0; r < PN / 2; ++r) acc[mi][h * (PN / 2) + r] += from[mi][r] * f[(r >> 1) & 1];
        }
      };
      // A stage's sums, once waited for: the stage is released and the sums join the FP32 ones times their scales.
      auto promote = [&](float (&from)[Cfg::MI][PN / 2], uint32_t stage, const Scales& s) {
        fence_regs(from);
        if (lane == 0) mbar_arrive(S::empty(base, stage));  // the stage's bytes are no longer read
        add_scaled(from, s, 0);
      };
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
        for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;

      if constexpr (HALVES == 1) {
        fp8::promoting_loop<OVERLAP>(p.k_tiles, part, part2, issue, load_scales, promote);
      } else {
        // Each stage's halves one after the other into `part`: issue, wait, add; the stage is released after the
        // last half's wait, and the next k block's scales load while the first half runs.
        auto now = load_scales(0);
        for (int kb = 0; kb < p.k_tiles; ++kb) {
          const uint32_t stage = rd.stage;
          mbar_wait(S::full(base, stage), rd.phase);
          rd.advance();
          auto next = now;
#pragma unroll
          for (int h = 0; h < HALVES; ++h) {
            wgmma_fence();
            mma_stage_fp8<HalfN<Cfg>, TIn, S::A_KBLOCK, S::B_KBLOCK>(
                part, S::a(base, stage) + a_rows, S::b(base, stage) + h * 128 * S::LINE, 0u);
            wgmma_commit();
            if (h == 0) next = load_scales(min(kb + 1, p.k_tiles - 1));  // the last loads its own again
            wgmma_wait<0>();
            fence_regs(part);
            if (h == HALVES - 1 && lane == 0) mbar_arrive(S::empty(base, stage));  // its bytes are no longer read
            add_scaled(part, now, h);
          }
          now = next;
        }
      }

      // grouped.cuh's epilogue: a tile whose rows are all its group's stores through shared memory and TMA (the
      // consumer goes back to its next tile's wgmmas while the store drains); one that reaches past the group's
      // end row stores directly, clipped there (a TMA box would write the next group's rows), unless that end is
      // the stack's, where the box clips.
      fp8::store_tile<Cfg, TOut, TMA_STORE>(acc, p, epi_bufs, slab_ctr, m0, n0, c, wt, m_end);
    }
    // The last TMA stores must have finished with their buffers before the CTA's shared memory goes away.
    if constexpr (TMA_STORE) {
      if (wt == 0) bulk_wait<0>();
    }
  }
}

template <class Cfg, class Tag = void, bool OVERLAP = false>
struct Step {
  static constexpr const char* name = "hopper.grouped_fp8";

  // The occupancy of the launch run() makes (gemm_abi.h NAME_occupancy): nothing is launched.
  template <class TIn, class TOut>
  static int occupancy(const gc_gemm_args*, gc_occupancy* out, char* err, size_t err_len) {
    return query_occupancy(kernel<Cfg, TIn, TOut, OVERLAP, true, Tag>, Traits<Cfg, TOut>::THREADS,
                           Traits<Cfg, TOut>::S::DYNAMIC, out, err, err_len);
  }

  template <class TIn, class TOut>
  static int run(const gc_gemm_args* args, char* err, size_t err_len) {
    using T = Traits<Cfg, TOut>;
    using S = typename T::S;
    char msg[320];
    if (int rc = grouped::check_groups<Cfg>(args, name, err, err_len)) return rc;
    if (args->scaling != GC_SCALING_BLOCK) {
      snprintf(msg, sizeof msg, "%s: needs block scales (1 x 128 of A, 128 x 128 of each group's B: the grouped FP8 "
               "scales gemm_abi.h defines); scaling %d given", name, static_cast<int>(args->scaling));
      return gc_fail(err, err_len, msg);
    }
    Params p;
    // Layout, types, math, dimensions, K == 0 (C = beta * C over every group's rows); m == 0 (every group empty):
    // nothing to do, and the scales may be empty (NULL) arrays.
    if (int rc = prepare<TIn, TOut, Tag>(args, name, p, err, err_len)) return rc < 0 ? 0 : rc;
    if (!args->scale_a || !args->scale_b) {
      snprintf(msg, sizeof msg, "%s: scale_a or scale_b is NULL", name);
      return gc_fail(err, err_len, msg);
    }
    // TMA rows and group starts of 1-byte elements: lda, ldb and stride_b multiples of 16 (prepare checked 8)
    if (args->lda % 16 || args->ldb % 16 || args->stride_b % 16) {
      snprintf(msg, sizeof msg, "%s: TMA needs lda, ldb and stride_b multiples of 16 FP8 elements; got lda=%lld, "
               "ldb=%lld, stride_b=%lld", name, static_cast<long long>(args->lda), static_cast<long long>(args->ldb),
               static_cast<long long>(args->stride_b));
      return gc_fail(err, err_len, msg);
    }
    p.scale_a = args->scale_a;
    p.scale_b = args->scale_b;
    p.scaling = static_cast<int>(args->scaling);
    // k_tiles (one per k block of the scales), A: the whole stack {K, m}, boxes {128, BM}; B: {K, N, groups},
    // boxes {128, BN, 1}; the grid.
    int64_t grid = 0;
    if (int rc = grouped::map_groups<Cfg, TIn>(args, p, grid, err, err_len)) return rc;
    if (grid == 0) return 0;
    // TMA stores of whole tiles when C's address and row stride allow it (a map of the whole stack {N, m}); the
    // direct epilogue everywhere otherwise.
    bool tma_store = false;
    if (int rc = fp8::map_c_for_stores<Cfg, TOut>(args, p, tma_store, err, err_len)) return rc;
    auto k = tma_store ? kernel<Cfg, TIn, TOut, OVERLAP, true, Tag> : kernel<Cfg, TIn, TOut, OVERLAP, false, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(grid), T::THREADS, S::DYNAMIC, args->stream, 1, p));
    return gc_check_launch(err, err_len, name);
  }
};

// FP8 in (e4m3 or e5m2, A and B alike), f32 / f16 / bf16 out: fp8.cuh's dispatch.
template <class Cfg, class Tag = void, bool OVERLAP = false>
int run(const gc_gemm_args* args, char* err, size_t err_len) {
  return fp8::dispatch_fp8<Step<Cfg, Tag, OVERLAP>>(args, err, err_len);
}

template <class Cfg, class Tag = void, bool OVERLAP = false>
int occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return fp8::dispatch_fp8<Step<Cfg, Tag, OVERLAP>>(args, err, err_len, out);
}

}  // namespace grouped_fp8
}  // namespace hopper
}  // namespace gc
