// decode: a memory-bound GEMM for decode-shaped problems, M <= 16 tokens (N and K in the thousands).
//
//   C[m, n] = sum_k A[m, k] * B[k, n]     A: f16 or bf16 row-major (lda), m <= 16; B: the same type,
//                                         column-major (ldb: column n is the contiguous K-vector at b + n*ldb,
//                                         a PyTorch Linear weight [N, K]); C: f32, f16 or bf16 row-major (ldc)
//
// At M <= 16 a GEMM does 2*M FLOPs per element of B and reads every element of B once: 16x4096x4096 streams
// 32 MiB of B for 0.5 GFLOP, ~7 us at the H200's 4.8 TB/s and ~1 us of tensor-core time. So the kernel is a
// stream over B and everything else is arranged around keeping enough bytes of B in flight:
//
//   * A CTA owns COLS columns of B (COLS/8 n8 tiles) and a K range (all of K, or 1/S of it when S CTAs of a
//     thread-block cluster split K); its WARPS warps split that range into chunks of 32 k.
//   * Per chunk a lane loads 16 bytes (8 elements) of each of its COLS/8 columns and 16 bytes of each of its
//     two A rows, all vectorized; B with ld.global.nc.L1::no_allocate and an L2 evict-first policy (read once;
//     A, which every CTA reads, stays in L2), UNROLL chunks per iteration so that COLS/8 * UNROLL loads of B
//     are in flight per thread.
//   * The products are mma.sync m16n8k16 (M <= 16 rows fit one m16 tile; FP32 accumulators in registers).
//     The loaded registers feed the MMA as they are: the MMA sums over k, so any permutation of k applied to A
//     and B alike gives the same sum. Lane l (g = l/4, q = l%4) loads k = k0 + 8q .. 8q+7 of column n0 + g and
//     of rows g and g+8 of A; its B registers {x, y} and {z, w} are the B fragments of two MMAs, whose k slots
//     (2q, 2q+1, 2q+8, 2q+9) then stand for k0 + 8q + (0, 1, 2, 3) and k0 + 8q + (4, 5, 6, 7); A's registers
//     are paired the same way (fragment layouts: PTX ISA, "matrix fragments for mma.m16n8k16"). No shared
//     memory, no shuffles on the way in.
//   * Rows g, g+8 >= M and columns >= N are clamped to the last row / column (valid memory): an MMA's output
//     row depends only on its A row and an output column only on its B column, so a clamped one feeds only
//     accumulators that are never stored. Nothing in the loop is predicated on M or N.
//   * The warps' partial sums meet in shared memory and are added in warp order (deterministic); with S > 1,
//     the S CTAs of a cluster then add each other's partials through distributed shared memory in rank order,
//     each CTA writing 1/S of the columns (deterministic again: no atomics, no workspace, one kernel).
//
// Loads are 16 bytes wide when A, B, lda and ldb allow it; otherwise (tight storage with K % 8 != 0: column
// starts only 8-, 4- or 2-byte aligned) the same 8 elements are loaded in 8-, 4- or 2-byte pieces (VB, a
// template parameter chosen at launch). The K tail (the last chunk, partial) is loaded element by element
// with zeros past K, in A and in B alike (never a read of B's padding: it need not be zero or finite).
//
// CUDA headers and the gemmcompare ABI only (never torch).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "gemmcompare/gemm_abi.h"

