// cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn
//
// A GEMM written with CuTe's SM90 atoms (sm_90a: TMA and wgmma). Rendered by gemmcompare from
// cutlass_configs/templates/cute_sm90_kernel.cu.tmpl; do not edit (edit the YAML).
//
//   C (m x n, row-major, float) = alpha * A (m x k, row-major) * B (k x n, column-major) + beta * C
//   A, B: cutlass::half_t; accumulate float; wgmma atom cute::SM90_64x256x16_F32F16F16_SS<cute::GMMA::Major::K, cute::GMMA::Major::K>.
//   Schedule warp_specialized: a producer warpgroup issues TMA, consumer warpgroups multiply; persistent CTAs walk the tiles.
//
// Read top to bottom: the tile and the wgmma TiledMMA, the shared-memory layouts (the 128-byte swizzle wgmma
// reads), the TMA atoms that fill them, the mbarrier pipeline (cutlass::PipelineTmaAsync) between the thread
// that issues TMA and the warpgroups that multiply, the mainloop, the predicated epilogue, the two schedules.
// TMA zero-fills the part of a box outside the matrix, so any m, n, k runs. What TMA needs is 16-byte aligned
// rows of A and B (lda, ldb multiples of 8 elements, 16-byte aligned base pointers): the entry checks that
// before it builds a descriptor, since CuTe's descriptor builder only prints to stderr when it fails.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <cstdio>

#include <cute/tensor.hpp>  // tensors, layouts, TMA copy atoms, GMMA MMA atoms, cute::copy / cute::gemm

#include "cutlass/arch/reg_reconfig.h"        // setmaxnreg: producer registers to the consumers
#include "cutlass/numeric_types.h"
#include "cutlass/pipeline/sm90_pipeline.hpp"  // PipelineTmaAsync: full/empty mbarriers per stage

#include "gemmcompare/gemm_abi.h"

// A namespace of its own rather than an anonymous one (as the SM80 CuTe kernel: nvcc's host stub for a
// __global__ function in an anonymous namespace holding `using namespace cute` does not compile).
namespace gc_cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn {

using namespace cute;

using Element = cutlass::half_t;  // A and B
using ElementC = float;
using ElementAccumulator = float;
static_assert(sizeof(Element) == 2, "16-bit inputs: the 128-byte swizzle atom is 8 rows of 64 elements");

// -- The tile ------------------------------------------------------------------------------------
constexpr int kTileM = 128;
constexpr int kTileN = 256;
constexpr int kTileK = 64;
constexpr int kStages = 4;       // shared-memory pipeline depth
constexpr int kConsumers = 2;  // warpgroups that multiply, stacked along M
constexpr bool kWarpSpecialized = true;
constexpr int kProducers = kWarpSpecialized ? 1 : 0;  // a warpgroup that only issues TMA
constexpr int kThreads = 128 * (kProducers + kConsumers);
using TileShape = Shape<Int<kTileM>, Int<kTileN>, Int<kTileK>>;

// wgmma: one 64 x kTileN x 16 atom per consumer warpgroup, the warpgroups stacked along M. A tile of more
// rows than 64 * kConsumers repeats the atom along M (each warpgroup then issues several wgmmas per k-block).
using TiledMma = decltype(make_tiled_mma(cute::SM90_64x256x16_F32F16F16_SS<cute::GMMA::Major::K, cute::GMMA::Major::K>{}, Layout<Shape<Int<kConsumers>, _1, _1>>{}));

// -- Shared memory --------------------------------------------------------------------------------
// K-major tiles in GMMA's 128-byte swizzle atom (8 rows x 128 bytes): the layout wgmma's shared-memory
// descriptors describe, and the one TMA writes with CU_TENSOR_MAP_SWIZZLE_128B, so no thread touches a tile.
using SmemLayoutA = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{},
                                           Shape<Int<kTileM>, Int<kTileK>, Int<kStages>>{}));
using SmemLayoutB = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{},
                                           Shape<Int<kTileN>, Int<kTileK>, Int<kStages>>{}));

using Pipeline = cutlass::PipelineTmaAsync<kStages>;
using PipelineState = cutlass::PipelineState<kStages>;

