// Step 7 -- hopper.split_k: the persistent warp-specialized kernel for skinny M and long K, with K split
// across CTAs.
//
// A decode-sized problem (M = 16..128) has few output tiles: 128 x 4096 in 64 x 128 tiles is 64 tiles for
// 132 SMs, and each tile walks all of K (14336 in an 8B model's MLP down projection), so half the GPU idles
// and each busy SM streams a long panel of B alone. Splitting K into `splits` slices makes tiles x splits
// work units (unit u: slice u / tiles of tile u % tiles), enough to fill the SMs, each walking only its
// slice of K. Every unit writes its f32 partial sums to its own plane of the workspace (no atomics, so the
// sum is deterministic), and a second kernel adds the planes, applies alpha and beta and converts to C.
// That second pass reads and writes splits x M x N x 4 bytes: small beside B at these shapes (8 MB against
// 117 MB at 128 x 4096 x 14336, 4 slices), and part of every timed launch.
//
// splits = 1 skips the workspace: the tiles store straight into C (the persistent step's direct epilogue),
// so the step is also an ordinary GEMM at shapes with tiles enough. SPLITS = 0 (auto) picks
// floor(SMs / tiles), at most 16 and at most one slice per k tile: one wave of units, none idle.
//
// What it shares with the ladder: TMA loads into the 128B-swizzled stage ring, a producer warpgroup and
// one or two consumer warpgroups with setmaxnreg, scale-d = false on each unit's first k step. No clusters
// (B is read once per unit either way) and the direct epilogue (the partials are f32 planes).
#pragma once

#include "hopper_common.cuh"