namespace gc {
namespace decode {

constexpr int MAX_M = 16;    // rows of one m16 MMA tile: the kernel's limit on M
constexpr int CHUNK_K = 32;  // k per chunk: 4 lanes of a quad x 8 elements
constexpr int RED_PAD = 8;   // floats of padding per row of the reduction buffer (fewer bank conflicts)
constexpr int MAX_SPLITS = 8;  // portable cluster size

// COLS columns per CTA (multiple of 8), WARPS warps splitting K, UNROLL chunks per warp and iteration,
// SPLITS CTAs of a cluster splitting K (0: chosen at launch from the device, N and K).
template <int COLS_, int WARPS_, int UNROLL_, int SPLITS_>
struct Config {
  static constexpr int COLS = COLS_, WARPS = WARPS_, UNROLL = UNROLL_, SPLITS = SPLITS_;
  static constexpr int TILES = COLS / 8;  // n8 MMA tiles per CTA
  static constexpr int THREADS = 32 * WARPS;
  static constexpr int RED_PITCH = COLS + RED_PAD;
  static constexpr int SMEM_BYTES = WARPS * MAX_M * RED_PITCH * static_cast<int>(sizeof(float));
  static_assert(COLS % 8 == 0 && COLS >= 8 && COLS <= 128, "COLS: a multiple of 8, 8..128");
  static_assert(WARPS >= 1 && WARPS <= 16, "WARPS: 1..16");
  static_assert(UNROLL >= 1 && UNROLL <= 8, "UNROLL: 1..8");
  static_assert(SPLITS == 0 || SPLITS == 1 || SPLITS == 2 || SPLITS == 4 || SPLITS == 8, "SPLITS: 0 (auto), 1, 2, 4, 8");
};

template <class T>
struct Elem;
template <>
struct Elem<__half> {
  static constexpr gc_dtype abi = GC_F16;
  static constexpr const char* name = "f16";
};
template <>
struct Elem<__nv_bfloat16> {
  static constexpr gc_dtype abi = GC_BF16;
  static constexpr const char* name = "bf16";
};
template <>
struct Elem<float> {
  static constexpr gc_dtype abi = GC_F32;
  static constexpr const char* name = "f32";
};

template <class T>
constexpr bool is_input_type = std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value;
template <class T>
constexpr bool is_output_type = is_input_type<T> || std::is_same<T, float>::value;

__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// ------------------------------------------------------------------------------------------------
// Loads of 8 consecutive 16-bit elements into four 32-bit registers (the lower element in the low half).

__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// B, 16 bytes: read once, so not kept in L1 and first out of L2; the 256-byte L2 prefetch fetches the rest of
// the column's run that the neighbouring lanes and warps read next.
__device__ __forceinline__ uint4 ld_stream_16(const void* p, uint64_t policy) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "l"(policy));
  return v;
}

// A, 16 bytes: every CTA of the same K range reads it, so it stays cacheable.
__device__ __forceinline__ uint4 ld_keep_16(const void* p) {
  uint4 v;
  asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// 8 elements at p, in pieces of VB bytes (p is VB-aligned). VB = 16: one vector load.
template <int VB, bool STREAM>
__device__ __forceinline__ uint4 load8(const void* p, uint64_t policy) {
  if constexpr (VB == 16) {
    return STREAM ? ld_stream_16(p, policy) : ld_keep_16(p);
  } else if constexpr (VB == 8) {
    const uint2 lo = __ldg(static_cast<const uint2*>(p)), hi = __ldg(static_cast<const uint2*>(p) + 1);
    return make_uint4(lo.x, lo.y, hi.x, hi.y);
  } else if constexpr (VB == 4) {
    const unsigned* w = static_cast<const unsigned*>(p);
    return make_uint4(__ldg(w), __ldg(w + 1), __ldg(w + 2), __ldg(w + 3));
  } else {
    static_assert(VB == 2, "VB: 16, 8, 4 or 2 bytes");
    const unsigned short* h = static_cast<const unsigned short*>(p);
    uint32_t r[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) r[i] = static_cast<uint32_t>(__ldg(h + 2 * i)) | (static_cast<uint32_t>(__ldg(h + 2 * i + 1)) << 16);
    return make_uint4(r[0], r[1], r[2], r[3]);
  }
}

// The first `valid` (may be <= 0) of 8 elements at p, element by element, zeros after them: the K tail.
__device__ __forceinline__ uint4 load8_tail(const void* p, int valid) {
  const unsigned short* h = static_cast<const unsigned short*>(p);
  uint32_t r[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t lo = (2 * i < valid) ? __ldg(h + 2 * i) : 0u;
    const uint32_t hi = (2 * i + 1 < valid) ? __ldg(h + 2 * i + 1) : 0u;
    r[i] = lo | (hi << 16);
  }
  return make_uint4(r[0], r[1], r[2], r[3]);
}

// D += A * B, m16n8k16, f32 accumulators; A {a0..a3} and B {b0, b1} as in the PTX fragment layout.
template <class TIn>
__device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same<TIn, __nv_bfloat16>::value) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

// One chunk's products: lo / hi are this lane's 8 elements of A rows g and g+8, b its 8 elements of a column.
// Fragment slots k (2q, 2q+1, 2q+8, 2q+9) of the first MMA hold elements (0, 1, 2, 3) of the lane's 8, of
// the second MMA elements (4, 5, 6, 7): A {row g: k 2q.., row g+8: k 2q.., row g: k 2q+8.., row g+8: k 2q+8..}.
template <class TIn>
__device__ __forceinline__ void mma_chunk(float (&d)[4], const uint4& lo, const uint4& hi, const uint4& b) {
  mma16816<TIn>(d, lo.x, hi.x, lo.y, hi.y, b.x, b.y);
  mma16816<TIn>(d, lo.z, hi.z, lo.w, hi.w, b.z, b.w);
}

