// Step 8 -- hopper.fp8: FP8 (e4m3 / e5m2) inputs with promotion to FP32 every 128 of K (or, for `_fastacc`
// contracts, without: PROMOTE below), and the scales.
//
// Hopper's FP8 wgmma (m64nNk32) accumulates its products in what behaves like ~14 significand bits
// (DeepSeek-V3 measured a maximum relative error near 2% at K = 4096 without promotion). A kernel that
// keeps FP32 accuracy must therefore take the tensor core's partial sums out into FP32 registers often:
// here every stage (BK = 128 of K, one 128-byte swizzle line of FP8) is computed into a fresh set of
// partial accumulators (`part`, scale-d = false on its first k32 step), waited for, and added to the
// FP32 sums (`acc`) by ordinary FADDs. The scales (device pointers, as cuBLASLt reads its own) are applied
// where their shape allows (docs/fp8.md, "Scales"):
//   tensor  one scale each: the sums are multiplied once, in the epilogue;
//   rowcol  scale_a per row of A, scale_b per column of B: each sum by its row's and column's, in the epilogue;
//   block   scale_a per 1x128 block of A, scale_b per 128x128 block of B (DeepSeek-V3): they change with K, so
//           each stage's partial sums are multiplied by their rows' and their column block's scales as they
//           are promoted (one k block of 128 is one stage). A tile must lie in one column block: BN <= 128.
//
// Everything else is the persistent warp-specialized step's: TMA loads into a stage ring (FP8 moved as
// bytes, 128 elements per swizzled line), a producer warpgroup and one or two consumer warpgroups with
// setmaxnreg, a grouped raster over the tiles, the direct epilogue. The price of promotion: both register
// sets (acc and part) live in the consumers, so BN <= 192 with one m64 block per consumer, and each
// consumer waits for its own wgmmas every stage (the other consumer's keep the tensor core busy then).
//
// OVERLAP (the `overlap: 1` parameter) keeps two sets of partials: stage t+1's wgmmas are issued into one
// while stage t's, in the other, are waited for (wait_group 1) and promoted, so a consumer's FADDs and its
// barrier waits no longer leave the tensor core idle. Three register sets: BN <= 128 with 64 rows per consumer.
// Block scales fit beside them since each stage's scales are loaded a stage ahead into three registers a row pair
// (promoting_loop), not recomputed and loaded at the promotion.
//
// PROMOTE = false (the `accumulation: fast` parameter, for `_fastacc` contracts only: the Python family never
// plans it under a strict one) is cuBLASLt's fast-accumulation mode: no partial sums, the wgmmas of every stage
// accumulate straight into `acc` across all of K at the tensor core's ~14 bits, and the loop is the persistent
// step's (wait_group 1: a stage's wgmmas run while the last one's stage is released). Only one register set
// lives in the consumers, so the 16-bit steps' rule holds (<= 128 sums per thread: 128x256 with 2 consumers).
// Tensor and row/column scales as above; block scales scale each 128 of K's partial sums, which this variant
// does not keep, so it refuses them (and overlap, which overlaps a promotion it does not do).
#pragma once

#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace fp8 {

constexpr int LINE_ELEMENTS = 128;  // FP8 elements in one 128-byte swizzle line: one k32 wgmma per 32 bytes

// The configuration seen with 1-byte elements: KB counts 128-element lines (the 16-bit steps' 64).
template <class Cfg>
struct View : Cfg {
  static constexpr int KB = Cfg::BK / LINE_ELEMENTS;
};

// TOut: the output type of the TMA-store epilogue's buffers (hopper.best's TmaStoreEpilogue: two 8 KB slabs per
// consumer warpgroup after the stages, whatever TOut; the type sets the slab's columns).
template <class Cfg, class TOut>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "fp8 needs at least two stages");
  static_assert(Cfg::CLUSTER_M == 1, "fp8 does not use clusters");
  static_assert(Cfg::BK == LINE_ELEMENTS, "fp8 takes one stage per swizzle line: BK is 128 (one line of FP8)");
  static constexpr int SETS_MAX = 192;  // f32 registers a consumer thread may give to sums and partials
  using V = View<Cfg>;
  using Epi = TmaStoreEpilogue<TOut, Cfg::BN>;
  using S = Smem<V, Cfg::CONSUMERS * Epi::BYTES_PER_WG>;
  static constexpr int THREADS = 128 * (1 + Cfg::CONSUMERS);
  static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
};

