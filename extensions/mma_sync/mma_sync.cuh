// mma_sync: an Ampere-style tensor-core GEMM written from PTX primitives.
//
//   C[m, n] = sum_k A[m, k] * B[k, n]     A: f16 or bf16 row-major (lda); B: the same type, column-major
//                                         ("tn") or row-major ("tt") (ldb); C: f32 row-major (ldc), or
//                                         bf16 (round to nearest even) when A and B are bf16
//
// The data path, top to bottom:
//
//   global --cp.async 16 B (zero-fill past edges)--> STAGES shared-memory stages --ldmatrix.x4-->
//   fragments (double-buffered in registers) --mma.sync m16n8k16 (or 2x m16n8k8)--> accumulators
//   (f32; or f16 for the canary variant) --epilogue (optional bias + ReLU), masked on M and N--> C
//
// Every tuning choice is a template parameter of `Config` (block tile, warp tile, stages, shared-memory
// layout, raster group, mma shape, accumulator, epilogue, B's storage order); the element types are
// parameters of the kernel and the launcher (TIn: __half or __nv_bfloat16 for A and B, TOut: float or
// __nv_bfloat16 for C). Only the mma instruction (.f16 or .bf16 operands) and the epilogue's stores
// depend on them: cp.async, ldmatrix and the fragment layouts are the same for any 16-bit element
// (PTX ISA: the m16n8k16 and m16n8k8 fragments of .f16 and .bf16 are identical). A translation unit
// instantiates one Config for one pair of types (gemmcompare/implementations/mma_sync.py renders it),
// and the launcher picks one of three kernels of it at run time:
//   WHOLE          : ALIGNED, and the block tile divides M, N and K (C rows 8-byte aligned): no tile has
//                    an edge, so copies and stores carry no bounds at all (4096-cubed takes this one).
//                    A run-time branch between bounded and unbounded copies inside one kernel was
//                    if-converted by the compiler into both paths, predicated, in every iteration.
//   ALIGNED = true : A and B 16-byte aligned, lda, ldb, K (and N for row-major B) multiples of 8
//                    halves -> every 16-byte chunk of a tile row is aligned and wholly inside or wholly
//                    outside the matrix; cp.async copies it (16 bytes) or zero-fills it (0 bytes read),
//                    which covers ragged tile edges in M, N and K.
//   ALIGNED = false: anything else (K = 617 with lda = 617 puts row r at byte 1234 r): element-wise
//                    guarded loads, packed and written with st.shared.v4. Same tiles, fragments and
//                    epilogue; only the copy differs. Slow and obviously right.
//
// The index arithmetic (shared layouts, which thread copies which chunk, the ldmatrix row address of
// each lane, which accumulator is which element of C, the raster) is in __host__ __device__ functions,
// so that extensions/mma_sync/host_check.cu can run the kernel's own address code on the CPU against
// an emulation of ldmatrix and mma.sync (tests/test_kernels_compile.py runs it).
//
// CUDA headers and the gemmcompare ABI only (never torch).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "gemmcompare/gemm_abi.h"

#define GC_HD __host__ __device__ __forceinline__

namespace gc {
namespace mma {

enum class Smem { Row = 0, Padded = 1, Swizzle = 2 };
enum class Epi { Plain = 0, BiasRelu = 1 };

// ------------------------------------------------------------------------------------------------
// Element types: the ABI code and name of each type the kernel takes or writes, and the epilogue's
// conversion from the f32 value (bf16: round to nearest even, as cvt.rn.bf16x2.f32; a NaN stays a NaN).
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
constexpr bool is_output_type = std::is_same<T, float>::value || std::is_same<T, __nv_bfloat16>::value;

GC_HD void store1(float* p, float v) { *p = v; }
GC_HD void store1(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
// Two adjacent columns in one store: an 8-byte float2, or a 4-byte bf16x2 (lower column in the low half).
GC_HD void store2(float* p, float v0, float v1) { *reinterpret_cast<float2*>(p) = make_float2(v0, v1); }
GC_HD void store2(__nv_bfloat16* p, float v0, float v1) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
}

// ------------------------------------------------------------------------------------------------
// PTX wrappers. Those that touch shared memory are volatile with a memory clobber, so the compiler
// keeps them on their side of __syncthreads() and of cp.async.wait_group.

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy global -> shared; the bytes past src_bytes (0..16) are zero-filled, not read.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void st_shared_v4(uint32_t dst, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}

// Four 8x8 b16 matrices. Lane l gives the address of row l%8 of matrix l/8 (16 contiguous bytes);
// register q of lane l receives matrix q's elements (row l/4, columns 2(l%4) and 2(l%4)+1), the
// lower column in the low 16 bits.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// Transposed: register q of lane l receives (rows 2(l%4) and 2(l%4)+1, column l/4) of matrix q.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// Fragment layouts (PTX ISA, "matrix fragments for mma.m16n8k16"), g = lane/4, t = lane%4:
//   A 16x16 (4 regs): a[0] = (g, 2t..2t+1)  a[1] = (g+8, 2t..)  a[2] = (g, 2t+8..)  a[3] = (g+8, 2t+8..)
//   B 16x8  (2 regs): b[0] = (k 2t..2t+1, n g)                  b[1] = (k 2t+8..2t+9, n g)
//   C 16x8  (f32)   : c[0], c[1] = (g, 2t), (g, 2t+1)           c[2], c[3] = (g+8, 2t), (g+8, 2t+1)
//   C 16x8  (f16)   : c[0] = (g, 2t..2t+1) as f16x2             c[1] = (g+8, 2t..2t+1)
// m16n8k8 takes A as {a[0], a[1]} (k 0..7) or {a[2], a[3]} (k 8..15) and B as b[0] or b[1], so the
// same ldmatrix loads feed either shape. The .bf16 forms have these very layouts (16-bit elements,
// lower k in the low half of a register); TIn picks the instruction, never a conversion.
template <class TIn>
__device__ __forceinline__ void mma_16816(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same<TIn, __nv_bfloat16>::value) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    static_assert(std::is_same<TIn, __half>::value, "mma_sync takes f16 or bf16 inputs");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

template <class TIn>
__device__ __forceinline__ void mma_1688(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  if constexpr (std::is_same<TIn, __nv_bfloat16>::value) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(b0));
  } else {
    static_assert(std::is_same<TIn, __half>::value, "mma_sync takes f16 or bf16 inputs");
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(b0));
  }
}

