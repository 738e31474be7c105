// cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt
//
// A GEMM written with CuTe for SM80-class tensor cores (runs on sm_80 and later). Rendered by
// gemmcompare from cutlass_configs/templates/cute_sm80_kernel.cu.tmpl; do not edit (edit the YAML).
//
//   C (m x n, row-major, float) = alpha * A (m x k, column-major) * B (k x n, row-major) + beta * C
//   A, B: cutlass::half_t; accumulate float; mma.sync atom cute::SM80_16x8x16_F32F16F16F32_TN.
//
// Read top to bottom: the tile, how each operand moves (global -> cp.async -> swizzled shared memory ->
// ldmatrix -> registers), the multistage mainloop, the predicated epilogue. Any m, n, k runs: tiles that
// overhang the matrix load zeros and store nothing outside it. The one requirement is that each operand's
// contiguous extent is a multiple of a 16-byte vector (the harness pads to that).
#include <cuda_runtime.h>

#include <cute/tensor.hpp>  // tensors, layouts, copy and MMA atoms, cute::copy / cute::gemm

#include "cutlass/numeric_types.h"

#include "gemmcompare/gemm_abi.h"

// A namespace of its own rather than an anonymous one: nvcc's host stub for a __global__ function in an
// anonymous namespace that also holds `using namespace cute` does not compile.
namespace gc_cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt {

using namespace cute;

using ElementA = cutlass::half_t;
using ElementB = cutlass::half_t;
using ElementC = float;
using ElementAccumulator = float;

// -- The tile ------------------------------------------------------------------------------------
constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 32;
constexpr int kStages = 3;  // shared-memory pipeline depth
constexpr int kWarpsM = 2;
constexpr int kWarpsN = 2;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;

// Warps tile the CTA tile kWarpsM x kWarpsN; each step of the TiledMMA covers 16 rows and 16 columns per
// warp (two n8 atoms, so one ldmatrix.x4 of B feeds both) and 32 bytes of K (one ldmatrix.x4 of A).
using TiledMma = decltype(make_tiled_mma(
    cute::SM80_16x8x16_F32F16F16F32_TN{},
    Layout<Shape<Int<kWarpsM>, Int<kWarpsN>, _1>>{},
    Tile<Int<16 * kWarpsM>, Int<16 * kWarpsN>, Int<32 / int(sizeof(ElementA))>>{}));

// -- How one operand moves ---------------------------------------------------------------------------
// An operand is viewed as (rows, K): rows = M for A, N for B. kKMajor: its rows are contiguous along K.
template <class T, bool kKMajor>
struct Operand;

// K-major: 16-byte cp.async vectors along K; shared memory in rows of up to 128 bytes, XOR-swizzled so
// the eight 16-byte rows one ldmatrix reads fall in distinct bank groups; ldmatrix without transpose.
template <class T>
struct Operand<T, true> {
  static constexpr int kVector = 16 / int(sizeof(T));
  static constexpr int kAtomK = cute::min(kTileK, 128 / int(sizeof(T)));
  using SmemAtom = decltype(composition(Swizzle<log_2(unsigned(kAtomK / kVector)), log_2(unsigned(kVector)), 3>{},
                                        Layout<Shape<_8, Int<kAtomK>>, Stride<Int<kAtomK>, _1>>{}));
  static constexpr int kVectorsPerRow = kTileK / kVector;
  using GmemCopy = decltype(make_tiled_copy(
      Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, T>{},
      Layout<Shape<Int<kThreads / kVectorsPerRow>, Int<kVectorsPerRow>>, Stride<Int<kVectorsPerRow>, _1>>{},
      Layout<Shape<_1, Int<kVector>>>{}));
  using SmemCopyAtom = Copy_Atom<SM75_U32x4_LDSM_N, T>;
  CUTE_HOST_DEVICE static auto stride(int ld) { return make_stride(ld, Int<1>{}); }
};

// MN-major (16-bit only): 16-byte vectors along M (or N); shared memory in swizzled 128-byte columns;
// ldmatrix.trans turns them into the K-major fragments mma.sync takes.
template <class T>
struct Operand<T, false> {
  static constexpr int kVector = 16 / int(sizeof(T));
  static constexpr int kAtomRows = 128 / int(sizeof(T));
  using SmemAtom = decltype(composition(Swizzle<3, log_2(unsigned(kVector)), 3>{},
                                        Layout<Shape<Int<kAtomRows>, _8>, Stride<_1, Int<kAtomRows>>>{}));
  static constexpr int kThreadsPerColumn = kAtomRows / kVector;
  using GmemCopy = decltype(make_tiled_copy(
      Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, T>{},
      Layout<Shape<Int<kThreadsPerColumn>, Int<kThreads / kThreadsPerColumn>>, Stride<_1, Int<kThreadsPerColumn>>>{},
      Layout<Shape<Int<kVector>, _1>>{}));
  using SmemCopyAtom = Copy_Atom<SM75_U16x8_LDSM_T, T>;
  CUTE_HOST_DEVICE static auto stride(int ld) { return make_stride(Int<1>{}, ld); }
};

using OperandA = Operand<ElementA, false>;  // A column-major
using OperandB = Operand<ElementB, false>;  // B row-major
using SmemLayoutA = decltype(tile_to_shape(typename OperandA::SmemAtom{}, Shape<Int<kTileM>, Int<kTileK>, Int<kStages>>{}));
using SmemLayoutB = decltype(tile_to_shape(typename OperandB::SmemAtom{}, Shape<Int<kTileN>, Int<kTileK>, Int<kStages>>{}));

struct SharedStorage {
  array_aligned<ElementA, cosize_v<SmemLayoutA>, 128> a;
  array_aligned<ElementB, cosize_v<SmemLayoutB>, 128> b;
};

struct Params {
  const ElementA* a;
  const ElementB* b;
  ElementC* c;
  int m, n, k;
  int lda, ldb, ldc;
  float alpha, beta;
  int group_m;  // rows of tiles walked together (grouped raster): they share B panels in L2
};

// Issue one tile's cp.async copies. Where the tile overhangs the matrix, vectors outside it are
// zero-filled instead (a vector never straddles the edge: see the header comment).
template <class TiledCopy, class Src, class Dst, class Coords, class Bounds>
CUTE_DEVICE void copy_tile(TiledCopy const& tiled_copy, Src const& src, Dst&& dst, Coords const& coords,
                           bool inside, Bounds const& bounds) {
  if (inside) {
    copy(tiled_copy, src, dst);
    return;
  }
  CUTE_UNROLL
  for (int i = 0; i < size<1>(dst); ++i) {
    CUTE_UNROLL
    for (int j = 0; j < size<2>(dst); ++j) {
      if (elem_less(coords(0, i, j), bounds)) {
        copy(tiled_copy, src(_, i, j), dst(_, i, j));
      } else {
        clear(dst(_, i, j));
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads, 1) cute_sm80_gemm_kernel(Params p) {
  // -- Which output tile: blockIdx.x walks group_m rows of tiles column by column ----------------
  const int tiles_m = (p.m + kTileM - 1) / kTileM;
  const int tiles_n = (p.n + kTileN - 1) / kTileN;
  const int per_group = p.group_m * tiles_n;
  const int first_m = int(blockIdx.x) / per_group * p.group_m;
  const int group_rows = min(tiles_m - first_m, p.group_m);
  const int tile_m = first_m + int(blockIdx.x) % per_group % group_rows;
  const int tile_n = int(blockIdx.x) % per_group / group_rows;

  // -- Global tensors, this CTA's tiles, and the coordinates of their elements (for predicates) --
  Tensor mA = make_tensor(make_gmem_ptr(p.a), make_shape(p.m, p.k), OperandA::stride(p.lda));   // (M, K)
  Tensor mB = make_tensor(make_gmem_ptr(p.b), make_shape(p.n, p.k), OperandB::stride(p.ldb));   // (N, K)
  Tensor mC = make_tensor(make_gmem_ptr(p.c), make_shape(p.m, p.n), make_stride(p.ldc, Int<1>{}));  // (M, N)
  auto tile_a = make_shape(Int<kTileM>{}, Int<kTileK>{});
  auto tile_b = make_shape(Int<kTileN>{}, Int<kTileK>{});
  auto tile_c = make_shape(Int<kTileM>{}, Int<kTileN>{});
  Tensor gA = local_tile(mA, tile_a, make_coord(tile_m, _));                                    // (BM, BK, k)
  Tensor gB = local_tile(mB, tile_b, make_coord(tile_n, _));                                    // (BN, BK, k)
  Tensor gC = local_tile(mC, tile_c, make_coord(tile_m, tile_n));                               // (BM, BN)
  Tensor cA = local_tile(make_identity_tensor(shape(mA)), tile_a, make_coord(tile_m, _));
  Tensor cB = local_tile(make_identity_tensor(shape(mB)), tile_b, make_coord(tile_n, _));
  Tensor cC = local_tile(make_identity_tensor(shape(mC)), tile_c, make_coord(tile_m, tile_n));
  const bool a_rows_inside = (tile_m + 1) * kTileM <= p.m;
  const bool b_rows_inside = (tile_n + 1) * kTileN <= p.n;

  extern __shared__ __align__(128) char smem_raw[];
  SharedStorage& smem = *reinterpret_cast<SharedStorage*>(smem_raw);
  Tensor sA = make_tensor(make_smem_ptr(smem.a.data()), SmemLayoutA{});  // (BM, BK, stage)
  Tensor sB = make_tensor(make_smem_ptr(smem.b.data()), SmemLayoutB{});  // (BN, BK, stage)

  // -- Global -> shared: every thread copies its 16-byte vectors of each tile -------------------
  typename OperandA::GmemCopy gmem_copy_a;
  typename OperandB::GmemCopy gmem_copy_b;
  auto thr_copy_a = gmem_copy_a.get_slice(threadIdx.x);
  auto thr_copy_b = gmem_copy_b.get_slice(threadIdx.x);
  Tensor tAgA = thr_copy_a.partition_S(gA);  // (CPY, CPY_M, CPY_K, k)
  Tensor tAcA = thr_copy_a.partition_S(cA);
  Tensor tAsA = thr_copy_a.partition_D(sA);  // (CPY, CPY_M, CPY_K, stage)
  Tensor tBgB = thr_copy_b.partition_S(gB);
  Tensor tBcB = thr_copy_b.partition_S(cB);
  Tensor tBsB = thr_copy_b.partition_D(sB);

  auto load_tile = [&](int k_tile, int stage) {
    const bool k_inside = (k_tile + 1) * kTileK <= p.k;
    copy_tile(gmem_copy_a, tAgA(_, _, _, k_tile), tAsA(_, _, _, stage), tAcA(_, _, _, k_tile),
              a_rows_inside && k_inside, make_coord(p.m, p.k));
    copy_tile(gmem_copy_b, tBgB(_, _, _, k_tile), tBsB(_, _, _, stage), tBcB(_, _, _, k_tile),
              b_rows_inside && k_inside, make_coord(p.n, p.k));
  };

  // -- Shared -> registers (ldmatrix), and the accumulators ----------------------------------------
  TiledMma tiled_mma;
  auto thr_mma = tiled_mma.get_slice(threadIdx.x);
  Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));  // (MMA, MMA_M, MMA_K)
  Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));  // (MMA, MMA_N, MMA_K)
  Tensor accum = partition_fragment_C(tiled_mma, tile_c);    // (MMA, MMA_M, MMA_N)
  clear(accum);

