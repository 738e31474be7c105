// hopper_common.cuh: what every step of the Hopper GEMM ladder shares.
//
//   C[m, n] = alpha * sum_k A[m, k] * B[k, n] + beta * C[m, n]
//   A: f16 or bf16, row-major (lda)        -- K contiguous
//   B: same type as A, column-major (ldb)  -- stored as n rows of k: K contiguous too
//   C: f32, f16 or bf16, row-major (ldc); accumulation in f32
//
// Both operands are K-major, which is the layout wgmma reads from shared memory without a transpose,
// so A and B are handled by identical code (a tile of ROWS x 64 k-elements).
//
// The data path of every step:
//
//   global --TMA (cp.async.bulk.tensor, 128B swizzle, OOB zero fill)--> shared-memory stage
//          --wgmma.mma_async m64nNk16 (both operands through descriptors)--> f32 accumulators in registers
//          --epilogue: alpha/beta, convert, guarded stores (or shared memory + TMA store)--> C
//
// with an mbarrier per stage saying "the TMA bytes have landed" (full) and, from step 2 on, one saying
// "every consumer is done reading this stage" (empty).
//
// ------------------------------------------------------------------------------------------------
// Shared-memory tile layout (what TMA writes and what the wgmma descriptor describes)
//
// A stage holds, per operand, BK/64 "k blocks"; a k block is ROWS rows of 64 16-bit elements, i.e.
// one 128-byte line per row, written by one TMA box {64, ROWS} with CU_TENSOR_MAP_SWIZZLE_128B:
//
//   element (r, k) of a k block lives at byte  r * 128 + (((k / 8) ^ (r % 8)) * 16) + (k % 8) * 2
//
// (16-byte chunk k/8 of line r is XOR-ed with r % 8). TMA and the wgmma unit both apply that XOR to
// absolute shared-memory address bits ([4:6] ^= [7:9]), so every k block starts at a multiple of
// 1024 bytes (8 lines), and the kernels round the dynamic shared-memory base up to 1024.
//
// In wgmma terms this is the canonical K-major, 128-byte-swizzle layout: core matrices of 8 rows x
// 16 bytes, 8 rows per 1024-byte swizzle atom, atoms stacked along M/N every 1024 bytes. Descriptor
// (PTX ISA, "Matrix Descriptor Format" of wgmma):
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset >> 4: unused by swizzled K-major layouts, set to 1
//   bits 32-45  stride-dimension byte offset >> 4: 1024 >> 4 = 64, from one 8-row group to the next
//   bits 49-51  base offset: 0, as every atom starts 1024-aligned
//   bits 62-63  swizzle mode: 1 = 128-byte swizzle
// One wgmma consumes k16 = 32 bytes of each row: the k step ks (0..3) inside a k block is selected by
// adding 32 * ks bytes to the start address (the hardware swizzles the resulting address, exactly as
// TMA did when it wrote it); rows are selected by adding 128 bytes per row (multiples of 64 rows here).
//
// ------------------------------------------------------------------------------------------------
// Accumulator fragment of wgmma m64nNk16 with f32 accumulators (PTX ISA, "wgmma .m64nNk16 register
// fragment layout for accumulator matrix D"): thread t of the warpgroup, w = t / 32, l = t % 32,
// holds N/2 floats; float index 4*j + 2*i + c is
//       row = 16*w + l/4 + 8*i,   col = 8*j + 2*(l%4) + c        (j < N/8, i, c in {0, 1})
// so each thread owns pairs of adjacent columns: the epilogues store them as one 2-element vector.
//
// CUDA headers and the gemmcompare ABI only (never torch). sm_90a only (wgmma, setmaxnreg, multicast).
#pragma once

#include <cuda.h>  // CUtensorMap and its enums only: the driver function is fetched at run time
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include <type_traits>

#include "gemmcompare/gemm_abi.h"
#include "hopper_wgmma.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the hopper GEMM kernels use wgmma, setmaxnreg and TMA multicast: build them for sm_90a (-gencode=arch=compute_90a,code=sm_90a)"
#endif