// One stage's wgmmas for one consumer warpgroup into `part`: 4 k32 steps of 32 bytes per line, one m64nBNk32
// per m64 block; the first step of the stage adds to `part` when `accumulate` is 1, overwrites it when 0
// (scale-d = false: a promoted stage's fresh partials, or the first stage of a tile without promotion).
template <class Cfg, class TIn, uint32_t A_KBLOCK, uint32_t B_KBLOCK>
__device__ __forceinline__ void mma_stage_fp8(float (&part)[Cfg::MI][Cfg::BN / 2], uint32_t a_rows, uint32_t b_tile,
                                              uint32_t accumulate) {
  const uint64_t da0 = make_desc_sw128(a_rows);
  const uint64_t db0 = make_desc_sw128(b_tile);
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    const uint64_t db = db0 + ((ks * 32) >> 4);
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi) {
      const uint64_t da = da0 + ((mi * 64 * 128 + ks * 32) >> 4);
      Wgmma<Cfg::BN, TIn>::mma(part[mi], da, db, ks == 0 ? accumulate : 1u);
    }
  }
}

// Block kb's scales of one consumer thread: scale_a of its two rows in each m64 block (i = 0, 1) and the tile's
// scale_b, one per 128-column block of the tile (NB: hopper.grouped_fp8's 256-column tiles have two). Loaded a
// stage before the promotion that uses them (promoting_loop), so that their round trip to L2 runs while the tensor
// core does, not between a consumer's promotion and its next wgmmas.
template <int MI, int NB = 1>
struct BlockScales {
  float a[MI][2], b[NB];
};

// The promoting mainloop over one tile's k blocks (one stage each): `issue(part)` issues a stage's wgmmas into a
// partial set and returns the stage, `load_scales(kb)` loads block kb's scales, `promote(part, stage, scales)`
// adds a partial set whose wgmmas are done into the FP32 sums and releases the stage.
//   !OVERLAP: issue kb, load kb+1's scales, wait_group 0, promote kb (the other consumer's wgmmas keep the
//             tensor core busy meanwhile);
//    OVERLAP: two partial sets taking turns: kb+1's wgmmas are issued into one while kb's, in the other, are
//             waited for (wait_group 1) and promoted, so a consumer's FADDs and barrier waits leave the tensor
//             core busy.
template <bool OVERLAP, class Part, class Part2, class Issue, class LoadScales, class Promote>
__device__ __forceinline__ void promoting_loop(int k_tiles, Part& part, Part2& part2, Issue&& issue,
                                               LoadScales&& load_scales, Promote&& promote) {
  auto now = load_scales(0);
  if constexpr (!OVERLAP) {
    for (int kb = 0; kb < k_tiles; ++kb) {
      const uint32_t stage = issue(part);
      const auto next = load_scales(min(kb + 1, k_tiles - 1));  // the last loads its own again: no branch
      wgmma_wait<0>();
      promote(part, stage, now);
      now = next;
    }
  } else {
    uint32_t pending = issue(part);  // k block 0, in `part`
    for (int kb = 1;;) {
      if (kb == k_tiles) { wgmma_wait<0>(); promote(part, pending, now); break; }
      const uint32_t next = issue(part2);
      auto later = load_scales(kb);
      wgmma_wait<1>();
      promote(part, pending, now);
      now = later, pending = next, ++kb;
      if (kb == k_tiles) { wgmma_wait<0>(); promote(part2, pending, now); break; }
      const uint32_t after = issue(part);
      later = load_scales(kb);
      wgmma_wait<1>();
      promote(part2, pending, now);
      now = later, pending = after, ++kb;
    }
  }
}

