// gemv: a memory-bound GEMM for the smallest decode batches, M <= 4 tokens (N and K in the thousands).
//
//   C[m, n] = sum_k A[m, k] * B[k, n]     A: f16 or bf16 row-major (lda), m <= 4; B: the same type,
//                                         column-major (ldb: column n is the contiguous K-vector at b + n*ldb,
//                                         a PyTorch Linear weight [N, K]); C: f32, f16 or bf16 row-major (ldc)
//
// decode_gemm.cuh feeds mma.sync, whose fragment layout gives each warp load 8 columns x 64 bytes; at M = 1 the
// MMA does 1/16 useful work and that layout is all it buys. Here a warp owns one column and reads it as one
// contiguous run: each lane loads 16 bytes (8 elements) at k = 8 * (lane + 32 i), so a warp load is 512
// contiguous bytes, and UNROLL such loads per lane are issued before any is used (UNROLL x 512 bytes of the
// column in flight per warp). With one warp per column every column of a 4096-wide layer is in flight at
// once on an H200 (4096 warps against 132 SMs x 64 resident): the kernel is the memory system's queue.
//
//   * The products are FP32 FMAs on the CUDA cores: M <= 4 rows x 8 elements per 16-byte load. A's 8 elements
//     per row come from L1 (every warp of the CTA reads the same k range of A; ld.global.nc, cached).
//   * Rows >= M are clamped to row M - 1 (valid memory); their sums are never stored. ROWS (1, 2 or 4: the
//     smallest >= M) is a template parameter, chosen at launch, so M = 1 does one FMA per element.
//   * A lane's partial sums meet in a butterfly of warp shuffles (xor 16, 8, 4, 2, 1): the same order on every
//     run, so the result is deterministic; lane r stores row r.
//   * Loads are 16 bytes wide when A, B, lda and ldb allow it, otherwise 8, 4 or 2 bytes (VB, as in
//     decode_gemm.cuh, whose load helpers this file uses); the last partial vector of K (K % 8 != 0) is read
//     element by element with zeros past K, in A and B alike.
//
// CUDA headers and the gemmcompare ABI only (never torch).
#pragma once

#include "decode/decode_gemm.cuh"

namespace gc {
namespace gemv {

constexpr int MAX_M = 4;     // the kernel's limit on M (ROWS <= 4 accumulators per lane)
constexpr int VEC = 8;       // elements per 16-byte load
constexpr int WARP_K = 32 * VEC;  // k covered by one warp load

// WARPS warps (columns) per CTA, UNROLL 16-byte loads of B per lane in flight.
template <int WARPS_, int UNROLL_>
struct Config {
  static constexpr int WARPS = WARPS_, UNROLL = UNROLL_;
  static constexpr int THREADS = 32 * WARPS;
  static_assert(WARPS >= 1 && WARPS <= 32, "WARPS: 1..32");
  static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL: 1..16");
};

// Eight 16-bit elements in four 32-bit registers -> eight floats.
template <class TIn>
__device__ __forceinline__ void to_float8(const uint4& v, float (&f)[VEC]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 p;
    if constexpr (std::is_same<TIn, __nv_bfloat16>::value) {
      p = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[i]));
    } else {
      p = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
    }
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

// acc[r] += <a[r], b> over one vector of 8 elements.
template <class TIn, int ROWS>
__device__ __forceinline__ void fma8(float (&acc)[ROWS], const uint4 (&a)[ROWS], const uint4& b) {
  float bf[VEC];
  to_float8<TIn>(b, bf);
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    float af[VEC];
    to_float8<TIn>(a[r], af);
#pragma unroll
    for (int i = 0; i < VEC; ++i) acc[r] = fmaf(af[i], bf[i], acc[r]);
  }
}

template <class TIn, class TOut>
struct Params {
  const TIn* a;
  const TIn* b;
  TOut* c;
  int m, n, k;
  int64_t lda, ldb, ldc;
};

template <class Cfg, class TIn, class TOut, int ROWS, int VB, class Tag>
__global__ void __launch_bounds__(Cfg::THREADS) gemv_kernel(const Params<TIn, TOut> p) {
  constexpr int UNROLL = Cfg::UNROLL;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int n = static_cast<int>(blockIdx.x) * Cfg::WARPS + static_cast<int>(threadIdx.x) / 32;
  if (n >= p.n) return;  // whole warps: the shuffles below never see a missing lane

  const TIn* b_col = p.b + static_cast<int64_t>(n) * p.ldb + VEC * lane;
  const TIn* a_row[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) a_row[r] = p.a + static_cast<int64_t>(min(r, p.m - 1)) * p.lda + VEC * lane;
  const uint64_t policy = decode::evict_first_policy();

  float acc[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) acc[r] = 0.f;

  // Whole vectors of 8: rounds of UNROLL warp loads, every load of B in a round issued before its FMAs.
  const int whole = p.k / VEC;  // whole vectors per column
  const int rounds = whole / (32 * UNROLL);
  for (int i = 0; i < rounds; ++i) {
    const int off = i * UNROLL * WARP_K;
    uint4 bv[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) bv[u] = decode::load8<VB, true>(b_col + off + u * WARP_K, policy);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      uint4 av[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) av[r] = decode::load8<VB, false>(a_row[r] + off + u * WARP_K, policy);
      fma8<TIn, ROWS>(acc, av, bv[u]);
    }
  }
  // The rest of the whole vectors, one warp load at a time (fewer than UNROLL of them).
  for (int v = rounds * 32 * UNROLL + lane; v < whole; v += 32) {
    const int off = (v - lane) * VEC;
    uint4 av[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) av[r] = decode::load8<VB, false>(a_row[r] + off, policy);
    fma8<TIn, ROWS>(acc, av, decode::load8<VB, true>(b_col + off, policy));
  }
  // K's last partial vector (K % 8 != 0): one lane, element by element, zeros past K.
  if (const int tail = p.k - whole * VEC; tail > 0 && lane == whole % 32) {
    const int off = (whole - lane) * VEC;
    uint4 av[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) av[r] = decode::load8_tail(a_row[r] + off, tail);
    fma8<TIn, ROWS>(acc, av, decode::load8_tail(b_col + off, tail));
  }

  // Butterfly: every lane ends with the warp's sums, in the same order on every run.
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int s = 16; s > 0; s /= 2) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], s);
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
    if (lane == r && r < p.m) decode::store(p.c + static_cast<int64_t>(r) * p.ldc + n, acc[r]);
}