namespace gc {
namespace hopper {

// ------------------------------------------------------------------------------------------------
// Element types

template <class T>
struct TypeInfo;
template <>
struct TypeInfo<__half> {
  static constexpr gc_dtype abi = GC_F16;
  static constexpr CUtensorMapDataType tma = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  static constexpr const char* name = "f16";
};
template <>
struct TypeInfo<__nv_bfloat16> {
  static constexpr gc_dtype abi = GC_BF16;
  static constexpr CUtensorMapDataType tma = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  static constexpr const char* name = "bf16";
};
// FP8 inputs (hopper.fp8 only): TMA moves them as bytes.
template <>
struct TypeInfo<__nv_fp8_e4m3> {
  static constexpr gc_dtype abi = GC_E4M3;
  static constexpr CUtensorMapDataType tma = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  static constexpr const char* name = "e4m3";
};
template <>
struct TypeInfo<__nv_fp8_e5m2> {
  static constexpr gc_dtype abi = GC_E5M2;
  static constexpr CUtensorMapDataType tma = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  static constexpr const char* name = "e5m2";
};
template <>
struct TypeInfo<float> {
  static constexpr gc_dtype abi = GC_F32;
  static constexpr CUtensorMapDataType tma = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  static constexpr const char* name = "f32";
};

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Two adjacent elements as one aligned vector (8 bytes for f32, 4 for 16-bit types).
__device__ __forceinline__ void store2(float* p, float a, float b) { *reinterpret_cast<float2*>(p) = make_float2(a, b); }
__device__ __forceinline__ void store2(__half* p, float a, float b) { *reinterpret_cast<__half2*>(p) = __floats2half2_rn(a, b); }
__device__ __forceinline__ void store2(__nv_bfloat16* p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ float2 load2(const float* p) { return *reinterpret_cast<const float2*>(p); }
__device__ __forceinline__ float2 load2(const __half* p) { return __half22float2(*reinterpret_cast<const __half2*>(p)); }
__device__ __forceinline__ float2 load2(const __nv_bfloat16* p) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
}
// The bit pattern of two converted elements packed as they sit in memory (lower column in the low bits).
__device__ __forceinline__ uint32_t pack2(__half, float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}
__device__ __forceinline__ uint32_t pack2(__nv_bfloat16, float a, float b) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// ------------------------------------------------------------------------------------------------
// The configuration: every tuning choice, as template parameters (validated here and, with reasons,
// by the Python family; see README.md). Each step static_asserts the subset it implements.
//
//   BM, BN, BK  block tile. A CTA computes BM x BN of C, BK of K per pipeline stage.
//   STAGES      shared-memory stages (1 for step 1).
//   CONSUMERS   math warpgroups; each owns WM = BM / CONSUMERS rows of the tile (MI = WM / 64 wgmma
//               m64 blocks) and all BN columns (one m64nBNk16 per m64 block and k16 step).
//   CLUSTER_M   CTAs per cluster along M (steps 5, 6): they share the B tile, which is multicast.
//   GROUP       raster: GROUP tile rows (cluster-tile rows for clusters) are walked column by column,
//               so the tiles resident at one time share A and B panels in L2.
//   SPLITS      K slices per output tile (step 7, split_k; 0 = chosen per problem); 1 everywhere else.
template <int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_M_, int GROUP_, int SPLITS_ = 1>
struct Config {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
  static constexpr int CLUSTER_M = CLUSTER_M_, GROUP = GROUP_;
  static constexpr int SPLITS = SPLITS_;      // split_k only: K slices per tile (0: chosen per problem)
  static constexpr int WM = BM / CONSUMERS;  // rows per consumer warpgroup
  static constexpr int MI = WM / 64;         // m64 wgmma blocks per consumer warpgroup
  static constexpr int KB = BK / 64;         // 64-element (128-byte) k blocks per stage
  static constexpr int ACC = MI * BN / 2;    // f32 accumulators per consumer thread

  static_assert(CONSUMERS == 1 || CONSUMERS == 2, "one or two consumer warpgroups");
  static_assert(BM % (64 * CONSUMERS) == 0, "each consumer warpgroup owns a multiple of 64 rows (wgmma M = 64)");
  static_assert(BM <= 256, "BM <= 256: the A tile is one TMA box, whose dimensions are at most 256");
  static_assert(BN == 64 || BN == 128 || BN == 192 || BN == 256, "BN is the wgmma N: 64, 128, 192 or 256");
  static_assert(BK % 64 == 0 && BK >= 64 && BK <= 256, "BK is a multiple of 64 (one 128-byte swizzle line of 16-bit elements)");
  static_assert(STAGES >= 1 && STAGES <= 8, "1..8 stages");
  static_assert(CLUSTER_M == 1 || CLUSTER_M == 2 || CLUSTER_M == 4, "cluster of 1, 2 or 4 CTAs along M");
  static_assert((BN / CLUSTER_M) % 8 == 0, "each CTA of a cluster multicasts BN/CLUSTER_M rows of B (whole 8-row swizzle atoms)");
  static_assert(GROUP >= 1, "raster group >= 1");
  static_assert(ACC <= 128, "more than 128 f32 accumulators per thread leaves too few registers (spills)");
};

// Dynamic shared memory of one CTA, as offsets from a 1024-aligned base:
//   [stage 0: A k blocks | B k blocks] ... [stage STAGES-1] [epilogue buffers] [full[STAGES]] [empty[STAGES]]
template <class Cfg, uint32_t EPI_BYTES = 0>
struct Smem {
  static constexpr uint32_t LINE = 128;                       // bytes per row of one k block
  static constexpr uint32_t A_KBLOCK = Cfg::BM * LINE;
  static constexpr uint32_t B_KBLOCK = Cfg::BN * LINE;
  static constexpr uint32_t A_BYTES = Cfg::KB * A_KBLOCK;     // A tile of one stage
  static constexpr uint32_t B_BYTES = Cfg::KB * B_KBLOCK;     // B tile of one stage
  static constexpr uint32_t STAGE = A_BYTES + B_BYTES;
  // Bytes TMA delivers into one CTA per stage: whole boxes always (elements past M, N or K arrive as
  // zeros and still count), and with a cluster every slice of B lands in every CTA.
  static constexpr uint32_t TX_BYTES = STAGE;
  static constexpr uint32_t EPI = Cfg::STAGES * STAGE;
  static constexpr uint32_t BARS = EPI + EPI_BYTES;
  static constexpr uint32_t BYTES = BARS + 16 * Cfg::STAGES;
  static constexpr uint32_t DYNAMIC = BYTES + 1024;           // slack to round the base up to 1024
  static_assert(EPI_BYTES % 1024 == 0, "epilogue buffers keep 1024-byte alignment (128B-swizzled TMA boxes)");
  static_assert(DYNAMIC <= 227 * 1024, "more than the 227 KB of shared memory a block can have");