// ------------------------------------------------------------------------------------------------
// Distributed shared memory (sm_90 thread-block clusters), raw PTX.

__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}

// The float at the same shared-memory offset as `local`, in the CTA of cluster rank `rank`.
__device__ __forceinline__ float ld_cluster(const float* local, unsigned rank) {
  float v = 0.f;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(local));
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
#endif
  return v;
}

// ------------------------------------------------------------------------------------------------
// The kernel

template <class TIn, class TOut>
struct Params {
  const TIn* a;
  const TIn* b;
  TOut* c;
  int m, n, k;
  int64_t lda, ldb, ldc;
  int splits;       // CTAs of a cluster splitting K (1: no cluster); consecutive blockIdx.x, rank = blockIdx.x % splits
  int k_per_split;  // a multiple of CHUNK_K: a chunk never straddles two splits
};

template <class Cfg, class TIn, class TOut, int VB, class Tag>
__global__ void __launch_bounds__(Cfg::THREADS) decode_kernel(const Params<TIn, TOut> p) {
  constexpr int TILES = Cfg::TILES, UNROLL = Cfg::UNROLL, WARPS = Cfg::WARPS, PITCH = Cfg::RED_PITCH;
  extern __shared__ float4 smem_f4[];  // float4: 16-byte aligned
  float* red = reinterpret_cast<float*>(smem_f4);  // [WARPS][MAX_M][PITCH]

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2, q = lane & 3;
  const int split = static_cast<int>(blockIdx.x) % p.splits;
  const int n0 = static_cast<int>(blockIdx.x / p.splits) * Cfg::COLS;
  const int k_begin = split * p.k_per_split;
  const int k_end = min(p.k, k_begin + p.k_per_split);
  const int span = max(k_end - k_begin, 0);

  // This lane's A rows and B columns, clamped into the matrix (see the header), at its 8 elements of a chunk.
  const bool two_halves = p.m > 8;  // rows g+8 exist: otherwise row g's registers stand in for them
  const TIn* a_lo = p.a + static_cast<int64_t>(min(g, p.m - 1)) * p.lda + k_begin + 8 * q;
  const TIn* a_hi = p.a + static_cast<int64_t>(min(g + 8, p.m - 1)) * p.lda + k_begin + 8 * q;
  const TIn* b_col[TILES];
#pragma unroll
  for (int t = 0; t < TILES; ++t)
    b_col[t] = p.b + static_cast<int64_t>(min(n0 + 8 * t + g, p.n - 1)) * p.ldb + k_begin + 8 * q;
  const uint64_t policy = evict_first_policy();

  float acc[TILES][4];
#pragma unroll
  for (int t = 0; t < TILES; ++t) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.f;

  // Groups of UNROLL whole chunks, round robin over the warps: every load of a group is issued before its MMAs.
  const int groups = span / (CHUNK_K * UNROLL);
  for (int i = warp; i < groups; i += WARPS) {
    const int off = i * UNROLL * CHUNK_K;
    uint4 lo[UNROLL], hi[UNROLL], bv[UNROLL][TILES];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int t = 0; t < TILES; ++t) bv[u][t] = load8<VB, true>(b_col[t] + off + u * CHUNK_K, policy);
      lo[u] = load8<VB, false>(a_lo + off + u * CHUNK_K, policy);
      hi[u] = two_halves ? load8<VB, false>(a_hi + off + u * CHUNK_K, policy) : lo[u];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int t = 0; t < TILES; ++t) mma_chunk<TIn>(acc[t], lo[u], hi[u], bv[u][t]);
  }
  // The rest: fewer than UNROLL whole chunks and the partial one at K's end, one chunk per warp, continuing
  // the round robin; a lane's 8 elements are a whole vector or the K tail (element-wise, zeros past k_end).
  const int chunks = (span + CHUNK_K - 1) / CHUNK_K;
  for (int c = groups * UNROLL + (warp - groups % WARPS + WARPS) % WARPS; c < chunks; c += WARPS) {
    const int off = c * CHUNK_K;
    const int valid = span - off - 8 * q;  // of this lane's 8 elements, those before k_end
    const bool whole = valid >= 8;
    const uint4 lo = whole ? load8<VB, false>(a_lo + off, policy) : load8_tail(a_lo + off, valid);
    const uint4 hi = !two_halves ? lo : whole ? load8<VB, false>(a_hi + off, policy) : load8_tail(a_hi + off, valid);
    __syncwarp();  // `whole` differs between lanes at K's end; mma.sync.aligned needs the warp converged
    // One column at a time: a few chunks per warp at most, not worth the registers of loading all columns at
    // once (the element-wise tail of every column would set the whole kernel's register count). The empty asm
    // keeps the compiler from hoisting the next column's loads above this column's MMAs.
#pragma unroll
    for (int t = 0; t < TILES; ++t) {
      const uint4 bv = whole ? load8<VB, true>(b_col[t] + off, policy) : load8_tail(b_col[t] + off, valid);
      __syncwarp();
      mma_chunk<TIn>(acc[t], lo, hi, bv);
      asm volatile("" ::: "memory");
    }
  }

  // Each warp's partial sums into red[warp]: accumulator (t, e) is row g + 8 (e / 2), column 8t + 2q + e % 2.
  float* mine = red + warp * MAX_M * PITCH;