namespace gc {
namespace hopper {
namespace split_k {

constexpr int MAX_SPLITS = 16;

template <class Cfg>
struct Traits {
  static_assert(Cfg::STAGES >= 2, "split_k needs at least two stages");
  static_assert(Cfg::CLUSTER_M == 1, "split_k does not use clusters");
  static_assert(Cfg::SPLITS >= 0 && Cfg::SPLITS <= MAX_SPLITS, "splits: 0 (auto) or 1..16");
  using S = Smem<Cfg>;
  static constexpr int THREADS = 128 * (1 + Cfg::CONSUMERS);
  static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
};

// K slices for this problem: the configuration's, or (auto) enough units for one wave; never more slices
// than k tiles, so that no slice is empty.
template <class Cfg>
int choose_splits(int tiles, int k_tiles, int sms) {
  int s = Cfg::SPLITS;
  if (s == 0) s = tiles > 0 && sms > tiles ? sms / tiles : 1;
  if (s > MAX_SPLITS) s = MAX_SPLITS;
  if (s > k_tiles) s = k_tiles;
  return s < 1 ? 1 : s;
}

// Slice `s` of `splits` over k tiles [0, k_tiles): [first, last).
__device__ __forceinline__ void slice_range(int s, int splits, int k_tiles, int& first, int& last) {
  first = static_cast<int>((static_cast<int64_t>(s) * k_tiles) / splits);
  last = static_cast<int>((static_cast<int64_t>(s + 1) * k_tiles) / splits);
}

// One m64 block's f32 partial sums into plane `plane` (M x N, row stride N) of the workspace, guarded at M
// and N; pairs as one 8-byte store when N is even (the plane is then 8-byte aligned at every pair).
template <int N>
__device__ __forceinline__ void store_partials(const float (&acc)[N / 2], float* plane, int m, int n, int row0,
                                               int col0) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = row0 + 8 * i;
    if (row >= m) continue;
    float* const prow = plane + static_cast<int64_t>(row) * n;
#pragma unroll
    for (int j = 0; j < N / 8; ++j) {
      const int col = col0 + 8 * j;
      const float v0 = acc[4 * j + 2 * i], v1 = acc[4 * j + 2 * i + 1];
      if ((n % 2) == 0 && col + 1 < n) {
        *reinterpret_cast<float2*>(prow + col) = make_float2(v0, v1);
      } else {
        if (col < n) prow[col] = v0;
        if (col + 1 < n) prow[col + 1] = v1;
      }
    }
  }
}

template <class Cfg, class TIn, class TOut, bool PARTIALS, class Tag>
__global__ void __launch_bounds__(Traits<Cfg>::THREADS, 1) kernel(const __grid_constant__ Params p) {
  using T = Traits<Cfg>;
  using S = typename T::S;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = align1024(smem_u32(smem));
  const int wg = warpgroup_index();
  const int tiles = p.tiles_m * p.tiles_n;
  const int units = tiles * p.splits;

  if (threadIdx.x == 0) {
    prefetch_tmap(&p.tma_a);
    prefetch_tmap(&p.tma_b);
    for (int s = 0; s < Cfg::STAGES; ++s) {
      mbar_init(S::full(base, s), 1);
      mbar_init(S::empty(base, s), 4 * Cfg::CONSUMERS);
    }
    fence_barrier_init();
  }
  // The reduction is launched as this grid's programmatic dependent (run()): once every CTA has started, its
  // CTAs may be scheduled as SMs free up and wait there (griddepcontrol.wait) for this grid's end and its
  // memory, instead of queueing behind the kernel boundary: the second launch's latency is hidden under the
  // last units (without it, 64x4096x4096 read 80% of cuBLAS, its weakest decode shape).
  if constexpr (PARTIALS) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  __syncthreads();

  if (wg == 0) {
    // ---- producer: the k tiles of each unit's slice ---------------------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      PipeState<Cfg::STAGES> wr;
      for (int u = blockIdx.x; u < units; u += gridDim.x) {
        int tm, tn, first, last;
        grouped_raster(u % tiles, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
        slice_range(u / tiles, p.splits, p.k_tiles, first, last);
        const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
        for (int t = first; t < last; ++t) {
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
    // ---- consumers ------------------------------------------------------------------------------
    if constexpr (Cfg::CONSUMERS == 2) setmaxnreg_inc<T::CONSUMER_REGS>();
    const int c = wg - 1;
    const int wt = threadIdx.x % 128, warp = wt / 32, lane = wt % 32;
    const uint32_t a_rows = c * Cfg::WM * S::LINE;

    // Defined once so the first wgmma's (ignored) accumulator inputs are not uninitialised values.
    float acc[Cfg::MI][Cfg::BN / 2];
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
      for (int r = 0; r < Cfg::BN / 2; ++r) acc[mi][r] = 0.f;

    PipeState<Cfg::STAGES> rd;
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
      int tm, tn, first, last;
      grouped_raster(u % tiles, p.tiles_m, p.tiles_n, Cfg::GROUP, tm, tn);
      const int slice = u / tiles;
      slice_range(slice, p.splits, p.k_tiles, first, last);
      const int m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;

      uint32_t prev_stage = 0;
      for (int t = first; t < last; ++t) {
        mbar_wait(S::full(base, rd.stage), rd.phase);
        wgmma_fence();
        mma_stage<Cfg, TIn, S::A_KBLOCK, S::B_KBLOCK>(acc, S::a(base, rd.stage) + a_rows, S::b(base, rd.stage),
                                                      t > first ? 1u : 0u);
        wgmma_commit();
        wgmma_wait<1>();
        fence_regs(acc);
        if (t > first && lane == 0) mbar_arrive(S::empty(base, prev_stage));
        prev_stage = rd.stage;
        rd.advance();
      }
      wgmma_wait<0>();
      fence_regs(acc);
      if (lane == 0) mbar_arrive(S::empty(base, prev_stage));

      const int row0 = m0 + c * Cfg::WM + 16 * warp + lane / 4, col0 = n0 + 2 * (lane % 4);
      if constexpr (PARTIALS) {
        float* const plane = p.partials + static_cast<int64_t>(slice) * p.m * p.n;
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi) store_partials<Cfg::BN>(acc[mi], plane, p.m, p.n, row0 + mi * 64, col0);
      } else {
        const bool fast = direct_fast<Cfg::BM, Cfg::BN>(p, m0, n0);
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi) store_block_direct<TOut, Cfg::BN>(acc[mi], p, row0 + mi * 64, col0, fast);
      }
    }
  }
}

// C = alpha * (sum of the planes) + beta * C, four columns per thread (one 16-byte load per plane when N
// is a multiple of 4), planes added in slice order: the same sum on every run.
template <class TOut, class Tag>
__global__ void __launch_bounds__(256) reduce_kernel(const float* __restrict__ partials, int splits, TOut* c,
                                                     int64_t ldc, int m, int n, float alpha, float beta, int read_c) {
  // launched as the GEMM's programmatic dependent: wait until that grid has ended and its partials are visible
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int quads = (n + 3) / 4;
  const int64_t total = static_cast<int64_t>(m) * quads;
  const int64_t plane = static_cast<int64_t>(m) * n;
  const bool vec = (n % 4) == 0;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; q < total;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(q / quads), col = static_cast<int>(q % quads) * 4;
    const int64_t at = static_cast<int64_t>(row) * n + col;
    float v[4] = {0.f, 0.f, 0.f, 0.f};
    for (int s = 0; s < splits; ++s) {
      const float* src = partials + s * plane + at;
      if (vec) {
        const float4 x = __ldg(reinterpret_cast<const float4*>(src));
        v[0] += x.x, v[1] += x.y, v[2] += x.z, v[3] += x.w;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (col + e < n) v[e] += src[e];
      }
    }
    TOut* const crow = c + static_cast<int64_t>(row) * ldc + col;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (col + e >= n) break;
      float out = alpha * v[e];
      if (read_c) out += beta * to_f32(crow[e]);  // beta == 0 never reads C (it may hold NaNs)
      crow[e] = from_f32<TOut>(out);
    }
  }
}