  static __device__ __forceinline__ uint32_t a(uint32_t base, uint32_t s) { return base + s * STAGE; }
  static __device__ __forceinline__ uint32_t b(uint32_t base, uint32_t s) { return base + s * STAGE + A_BYTES; }
  static __device__ __forceinline__ uint32_t full(uint32_t base, uint32_t s) { return base + BARS + 8 * s; }
  static __device__ __forceinline__ uint32_t empty(uint32_t base, uint32_t s) {
    return base + BARS + 8 * (Cfg::STAGES + s);
  }
};

// ------------------------------------------------------------------------------------------------
// PTX wrappers. Everything that orders memory is asm volatile with a "memory" clobber, so the compiler
// keeps ordinary loads and stores on their side of it.

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ uint32_t align1024(uint32_t a) { return (a + 1023u) & ~1023u; }

// -- mbarrier ----------------------------------------------------------------------------------------
// A phase completes when its pending-arrival count reaches zero and its transaction count is zero.
// try_wait.parity(P) returns true once the phase with parity P has completed; on a fresh barrier (in
// phase 0) the "preceding phase" has parity 1, so waiting for parity 1 returns at once: that is how a
// producer's first pass over the empty barriers goes through without any consumer arrival.
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA complete_tx) and to the other CTAs
// of the cluster; followed by a CTA or cluster barrier before anyone uses them.
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// One arrival plus "expect this many more transaction bytes in the current phase".
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Arrive on the barrier at the same offset in CTA `cta` (rank in the cluster; may be this CTA). Default
// semantics (release at CTA scope), as CUTLASS's ClusterBarrier does: what the arrival publishes is
// "this warp's wgmmas have finished reading the stage", and those reads are complete once
// wgmma.wait_group returned -- there are no ordinary writes for the other CTA to acquire. (The
// .release.cluster form compiles to MEMBAR.ALL.GPU before every arrival: a GPU-wide fence per k tile.)
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}

#ifdef GC_HOPPER_DEBUG_HANG
// Debug builds only (it adds a printf, i.e. a call, to every kernel): report a wait that has spun for
// about 2^31 polls -- far longer than any healthy pipeline -- and trap, instead of hanging silently.
__device__ __noinline__ void report_hang(uint32_t bar, uint32_t parity) {
  printf("hopper: block (%d,%d) thread %d stuck on mbarrier at smem 0x%x, parity %u\n", blockIdx.x, blockIdx.y,
         threadIdx.x, bar, parity);
  __trap();
}
#endif

// Default semantics (acquire at CTA scope) also for the empty barriers of a cluster, whose arrivals
// come from other CTAs: the producer only learns from them that a stage may be overwritten by TMA (an
// async-proxy write ordered by the barrier itself), it reads nothing those CTAs wrote. (An
// .acquire.cluster wait compiles to an L1 invalidation, CCTL.IVALL, after every successful wait.)
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// Spin until the phase of parity `parity` has completed (try_wait itself suspends the thread for a
// hardware-chosen time before returning false, so this loop is not a hot spin).
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
#ifdef GC_HOPPER_DEBUG_HANG
  uint32_t polls = 0;
  while (!mbar_try_wait(bar, parity)) {
    if (++polls == (1u << 31)) report_hang(bar, parity);
  }
#else
  while (!mbar_try_wait(bar, parity)) {
  }
#endif
}

// -- TMA ---------------------------------------------------------------------------------------------
// Tensor maps are __grid_constant__ kernel parameters; their generic address names them.
__device__ __forceinline__ void prefetch_tmap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Box {c0 .. c0+box0, c1 .. c1+box1} of `map` -> shared memory at dst (this CTA); complete_tx on bar.
// Coordinates are element indices (c0 along K, c1 along rows) and may lie partly or wholly outside
// the tensor: those elements arrive as zeros.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

// A box {c0 .. c0+box0, c1 .. c1+box1, c2 .. c2+box2} of a 3-D map (hopper.grouped: B as {K, N, groups}, c2 the
// group, box2 = 1, so the box is laid out in shared memory exactly as a 2-D box {box0, box1}).
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// The same box, written to the same CTA-relative offset dst in every CTA of the cluster whose bit is set
// in cta_mask (bit i = %cluster_ctarank i), and complete_tx signalled on the barrier at offset bar in
// each of them.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1,
                                                      uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}