  auto smem_copy_a = make_tiled_copy_A(typename OperandA::SmemCopyAtom{}, tiled_mma);
  auto smem_copy_b = make_tiled_copy_B(typename OperandB::SmemCopyAtom{}, tiled_mma);
  auto thr_smem_a = smem_copy_a.get_slice(threadIdx.x);
  auto thr_smem_b = smem_copy_b.get_slice(threadIdx.x);
  Tensor tXsA = thr_smem_a.partition_S(sA);   // (CPY, MMA_M, MMA_K, stage)
  Tensor tXrA = thr_smem_a.retile_D(tCrA);    // (CPY, MMA_M, MMA_K)
  Tensor tXsB = thr_smem_b.partition_S(sB);
  Tensor tXrB = thr_smem_b.retile_D(tCrB);

  // -- Mainloop: kStages - 1 tiles in flight; fragments of the next MMA step load during this one --
  constexpr int kBlocks = size<2>(tCrA);  // MMA K steps per tile
  static_assert(kBlocks >= 2, "the register pipeline needs two MMA K steps per tile");
  const int k_tiles = size<2>(gA);
  int k_next = 0;
  CUTE_UNROLL
  for (int stage = 0; stage < kStages - 1; ++stage) {
    if (k_next < k_tiles) load_tile(k_next, stage);
    cp_async_fence();  // one group per stage, even when empty, so the wait counts below hold
    ++k_next;
  }
  int read_stage = 0;                // stage holding the tile being multiplied
  int write_stage = kStages - 1;     // stage the next tile goes to: the one freed by the previous tile
  cp_async_wait<kStages - 2>();
  __syncthreads();
  copy(smem_copy_a, tXsA(_, _, Int<0>{}, read_stage), tXrA(_, _, Int<0>{}));
  copy(smem_copy_b, tXsB(_, _, Int<0>{}, read_stage), tXrB(_, _, Int<0>{}));

