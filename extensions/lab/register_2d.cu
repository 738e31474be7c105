// lab.register_2d: the FP32 SIMT baseline. A 256-thread block owns a 128x128 tile of C; each thread
// keeps an 8x8 register tile (64 accumulators) and each k step reads 8 A and 8 B values from shared
// memory for 64 FMAs (8x the reuse of one output per thread).
//
//   global --float4 when aligned, else guarded scalars--> registers --> shared (two buffers)
//          --float4 reads--> 8x8 FMA tile --> C (float4 when aligned, else guarded scalars)
//
// Pipeline: the next k tile (BK = 8) is loaded into registers while the current one is multiplied out
// of shared memory, then stored into the other shared buffer; one barrier per k tile (it orders both
// the RAW on the new buffer and the WAR on the old one).
//
// Shared layout: both tiles are stored k-major, as[k][m] and bs[k][n], so a thread reads 4 consecutive
// m (or n) with one float4. The thread's 8 rows are ty*4 + {0..3} and 64 + ty*4 + {0..3} (columns
// likewise with tx): two float4 per operand per k, and within a warp the A reads are 2 broadcasts and
// the B reads 16 distinct float4 (two 128-byte wavefronts, the minimum for 256 bytes).
// Rows are padded by 4 floats: a k-contiguous operand (row-major A, column-major B) is stored
// transposed, lanes 2i and 2i+1 writing k and k+4 of the same m; the pad moves k+4 16 banks over.
#include "lab/lab_common.cuh"

namespace {
constexpr int BM = 128, BN = 128, BK = 8;
constexpr int THREADS = 256;
constexpr int PAD = 4;

// One 128 x 8 operand tile (128 along m or n, 8 along k) is 1024 floats: one float4 per thread.
// K_CONTIG: the operand's k index is the contiguous one (row-major A, column-major B).
template <bool K_CONTIG>
struct TileLoad {
  float v[4];

  // Load the chunk this thread owns of the tile starting at (mn0, k0). `vec`: 16-byte loads allowed
  // (16-byte aligned base and ld a multiple of 4), taken when the whole chunk is inside the matrix.
  __device__ __forceinline__ void load(const float* __restrict__ p, int64_t ld, int mn_total, int k_total, int mn0,
                                       int k0, bool vec, int tid) {
    if (K_CONTIG) {  // chunk = 4 consecutive k of one m (or n)
      const int mn = mn0 + tid / 2, k = k0 + (tid % 2) * 4;
      const float* src = p + static_cast<int64_t>(mn) * ld + k;
      if (vec && mn < mn_total && k + 3 < k_total) {
        const float4 f = *reinterpret_cast<const float4*>(src);
        v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = (mn < mn_total && k + j < k_total) ? src[j] : 0.0f;
      }
    } else {  // chunk = 4 consecutive m (or n) of one k
      const int k = k0 + tid / 32, mn = mn0 + (tid % 32) * 4;
      const float* src = p + static_cast<int64_t>(k) * ld + mn;
      if (vec && k < k_total && mn + 3 < mn_total) {
        const float4 f = *reinterpret_cast<const float4*>(src);
        v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = (k < k_total && mn + j < mn_total) ? src[j] : 0.0f;
      }
    }
  }

  // Store it into a k-major shared tile s[k][mn] (row length 128 + PAD).
  __device__ __forceinline__ void store(float (*s)[BM + PAD], int tid) const {
    if (K_CONTIG) {
      const int mn = tid / 2, k = (tid % 2) * 4;
#pragma unroll
      for (int j = 0; j < 4; ++j) s[k + j][mn] = v[j];
    } else {
      const int k = tid / 32, mn = (tid % 32) * 4;
      *reinterpret_cast<float4*>(&s[k][mn]) = make_float4(v[0], v[1], v[2], v[3]);
    }
  }
};
}  // namespace