#pragma unroll
  for (int t = 0; t < TILES; ++t) {
    *reinterpret_cast<float2*>(mine + g * PITCH + 8 * t + 2 * q) = make_float2(acc[t][0], acc[t][1]);
    *reinterpret_cast<float2*>(mine + (g + 8) * PITCH + 8 * t + 2 * q) = make_float2(acc[t][2], acc[t][3]);
  }
  __syncthreads();

  // Sum over the warps in warp order, rows < M only: into red[0] (each element read and written by one thread).
  const int outputs = p.m * Cfg::COLS;
  for (int i = static_cast<int>(threadIdx.x); i < outputs; i += Cfg::THREADS) {
    const int r = i / Cfg::COLS, j = i % Cfg::COLS;
    float s = red[r * PITCH + j];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) s += red[(w * MAX_M + r) * PITCH + j];
    if (p.splits == 1) {
      if (n0 + j < p.n) store(p.c + static_cast<int64_t>(r) * p.ldc + n0 + j, s);
    } else {
      red[r * PITCH + j] = s;
    }
  }
  if (p.splits == 1) return;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Split K: every CTA's partial is in its red[0]. CTA `rank` adds columns [rank, rank + 1) * COLS / splits
  // of all of them, in rank order, and stores them; nobody leaves before everyone has read its partial.
  cluster_sync();
  const int per = Cfg::COLS / p.splits;
  const int j0 = static_cast<int>(cluster_rank()) * per;
  for (int i = static_cast<int>(threadIdx.x); i < p.m * per; i += Cfg::THREADS) {
    const int r = i / per, j = j0 + i % per;
    float s = 0.f;
    for (int rank = 0; rank < p.splits; ++rank) s += ld_cluster(red + r * PITCH + j, static_cast<unsigned>(rank));
    if (n0 + j < p.n) store(p.c + static_cast<int64_t>(r) * p.ldc + n0 + j, s);
  }
  cluster_sync();
#else
  __trap();  // the launcher never splits K below sm_90
#endif
}

// ------------------------------------------------------------------------------------------------
// Host side

inline int device_fact(cudaDeviceAttr attr, int* cache) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  if (dev >= 0 && dev < 64 && cache[dev]) return cache[dev];
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, dev) != cudaSuccess) return 0;
  if (dev >= 0 && dev < 64) cache[dev] = value;
  return value;
}

inline int device_sms() {
  static int cache[64] = {0};
  return device_fact(cudaDevAttrMultiProcessorCount, cache);
}

inline int device_cc_major() {
  static int cache[64] = {0};
  return device_fact(cudaDevAttrComputeCapabilityMajor, cache);
}

// SPLITS = 0: the fewest CTAs per cluster (1, 2, 4, 8) that give at least AUTO_CTAS_PER_SM CTAs per SM, while
// each split keeps at least one full round of its warps (WARPS * UNROLL chunks); 1 below sm_90.
constexpr int AUTO_CTAS_PER_SM = 2;

template <class Cfg>
int auto_splits(int64_t tiles, int64_t k) {
  if (device_cc_major() < 9) return 1;
  const int64_t want = static_cast<int64_t>(AUTO_CTAS_PER_SM) * device_sms();
  const int64_t min_k = static_cast<int64_t>(Cfg::WARPS) * Cfg::UNROLL * CHUNK_K;
  int s = 1;
  while (s < MAX_SPLITS && tiles * s < want && k >= 2 * s * min_k) s *= 2;
  return s;
}

// The widest piece (16, 8, 4 or 2 bytes) every 8-element load of A and B can take: aligned bases and ld.
inline int vector_bytes(const gc_gemm_args* args) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(args->a), b = reinterpret_cast<uintptr_t>(args->b);
  for (int vb = 16; vb > 2; vb /= 2)
    if (a % vb == 0 && b % vb == 0 && (2 * args->lda) % vb == 0 && (2 * args->ldb) % vb == 0) return vb;
  return 2;
}