struct SharedStorage {
  alignas(1024) ArrayEngine<Element, cosize_v<SmemLayoutA>> a;  // the swizzle pattern repeats every 1024 bytes
  alignas(1024) ArrayEngine<Element, cosize_v<SmemLayoutB>> b;
  typename Pipeline::SharedStorage pipeline;  // a full (TMA bytes landed) and an empty (stage read) barrier per stage
};
// The dynamic shared-memory base is rounded up to 1024 bytes in the kernel: launch with that much slack.
constexpr int kSmemBytes = int(sizeof(SharedStorage)) + 1024;
constexpr uint32_t kTmaBytes = uint32_t(sizeof(Element)) * (kTileM + kTileN) * kTileK;  // per stage, A and B
// What gemmcompare validated (config/cute_sm90.py) is what the kernel is: its shared memory and thread count.
static_assert(kSmemBytes == 198656, "config/cute_sm90.py counts another shared-memory size");
static_assert(kSmemBytes <= 232448, "more shared memory than an sm_90 CTA may have");
static_assert(int(size(TiledMma{})) == 128 * kConsumers && kThreads == 384, "one warpgroup per consumer");

// -- TMA ------------------------------------------------------------------------------------------
// One atom per operand: a (rows x K) K-major matrix in global memory, one (kRows x kTileK) box per stage.
template <int kRows, class SmemLayout>
auto make_tma(Element const* ptr, int rows, int k, int ld) {
  Tensor g = make_tensor(make_gmem_ptr(ptr), make_shape(rows, k), make_stride(ld, Int<1>{}));
  return make_tma_atom(SM90_TMA_LOAD{}, g, SmemLayout{}(_, _, 0), make_shape(Int<kRows>{}, Int<kTileK>{}));
}
using TmaA = decltype(make_tma<kTileM, SmemLayoutA>(nullptr, 1, 1, 8));
using TmaB = decltype(make_tma<kTileN, SmemLayoutB>(nullptr, 1, 1, 8));

struct Params {
  TmaA tma_a;  // A (m, k), lda: inside the descriptor
  TmaB tma_b;  // B as (n, k), ldb
  ElementC* c;
  int m, n, k;
  int ldc;
  float alpha, beta;
  int group_m;  // rows of tiles walked together (grouped raster): they share B panels in L2
};

// Tile `tile` of the grouped raster: group_m rows of tiles walked column by column.
CUTE_DEVICE void tile_coord(int tile, int tiles_m, int tiles_n, int group_m, int& tile_m, int& tile_n) {
  const int per_group = group_m * tiles_n;
  const int first_m = tile / per_group * group_m;
  const int group_rows = min(tiles_m - first_m, group_m);
  tile_m = first_m + tile % per_group % group_rows;
  tile_n = tile % per_group / group_rows;
}

// The TMA view of one output tile's A and B panels: (TMA, k) in global memory, (TMA, stage) in shared.
CUTE_DEVICE auto tma_views(Params const& p, SharedStorage& smem, int tile_m, int tile_n) {
  Tensor mA = p.tma_a.get_tma_tensor(make_shape(p.m, p.k));  // (M, K) coordinates TMA reads
  Tensor mB = p.tma_b.get_tma_tensor(make_shape(p.n, p.k));  // (N, K)
  Tensor gA = local_tile(mA, TileShape{}, make_coord(tile_m, tile_n, _), Step<_1, X, _1>{});  // (BM, BK, k)
  Tensor gB = local_tile(mB, TileShape{}, make_coord(tile_m, tile_n, _), Step<X, _1, _1>{});  // (BN, BK, k)
  Tensor sA = make_tensor(make_smem_ptr(smem.a.begin()), SmemLayoutA{});  // (BM, BK, stage)
  Tensor sB = make_tensor(make_smem_ptr(smem.b.begin()), SmemLayoutB{});  // (BN, BK, stage)
  // No multicast (cluster 1x1): CTA 0 of a one-CTA layout. The TMA unit owns mode 0 of each view.
  auto [tAgA, tAsA] = tma_partition(p.tma_a, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sA), group_modes<0, 2>(gA));
  auto [tBgB, tBsB] = tma_partition(p.tma_b, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sB), group_modes<0, 2>(gB));
  return cute::make_tuple(tAgA, tAsA, tBgB, tBsB);
}