// One consumer warpgroup's share of a tile's epilogue: its rows m0 + c * WM .. of the tile's BN columns from n0,
// none at or past row m_end (p.m for one GEMM, the group's end row for hopper.grouped_fp8). Through shared memory
// and TMA stores (TMA_STORE: hopper.best's TmaStoreEpilogue, the warpgroup's two buffers at epi_bufs) when the
// box's own clip at C's M is bound enough (every row of the tile below m_end, or m_end is C's M); direct stores
// clipped at m_end otherwise. (best.cuh, stream_k.cuh and grouped.cuh keep this block inline: a change to them or to
// hopper_common.cuh rebuilds kernels whose receipts and picks stand.)
template <class Cfg, class TOut, bool TMA_STORE>
__device__ __forceinline__ void store_tile(const float (&acc)[Cfg::MI][Cfg::BN / 2], const Params& p,
                                           uint32_t epi_bufs, uint32_t& slab_ctr, int m0, int n0, int c, int wt,
                                           int m_end) {
  const int row0 = m0 + c * Cfg::WM;
  const bool whole = m0 + Cfg::BM <= m_end;
  if (TMA_STORE && (whole || m_end == p.m)) {
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
      TmaStoreEpilogue<TOut, Cfg::BN>::store_block(acc[mi], p, &p.tma_c, epi_bufs, slab_ctr, row0 + mi * 64, n0, wt,
                                                   1u + static_cast<uint32_t>(c));
  } else {
    const int warp = wt / 32, lane = wt % 32;
    const bool fast = p.c_vec2 && !p.read_c && whole && n0 + Cfg::BN <= p.n;  // unguarded vector stores
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
      store_block_direct<TOut, Cfg::BN>(acc[mi], p, row0 + mi * 64 + 16 * warp + lane / 4, n0 + 2 * (lane % 4), fast,
                                        m_end);
  }
}

// store_tile's TMA stores need C's address and row stride 16-byte aligned: `tma_store` says whether they are, and
// when they are, C's map {N, M} (boxes of 128 bytes of columns by 64 rows) is made into p.tma_c. Returns run()'s
// error code (0: fine). (best.cuh, stream_k.cuh and grouped.cuh keep this block inline, as store_tile's.)
template <class Cfg, class TOut>
int map_c_for_stores(const gc_gemm_args* args, Params& p, bool& tma_store, char* err, size_t err_len) {
  tma_store = reinterpret_cast<uintptr_t>(args->c) % 16 == 0 && (args->ldc * sizeof(TOut)) % 16 == 0;
  if (!tma_store) return 0;
  return make_tma_2d(&p.tma_c, TypeInfo<TOut>::tma, args->c, args->n, args->m, args->ldc * sizeof(TOut),
                     TmaStoreEpilogue<TOut, Cfg::BN>::SLAB_COLS, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE, "C", err,
                     err_len);
}