// Shared memory at src -> box at {c0, c1} of `map` in global memory; elements outside the tensor are
// not written (the store clips). Completion is tracked per thread with bulk async-groups.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// At most N of this thread's bulk groups still reading shared memory (their source may be reused).
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// At most N of this thread's bulk groups not complete (writes included).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// Orders this thread's ordinary shared-memory writes before later async-proxy (TMA) reads of them.
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// -- wgmma -------------------------------------------------------------------------------------------
// fence: before the first wgmma of a batch, and whenever the accumulator registers were touched by
// ordinary instructions since the last wgmma (zeroing, epilogue reads). commit: closes a group of
// issued wgmmas. wait<N>: returns when at most N of this thread's groups are pending.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// A compiler-level fence on the accumulators: an empty asm that "reads and writes" each of them. Placed
// right after wgmma_wait it stops the compiler from scheduling an epilogue read (or the zeroing of the
// next tile) before the wait -- which would read registers the tensor core still owns, and which ptxas
// would answer by serialising the whole wgmma pipeline (C7510).
template <int N>
__device__ __forceinline__ void fence_regs(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int M, int N>
__device__ __forceinline__ void fence_regs(float (&d)[M][N]) {
#pragma unroll
  for (int i = 0; i < M; ++i) fence_regs(d[i]);
}

// Descriptor of a K-major, 128-byte-swizzled operand whose first row starts at shared address addr
// (a multiple of 1024, plus 32 * k-step). See the layout note at the top.
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFFu) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}

// All the wgmmas of one stage for one consumer warpgroup: for every 64-wide k block and k16 step, one
// m64nBNk16 per m64 block. a_rows: shared address of this warpgroup's first A row in the stage's
// first k block; b_tile: the stage's B tile. accumulate = 0 makes the first k step overwrite the
// accumulators instead of adding to them (scale-d = false). k outer, m inner: consecutive wgmmas write
// different accumulators, so the tensor core can overlap them.
template <class Cfg, class TIn, uint32_t A_KBLOCK, uint32_t B_KBLOCK>
__device__ __forceinline__ void mma_stage(float (&acc)[Cfg::MI][Cfg::BN / 2], uint32_t a_rows, uint32_t b_tile,
                                          uint32_t accumulate) {
  const uint64_t da0 = make_desc_sw128(a_rows);
  const uint64_t db0 = make_desc_sw128(b_tile);
#pragma unroll
  for (int kb = 0; kb < Cfg::KB; ++kb) {
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      const uint64_t db = db0 + ((kb * B_KBLOCK + ks * 32) >> 4);
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi) {
        const uint64_t da = da0 + ((kb * A_KBLOCK + mi * 64 * 128 + ks * 32) >> 4);
        Wgmma<Cfg::BN, TIn>::mma(acc[mi], da, db, (kb == 0 && ks == 0) ? accumulate : 1u);
      }
    }
  }
}

// -- warp specialisation and clusters -------------------------------------------------------------------
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(REGS % 8 == 0 && REGS >= 24 && REGS <= 256, "setmaxnreg takes a multiple of 8 in 24..256");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(REGS % 8 == 0 && REGS >= 24 && REGS <= 256, "setmaxnreg takes a multiple of 8 in 24..256");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// All non-exited threads of the cluster: arrive (release) then wait (acquire).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Named barrier `id` (1..15; 0 is __syncthreads) over `count` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// The warpgroup index as a value the compiler knows to be warp-uniform (setmaxnreg and the role
// branches must be taken by whole warpgroups).
__device__ __forceinline__ int warpgroup_index() { return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0); }