// Load k-tile `k_tile` of one output tile into the stage `write` names, once its readers have released it.
// Called by the one thread that issues TMA; the stage's full barrier expects kTmaBytes (zero-filled bytes
// outside the matrix count too) and completes when both boxes have landed.
template <class Views>
CUTE_DEVICE void load_stage(Params const& p, Pipeline& pipeline, PipelineState& write, Views const& views, int k_tile) {
  auto const& [tAgA, tAsA, tBgB, tBsB] = views;
  pipeline.producer_acquire(write);
  auto* full = pipeline.producer_get_barrier(write);
  copy(p.tma_a.with(*full), tAgA(_, k_tile), tAsA(_, write.index()));
  copy(p.tma_b.with(*full), tBgB(_, k_tile), tBsB(_, write.index()));
  ++write;
}

// -- Mainloop (consumer warpgroups) ---------------------------------------------------------------
// One output tile (k_tiles >= 1): wait for each stage, issue its wgmmas as one batch, keep that batch in
// flight while waiting for the previous one (warpgroup_wait<1>), then release the previous stage to the
// producer. `released()` runs after each release (the pipelined schedule refills the stage there). The
// first k-tile is peeled, as in CUTLASS's mainloops: its first wgmma overwrites the accumulators
// (ScaleOut::Zero), so they are never cleared, and the loop body is the same every trip.
template <class FragA, class FragB, class Accum>
CUTE_DEVICE void mma_stage(TiledMma& tiled_mma, FragA const& tCrA, FragB const& tCrB, Accum& accum, int stage) {
  warpgroup_arrive();
  CUTE_UNROLL
  for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
    cute::gemm(tiled_mma, tCrA(_, _, k_block, stage), tCrB(_, _, k_block, stage), accum);
    tiled_mma.accumulate_ = GMMA::ScaleOut::One;
  }
  warpgroup_commit_batch();
}

template <class FragA, class FragB, class Accum, class Released>
CUTE_DEVICE void mma_tile(TiledMma& tiled_mma, FragA const& tCrA, FragB const& tCrB, Accum& accum,
                          Pipeline& pipeline, PipelineState& read, int k_tiles, Released&& released) {
  PipelineState release = read;
  tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
  warpgroup_fence_operand(accum);
  pipeline.consumer_wait(read);
  mma_stage(tiled_mma, tCrA, tCrB, accum, read.index());
  ++read;
  warpgroup_fence_operand(accum);
  CUTE_NO_UNROLL
  for (int k_tile = 1; k_tile < k_tiles; ++k_tile) {
    pipeline.consumer_wait(read);
    warpgroup_fence_operand(accum);
    mma_stage(tiled_mma, tCrA, tCrB, accum, read.index());
    warpgroup_wait<1>();  // the previous k-tile's wgmmas are done reading their stage
    warpgroup_fence_operand(accum);
    pipeline.consumer_release(release);
    ++release;
    released();
    ++read;
  }
  warpgroup_wait<0>();
  warpgroup_fence_operand(accum);
  pipeline.consumer_release(release);
  released();
}

// -- Epilogue: registers -> global, alpha and beta applied, nothing stored outside the matrix --------
// Each thread writes its accumulator fragment straight to C, so the next tile's mainloop needs no shared
// memory of the epilogue. wgmma's fragment holds pairs of adjacent columns (values 2j and 2j + 1): a tile
// inside the matrix stores each pair with one 2-element access when C's rows allow it (4 threads then
// cover 32 contiguous bytes of a row); a tile on the edge stores element by element, each one tested.
template <class T>
struct alignas(2 * sizeof(T)) Pair {
  T x, y;
};

CUTE_DEVICE float scaled(Params const& p, float acc, ElementC const* c) {
  float value = p.alpha * acc;
  if (p.beta != 0.0f) value += p.beta * float(*c);  // C is not read when beta is 0
  return value;
}