// BLOCK: the block scales' loop (a kernel of its own, so that the tensor and row/column scales' promotion
// carries no run-time branch, loads or factors for them: with them, overlap 0 read 52-59% of cuBLASLt at
// 4096^3 where it had read 70% before they were added).
// TMA_STORE: the epilogue writes each m64 block through shared memory and TMA stores (hopper.best's: the consumers
// go back to the next tile's wgmmas while the stores drain; TMA clips at M and N); false where C's address or row
// stride is not 16-byte aligned: direct stores.
template <class Cfg, class TIn, class TOut, bool OVERLAP, bool BLOCK, bool PROMOTE, bool TMA_STORE, class Tag>
__global__ void __launch_bounds__(Traits<Cfg, TOut>::THREADS, 1) kernel(const __grid_constant__ Params p) {
  static_assert(!PROMOTE || 2 * Cfg::ACC <= Traits<Cfg, TOut>::SETS_MAX,
                "acc and part (2 x MI x BN/2 f32 per consumer thread) must leave registers: BN <= 192");
  static_assert(!OVERLAP || 3 * Cfg::ACC <= Traits<Cfg, TOut>::SETS_MAX,
                "overlap keeps acc and two partial sets: BN <= 128");
  static_assert(!BLOCK || Cfg::BN <= 128, "block scales: the tile's columns lie in one 128-wide scale block");
  static_assert(PROMOTE || !(OVERLAP || BLOCK), "without promotion there is nothing to overlap and no partial sum to scale");
  using T = Traits<Cfg, TOut>;
  using S = typename T::S;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = align1024(smem_u32(smem));
  const int wg = warpgroup_index();
  const int tiles = p.tiles_m * p.tiles_n;

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
      PipeState<Cfg::STAGES> wr;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int tm, tn;
        grouped_raster(tile, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
        const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
        for (int t = 0; t < p.k_tiles; ++t) {
          mbar_wait(S::empty(base, wr.stage), wr.phase ^ 1u);
          const uint32_t full = S::full(base, wr.stage);
          mbar_arrive_expect_tx(full, S::TX_BYTES);
          tma_load_2d(S::a(base, wr.stage), &p.tma_a, full, t * Cfg::BK, m0);
          tma_load_2d(S::b(base, wr.stage), &p.tma_b, full, t * Cfg::BK, n0);
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

    float acc[Cfg::MI][Cfg::BN / 2];    // FP32 sums, promoted into every stage (!PROMOTE: the wgmma accumulator)
    float part[PROMOTE ? Cfg::MI : 1][PROMOTE ? Cfg::BN / 2 : 1];   // the tensor core's sums over one stage
    float part2[OVERLAP ? Cfg::MI : 1][OVERLAP ? Cfg::BN / 2 : 1];  // OVERLAP: the next stage's, meanwhile
    if constexpr (PROMOTE) {
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
        for (int r = 0; r < Cfg::BN / 2; ++r) part[mi][r] = 0.f;  // defined once: the first wgmma ignores it
    } else {
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
        for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;  // defined once: each tile starts with scale-d = false
    }
    if constexpr (OVERLAP) {
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
        for (int r = 0; r < Cfg::BN / 2; ++r) part2[mi][r] = 0.f;
    }

    PipeState<Cfg::STAGES> rd;
    // Issue one stage's wgmmas into `into` (it waits for the stage's bytes first); returns the stage.
    auto issue = [&](float (&into)[Cfg::MI][Cfg::BN / 2], uint32_t accumulate = 0u) {
      const uint32_t stage = rd.stage;
      mbar_wait(S::full(base, stage), rd.phase);
      wgmma_fence();
      mma_stage_fp8<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(into, S::a(base, stage) + a_rows, S::b(base, stage),
                                                        accumulate);
      wgmma_commit();
      rd.advance();
      return stage;
    };
    const int k_blocks = p.k_tiles;  // one 128-wide k block of scale_a / scale_b per stage (BK = 128)
    const int64_t n_blocks = (p.n + 127) / 128;
    const int row_base = c * Cfg::WM + 16 * warp + lane / 4;  // + m0 + 64 mi + 8 i: this thread's rows
    // A stage's sums, once waited for: the stage is released and the sums join the FP32 ones (zeroed at the tile's
    // start: one FADD each, not an add and a select on the first interval), times their block scales in the BLOCK
    // kernel (the tensor and row/column kernels apply theirs in the epilogue: `s` is empty there).
    auto promote = [&](float (&from)[Cfg::MI][Cfg::BN / 2], uint32_t stage, const BlockScales<Cfg::MI>& s) {
      fence_regs(from);
      if (lane == 0) mbar_arrive(S::empty(base, stage));  // the stage's bytes are no longer read
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi) {
        const float f[2] = {BLOCK ? s.a[mi][0] * s.b[0] : 1.f, BLOCK ? s.a[mi][1] * s.b[0] : 1.f};
#pragma unroll
        for (int r = 0; r < Cfg::BN / 2; ++r) {
          const float v = BLOCK ? from[mi][r] * f[(r >> 1) & 1] : from[mi][r];
          acc[mi][r] += v;
        }
      }
    };

    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int tm, tn;
      grouped_raster(tile, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
      const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
      if constexpr (PROMOTE) {
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
          for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;
      }

      if constexpr (!PROMOTE) {
        // No promotion: every stage's wgmmas add into acc (the tile's first overwrites it); wait_group 1 keeps
        // one stage's wgmmas in flight while the one before is released to the producer.
        uint32_t prev = 0;
        for (int t = 0; t < p.k_tiles; ++t) {
          const uint32_t stage = issue(acc, t > 0 ? 1u : 0u);
          wgmma_wait<1>();
          fence_regs(acc);
          if (t > 0 && lane == 0) mbar_arrive(S::empty(base, prev));
          prev = stage;
        }
        wgmma_wait<0>();
        fence_regs(acc);
        if (lane == 0) mbar_arrive(S::empty(base, prev));  // the next tile's loads may use it
      } else {
        // block kb's scales of this thread's rows and the tile's column block (BLOCK only: none otherwise)
        auto load_scales = [&](int kb) {
          BlockScales<Cfg::MI> s{};
          if constexpr (BLOCK) {
            s.b[0] = __ldg(p.scale_b + static_cast<int64_t>(kb) * n_blocks + n0 / 128);
#pragma unroll
            for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
              for (int i = 0; i < 2; ++i) {
                const int row = min(m0 + row_base + mi * 64 + 8 * i, p.m - 1);  // rows past M: any valid scale
                s.a[mi][i] = __ldg(p.scale_a + static_cast<int64_t>(row) * k_blocks + kb);
              }
          }
          return s;
        };
        promoting_loop<OVERLAP>(p.k_tiles, part, part2, issue, load_scales, promote);
      }

      if (p.scaling == GC_SCALING_TENSOR) {
        const float scale = __ldg(p.scale_a) * __ldg(p.scale_b);
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
          for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] *= scale;
      } else if (p.scaling == GC_SCALING_ROWCOL) {  // element (row, col) by scale_a[row] * scale_b[col]
        const int col0 = n0 + 2 * (lane % 4);
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
          for (int r = 0; r < Cfg::BN / 2; ++r) {
            // fragment element r: row + 8 * ((r >> 1) & 1), column 8 * (r >> 2) + (r & 1) (store_block_direct's order)
            const int row = min(m0 + row_base + mi * 64 + 8 * ((r >> 1) & 1), p.m - 1);
            const int col = min(col0 + 8 * (r >> 2) + (r & 1), p.n - 1);  // past M or N: not stored, any scale
            acc[mi][r] *= __ldg(p.scale_a + row) * __ldg(p.scale_b + col);
          }
      }
      store_tile<Cfg, TOut, TMA_STORE>(acc, p, epi_bufs, slab_ctr, m0, n0, c, wt, p.m);
    }
    // The last TMA stores must have finished with their buffers before the CTA's shared memory goes away.
    if constexpr (TMA_STORE) {
      if (wt == 0) bulk_wait<0>();
    }
  }
}