// The f16-accumulate forms (the canary): f16 inputs only (the launcher refuses any other TIn with them).
template <class TIn>
__device__ __forceinline__ void mma_16816(uint32_t (&c)[2], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  static_assert(std::is_same<TIn, __half>::value, "f16 accumulation takes f16 inputs only");
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
      : "+r"(c[0]), "+r"(c[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <class TIn>
__device__ __forceinline__ void mma_1688(uint32_t (&c)[2], uint32_t a0, uint32_t a1, uint32_t b0) {
  static_assert(std::is_same<TIn, __half>::value, "f16 accumulation takes f16 inputs only");
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3}, {%4}, {%0, %1};\n"
               : "+r"(c[0]), "+r"(c[1])
               : "r"(a0), "r"(a1), "r"(b0));
}

// ------------------------------------------------------------------------------------------------
// Shared-memory tiles. A tile is ROWS rows of COLS halves, each row contiguous in global memory
// (A: rows m, columns k; B tn: rows n, columns k; B tt: rows k, columns n). Data moves in 16-byte
// chunks (8 halves); offset(row, col), col a multiple of 8, is the byte offset of a chunk.
//
//   Row     : row-major, stride COLS. When a row is a multiple of 128 B, ldmatrix's 8 row addresses
//             share one 16-byte bank group: 8-way conflicts. Kept as the baseline of the layout study.
//   Padded  : stride COLS + 8 halves, 16 B more per row, so 8 consecutive rows sit in 8 different
//             16-byte bank groups. Costs ROWS * 16 B per tile.
//   Swizzle : Row's bytes, chunks XOR-permuted within each 128-byte line. With L = row * CPR + chunk
//             (CPR: chunks per row) the physical chunk is L ^ key, key = row % 8 when a row spans >= 8
//             chunks, else the line's index (row * CPR / 8) % 8. Any 8 consecutive rows starting at a
//             multiple of 8, at one logical chunk, land in 8 different bank groups (ldmatrix reads),
//             and a line's 8 chunks stay a permutation of the line (cp.async writes).
template <int ROWS_, int COLS_, Smem LAYOUT_>
struct SmemTile {
  static constexpr int ROWS = ROWS_, COLS = COLS_;
  static constexpr Smem LAYOUT = LAYOUT_;
  static_assert(COLS % 8 == 0, "tile rows are whole 16-byte chunks");
  static constexpr int CPR = COLS / 8;
  static_assert(LAYOUT != Smem::Swizzle || CPR == 2 || CPR == 4 || CPR % 8 == 0,
                "the XOR swizzle needs 2, 4 or a multiple of 8 chunks per row");
  static constexpr int STRIDE = (LAYOUT == Smem::Padded) ? COLS + 8 : COLS;  // halves per row
  static constexpr int ROW_BYTES = STRIDE * 2;
  static constexpr int BYTES = ROWS * ROW_BYTES;
  // advance_cols16 XORs the whole address, so a tile's base must be a multiple of ALIGN.
  static constexpr int ALIGN = (LAYOUT == Smem::Swizzle && ROW_BYTES > 128) ? ROW_BYTES : 128;

  static GC_HD uint32_t offset(int row, int col) {
    const int chunk = col >> 3;
    if (LAYOUT == Smem::Swizzle) {
      const int lin = row * CPR + chunk;
      const int key = (CPR >= 8) ? (row & 7) : ((row * CPR >> 3) & 7);
      return static_cast<uint32_t>((lin ^ key) << 4);
    }
    return static_cast<uint32_t>(row * ROW_BYTES + chunk * 16);
  }

  // The address of the chunk 16*kk columns right of `addr`, the address of a chunk at column 0 or 8
  // in a tile based at a multiple of ALIGN. With the swizzle, L = row*CPR + h + 2kk and 2kk only sets
  // bits that row*CPR + h leaves zero (CPR is a power of two), so adding is XOR-ing, the XOR commutes
  // with the key, and 32 kk < ROW_BYTES <= ALIGN leaves the base's bits alone. It is applied to the
  // whole address on purpose: a per-k-step tile offset is loop-invariant, and the compiler hoisted one
  // register per k step and fragment out of the main loop (24 registers at BK = 64).
  static GC_HD uint32_t advance_cols16(uint32_t addr, int kk) {
    if (LAYOUT == Smem::Swizzle) return addr ^ static_cast<uint32_t>(kk * 32);
    return addr + static_cast<uint32_t>(kk * 32);
  }

  // The address of the chunk 16*kk rows further down. The key depends on row % 8 (CPR >= 8) or on
  // (row * CPR / 8) % 8, which 16 rows change by a multiple of 8 when CPR == 4; the linear index grows
  // by 16 kk CPR, a multiple of 8 the XOR never touches. So it is a plain add (CPR == 2 excluded).
  static GC_HD uint32_t advance_rows16(uint32_t addr, int kk) {
    static_assert(LAYOUT != Smem::Swizzle || CPR >= 4, "advance_rows16 needs >= 4 chunks per swizzled row");
    return addr + static_cast<uint32_t>(kk * 16 * ROW_BYTES);
  }
};

// ------------------------------------------------------------------------------------------------
// Who copies what. Thread tid copies chunks tid, tid + THREADS, ... of a tile: consecutive threads take
// consecutive chunks of a row, so 8 threads read a whole 128-byte line. All of one thread's chunks share
// a column, and their rows step by ROW_STEP; when that step keeps the swizzle key (LINEAR), the chunks'
// shared offsets are the first one's plus compile-time constants.
template <class Tile, int THREADS>
struct ChunkMap {
  static constexpr int CHUNKS = Tile::ROWS * Tile::CPR;
  static constexpr int ROW_STEP = THREADS / Tile::CPR;
  static constexpr int ITERS = (CHUNKS + THREADS - 1) / THREADS;
  static constexpr bool LINEAR = (Tile::CPR >= 8) ? (ROW_STEP % 8 == 0) : ((ROW_STEP * Tile::CPR) % 64 == 0);
  static_assert(THREADS % Tile::CPR == 0, "a tile row's chunks must split evenly over the threads");

  static GC_HD int row0(int tid) { return tid / Tile::CPR; }
  static GC_HD int col(int tid) { return (tid % Tile::CPR) * 8; }
  static GC_HD bool exists(int tid, int i) { return CHUNKS % THREADS == 0 || i * THREADS + tid < CHUNKS; }
  // Byte offset in the tile of chunk i, given dst0 = offset(row0, col).
  static GC_HD uint32_t dst(uint32_t dst0, int row0_, int col_, int i) {
    return LINEAR ? dst0 + static_cast<uint32_t>(i * ROW_STEP * Tile::ROW_BYTES)
                  : Tile::offset(row0_ + i * ROW_STEP, col_);
  }
  // How many of the chunk's 8 elements lie inside the matrix (the rest is zero-filled).
  static GC_HD int valid(int row, int col_, int rows_valid, int cols_valid) {
    int cv = cols_valid - col_;
    cv = cv < 0 ? 0 : (cv > 8 ? 8 : cv);
    return row < rows_valid ? cv : 0;
  }
};

// Grouped rasterization: block ids walk GROUP tile rows column by column, so the blocks resident at one
// time share B panels (one tile column) and a GROUP-row strip of A, which stays in L2.
template <int GROUP>
GC_HD void raster(int pid, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = GROUP * tiles_n;
  const int first_m = (pid / per_group) * GROUP;
  const int rows = (tiles_m - first_m < GROUP) ? tiles_m - first_m : GROUP;
  const int in_group = pid % per_group;
  tile_m = first_m + in_group % rows;
  tile_n = in_group / rows;
}

// ------------------------------------------------------------------------------------------------
// The configuration: compile-time constants, checked here and (with reasons) in Python.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, Smem SMEM_, int GROUP_, int MMA_K_,
          bool ACC_F16_, Epi EPI_, bool B_COL_>
struct Config {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;  // block tile
  static constexpr int WM = WM_, WN = WN_;            // warp tile
  static constexpr int STAGES = STAGES_;
  static constexpr Smem SMEM = SMEM_;
  static constexpr int GROUP = GROUP_;  // raster: GROUP block rows walked column by column
  static constexpr int MMA_K = MMA_K_;  // 16: mma.m16n8k16; 8: two mma.m16n8k8 per 16-wide k step
  static constexpr bool ACC_F16 = ACC_F16_;
  static constexpr Epi EPI = EPI_;
  static constexpr bool B_COL = B_COL_;  // true: B column-major (tn); false: row-major (tt)

  static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, WARPS = WARPS_M * WARPS_N;
  static constexpr int THREADS = WARPS * 32;
  static constexpr int MI = WM / 16;  // m16 tiles per warp
  static constexpr int NI = WN / 8;   // n8 tiles per warp
  static constexpr int KS = BK / 16;  // 16-wide k steps per stage

  using TileA = SmemTile<BM, BK, SMEM>;
  using TileB = SmemTile<B_COL ? BN : BK, B_COL ? BK : BN, SMEM>;
  using CopyA = ChunkMap<TileA, THREADS>;
  using CopyB = ChunkMap<TileB, THREADS>;
  static constexpr int STAGE_BYTES = TileA::BYTES + TileB::BYTES;  // [A tile][B tile] per stage
  // Stages and the B tile start at multiples of ALIGN (see SmemTile::advance_cols16; row-major B only
  // ever advances by whole rows, so it needs no more than 128). The kernel rounds the dynamic
  // shared-memory base up to ALIGN, so it asks for ALIGN - 16 bytes more (the base is 16-byte aligned).
  static constexpr int ALIGN = (B_COL && TileB::ALIGN > TileA::ALIGN) ? TileB::ALIGN : TileA::ALIGN;
  static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + ALIGN - 16;

  static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile: multiples of 16x16 (ldmatrix.x4 loads two n8 B tiles)");
  static_assert(BK % 16 == 0 && (BK & (BK - 1)) == 0, "BK must be a power of two >= 16");
  static_assert(THREADS <= 1024, "at most 32 warps");
  static_assert(STAGES >= 1, "at least one stage");
  static_assert(MMA_K == 16 || MMA_K == 8, "m16n8k16 or m16n8k8");
  static_assert(GROUP >= 1, "raster group >= 1");
  static_assert(STAGE_BYTES % ALIGN == 0 && TileA::BYTES % ALIGN == 0, "stages and the B tile stay ALIGN-aligned");
  static_assert(SMEM_BYTES <= 227 * 1024, "at most 227 KB of shared memory per block");

  static GC_HD void warp_coords(int warp, int& warp_m, int& warp_n) {
    warp_m = warp % WARPS_M;
    warp_n = warp / WARPS_M;
  }

  // ldmatrix.x4 row address of `lane` for A fragment mi at k step 0, relative to the A tile.
  // Matrix q = lane/8 covers rows +8(q%2), columns +8(q/2): registers a[0..3] of the layout above.
  static GC_HD uint32_t frag_a_offset(int warp_m, int lane, int mi) {
    return TileA::offset(warp_m * WM + mi * 16 + (lane & 15), (lane >> 4) * 8);
  }

  // ldmatrix.x4 row address of `lane` for B fragments 2p and 2p+1 at k step 0, relative to the B tile;
  // the registers are {b[2p][0], b[2p][1], b[2p+1][0], b[2p+1][1]}.
  //   tn (rows n): matrix q covers n +8(q/2), k +8(q%2); plain ldmatrix gives (n g, k 2t..2t+1).
  //   tt (rows k): matrix q covers k +8(q%2), n +8(q/2); .trans gives (k 2t..2t+1, n g).
  static GC_HD uint32_t frag_b_offset(int warp_n, int lane, int p) {
    const int n = warp_n * WN + p * 16 + ((lane >> 4) & 1) * 8;
    const int k = ((lane >> 3) & 1) * 8;
    return B_COL ? TileB::offset(n + (lane & 7), k) : TileB::offset(k + (lane & 7), n);
  }

  // Fragment addresses as the first fragment's plus a compile-time stride: A fragments mi and B fragment
  // pairs q (tn) sit 16 rows apart, and 16 rows move a chunk by 16 * ROW_BYTES in every layout except a
  // swizzle with 2 chunks per row (whose key, (row / 4) % 8, changes with them); the k-step advance only
  // XORs or adds below the 128-byte line, so it commutes with the stride. Then a k step costs one XOR
  // per operand and the ldmatrix take [register + immediate] addresses, instead of one add and one XOR
  // per fragment. (tt B steps along a swizzled row: not affine.) host_check.cu checks the identity.
  static constexpr bool A_AFFINE = TileA::LAYOUT != Smem::Swizzle || TileA::CPR >= 4;
  static constexpr bool B_AFFINE = B_COL && (TileB::LAYOUT != Smem::Swizzle || TileB::CPR >= 4);
  static constexpr uint32_t A_FRAG_STRIDE = 16 * TileA::ROW_BYTES;  // fragment mi -> mi + 1
  static constexpr uint32_t B_FRAG_STRIDE = 16 * TileB::ROW_BYTES;  // fragment pair q -> q + 1 (tn)

  // The shared address of a fragment at k step kk, from its step-0 address.
  static GC_HD uint32_t a_step(uint32_t addr, int kk) { return TileA::advance_cols16(addr, kk); }
  static GC_HD uint32_t b_step(uint32_t addr, int kk) {
    if constexpr (B_COL) {
      return TileB::advance_cols16(addr, kk);
    } else {
      return TileB::advance_rows16(addr, kk);
    }
  }

  // Block-relative row and column of accumulator element (mi, ni, half_row) of `lane`: the pair of
  // columns col, col + 1 (two f32 registers, or one f16x2 register).
  static GC_HD void acc_coords(int warp_m, int warp_n, int lane, int mi, int ni, int half_row, int& row, int& col) {
    row = warp_m * WM + mi * 16 + (lane >> 2) + 8 * half_row;
    col = warp_n * WN + ni * 8 + 2 * (lane & 3);
  }
};

template <class TIn, class TOut>
struct Params {
  const TIn* a;
  const TIn* b;
  TOut* c;
  const float* bias;
  int m, n, k;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;  // batch strides (elements): matrix blockIdx.y of a batch
  int tiles_m, tiles_n;
  bool c_vec2;  // C rows take two-element stores (ldc even, c aligned to two elements: float2 or bf16x2)
};

// ------------------------------------------------------------------------------------------------
// Global -> shared copy of one operand, one k tile per call (tiles are copied in order).
template <class Tile, int THREADS, bool ALIGNED, class T>
struct TileCopy {
  using Map = ChunkMap<Tile, THREADS>;
  const T* src;  // this thread's first chunk in the next tile to copy
  int64_t ld;
  int64_t chunk_step;  // elements from one of this thread's chunks to its next: ROW_STEP rows
  uint32_t dst0;  // its offset inside a shared tile
  int row0, col;

  __device__ __forceinline__ TileCopy(const T* tile, int64_t ld_, int tid) : ld(ld_), chunk_step(Map::ROW_STEP * ld_) {
    row0 = Map::row0(tid);
    col = Map::col(tid);
    src = tile + row0 * ld + col;
    dst0 = Tile::offset(row0, col);
  }

  // Copy one tile to shared memory at smem_tile: rows_valid / cols_valid say how much of it lies in the
  // matrix (may be <= 0), the rest is zero-filled; `safe` is any valid global address (for zero-byte
  // copies). Then step `src` by `next` elements, to the next k tile. FULL (the WHOLE kernel): the tile
  // lies inside the matrix, so no chunk is bounded or redirected: one address add and one cp.async.
  template <bool FULL>
  __device__ __forceinline__ void copy(uint32_t smem_tile, int rows_valid, int cols_valid, const T* safe,
                                       int64_t next, int tid) {
    static_assert(!FULL || ALIGNED, "the unbounded copy needs the aligned kernel's whole-chunk tiles");
    if constexpr (FULL) {
#pragma unroll
      for (int i = 0; i < Map::ITERS; ++i) {
        if (!Map::exists(tid, i)) break;
        cp_async_16(smem_tile + Map::dst(dst0, row0, col, i), src + i * chunk_step, 16);
      }
      src += next;
      return;
    }
    // The general path copies one chunk at a time (no unrolling): it only has to be right, and its
    // registers must not crowd the accumulators.
#pragma unroll(ALIGNED ? Map::ITERS : 1)
    for (int i = 0; i < Map::ITERS; ++i) {
      if (!Map::exists(tid, i)) break;
      const int row = row0 + i * Map::ROW_STEP;
      const uint32_t dst = smem_tile + Map::dst(dst0, row0, col, i);
      const int valid = Map::valid(row, col, rows_valid, cols_valid);
      const T* g = src + i * chunk_step;
      if constexpr (ALIGNED) {
        cp_async_16(dst, valid > 0 ? static_cast<const void*>(g) : static_cast<const void*>(safe), valid * 2);
      } else {
        const unsigned short* e = reinterpret_cast<const unsigned short*>(g);
        uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint32_t lo = (2 * j < valid) ? static_cast<uint32_t>(e[2 * j]) : 0u;
          const uint32_t hi = (2 * j + 1 < valid) ? static_cast<uint32_t>(e[2 * j + 1]) : 0u;
          w[j] = lo | (hi << 16);  // lower-numbered element in the low half, as ldmatrix expects
        }
        st_shared_v4(dst, w[0], w[1], w[2], w[3]);
      }
    }
    src += next;
  }
};