template <class Cfg, class Tag = void>
struct Step {
  static constexpr const char* name = "hopper.split_k";

  // Tiles, k tiles and slices of a problem, exactly as run() computes them.
  static void plan(const gc_gemm_args* args, int& tiles, int& k_tiles, int& splits) {
    const int64_t tm = (args->m + Cfg::BM - 1) / Cfg::BM, tn = (args->n + Cfg::BN - 1) / Cfg::BN;
    const int64_t t = tm * tn;
    tiles = t > INT32_MAX ? INT32_MAX : static_cast<int>(t);
    k_tiles = static_cast<int>((args->k + Cfg::BK - 1) / Cfg::BK);
    splits = choose_splits<Cfg>(tiles, k_tiles, device_sm_count());
  }

  // gemm_abi.h NAME_workspace_bytes: the f32 planes, when the problem is split.
  static size_t workspace_bytes(const gc_gemm_args* args) {
    if (!args || args->m <= 0 || args->n <= 0 || args->k <= 0) return 0;
    int tiles, k_tiles, splits;
    plan(args, tiles, k_tiles, splits);
    return splits > 1 ? static_cast<size_t>(splits) * args->m * args->n * sizeof(float) : 0;
  }

  template <class TIn, class TOut>
  static int occupancy(const gc_gemm_args*, gc_occupancy* out, char* err, size_t err_len) {
    return query_occupancy(kernel<Cfg, TIn, TOut, true, Tag>, Traits<Cfg>::THREADS, Traits<Cfg>::S::DYNAMIC, out, err,
                           err_len);
  }

  template <class TIn, class TOut>
  static int run(const gc_gemm_args* args, char* err, size_t err_len) {
    using T = Traits<Cfg>;
    using S = typename T::S;
    Params p;
    if (int rc = prepare<TIn, TOut, Tag>(args, name, p, err, err_len)) return rc < 0 ? 0 : rc;
    set_tiles<Cfg>(args, p);
    if (int rc = make_operand_maps<Cfg, TIn>(args, p, err, err_len)) return rc;
    int tiles, k_tiles, splits;
    plan(args, tiles, k_tiles, splits);
    const int64_t units = static_cast<int64_t>(tiles) * splits;
    if (units > INT32_MAX) return gc_fail(err, err_len, "hopper.split_k: too many tiles");
    p.splits = splits;
    p.partials = nullptr;
    if (splits > 1) {
      const size_t need = static_cast<size_t>(splits) * args->m * args->n * sizeof(float);
      if (!args->workspace || args->workspace_bytes < need || reinterpret_cast<uintptr_t>(args->workspace) % 16)
        return gc_fail(err, err_len, "hopper.split_k: the workspace is missing, short or not 16-byte aligned");
      p.partials = static_cast<float*>(args->workspace);
    }
    const int sms = device_sm_count();
    const int64_t grid = units < sms ? units : (sms > 0 ? sms : 1);
    auto k = splits > 1 ? kernel<Cfg, TIn, TOut, true, Tag> : kernel<Cfg, TIn, TOut, false, Tag>;
    GC_CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, S::DYNAMIC));
    GC_CHECK_CUDA(launch_kernel(k, static_cast<unsigned>(grid), T::THREADS, S::DYNAMIC, args->stream, 1, p));
    if (int rc = gc_check_launch(err, err_len, name)) return rc;
    if (splits == 1) return 0;
    const int64_t quads = static_cast<int64_t>(p.m) * ((p.n + 3) / 4);
    const int64_t blocks = (quads + 255) / 256;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(blocks < 4 * sms ? blocks : 4 * sms));
    cfg.blockDim = dim3(256);
    cfg.stream = args->stream;
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;  // may start before the GEMM ends
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    GC_CHECK_CUDA(cudaLaunchKernelEx(&cfg, reduce_kernel<TOut, Tag>, static_cast<const float*>(p.partials), splits,
                                     static_cast<TOut*>(args->c), static_cast<int64_t>(args->ldc), p.m, p.n, p.alpha,
                                     p.beta, p.read_c));
    return gc_check_launch(err, err_len, "hopper.split_k reduce");
  }
};

// run, run_typed and occupancy of this step (hopper_common.cuh).
GC_HOPPER_STEP_ENTRIES(Step)

// NAME_workspace_bytes of an instantiation (the planes run() will write; 0 when it does not split).
template <class Cfg, class Tag = void>
size_t workspace_bytes(const gc_gemm_args* args) {
  return Step<Cfg, Tag>::workspace_bytes(args);
}

}  // namespace split_k
}  // namespace hopper
}  // namespace gc