// PROMOTE = false: fast accumulation (no promotion); the Python family plans it under `_fastacc` contracts only.
template <class Cfg, class Tag = void, bool OVERLAP = false, bool PROMOTE = true>
struct Step {
  static constexpr const char* name = "hopper.fp8";
  static constexpr bool BLOCKABLE = PROMOTE && Cfg::BN <= 128;  // block scales get their own kernel

  template <class TIn, class TOut>
  static int occupancy(const gc_gemm_args*, gc_occupancy* out, char* err, size_t err_len) {
    using T = Traits<Cfg, TOut>;
    return query_occupancy(kernel<Cfg, TIn, TOut, OVERLAP, false, PROMOTE, true, Tag>, T::THREADS, T::S::DYNAMIC, out,
                           err, err_len);
  }

  template <class TIn, class TOut>
  static int run(const gc_gemm_args* args, char* err, size_t err_len) {
    using T = Traits<Cfg, TOut>;
    using S = typename T::S;
    char msg[256];
    const bool known = args->scaling == GC_SCALING_TENSOR || args->scaling == GC_SCALING_ROWCOL ||
                       args->scaling == GC_SCALING_BLOCK;
    if (!known || !args->scale_a || !args->scale_b) {
      snprintf(msg, sizeof msg, "%s: needs tensor, rowcol or block scales (scaling %d given, scale pointers %s)", name,
               static_cast<int>(args->scaling), args->scale_a && args->scale_b ? "set" : "missing");
      return gc_fail(err, err_len, msg);
    }
    if (args->scaling == GC_SCALING_BLOCK && !PROMOTE) {
      snprintf(msg, sizeof msg, "%s: block scales scale each 128 of K's partial sums, which fast accumulation does not "
               "keep (accumulation promote takes them)", name);
      return gc_fail(err, err_len, msg);
    }
    if (args->scaling == GC_SCALING_BLOCK && Cfg::BN > 128) {
      snprintf(msg, sizeof msg, "%s: block scales need the tile's columns in one 128-wide scale block (BN = %d > 128)",
               name, Cfg::BN);
      return gc_fail(err, err_len, msg);
    }
    Params p;
    if (int rc = prepare<TIn, TOut, Tag>(args, name, p, err, err_len)) return rc < 0 ? 0 : rc;
    // TMA rows of 1-byte elements: 16-byte strides are lda and ldb multiples of 16 (prepare checked 8)
    if (args->lda % 16 || args->ldb % 16) {
      snprintf(msg, sizeof msg, "%s: TMA needs lda and ldb multiples of 16 FP8 elements; got lda=%lld, ldb=%lld", name,
               static_cast<long long>(args->lda), static_cast<long long>(args->ldb));
      return gc_fail(err, err_len, msg);
    }
    p.scale_a = args->scale_a;
    p.scale_b = args->scale_b;
    p.scaling = static_cast<int>(args->scaling);
    set_tiles<Cfg>(args, p);
    if (int rc = make_tma_2d(&p.tma_a, TypeInfo<TIn>::tma, args->a, args->k, args->m, args->lda, LINE_ELEMENTS, Cfg::BM,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "A", err, err_len))
      return rc;
    if (int rc = make_tma_2d(&p.tma_b, TypeInfo<TIn>::tma, args->b, args->k, args->n, args->ldb, LINE_ELEMENTS, Cfg::BN,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "B", err, err_len))
      return rc;
    const int64_t tiles = static_cast<int64_t>(p.tiles_m) * p.tiles_n;
    if (tiles > INT32_MAX) return gc_fail(err, err_len, "hopper.fp8: too many tiles");
    const int sms = device_sm_count();
    const int64_t grid = tiles < sms ? tiles : (sms > 0 ? sms : 1);
    bool tma_store = false;  // TMA stores when C's address and row stride allow it, else the direct epilogue
    if (int rc = map_c_for_stores<Cfg, TOut>(args, p, tma_store, err, err_len)) return rc;
    auto k = tma_store ? kernel<Cfg, TIn, TOut, OVERLAP, false, PROMOTE, true, Tag>
                       : kernel<Cfg, TIn, TOut, OVERLAP, false, PROMOTE, false, Tag>;
    if constexpr (BLOCKABLE) {  // (run() refused block scales above where the configuration cannot take them)
      if (args->scaling == GC_SCALING_BLOCK)
        k = tma_store ? kernel<Cfg, TIn, TOut, OVERLAP, true, PROMOTE, true, Tag>
                      : kernel<Cfg, TIn, TOut, OVERLAP, true, PROMOTE, false, Tag>;
    }
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(grid), T::THREADS, S::DYNAMIC, args->stream, 1, p));
    return gc_check_launch(err, err_len, name);
  }
};