// ------------------------------------------------------------------------------------------------
// Host side

template <class Cfg, class TIn, class TOut, int ROWS, class Tag>
using Kernel = void (*)(const Params<TIn, TOut>);

template <class Cfg, class TIn, class TOut, int ROWS, class Tag>
Kernel<Cfg, TIn, TOut, ROWS, Tag> pick_width(int vb) {
  return vb == 16  ? gemv_kernel<Cfg, TIn, TOut, ROWS, 16, Tag>
         : vb == 8 ? gemv_kernel<Cfg, TIn, TOut, ROWS, 8, Tag>
         : vb == 4 ? gemv_kernel<Cfg, TIn, TOut, ROWS, 4, Tag>
                   : gemv_kernel<Cfg, TIn, TOut, ROWS, 2, Tag>;
}

// Validate the arguments against what this instantiation computes, pick ROWS and the load width, launch on the
// harness's stream, check the launch. With `query` non-null: the occupancy of the launch it would make instead.
template <class Cfg, class Tag, class TIn, class TOut>
int launch(const gc_gemm_args* args, const char* name, char* err, size_t err_len, gc_occupancy* query = nullptr) {
  static_assert(decode::is_input_type<TIn> && decode::is_output_type<TOut>, "f16 or bf16 in; f32, f16 or bf16 out");
  char msg[256];
  if (!args) return gc_fail(err, err_len, "null arguments");
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW) {
    snprintf(msg, sizeof msg, "%s: layout not supported (A row-major, B column-major, C row-major only: tn)", name);
    return gc_fail(err, err_len, msg);
  }
  if (args->dtype_a != decode::Elem<TIn>::abi || args->dtype_b != decode::Elem<TIn>::abi ||
      args->dtype_c != decode::Elem<TOut>::abi) {
    snprintf(msg, sizeof msg, "%s: built for %s A and B and %s C", name, decode::Elem<TIn>::name,
             decode::Elem<TOut>::name);
    return gc_fail(err, err_len, msg);
  }
  if (args->dtype_acc != GC_F32) return gc_fail(err, err_len, "gemv: accumulates in f32 only");
  if (args->math != GC_MATH_STRICT) return gc_fail(err, err_len, "gemv: only the strict math mode");
  if (args->alpha != 1.0 || args->beta != 0.0) return gc_fail(err, err_len, "gemv: only alpha = 1, beta = 0");
  if (args->epilogue != GC_EPI_NONE) return gc_fail(err, err_len, "gemv: no fused epilogue");
  const int64_t m = args->m, n = args->n, k = args->k;
  if (m < 0 || n < 0 || k < 0 || n > INT32_MAX - 32 || k > INT32_MAX - 256)
    return gc_fail(err, err_len, "gemv: dimensions must be in [0, 2^31 - 256)");
  if (m > MAX_M) {
    snprintf(msg, sizeof msg, "%s: m=%lld > %d (FP32 FMAs per row on the CUDA cores; more rows: use decode)", name,
             static_cast<long long>(m), MAX_M);
    return gc_fail(err, err_len, msg);
  }
  if (args->lda < (k > 1 ? k : 1) || args->ldb < (k > 1 ? k : 1) || args->ldc < (n > 1 ? n : 1))
    return gc_fail(err, err_len, "gemv: a leading dimension is shorter than its row");

  const int vb = decode::vector_bytes(args);
  const int rows = m <= 1 ? 1 : m <= 2 ? 2 : 4;
  void (*kernel)(const Params<TIn, TOut>) = rows == 1   ? pick_width<Cfg, TIn, TOut, 1, Tag>(vb)
                                            : rows == 2 ? pick_width<Cfg, TIn, TOut, 2, Tag>(vb)
                                                        : pick_width<Cfg, TIn, TOut, 4, Tag>(vb);
  if (query) return gc_query_occupancy((const void*)kernel, Cfg::THREADS, 0, query, err, err_len);
  if (m == 0 || n == 0) return 0;  // nothing to write (k == 0 runs: every sum is empty, C = 0)

  Params<TIn, TOut> p;
  p.a = static_cast<const TIn*>(args->a);
  p.b = static_cast<const TIn*>(args->b);
  p.c = static_cast<TOut*>(args->c);
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  p.lda = args->lda;
  p.ldb = args->ldb;
  p.ldc = args->ldc;
  const unsigned blocks = static_cast<unsigned>((n + Cfg::WARPS - 1) / Cfg::WARPS);
  kernel<<<blocks, Cfg::THREADS, 0, args->stream>>>(p);
  return gc_check_launch(err, err_len, name);
}

}  // namespace gemv
}  // namespace gc