  CUTE_NO_UNROLL
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    CUTE_UNROLL
    for (int k_block = 0; k_block < kBlocks; ++k_block) {
      if (k_block == kBlocks - 1) {
        // This tile's last fragments are in registers: move on once the next tile has landed.
        read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
        cp_async_wait<kStages - 2>();
        __syncthreads();
      }
      const int k_block_next = (k_block + 1) % kBlocks;  // a constant once unrolled
      copy(smem_copy_a, tXsA(_, _, k_block_next, read_stage), tXrA(_, _, k_block_next));
      copy(smem_copy_b, tXsB(_, _, k_block_next, read_stage), tXrB(_, _, k_block_next));
      if (k_block == 0) {
        // Every warp finished reading write_stage before the barrier above (previous tile).
        if (k_next < k_tiles) load_tile(k_next, write_stage);
        cp_async_fence();
        ++k_next;
        write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
      }
      cute::gemm(tiled_mma, tCrA(_, _, k_block), tCrB(_, _, k_block), accum);
    }
  }

  // -- Epilogue: registers -> global, alpha and beta applied, nothing stored outside the matrix ----
  Tensor tCgC = thr_mma.partition_C(gC);  // (MMA, MMA_M, MMA_N)
  Tensor tCcC = thr_mma.partition_C(cC);
  const bool c_inside = a_rows_inside && b_rows_inside;
  const auto c_bounds = make_coord(p.m, p.n);
  CUTE_UNROLL
  for (int i = 0; i < size(accum); ++i) {
    if (c_inside || elem_less(tCcC(i), c_bounds)) {
      float value = p.alpha * float(accum(i));
      if (p.beta != 0.0f) value += p.beta * float(tCgC(i));  // C is not read when beta is 0
      tCgC(i) = ElementC(value);
    }
  }
}