// Position in a ring of STAGES stages and the parity of the pass over it.
template <int STAGES>
struct PipeState {
  uint32_t stage = 0, phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

// ------------------------------------------------------------------------------------------------
// Kernel parameters (one struct for every step; a step ignores what it does not use).
struct Params {
  CUtensorMap tma_a;  // A: dims {K, M}, box {64, BM}
  CUtensorMap tma_b;  // B: dims {K, N}, box {64, BN / CLUSTER_M}
  CUtensorMap tma_c;  // C (TMA-store epilogue only): dims {N, M}, box {128 bytes of columns, 64}
  void* c;
  int64_t ldc;
  int m, n;
  int k_tiles;        // ceil(K / BK) >= 1
  int tiles_m, tiles_n;
  int ctiles_m;       // cluster tiles along M: ceil(tiles_m / CLUSTER_M)
  float alpha, beta;
  int read_c;         // beta != 0: the epilogue reads C
  int c_vec2;         // C pairs may be stored as one 2-element vector (ldc even, C aligned to 2 elements)
  float* partials;    // split_k: splits x M x N f32 partial sums (the entry's workspace); unused elsewhere
  int splits;         // split_k: K slices per tile (1: the tile's sums go straight to C)
  const float* scale_a;  // fp8: the dequantization scales (device pointers; their shape: `scaling`)
  const float* scale_b;
  int scaling;           // fp8: gc_scaling (tensor: one each; rowcol: m and n; block: 1x128 of A, 128x128 of B)
  const int64_t* group_offsets;  // grouped: groups + 1 cumulative row offsets (device; gemm_abi.h ABI 4)
  int groups;                    // grouped: the group count (tma_b is then the 3-D map {K, N, groups})
};

// Grouped raster: linear index t over a tiles_m x tiles_n grid -> (tm, tn). Indices walk `group` tile
// rows column by column, then the next group of rows, so consecutive indices (the CTAs running at one
// time) cover a compact block of C and share the A rows and B columns it needs in L2.
__host__ __device__ __forceinline__ void grouped_raster(int t, int tiles_m, int tiles_n, int group, int& tm, int& tn) {
  const int per_group = group * tiles_n;
  const int first_m = (t / per_group) * group;
  const int rows = (tiles_m - first_m < group) ? tiles_m - first_m : group;
  const int in_group = t - (t / per_group) * per_group;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}

// ------------------------------------------------------------------------------------------------
// Epilogue 1: accumulators of one m64 block straight to global memory. Each thread writes its column
// pairs (one 8- or 4-byte vector when C allows it); rows at or past M and columns at or past N are
// skipped, so ragged tiles need nothing else. row0/col0: global row and column of this thread's element
// (i, j, c) = (0, 0, 0) of the fragment.
//
// fast: the block lies wholly inside C, C takes 2-element vectors and beta == 0 -- then every store is an
// unguarded vector store (the case of every tile but the edges in a benchmark), with no per-element
// compares or branches.
//
// m_end: rows at or past it are not stored (p.m for one GEMM; hopper.grouped passes its group's end row, so a
// tile stores nothing outside its group).
template <class TOut, int N>
__device__ __forceinline__ void store_block_direct(const float (&acc)[N / 2], const Params& p, int row0, int col0,
                                                   bool fast, int m_end) {
  TOut* const c = static_cast<TOut*>(p.c);
  if (fast) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      TOut* const crow = c + static_cast<int64_t>(row0 + 8 * i) * p.ldc + col0;
#pragma unroll
      for (int j = 0; j < N / 8; ++j) store2(crow + 8 * j, p.alpha * acc[4 * j + 2 * i], p.alpha * acc[4 * j + 2 * i + 1]);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = row0 + 8 * i;
    if (row >= m_end) continue;
    TOut* const crow = c + static_cast<int64_t>(row) * p.ldc;
#pragma unroll
    for (int j = 0; j < N / 8; ++j) {
      const int col = col0 + 8 * j;
      float v0 = p.alpha * acc[4 * j + 2 * i];
      float v1 = p.alpha * acc[4 * j + 2 * i + 1];
      const bool pair = p.c_vec2 && col + 1 < p.n;
      if (p.read_c) {  // beta == 0 never reads C (it may hold NaNs)
        if (pair) {
          const float2 old = load2(crow + col);
          v0 += p.beta * old.x;
          v1 += p.beta * old.y;
        } else {
          if (col < p.n) v0 += p.beta * to_f32(crow[col]);
          if (col + 1 < p.n) v1 += p.beta * to_f32(crow[col + 1]);
        }
      }
      if (pair) {
        store2(crow + col, v0, v1);
      } else {
        if (col < p.n) crow[col] = from_f32<TOut>(v0);
        if (col + 1 < p.n) crow[col + 1] = from_f32<TOut>(v1);
      }
    }
  }
}

template <class TOut, int N>
__device__ __forceinline__ void store_block_direct(const float (&acc)[N / 2], const Params& p, int row0, int col0,
                                                   bool fast) {
  store_block_direct<TOut, N>(acc, p, row0, col0, fast, p.m);
}

// True when the direct epilogue of the tile at (m0, n0) can take store_block_direct's fast path.
template <int BM, int BN>
__device__ __forceinline__ bool direct_fast(const Params& p, int m0, int n0) {
  return p.c_vec2 && !p.read_c && m0 + BM <= p.m && n0 + BN <= p.n;
}

// Epilogue 2 (hopper.best): through shared memory and TMA stores. The BN columns of an m64 block are cut
// into slabs 128 bytes wide (32 f32 or 64 16-bit columns); a slab is written into a 64 x 128-byte buffer
// in the 128-byte-swizzled layout (conflict-free for the fragment's 8-rows-by-4-lanes pattern), then one
// thread stores it with one TMA box {SLAB_COLS, 64}, which clips at M and N. Two buffers per warpgroup
// alternate, so writing slab j+1 overlaps the store of slab j; a buffer is rewritten only after the bulk
// group that read it has finished reading (wait_group.read 1 before the barrier that releases it).
template <class TOut, int N>
struct TmaStoreEpilogue {
  static constexpr int SLAB_COLS = 128 / static_cast<int>(sizeof(TOut));
  static constexpr int SLABS = N / SLAB_COLS;
  static constexpr uint32_t BUF_BYTES = 64 * 128;
  static constexpr uint32_t BYTES_PER_WG = 2 * BUF_BYTES;
  static_assert(N % SLAB_COLS == 0, "BN is a whole number of 128-byte slabs");