template <bool A_COL, bool B_COL>
__global__ void __launch_bounds__(THREADS) gc_lab_register_2d_kernel(
    const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n, int k,
    int64_t lda, int64_t ldb, int64_t ldc, bool a_vec, bool b_vec, bool c_vec) {
  __shared__ __align__(16) float as[2][BK][BM + PAD];
  __shared__ __align__(16) float bs[2][BK][BN + PAD];

  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  TileLoad<!A_COL> la;  // row-major A is k-contiguous
  TileLoad<B_COL> lb;   // column-major B is k-contiguous
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int k_tiles = (k + BK - 1) / BK;
  if (k_tiles > 0) {
    la.load(a, lda, m, k, m0, 0, a_vec, tid);
    lb.load(b, ldb, n, k, n0, 0, b_vec, tid);
    la.store(as[0], tid);
    lb.store(bs[0], tid);
  }
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int cur = kt & 1;
    if (kt + 1 < k_tiles) {  // prefetch the next tile into registers; its loads overlap the FMAs
      la.load(a, lda, m, k, m0, (kt + 1) * BK, a_vec, tid);
      lb.load(b, ldb, n, k, n0, (kt + 1) * BK, b_vec, tid);
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float ar[8], br[8];
      const float4 a_lo = *reinterpret_cast<const float4*>(&as[cur][kk][ty * 4]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&as[cur][kk][64 + ty * 4]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&bs[cur][kk][tx * 4]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&bs[cur][kk][64 + tx * 4]);
      ar[0] = a_lo.x, ar[1] = a_lo.y, ar[2] = a_lo.z, ar[3] = a_lo.w;
      ar[4] = a_hi.x, ar[5] = a_hi.y, ar[6] = a_hi.z, ar[7] = a_hi.w;
      br[0] = b_lo.x, br[1] = b_lo.y, br[2] = b_lo.z, br[3] = b_lo.w;
      br[4] = b_hi.x, br[5] = b_hi.y, br[6] = b_hi.z, br[7] = b_hi.w;
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += ar[i] * br[j];
    }
    if (kt + 1 < k_tiles) {  // the other buffer was last read in iteration kt-1, before its barrier
      la.store(as[cur ^ 1], tid);
      lb.store(bs[cur ^ 1], tid);
    }
    __syncthreads();
  }

  // Epilogue: rows ty*4 + i (+64), columns tx*4 .. tx*4+3 (+64): one float4 per row half when it fits.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (row >= m) continue;
    float* crow = c + static_cast<int64_t>(row) * ldc;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = n0 + half * 64 + tx * 4;
      const float* v = &acc[i][half * 4];
      if (c_vec && col + 3 < n) {
        *reinterpret_cast<float4*>(crow + col) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < n) crow[col + j] = v[j];
      }
    }
  }
}

// The entry and its occupancy query share this body (gemm_abi.h: NAME_occupancy).
static int gc_lab_register_2d_run(const gc_gemm_args* args, gc_occupancy* query, char* err, size_t err_len) {
  gc::lab::Problem p;
  if (int rc = gc::lab::check_args(args, GC_F32, "lab.register_2d", &p, err, err_len)) return rc;
  if (p.empty()) return 0;
  const dim3 block(THREADS);
  const dim3 grid(gc::lab::blocks(p.n, BN), gc::lab::blocks(p.m, BM));
  if (grid.y > 65535) return gc_fail(err, err_len, "lab.register_2d: m too large for the grid's y dimension");
  // 16-byte vector paths: a 16-byte aligned base and a leading dimension that keeps every row aligned.
  const bool a_vec = gc::lab::aligned(args->a, 16) && p.lda % 4 == 0;
  const bool b_vec = gc::lab::aligned(args->b, 16) && p.ldb % 4 == 0;
  const bool c_vec = gc::lab::aligned(args->c, 16) && p.ldc % 4 == 0;
  GC_LAB_LAUNCH_OR_QUERY_4(query, p, gc_lab_register_2d_kernel, grid, block, 0, args->stream, static_cast<const float*>(args->a),
                  static_cast<const float*>(args->b), static_cast<float*>(args->c), p.m, p.n, p.k, p.lda, p.ldb,
                  p.ldc, a_vec, b_vec, c_vec);
  return gc_check_launch(err, err_len, "gc_lab_register_2d_kernel");
}

extern "C" int gc_lab_register_2d(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc_lab_register_2d_run(args, nullptr, err, err_len);
}

extern "C" int gc_lab_register_2d_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc_lab_register_2d_run(args, out, err, err_len);
}