template <class ThrMma, class Accum>
CUTE_DEVICE void epilogue(Params const& p, ThrMma const& thr_mma, Accum const& accum, int tile_m, int tile_n) {
  Tensor mC = make_tensor(make_gmem_ptr(p.c), make_shape(p.m, p.n), make_stride(p.ldc, Int<1>{}));  // (M, N)
  auto tile_c = make_shape(Int<kTileM>{}, Int<kTileN>{});
  Tensor gC = local_tile(mC, tile_c, make_coord(tile_m, tile_n));
  Tensor cC = local_tile(make_identity_tensor(shape(mC)), tile_c, make_coord(tile_m, tile_n));
  Tensor tCgC = thr_mma.partition_C(gC);  // (MMA, MMA_M, MMA_N)
  Tensor tCcC = thr_mma.partition_C(cC);
  static_assert(decltype(size(accum))::value % 2 == 0, "wgmma fragments hold pairs of columns");
  const bool inside = (tile_m + 1) * kTileM <= p.m && (tile_n + 1) * kTileN <= p.n;
  // Pairs: an even ldc and a C aligned to a pair keep every pair aligned (each starts at an even column); the
  // last test checks the fragment really is column pairs before trusting it.
  const bool pairs = inside && p.ldc % 2 == 0 && reinterpret_cast<uintptr_t>(p.c) % sizeof(Pair<ElementC>) == 0 &&
                     &tCgC(1) == &tCgC(0) + 1;
  if (pairs) {
    CUTE_UNROLL
    for (int i = 0; i < size(accum); i += 2) {
      ElementC* c = &tCgC(i);
      *reinterpret_cast<Pair<ElementC>*>(c) = Pair<ElementC>{ElementC(scaled(p, float(accum(i)), c)),
                                                             ElementC(scaled(p, float(accum(i + 1)), c + 1))};
    }
    return;
  }
  const auto bounds = make_coord(p.m, p.n);
  CUTE_UNROLL
  for (int i = 0; i < size(accum); ++i) {
    if (inside || elem_less(tCcC(i), bounds)) tCgC(i) = ElementC(scaled(p, float(accum(i)), &tCgC(i)));
  }
}