  // One m64 block (acc) of warpgroup-local rows: `buf0` is this warpgroup's pair of buffers, `slab_ctr`
  // counts the slabs it has stored (persists across tiles: it picks the buffer). rows_base/col_base:
  // global coordinates of the block's element (0, 0); wg_thread: 0..127; bar_id: this warpgroup's named
  // barrier.
  static __device__ __forceinline__ void store_block(const float (&acc)[N / 2], const Params& p, const CUtensorMap* map,
                                                     uint32_t buf0, uint32_t& slab_ctr, int row_base, int col_base,
                                                     int wg_thread, uint32_t bar_id) {
    const int warp = wg_thread / 32, lane = wg_thread % 32;
    const int r0 = 16 * warp + lane / 4;  // block-local rows r0 and r0 + 8
    TOut* const c = static_cast<TOut*>(p.c);
#pragma unroll
    for (int s = 0; s < SLABS; ++s) {
      const uint32_t buf = buf0 + (slab_ctr & 1u) * BUF_BYTES;
      // The store that last read this buffer (two slabs ago) must be done reading before anyone
      // overwrites it: its issuing thread waits, the barrier tells the others.
      if (wg_thread == 0) bulk_wait_read<1>();
      named_barrier_sync(bar_id, 128);
#pragma unroll
      for (int jj = 0; jj < SLAB_COLS / 8; ++jj) {
        const int j = s * (SLAB_COLS / 8) + jj;  // 8-column group of the fragment
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int r = r0 + 8 * i;
          float v0 = p.alpha * acc[4 * j + 2 * i];
          float v1 = p.alpha * acc[4 * j + 2 * i + 1];
          if (p.read_c) {
            const int row = row_base + r, col = col_base + 8 * j + 2 * (lane % 4);
            if (row < p.m) {
              const TOut* crow = c + static_cast<int64_t>(row) * p.ldc;
              if (col < p.n) v0 += p.beta * to_f32(crow[col]);
              if (col + 1 < p.n) v1 += p.beta * to_f32(crow[col + 1]);
            }
          }
          // Byte of column 8*jj + 2*(lane%4) inside the 128-byte row r, then the 16-byte chunk XOR r%8.
          const uint32_t byte = static_cast<uint32_t>((8 * jj + 2 * (lane % 4)) * sizeof(TOut));
          const uint32_t addr = buf + r * 128 + ((((byte >> 4) ^ (r & 7)) << 4) | (byte & 15));
          if constexpr (std::is_same<TOut, float>::value) {
            asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(v0), "f"(v1) : "memory");
          } else {
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(pack2(TOut(), v0, v1)) : "memory");
          }
        }
      }
      fence_proxy_async_smem();  // each writer: its st.shared before the TMA engine reads the buffer
      named_barrier_sync(bar_id, 128);
      if (wg_thread == 0) {
        tma_store_2d(map, buf, col_base + s * SLAB_COLS, row_base);
        bulk_commit();
      }
      ++slab_ctr;
    }
  }
};

// K == 0: C = beta * C (beta == 0 writes zeros without reading C).
template <class TOut, class Tag>
__global__ void scale_c_kernel(TOut* c, int64_t ldc, int m, int n, float beta, int read_c) {
  const int64_t total = static_cast<int64_t>(m) * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    TOut* e = c + (i / n) * ldc + (i % n);
    *e = from_f32<TOut>(read_c ? beta * to_f32(*e) : 0.f);
  }
}

// ------------------------------------------------------------------------------------------------
// Host side.

// cuTensorMapEncodeTiled, fetched from the driver at run time (no -lcuda at link time).
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline EncodeTiledFn encode_tiled_fn() {
  static const EncodeTiledFn fn = [] {
    void* ptr = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t rc = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault, &status);
#else
    const cudaError_t rc = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &ptr, cudaEnableDefault, &status);
#endif
    return (rc == cudaSuccess && status == cudaDriverEntryPointSuccess) ? reinterpret_cast<EncodeTiledFn>(ptr) : nullptr;
  }();
  return fn;
}

// A 2-D row-major tensor (`rows` rows of `inner` elements, rows `row_bytes` apart) read or written in
// boxes of box_rows x box_inner elements, 128-byte swizzled in shared memory.
inline int make_tma_2d(CUtensorMap* map, CUtensorMapDataType type, const void* ptr, uint64_t inner, uint64_t rows,
                       uint64_t row_bytes, uint32_t box_inner, uint32_t box_rows, CUtensorMapL2promotion promotion,
                       const char* what, char* err, size_t err_len) {
  const EncodeTiledFn encode = encode_tiled_fn();
  if (!encode) return gc_fail(err, err_len, "hopper: cuTensorMapEncodeTiled is not available from the driver (driver too old?)");
  const cuuint64_t dims[2] = {inner, rows};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_inner, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult rc = encode(map, type, 2, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    char msg[256];
    snprintf(msg, sizeof msg, "hopper: cuTensorMapEncodeTiled failed for %s (CUresult %d): dims {%llu, %llu}, row stride %llu B, box {%u, %u}",
             what, static_cast<int>(rc), static_cast<unsigned long long>(inner), static_cast<unsigned long long>(rows),
             static_cast<unsigned long long>(row_bytes), box_inner, box_rows);
    return gc_fail(err, err_len, msg);
  }
  return 0;
}