// ------------------------------------------------------------------------------------------------
// The kernel. Tag only names the instantiation: its identifier appears in the mangled kernel name,
// which is how ptxas's per-kernel report is attributed to one configuration (and pair of types).
template <class Cfg, class TIn, class TOut, bool ALIGNED, bool WHOLE, class Tag>
__global__ void __launch_bounds__(Cfg::THREADS, 1) gemm_kernel(const Params<TIn, TOut> batch_params) {
  static_assert(!WHOLE || ALIGNED, "whole tiles are copied with the aligned kernel's 16-byte chunks");
  static_assert(is_input_type<TIn> && is_output_type<TOut>, "f16 or bf16 in; f32 or bf16 out");
  static_assert(!Cfg::ACC_F16 || (std::is_same<TIn, __half>::value && std::is_same<TOut, float>::value),
                "the f16-accumulate canary takes f16 inputs and writes f32");
  using TileA = typename Cfg::TileA;
  using TileB = typename Cfg::TileB;
  constexpr int MI = Cfg::MI, NI = Cfg::NI, KS = Cfg::KS, STAGES = Cfg::STAGES;

  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem0 = (smem_addr(smem) + (Cfg::ALIGN - 1)) & ~static_cast<uint32_t>(Cfg::ALIGN - 1);

  // this block's matrix of a batch (gridDim.y matrices, one after the other; one matrix: blockIdx.y = 0)
  Params<TIn, TOut> p = batch_params;
  p.a += blockIdx.y * p.stride_a;
  p.b += blockIdx.y * p.stride_b;
  p.c += blockIdx.y * p.stride_c;

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  int warp_m, warp_n;
  Cfg::warp_coords(tid >> 5, warp_m, warp_n);

  int tile_m, tile_n;
  raster<Cfg::GROUP>(blockIdx.x, p.tiles_m, p.tiles_n, tile_m, tile_n);
  const int m0 = tile_m * Cfg::BM;
  const int n0 = tile_n * Cfg::BN;
  const int k_tiles = (p.k + Cfg::BK - 1) / Cfg::BK;

  // -- global -> shared: one copier per operand, starting at this block's first k tile ---------------
  // A (rows m, columns k) and B tn (rows n, columns k): the next k tile is BK columns on.
  // B tt (rows k, columns n): the next k tile is BK rows down.
  TileCopy<TileA, Cfg::THREADS, ALIGNED, TIn> copy_a(p.a + static_cast<int64_t>(m0) * p.lda, p.lda, tid);
  TileCopy<TileB, Cfg::THREADS, ALIGNED, TIn> copy_b(Cfg::B_COL ? p.b + static_cast<int64_t>(n0) * p.ldb : p.b + n0,
                                                p.ldb, tid);
  const int64_t b_next = Cfg::B_COL ? Cfg::BK : Cfg::BK * p.ldb;
  int k_left = p.k;  // K minus the first k of the next tile to copy
  auto load_stage = [&](int stage) {
    const uint32_t base = smem0 + stage * Cfg::STAGE_BYTES;
    const int rows_b = Cfg::B_COL ? p.n - n0 : k_left, cols_b = Cfg::B_COL ? k_left : p.n - n0;
    copy_a.template copy<WHOLE>(base, p.m - m0, k_left, p.a, Cfg::BK, tid);
    copy_b.template copy<WHOLE>(base + TileA::BYTES, rows_b, cols_b, p.b, b_next, tid);
    k_left -= Cfg::BK;
  };

  // -- shared -> registers: ldmatrix.x4, fragments double-buffered across k steps -------------------
  // Step-0 offsets of this lane's fragments: the first one's only, where the map is affine.
  constexpr int A_OFFS = Cfg::A_AFFINE ? 1 : MI, B_OFFS = Cfg::B_AFFINE ? 1 : NI / 2;
  uint32_t a_off[A_OFFS];
#pragma unroll
  for (int mi = 0; mi < A_OFFS; ++mi) a_off[mi] = Cfg::frag_a_offset(warp_m, lane, mi);
  uint32_t b_off[B_OFFS];
#pragma unroll
  for (int q = 0; q < B_OFFS; ++q) b_off[q] = TileA::BYTES + Cfg::frag_b_offset(warp_n, lane, q);

  uint32_t fa[2][MI][4];
  uint32_t fb[2][NI][2];
  auto load_frags = [&](int buf, int stage, int kk) {
    const uint32_t base = smem0 + stage * Cfg::STAGE_BYTES;
    const uint32_t a_k = Cfg::a_step(base + a_off[0], kk);  // used where A_AFFINE
    const uint32_t b_k = Cfg::b_step(base + b_off[0], kk);  // used where B_AFFINE
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      if constexpr (Cfg::A_AFFINE) {
        ldmatrix_x4(fa[buf][mi], a_k + mi * Cfg::A_FRAG_STRIDE);
      } else {
        ldmatrix_x4(fa[buf][mi], Cfg::a_step(base + a_off[mi], kk));
      }
    }
#pragma unroll
    for (int q = 0; q < NI / 2; ++q) {
      uint32_t r[4];
      if constexpr (Cfg::B_AFFINE) {
        ldmatrix_x4(r, b_k + q * Cfg::B_FRAG_STRIDE);
      } else if constexpr (Cfg::B_COL) {
        ldmatrix_x4(r, Cfg::b_step(base + b_off[q], kk));
      } else {
        ldmatrix_x4_trans(r, Cfg::b_step(base + b_off[q], kk));
      }
      fb[buf][2 * q][0] = r[0];
      fb[buf][2 * q][1] = r[1];
      fb[buf][2 * q + 1][0] = r[2];
      fb[buf][2 * q + 1][1] = r[3];
    }
  };

  // -- accumulators and one 16-wide k step of MMAs ---------------------------------------------------
  using AccReg = typename std::conditional<Cfg::ACC_F16, uint32_t, float>::type;
  constexpr int ACC_N = Cfg::ACC_F16 ? 2 : 4;
  AccReg acc[MI][NI][ACC_N];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int r = 0; r < ACC_N; ++r) acc[mi][ni][r] = AccReg(0);

  auto mma_step = [&](int buf) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int nj = 0; nj < NI; ++nj) {
        const int ni = (mi & 1) ? NI - 1 - nj : nj;  // serpentine: the next MMA reuses a B fragment
        if constexpr (Cfg::MMA_K == 16) {
          mma_16816<TIn>(acc[mi][ni], fa[buf][mi], fb[buf][ni]);
        } else {
          mma_1688<TIn>(acc[mi][ni], fa[buf][mi][0], fa[buf][mi][1], fb[buf][ni][0]);
          mma_1688<TIn>(acc[mi][ni], fa[buf][mi][2], fa[buf][mi][3], fb[buf][ni][1]);
        }
      }
  };

  // -- main loop ----------------------------------------------------------------------------------
  if constexpr (STAGES == 1) {
    // No overlap: WAR barrier, copy, wait, RAW barrier, compute. The baseline of the stage study.
    for (int kt = 0; kt < k_tiles; ++kt) {
      __syncthreads();  // every warp is done reading the previous tile
      load_stage(0);
      cp_async_commit();
      cp_async_wait<0>();
      __syncthreads();  // the tile is visible to every warp
      load_frags(0, 0, 0);
#pragma unroll
      for (int kk = 0; kk < KS; ++kk) {
        if (kk + 1 < KS) load_frags((kk + 1) & 1, 0, kk + 1);
        mma_step(kk & 1);
      }
    }
  } else {
    // Multistage. Tile t lives in stage t % STAGES, and cp.async group g holds tile g: one group is
    // committed per iteration even when it is empty past the last tile, so the count never drifts.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {  // prologue: tiles 0 .. STAGES-2
      if (s < k_tiles) load_stage(s);
      cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();  // STAGES-1 committed, at most STAGES-2 pending: tile 0 has landed
    __syncthreads();

    int read_stage = 0;            // the stage of tile kt
    int write_stage = STAGES - 1;  // where tile kt + STAGES - 1 goes: the stage tile kt - 1 used
    if (k_tiles > 0) load_frags(0, 0, 0);

    for (int kt = 0; kt < k_tiles; ++kt) {
      if constexpr (KS == 1) {
        // BK = 16, one k step per tile: two fragment buffers cannot alternate across tiles without
        // runtime indexing, so multiply first and load the next tile's fragments after the barrier.
        if (kt + STAGES - 1 < k_tiles) load_stage(write_stage);
        cp_async_commit();
        write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;
        mma_step(0);
        cp_async_wait<STAGES - 2>();  // STAGES + kt groups committed: tiles 0..kt+1 have landed
        __syncthreads();              // ... for every thread; and every warp is done with tile kt
        read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
        if (kt + 1 < k_tiles) load_frags(0, read_stage, 0);
      } else {
#pragma unroll
        for (int kk = 0; kk < KS; ++kk) {
          if (kk == 0) {
            // Refill the stage tile kt-1 used. Safe: its last ldmatrix came before the barrier in the
            // last k step of iteration kt-1.
            if (kt + STAGES - 1 < k_tiles) load_stage(write_stage);
            cp_async_commit();
            write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;
          }
          if (kk == KS - 1) {
            // Tile kt+1 must have landed before its first fragments load: STAGES + kt groups are
            // committed, so allowing STAGES-2 pending means groups 0..kt+1 are complete; the barrier
            // makes every thread's copies visible, and every warp is past its last read of tile kt's
            // stage (its step KS-1 fragments were loaded in step KS-2), which iteration kt+1 refills.
            cp_async_wait<STAGES - 2>();
            __syncthreads();
            read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
          }
          // The next step's fragments; KS is even here, so step kk+1 == KS, the next tile's step 0,
          // lands in buffer 0 as it must. (No next tile after the last: skip, rather than read a stage
          // that may never have been written.)
          if (kk + 1 < KS || kt + 1 < k_tiles) load_frags((kk + 1) & 1, read_stage, (kk + 1 == KS) ? 0 : kk + 1);
          mma_step(kk & 1);
        }
      }
    }
    cp_async_wait<0>();  // only empty groups can still be pending; drain them anyway
  }

  // -- epilogue: accumulators -> C (+ bias, ReLU) ----------------------------------------------------
  // A lane holds two adjacent columns of each n8 tile: one store of both (f32: 8-byte float2, the 4 lanes
  // of a row filling one 32-byte sector; bf16: a 4-byte bf16x2, rounded to nearest even from the f32
  // value after bias and ReLU). A tile wholly inside C (and C rows pair-aligned) takes the unguarded path: one
  // row pointer per (mi, half_row) and compile-time column offsets, so its 64 stores need no compares,
  // no branches and no 64-bit address arithmetic each. Edge tiles mask every column on M and N.
  const bool interior = WHOLE || (p.c_vec2 && m0 + Cfg::BM <= p.m && n0 + Cfg::BN <= p.n);
  auto value = [&](int mi, int ni, int half_row, float bias0, float bias1, float& v0, float& v1) {
    if constexpr (Cfg::ACC_F16) {
      const __half2 h2 = *reinterpret_cast<const __half2*>(&acc[mi][ni][half_row]);
      v0 = __low2float(h2);
      v1 = __high2float(h2);
    } else {
      v0 = acc[mi][ni][2 * half_row];
      v1 = acc[mi][ni][2 * half_row + 1];
    }
    if constexpr (Cfg::EPI == Epi::BiasRelu) {
      v0 += bias0;
      v1 += bias1;
      v0 = (v0 < 0.f) ? 0.f : v0;  // written so that a NaN stays a NaN (fmaxf would hide it)
      v1 = (v1 < 0.f) ? 0.f : v1;
    }
  };
  int row0, col0;  // this lane's first element: (mi, ni, half_row) = (0, 0, 0)
  Cfg::acc_coords(warp_m, warp_n, lane, 0, 0, 0, row0, col0);
  row0 += m0;
  col0 += n0;
  if (interior) {
    TOut* c0 = p.c + static_cast<int64_t>(row0) * p.ldc + col0;
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      float bias0 = 0.f, bias1 = 0.f;
      if constexpr (Cfg::EPI == Epi::BiasRelu) {
        bias0 = p.bias[col0 + ni * 8];
        bias1 = p.bias[col0 + ni * 8 + 1];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int half_row = 0; half_row < 2; ++half_row) {
          float v0, v1;
          value(mi, ni, half_row, bias0, bias1, v0, v1);
          TOut* dst = c0 + static_cast<int64_t>(mi * 16 + 8 * half_row) * p.ldc + ni * 8;
          store2(dst, v0, v1);
        }
    }
  } else {
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      const int col = col0 + ni * 8;
      float bias0 = 0.f, bias1 = 0.f;  // the bias of this lane's two columns of n8 tile ni
      if constexpr (Cfg::EPI == Epi::BiasRelu) {
        if (col < p.n) bias0 = p.bias[col];
        if (col + 1 < p.n) bias1 = p.bias[col + 1];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
        for (int half_row = 0; half_row < 2; ++half_row) {
          const int row = row0 + mi * 16 + 8 * half_row;
          float v0, v1;
          value(mi, ni, half_row, bias0, bias1, v0, v1);
          if (row < p.m) {
            TOut* dst = p.c + static_cast<int64_t>(row) * p.ldc + col;
            if (p.c_vec2 && col + 1 < p.n) {
              store2(dst, v0, v1);
            } else {
              if (col < p.n) store1(dst, v0);
              if (col + 1 < p.n) store1(dst + 1, v1);
            }
          }
        }
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Host side: validate the arguments against what this instantiation computes, pick the aligned or the
// general kernel, set its shared-memory limit, launch on the harness's stream, check the launch.
// With `query` non-null: the occupancy of the launch it would make instead (gemm_abi.h: NAME_occupancy).
template <class Cfg, class Tag, class TIn = __half, class TOut = float>  // the defaults: f16 in, f32 out, as before BF16
int launch(const gc_gemm_args* args, const char* name, char* err, size_t err_len, gc_occupancy* query = nullptr) {
  static_assert(is_input_type<TIn> && is_output_type<TOut>, "f16 or bf16 in; f32 or bf16 out");
  static_assert(!Cfg::ACC_F16 || (std::is_same<TIn, __half>::value && std::is_same<TOut, float>::value),
                "the f16-accumulate canary is f16 in, f32 out only");
  char msg[256];
  if (!args) return gc_fail(err, err_len, "null arguments");
  const gc_order want_b = Cfg::B_COL ? GC_COL : GC_ROW;
  if (args->order_a != GC_ROW || args->order_b != want_b || args->order_c != GC_ROW) {
    snprintf(msg, sizeof msg, "%s: layout not supported (this instantiation is A row, B %s, C row)", name,
             Cfg::B_COL ? "col" : "row");
    return gc_fail(err, err_len, msg);
  }
  if (args->dtype_a != Elem<TIn>::abi || args->dtype_b != Elem<TIn>::abi || args->dtype_c != Elem<TOut>::abi) {
    snprintf(msg, sizeof msg, "%s: built for %s A and B and %s C", name, Elem<TIn>::name, Elem<TOut>::name);
    return gc_fail(err, err_len, msg);
  }
  // The f16-accumulate variant also runs under f32-accumulate contracts, on purpose (the canary).
  if (args->dtype_acc != GC_F32 && !(Cfg::ACC_F16 && args->dtype_acc == GC_F16))
    return gc_fail(err, err_len, "mma_sync: accumulator type not supported");
  if (args->math != GC_MATH_STRICT) return gc_fail(err, err_len, "mma_sync: only the strict math mode");
  if (args->alpha != 1.0 || args->beta != 0.0) return gc_fail(err, err_len, "mma_sync: only alpha = 1, beta = 0");
  const gc_epilogue want_epi = (Cfg::EPI == Epi::BiasRelu) ? GC_EPI_BIAS_RELU : GC_EPI_NONE;
  if (args->epilogue != want_epi) {
    snprintf(msg, sizeof msg, "%s: built for epilogue %s", name, Cfg::EPI == Epi::BiasRelu ? "bias_relu" : "none");
    return gc_fail(err, err_len, msg);
  }
  if (Cfg::EPI == Epi::BiasRelu && !args->bias) return gc_fail(err, err_len, "mma_sync: bias_relu needs a bias vector");
  const int64_t m = args->m, n = args->n, k = args->k;
  if (m < 0 || n < 0 || k < 0 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    return gc_fail(err, err_len, "mma_sync: dimensions must be in [0, 2^31)");
  const int64_t b_row = Cfg::B_COL ? k : n;
  if (args->lda < (k > 1 ? k : 1) || args->ldb < (b_row > 1 ? b_row : 1) || args->ldc < (n > 1 ? n : 1))
    return gc_fail(err, err_len, "mma_sync: a leading dimension is shorter than its row");
  if (m == 0 || n == 0) return 0;  // nothing to write

  Params<TIn, TOut> p;
  p.a = static_cast<const TIn*>(args->a);
  p.b = static_cast<const TIn*>(args->b);
  p.c = static_cast<TOut*>(args->c);
  p.bias = args->bias;
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  p.lda = args->lda;
  p.ldb = args->ldb;
  p.ldc = args->ldc;
  const int64_t batch = gc_batch(args);
  if (batch > 65535) return gc_fail(err, err_len, "mma_sync: a batch of more than 65535 matrices (the grid's y)");
  p.stride_a = batch > 1 ? args->stride_a : 0;
  p.stride_b = batch > 1 ? args->stride_b : 0;
  p.stride_c = batch > 1 ? args->stride_c : 0;
  const int64_t tiles_m = (m + Cfg::BM - 1) / Cfg::BM, tiles_n = (n + Cfg::BN - 1) / Cfg::BN;
  if (tiles_m * tiles_n > INT32_MAX) return gc_fail(err, err_len, "mma_sync: too many tiles for a 1-D grid");
  p.tiles_m = static_cast<int>(tiles_m);
  p.tiles_n = static_cast<int>(tiles_n);
  p.c_vec2 = (args->ldc % 2 == 0) && (reinterpret_cast<uintptr_t>(args->c) % (2 * sizeof(TOut)) == 0);

  // cp.async of 16 bytes needs every chunk 16-byte aligned: aligned bases and ld a multiple of 8. We
  // also ask the contiguous extents (K; and N for row-major B) to be multiples of 8, so that a chunk is
  // either wholly inside the matrix or wholly outside (src-size 16 or 0, the two cases CUTLASS uses
  // too); contiguous operands with ld % 8 == 0 satisfy it anyway.
  // (a batch's every matrix too: batch strides that are multiples of 8 elements keep each 16-byte aligned)
  const bool aligned = reinterpret_cast<uintptr_t>(args->a) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(args->b) % 16 == 0 && args->lda % 8 == 0 &&
                       args->ldb % 8 == 0 && k % 8 == 0 && (Cfg::B_COL || n % 8 == 0) &&
                       p.stride_a % 8 == 0 && p.stride_b % 8 == 0;
  p.c_vec2 = p.c_vec2 && p.stride_c % 2 == 0;
  const bool whole = aligned && p.c_vec2 && k > 0 && m % Cfg::BM == 0 && n % Cfg::BN == 0 && k % Cfg::BK == 0;
  void (*kernel)(const Params<TIn, TOut>) = whole     ? gemm_kernel<Cfg, TIn, TOut, true, true, Tag>
                                             : aligned ? gemm_kernel<Cfg, TIn, TOut, true, false, Tag>
                                                       : gemm_kernel<Cfg, TIn, TOut, false, false, Tag>;
  if (query) return gc_query_occupancy((const void*)kernel, Cfg::THREADS, Cfg::SMEM_BYTES, query, err, err_len);
  GC_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES));
  const dim3 grid(static_cast<unsigned>(tiles_m * tiles_n), static_cast<unsigned>(batch));
  kernel<<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, args->stream>>>(p);
  return gc_check_launch(err, err_len, name);
}

}  // namespace mma
}  // namespace gc