int check_args(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->dtype_a != GC_F16 || args->dtype_b != GC_F16 || args->dtype_c != GC_F32 ||
      args->dtype_acc != GC_F32 || args->math != GC_MATH_STRICT || args->order_a != GC_COL ||
      args->order_b != GC_ROW || args->order_c != GC_ROW || args->epilogue != GC_EPI_NONE) {
    return gc_fail(err, err_len, "cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt: compiled for f16 in (A column-major, B row-major), f32 out (row-major), f32 accumulate, math strict; called with another contract");
  }
  return 0;
}

}  // namespace gc_cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt

using namespace gc_cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt;

extern "C" size_t gc_kernel_cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt_workspace_bytes(
    const gc_gemm_args*, int) { return 0; }

extern "C" int gc_kernel_cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt(
    const gc_gemm_args* args, int group_m, char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  Params p{static_cast<const ElementA*>(args->a), static_cast<const ElementB*>(args->b),
           static_cast<ElementC*>(args->c),
           int(args->m), int(args->n), int(args->k),
           int(args->lda), int(args->ldb), int(args->ldc),
           float(args->alpha), float(args->beta), group_m};
  const long long tiles = (args->m + kTileM - 1) / kTileM * ((args->n + kTileN - 1) / kTileN);
  if (tiles == 0) return 0;
  constexpr int kSmemBytes = int(sizeof(SharedStorage));
  GC_CHECK_CUDA(cudaFuncSetAttribute(cute_sm80_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  cute_sm80_gemm_kernel<<<dim3(unsigned(tiles)), dim3(kThreads), kSmemBytes, args->stream>>>(p);
  return gc_check_launch(err, err_len, "cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt");
}

// The occupancy query (gemm_abi.h: NAME_occupancy): the kernel, block and shared memory launched above.
extern "C" int gc_kernel_cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_nt_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  return gc_query_occupancy((const void*)cute_sm80_gemm_kernel, kThreads, sizeof(SharedStorage), out, err, err_len);
}