// Argument checks shared by every step. Returns 0: launch the GEMM kernel; > 0: error (err filled);
// < 0: nothing left to do (m or n is 0, or K == 0 handled by scale_c_kernel), success.
// Tag names the K == 0 kernel after the instantiation, like the GEMM kernels.
template <class TIn, class TOut, class Tag>
int prepare(const gc_gemm_args* a, const char* name, Params& p, char* err, size_t err_len) {
  char msg[320];
  if (!a) return gc_fail(err, err_len, "null arguments");
  if (a->order_a != GC_ROW || a->order_b != GC_COL || a->order_c != GC_ROW) {
    snprintf(msg, sizeof msg, "%s: layout not supported (A row-major, B column-major, C row-major only)", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->dtype_a != TypeInfo<TIn>::abi || a->dtype_b != TypeInfo<TIn>::abi || a->dtype_c != TypeInfo<TOut>::abi) {
    snprintf(msg, sizeof msg, "%s: this entry is built for %s A and B and %s C", name, TypeInfo<TIn>::name, TypeInfo<TOut>::name);
    return gc_fail(err, err_len, msg);
  }
  if (a->dtype_acc != GC_F32) {
    snprintf(msg, sizeof msg, "%s: only f32 accumulation", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->math != GC_MATH_STRICT) {
    snprintf(msg, sizeof msg, "%s: only the strict math mode", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->epilogue != GC_EPI_NONE) {
    snprintf(msg, sizeof msg, "%s: no fused epilogue (bias/ReLU) in this family", name);
    return gc_fail(err, err_len, msg);
  }
  const int64_t m = a->m, n = a->n, k = a->k;
  if (m < 0 || n < 0 || k < 0 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) {
    snprintf(msg, sizeof msg, "%s: dimensions must be in [0, 2^31)", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->lda < (k > 1 ? k : 1) || a->ldb < (k > 1 ? k : 1) || a->ldc < (n > 1 ? n : 1)) {
    snprintf(msg, sizeof msg, "%s: a leading dimension is shorter than its row", name);
    return gc_fail(err, err_len, msg);
  }
  if (m == 0 || n == 0) return -1;
  p.c = a->c;
  p.ldc = a->ldc;
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.alpha = static_cast<float>(a->alpha);
  p.beta = static_cast<float>(a->beta);
  p.read_c = a->beta != 0.0;
  p.c_vec2 = (a->ldc % 2 == 0) && (reinterpret_cast<uintptr_t>(a->c) % (2 * sizeof(TOut)) == 0);
  if (k == 0) {  // C = alpha * 0 + beta * C: no tensor maps (their K dimension would be 0)
    const int64_t total = m * n;
    const unsigned blocks = static_cast<unsigned>(total / 256 + 1 < 4096 ? total / 256 + 1 : 4096);
    scale_c_kernel<TOut, Tag><<<blocks, 256, 0, a->stream>>>(static_cast<TOut*>(a->c), a->ldc, p.m, p.n, p.beta, p.read_c);
    if (int rc = gc_check_launch(err, err_len, "hopper scale_c_kernel")) return rc;
    return -1;
  }
  // TMA: the global address 16-byte aligned and every row stride a multiple of 16 bytes. For 16-bit
  // A and B that is lda % 8 == 0 and ldb % 8 == 0 (contiguous operands: K % 8 == 0). Rejected here,
  // before any launch; the Python family declares it so that such problems are SKIP rows.
  if (reinterpret_cast<uintptr_t>(a->a) % 16 || reinterpret_cast<uintptr_t>(a->b) % 16 || a->lda % 8 || a->ldb % 8) {
    snprintf(msg, sizeof msg,
             "%s: TMA needs A and B 16-byte aligned with lda and ldb multiples of 8 elements (16 bytes); got lda=%lld, "
             "ldb=%lld (K=%lld)",
             name, static_cast<long long>(a->lda), static_cast<long long>(a->ldb), static_cast<long long>(k));
    return gc_fail(err, err_len, msg);
  }
  return 0;
}

// The operand tensor maps: A {K, M} in boxes {64, BM}; B {K, N} in boxes {64, BN / CLUSTER_M}.
template <class Cfg, class TIn>
int make_operand_maps(const gc_gemm_args* a, Params& p, char* err, size_t err_len) {
  if (int rc = make_tma_2d(&p.tma_a, TypeInfo<TIn>::tma, a->a, a->k, a->m, a->lda * sizeof(TIn), 64, Cfg::BM,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "A", err, err_len))
    return rc;
  return make_tma_2d(&p.tma_b, TypeInfo<TIn>::tma, a->b, a->k, a->n, a->ldb * sizeof(TIn), 64, Cfg::BN / Cfg::CLUSTER_M,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "B", err, err_len);
}

template <class Cfg>
void set_tiles(const gc_gemm_args* a, Params& p) {
  p.k_tiles = static_cast<int>((a->k + Cfg::BK - 1) / Cfg::BK);
  p.tiles_m = static_cast<int>((a->m + Cfg::BM - 1) / Cfg::BM);
  p.tiles_n = static_cast<int>((a->n + Cfg::BN - 1) / Cfg::BN);
  p.ctiles_m = (p.tiles_m + Cfg::CLUSTER_M - 1) / Cfg::CLUSTER_M;
}

inline int device_sm_count() {
  static int cache[64] = {0};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  if (dev >= 0 && dev < 64 && cache[dev]) return cache[dev];
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 0;
  if (dev >= 0 && dev < 64) cache[dev] = sms;
  return sms;
}

// One launch of `grid` CTAs with clusters of cluster_m CTAs along x (cluster_m == 1: an ordinary launch):
// the launch itself and the occupancy query of the cluster steps read the same configuration.
struct ClusterLaunch {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1] = {};
  ClusterLaunch(unsigned grid, unsigned threads, uint32_t smem, cudaStream_t stream, int cluster_m) {
    cfg.gridDim = dim3(grid, 1, 1);
    cfg.blockDim = dim3(threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(cluster_m);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = cluster_m > 1 ? 1 : 0;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // cfg.attrs points into this object
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

template <class Kernel>
cudaError_t launch_kernel(Kernel kernel, unsigned grid, unsigned threads, uint32_t smem, cudaStream_t stream, int cluster_m,
                          const Params& p) {
  ClusterLaunch launch(grid, threads, smem, stream, cluster_m);
  return cudaLaunchKernelEx(&launch.cfg, kernel, p);
}

// How many clusters of cluster_m (> 1) CTAs of this kernel fit on the device at once (the persistent grid
// of the cluster steps). `cache` (64 ints, one per device, zero-initialised) belongs to the caller: every
// kernel has the same type void(Params), so the cache cannot live in this template. Falls back to
// SMs / cluster_m.
template <class Kernel>
int max_active_clusters(Kernel kernel, unsigned threads, uint32_t smem, int cluster_m, int* cache) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = 0;
  if (dev >= 0 && dev < 64 && cache[dev]) return cache[dev];
  const int fallback = device_sm_count() / cluster_m;
  ClusterLaunch query(static_cast<unsigned>(cluster_m), threads, smem, nullptr, cluster_m);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &query.cfg) != cudaSuccess || clusters <= 0) {
    (void)cudaGetLastError();  // clear the (non-sticky) error the failed query recorded
    clusters = fallback;
  }
  if (clusters < 1) clusters = 1;
  if (dev >= 0 && dev < 64) cache[dev] = clusters;
  return clusters;
}

// Run Step::run<TIn, TOut> for the dtypes of the arguments: every combination of f16/bf16 in and
// f32/f16/bf16 out. Step is a class with `template <class TIn, class TOut> static int run(args, err, len)`.
// NAME_occupancy (gemm_abi.h): the runtime's answer for a launch of `kernel` with this block size and
// dynamic shared memory (the attribute that allows it is set first, as the launch path sets it).
template <class Kernel>
inline int query_occupancy(Kernel kernel, int threads, int dynamic_smem, gc_occupancy* out, char* err,
                           size_t err_len) {
  GC_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_smem));
  return gc_query_occupancy((const void*)kernel, threads, static_cast<size_t>(dynamic_smem), out, err, err_len);
}

template <class Step>
int dispatch_dtypes(const gc_gemm_args* a, const char* name, char* err, size_t err_len,
                    gc_occupancy* query = nullptr) {
  if (!a) return gc_fail(err, err_len, "null arguments");
  if (a->dtype_a != a->dtype_b) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: A and B must have the same type", name);
    return gc_fail(err, err_len, msg);
  }
  if (a->dtype_a == GC_F16) {
    if (a->dtype_c == GC_F32) return query ? Step::template occupancy<__half, float>(a, query, err, err_len)
                                  : Step::template run<__half, float>(a, err, err_len);
    if (a->dtype_c == GC_F16) return query ? Step::template occupancy<__half, __half>(a, query, err, err_len)
                                  : Step::template run<__half, __half>(a, err, err_len);
    if (a->dtype_c == GC_BF16) return query ? Step::template occupancy<__half, __nv_bfloat16>(a, query, err, err_len)
                                  : Step::template run<__half, __nv_bfloat16>(a, err, err_len);
  } else if (a->dtype_a == GC_BF16) {
    if (a->dtype_c == GC_F32) return query ? Step::template occupancy<__nv_bfloat16, float>(a, query, err, err_len)
                                  : Step::template run<__nv_bfloat16, float>(a, err, err_len);
    if (a->dtype_c == GC_F16) return query ? Step::template occupancy<__nv_bfloat16, __half>(a, query, err, err_len)
                                  : Step::template run<__nv_bfloat16, __half>(a, err, err_len);
    if (a->dtype_c == GC_BF16) return query ? Step::template occupancy<__nv_bfloat16, __nv_bfloat16>(a, query, err, err_len)
                                  : Step::template run<__nv_bfloat16, __nv_bfloat16>(a, err, err_len);
  }
  char msg[160];
  snprintf(msg, sizeof msg, "%s: needs f16 or bf16 A and B and f32, f16 or bf16 C", name);
  return gc_fail(err, err_len, msg);
}

}  // namespace hopper
}  // namespace gc