// FP8 in (e4m3 or e5m2, A and B alike), f32 / f16 / bf16 out.
template <class StepT>
int dispatch_fp8(const gc_gemm_args* a, char* err, size_t err_len, gc_occupancy* query = nullptr) {
  const char* name = StepT::name;
  if (!a) return gc_fail(err, err_len, "null arguments");
  if (a->dtype_a != a->dtype_b) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: A and B must have the same type", name);
    return gc_fail(err, err_len, msg);
  }
#define GC_FP8_CASE(TIN, TOUT)                                                                             \
  return query ? StepT::template occupancy<TIN, TOUT>(a, query, err, err_len) : StepT::template run<TIN, TOUT>(a, err, err_len)
  if (a->dtype_a == GC_E4M3) {
    if (a->dtype_c == GC_F32) GC_FP8_CASE(__nv_fp8_e4m3, float);
    if (a->dtype_c == GC_F16) GC_FP8_CASE(__nv_fp8_e4m3, __half);
    if (a->dtype_c == GC_BF16) GC_FP8_CASE(__nv_fp8_e4m3, __nv_bfloat16);
  } else if (a->dtype_a == GC_E5M2) {
    if (a->dtype_c == GC_F32) GC_FP8_CASE(__nv_fp8_e5m2, float);
    if (a->dtype_c == GC_F16) GC_FP8_CASE(__nv_fp8_e5m2, __half);
    if (a->dtype_c == GC_BF16) GC_FP8_CASE(__nv_fp8_e5m2, __nv_bfloat16);
  }
#undef GC_FP8_CASE
  char msg[160];
  snprintf(msg, sizeof msg, "%s: needs e4m3 or e5m2 A and B and f32, f16 or bf16 C", name);
  return gc_fail(err, err_len, msg);
}

template <class Cfg, class Tag = void, bool OVERLAP = false, bool PROMOTE = true>
int run(const gc_gemm_args* args, char* err, size_t err_len) {
  return dispatch_fp8<Step<Cfg, Tag, OVERLAP, PROMOTE>>(args, err, err_len);
}

template <class Cfg, class Tag = void, bool OVERLAP = false, bool PROMOTE = true>
int occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return dispatch_fp8<Step<Cfg, Tag, OVERLAP, PROMOTE>>(args, err, err_len, out);
}

}  // namespace fp8
}  // namespace hopper
}  // namespace gc