// -- The kernel -------------------------------------------------------------------------------------
// pipelined: every warpgroup multiplies one output tile; thread 0 also issues TMA, kStages k-tiles ahead,
//   refilling each stage as the warpgroups release it (roles ProducerConsumer of PipelineTmaAsync).
// warp_specialized: warpgroup 0 only issues TMA (and gives its registers to the consumers), the others
//   multiply; the grid is persistent (one CTA per SM slot walks tiles), so the producer loads the next
//   tile's stages while the consumers store the last one.
__global__ void __launch_bounds__(kThreads, 1) cute_sm90_gemm_kernel(__grid_constant__ Params const p) {
  extern __shared__ char smem_raw[];
  auto* smem_base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  SharedStorage& smem = *reinterpret_cast<SharedStorage*>(smem_base);

  const int warp_group = __shfl_sync(0xffffffff, int(threadIdx.x) / 128, 0);  // warp-uniform
  const bool producer_warp_group = kWarpSpecialized && warp_group == 0;
  if (threadIdx.x == 0) {
    prefetch_tma_descriptor(p.tma_a.get_tma_descriptor());
    prefetch_tma_descriptor(p.tma_b.get_tma_descriptor());
  }

  using Role = typename Pipeline::ThreadCategory;
  typename Pipeline::Params pipe_params;
  pipe_params.transaction_bytes = kTmaBytes;
  pipe_params.role = !kWarpSpecialized ? Role::ProducerConsumer : producer_warp_group ? Role::Producer : Role::Consumer;
  pipe_params.is_leader = threadIdx.x == 0;  // the one thread that arms the full barriers and issues TMA
  pipe_params.num_consumers = 128 * kConsumers;
  Pipeline pipeline(smem.pipeline, pipe_params, Shape<_1, _1, _1>{});  // warp 0 initialises the barriers
  __syncthreads();  // barrier initialisation visible to every thread before the first wait or arrive

  const int tiles_m = (p.m + kTileM - 1) / kTileM;
  const int tiles_n = (p.n + kTileN - 1) / kTileN;
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  PipelineState write = cutlass::make_producer_start_state<Pipeline>();  // stages start empty
  PipelineState read;

  // With two consumer warpgroups (384 threads, 168 registers each at launch) the producer's registers go to
  // the consumers: 40 + 2 x 232 per lane of a warpgroup is the whole register file. With one consumer the
  // launch already allows 255, and setmaxnreg would only risk asking for more than the launch reserved.
  constexpr bool kMoveRegisters = kWarpSpecialized && kConsumers == 2;
  if (producer_warp_group) {
    if constexpr (kMoveRegisters) cutlass::arch::warpgroup_reg_dealloc<40>();
    if (threadIdx.x == 0) {
      for (int tile = int(blockIdx.x); tile < tiles; tile += int(gridDim.x)) {
        int tile_m, tile_n;
        tile_coord(tile, tiles_m, tiles_n, p.group_m, tile_m, tile_n);
        auto views = tma_views(p, smem, tile_m, tile_n);
        for (int k_tile = 0; k_tile < k_tiles; ++k_tile) load_stage(p, pipeline, write, views, k_tile);
      }
      pipeline.producer_tail(write);  // leave only once the consumers have released every stage
    }
    return;
  }
  if constexpr (kMoveRegisters) cutlass::arch::warpgroup_reg_alloc<232>();

  const int consumer_thread = int(threadIdx.x) - 128 * kProducers;
  TiledMma tiled_mma;
  auto thr_mma = tiled_mma.get_thread_slice(consumer_thread);
  Tensor sA = make_tensor(make_smem_ptr(smem.a.begin()), SmemLayoutA{});
  Tensor sB = make_tensor(make_smem_ptr(smem.b.begin()), SmemLayoutB{});
  // wgmma reads its operands from shared memory: the "fragments" are descriptors of the swizzled stages.
  Tensor tCrA = thr_mma.make_fragment_A(thr_mma.partition_A(sA));  // (MMA, MMA_M, MMA_K, stage)
  Tensor tCrB = thr_mma.make_fragment_B(thr_mma.partition_B(sB));  // (MMA, MMA_N, MMA_K, stage)
  Tensor accum = partition_fragment_C(tiled_mma, take<0, 2>(TileShape{}));  // (MMA, MMA_M, MMA_N)

  if constexpr (kWarpSpecialized) {
    for (int tile = int(blockIdx.x); tile < tiles; tile += int(gridDim.x)) {
      int tile_m, tile_n;
      tile_coord(tile, tiles_m, tiles_n, p.group_m, tile_m, tile_n);
      mma_tile(tiled_mma, tCrA, tCrB, accum, pipeline, read, k_tiles, [] {});
      epilogue(p, thr_mma, accum, tile_m, tile_n);
    }
  } else {
    int tile_m, tile_n;
    tile_coord(int(blockIdx.x), tiles_m, tiles_n, p.group_m, tile_m, tile_n);
    auto views = tma_views(p, smem, tile_m, tile_n);
    int next_k_tile = 0;  // (thread 0's count)
    auto refill = [&] {
      if (threadIdx.x == 0 && next_k_tile < k_tiles) load_stage(p, pipeline, write, views, next_k_tile++);
      __syncwarp();  // warp 0 whole again before its next .aligned wgmma (thread 0 may have waited for a stage)
    };
    for (int stage = 0; stage < kStages; ++stage) refill();  // the prologue: every stage in flight
    mma_tile(tiled_mma, tCrA, tCrB, accum, pipeline, read, k_tiles, refill);
    epilogue(p, thr_mma, accum, tile_m, tile_n);
  }
}

// -- Host side ----------------------------------------------------------------------------------------

int check_args(const gc_gemm_args* args, char* err, size_t err_len) {
  if (args->dtype_a != GC_F16 || args->dtype_b != GC_F16 || args->dtype_c != GC_F32 ||
      args->dtype_acc != GC_F32 || args->math != GC_MATH_STRICT || args->order_a != GC_ROW ||
      args->order_b != GC_COL || args->order_c != GC_ROW || args->epilogue != GC_EPI_NONE ||
      args->scaling != GC_SCALING_NONE || gc_batch(args) != 1 || gc_is_grouped(args)) {
    return gc_fail(err, err_len, "cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn: compiled for f16 in (A row-major, B column-major), f32 out (row-major), f32 accumulate, math strict, one matrix; called with another contract");
  }
  return 0;
}