// Validate the arguments against what this instantiation computes, pick the load width and the split, launch
// on the harness's stream (a cluster launch when K is split), check the launch. With `query` non-null: the
// occupancy of the launch it would make instead (gemm_abi.h: NAME_occupancy).
template <class Cfg, class Tag, class TIn, class TOut>
int launch(const gc_gemm_args* args, const char* name, char* err, size_t err_len, gc_occupancy* query = nullptr) {
  static_assert(is_input_type<TIn> && is_output_type<TOut>, "f16 or bf16 in; f32, f16 or bf16 out");
  char msg[256];
  if (!args) return gc_fail(err, err_len, "null arguments");
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW) {
    snprintf(msg, sizeof msg, "%s: layout not supported (A row-major, B column-major, C row-major only: tn)", name);
    return gc_fail(err, err_len, msg);
  }
  if (args->dtype_a != Elem<TIn>::abi || args->dtype_b != Elem<TIn>::abi || args->dtype_c != Elem<TOut>::abi) {
    snprintf(msg, sizeof msg, "%s: built for %s A and B and %s C", name, Elem<TIn>::name, Elem<TOut>::name);
    return gc_fail(err, err_len, msg);
  }
  if (args->dtype_acc != GC_F32) return gc_fail(err, err_len, "decode: accumulates in f32 only");
  if (args->math != GC_MATH_STRICT) return gc_fail(err, err_len, "decode: only the strict math mode");
  if (args->alpha != 1.0 || args->beta != 0.0) return gc_fail(err, err_len, "decode: only alpha = 1, beta = 0");
  if (args->epilogue != GC_EPI_NONE) return gc_fail(err, err_len, "decode: no fused epilogue");
  const int64_t m = args->m, n = args->n, k = args->k;
  if (m < 0 || n < 0 || k < 0 || n > INT32_MAX || k > INT32_MAX)
    return gc_fail(err, err_len, "decode: dimensions must be in [0, 2^31)");
  if (m > MAX_M) {
    snprintf(msg, sizeof msg, "%s: m=%lld > %d (one m16 MMA tile holds the rows; larger M is not memory-bound)",
             name, static_cast<long long>(m), MAX_M);
    return gc_fail(err, err_len, msg);
  }
  if (args->lda < (k > 1 ? k : 1) || args->ldb < (k > 1 ? k : 1) || args->ldc < (n > 1 ? n : 1))
    return gc_fail(err, err_len, "decode: a leading dimension is shorter than its row");

  const int64_t tiles = (n + Cfg::COLS - 1) / Cfg::COLS;
  int splits = Cfg::SPLITS ? Cfg::SPLITS : auto_splits<Cfg>(tiles, k);
  if (splits > 1 && device_cc_major() < 9) {
    snprintf(msg, sizeof msg, "%s: splits=%d needs thread-block clusters (sm_90+)", name, splits);
    return gc_fail(err, err_len, msg);
  }
  if (tiles * splits > INT32_MAX) return gc_fail(err, err_len, "decode: too many CTAs for a 1-D grid");
  const int vb = vector_bytes(args);
  void (*kernel)(const Params<TIn, TOut>) = vb == 16  ? decode_kernel<Cfg, TIn, TOut, 16, Tag>
                                             : vb == 8 ? decode_kernel<Cfg, TIn, TOut, 8, Tag>
                                             : vb == 4 ? decode_kernel<Cfg, TIn, TOut, 4, Tag>
                                                       : decode_kernel<Cfg, TIn, TOut, 2, Tag>;
  if (query) return gc_query_occupancy((const void*)kernel, Cfg::THREADS, Cfg::SMEM_BYTES, query, err, err_len);
  if (m == 0 || n == 0) return 0;  // nothing to write

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
  p.splits = splits;
  const int64_t chunks = (k + CHUNK_K - 1) / CHUNK_K;
  p.k_per_split = static_cast<int>((chunks + splits - 1) / splits * CHUNK_K);

  if (Cfg::SMEM_BYTES > 48 * 1024)
    GC_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES));
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1] = {};
  cfg.gridDim = dim3(static_cast<unsigned>(tiles * splits), 1, 1);
  cfg.blockDim = dim3(Cfg::THREADS, 1, 1);
  cfg.dynamicSmemBytes = Cfg::SMEM_BYTES;
  cfg.stream = args->stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(splits);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = splits > 1 ? 1 : 0;
  GC_CHECK_CUDA(cudaLaunchKernelEx(&cfg, kernel, p));
  return gc_check_launch(err, err_len, name);
}

}  // namespace decode
}  // namespace gc