// The entries every step exposes in its own namespace (README: Entries), for its class STEP<Cfg, Tag> with
// `name` and `template <class TIn, class TOut> static int run(...)`: run_typed (one input/output type
// combination; others are refused with a reason), run (every supported combination, dispatched at run
// time) and occupancy (the query of run()'s launch, for the same argument types). One text for the six
// steps: a macro, since C++ cannot alias a function template into another namespace.
#define GC_HOPPER_STEP_ENTRIES(STEP)                                                               \
  template <class Cfg, class TIn, class TOut, class Tag = void>                                    \
  int run_typed(const gc_gemm_args* args, char* err, size_t err_len) {                             \
    return STEP<Cfg, Tag>::template run<TIn, TOut>(args, err, err_len);                            \
  }                                                                                                \
  template <class Cfg, class Tag = void>                                                           \
  int run(const gc_gemm_args* args, char* err, size_t err_len) {                                   \
    return ::gc::hopper::dispatch_dtypes<STEP<Cfg, Tag>>(args, STEP<Cfg, Tag>::name, err, err_len); \
  }                                                                                                \
  template <class Cfg, class Tag = void>                                                           \
  int occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {          \
    return ::gc::hopper::dispatch_dtypes<STEP<Cfg, Tag>>(args, STEP<Cfg, Tag>::name, err, err_len, out); \
  }