// What TMA needs of A and B, refused with the reason before any descriptor is built (CuTe's builder
// would only print to stderr): 16-byte aligned base pointers and rows, int extents, K of at least 1.
int check_tma(const gc_gemm_args* args, char* err, size_t err_len) {
  char msg[256];
  constexpr int64_t kVector = 16 / int64_t(sizeof(Element));
  if (args->k < 1) return gc_fail(err, err_len, "cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn: k = 0 (a TMA descriptor has no empty extent)");
  if (args->m > INT_MAX || args->n > INT_MAX || args->k > INT_MAX || args->ldc > INT_MAX || args->lda > INT_MAX ||
      args->ldb > INT_MAX) {
    return gc_fail(err, err_len, "cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn: m, n, k, lda, ldb and ldc must fit an int");
  }
  if (args->lda < args->k || args->ldb < args->k) {  // A and B are K-major here: a row holds K elements
    return gc_fail(err, err_len, "cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn: lda and ldb must be at least k (K-major A and B)");
  }
  if (args->lda % kVector || args->ldb % kVector) {
    snprintf(msg, sizeof msg, "cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn: TMA needs 16-byte aligned rows: lda and ldb multiples of %lld "
             "elements (lda=%lld, ldb=%lld)", (long long)kVector, (long long)args->lda, (long long)args->ldb);
    return gc_fail(err, err_len, msg);
  }
  if (reinterpret_cast<uintptr_t>(args->a) % 16 || reinterpret_cast<uintptr_t>(args->b) % 16) {
    return gc_fail(err, err_len, "cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn: TMA needs A and B at 16-byte aligned addresses");
  }
  return 0;
}

// CTAs of the persistent grid: SMs x resident CTAs, asked once per device.
int persistent_ctas(char* err, size_t err_len, int* out) {
  static int cached[64] = {};
  int device = 0;
  GC_CHECK_CUDA(cudaGetDevice(&device));
  if (device < 64 && cached[device]) {
    *out = cached[device];
    return 0;
  }
  int sms = 0, per_sm = 0;
  GC_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GC_CHECK_CUDA(cudaFuncSetAttribute(cute_sm90_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  GC_CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cute_sm90_gemm_kernel, kThreads, kSmemBytes));
  *out = sms * (per_sm > 0 ? per_sm : 1);
  if (device < 64) cached[device] = *out;
  return 0;
}

}  // namespace gc_cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn

using namespace gc_cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn;

extern "C" size_t gc_kernel_cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn_workspace_bytes(
    const gc_gemm_args*, int) { return 0; }

extern "C" int gc_kernel_cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn(
    const gc_gemm_args* args, int group_m, char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  if (args->m == 0 || args->n == 0) return 0;
  if (int rc = check_tma(args, err, err_len)) return rc;
  const int m = int(args->m), n = int(args->n), k = int(args->k);
  Params p{make_tma<kTileM, SmemLayoutA>(static_cast<const Element*>(args->a), m, k, int(args->lda)),
           make_tma<kTileN, SmemLayoutB>(static_cast<const Element*>(args->b), n, k, int(args->ldb)),
           static_cast<ElementC*>(args->c), m, n, k, int(args->ldc),
           float(args->alpha), float(args->beta), group_m};
  const long long tiles = (args->m + kTileM - 1) / kTileM * ((args->n + kTileN - 1) / kTileN);
  if (tiles > INT_MAX) return gc_fail(err, err_len, "cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn: more output tiles than an int counts");
  long long grid = tiles;
  if constexpr (kWarpSpecialized) {
    int ctas = 0;
    if (int rc = persistent_ctas(err, err_len, &ctas)) return rc;
    grid = tiles < ctas ? tiles : ctas;
  }
  GC_CHECK_CUDA(cudaFuncSetAttribute(cute_sm90_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  cute_sm90_gemm_kernel<<<dim3(unsigned(grid)), dim3(kThreads), kSmemBytes, args->stream>>>(p);
  return gc_check_launch(err, err_len, "cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn");
}

// The occupancy query (gemm_abi.h: NAME_occupancy): the kernel, block and shared memory launched above.
extern "C" int gc_kernel_cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  if (int rc = check_args(args, err, err_len)) return rc;
  return gc_query_occupancy((const void*)cute_sm90_gemm_kernel, kThreads, kSmemBytes, out, err, err_len);
}
