// host_check: runs mma_sync.cuh's own index arithmetic on the CPU, against an emulation of cp.async,
// ldmatrix (.x4 and .x4.trans) and mma.sync (m16n8k16 / m16n8k8, f32 / f16 accumulate) written from
// the PTX ISA's descriptions, and checks a whole GEMM on ragged shapes bit for bit.
//
// What it checks, per configuration and problem:
//   - the raster visits every output tile exactly once;
//   - every chunk copied to shared memory lands 16-byte aligned inside its tile, no two chunks of one
//     tile copy overlap, and the copy covers the whole tile (each byte is rewritten for every k tile);
//   - every ldmatrix row address is 16-byte aligned, inside the right tile of the right stage, and
//     reads only bytes written for the current k tile (no stale or foreign data);
//   - bank conflicts of each 8-row ldmatrix phase (reported; required to be zero for padded/swizzle);
//   - the fragments multiply to the right answer: C equals an exact reference (small integers, so
//     FP32 and FP16 accumulation are both exact), every element of C written exactly once, nothing
//     outside it touched; bias + ReLU applied per column.
//   - the epilogue's bf16 stores (store1, store2: the kernel's own functions): round to nearest even,
//     NaN and infinities kept, the lower column in the low half of a bf16x2.
// The index arithmetic does not depend on the element type (16-bit f16 or bf16 alike), so the GEMMs
// below use f16; the bf16 instruction itself is checked in the PTX (tests/test_kernels_compile.py).
// It does not check the pipeline's timing (cp.async groups and barriers): those are argued in the
// kernel's comments and exercised on the device by compute-sanitizer racecheck/synccheck.
//
// Built and run by tests/test_kernels_compile.py (nvcc, no GPU needed). Exit status 0 = all passed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "mma_sync/mma_sync.cuh"

using namespace gc::mma;

namespace {

int g_failures = 0;

#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond)) {                            \
      if (g_failures < 20) {                  \
        std::printf("  FAIL %s:%d: ", __FILE__, __LINE__); \
        std::printf(__VA_ARGS__);             \
        std::printf("\n");                    \
      }                                       \
      ++g_failures;                           \
    }                                         \
  } while (0)

uint16_t f2h(float f) {
  __half h = __float2half_rn(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
float h2f(uint16_t u) {
  __half h;
  std::memcpy(&h, &u, 2);
  return __half2float(h);
}
float round_half(float f) { return h2f(f2h(f)); }

struct Problem {
  int m, n, k;
  int64_t lda, ldb, ldc;
  bool bias_relu;
  std::vector<uint16_t> a, b;  // A row-major; B column- or row-major per the layout
  std::vector<float> bias;
};

template <class Cfg>
struct Emulator {
  using TileA = typename Cfg::TileA;
  using TileB = typename Cfg::TileB;
  using CopyA = typename Cfg::CopyA;
  using CopyB = typename Cfg::CopyB;

  const Problem& P;
  std::vector<uint8_t> smem;
  std::vector<int> stamp;  // per byte: which k tile last wrote it (-1: never)
  uint32_t smem0 = 0;
  int worst_conflict = 1;

  explicit Emulator(const Problem& p) : P(p) {
    // A dynamic shared-memory base that is 16-byte but not 128-byte aligned, rounded up as the kernel does.
    const uint32_t raw = 0x410;
    smem0 = (raw + (Cfg::ALIGN - 1)) & ~static_cast<uint32_t>(Cfg::ALIGN - 1);
    CHECK(smem0 + Cfg::STAGES * Cfg::STAGE_BYTES <= raw + Cfg::SMEM_BYTES, "stages overflow the requested shared memory");
    smem.assign(smem0 + Cfg::STAGES * Cfg::STAGE_BYTES, 0xAB);
    stamp.assign(smem.size(), -1);
  }

  uint16_t load_h(uint32_t addr) const { return static_cast<uint16_t>(smem[addr] | (smem[addr + 1] << 8)); }

  // One operand tile copy, as TileCopy::copy does it for every thread (src advanced per tile outside).
  template <class Map, class Tile>
  void copy_tile(uint32_t tile_base, const std::vector<uint16_t>& g, const std::vector<int64_t>& src, int64_t ld,
                 int rows_valid, int cols_valid, int kt) {
    std::vector<int> hits(Tile::BYTES / 16, 0);
    for (int tid = 0; tid < Cfg::THREADS; ++tid) {
      const int row0 = Map::row0(tid), col = Map::col(tid);
      const uint32_t dst0 = Tile::offset(row0, col);
      for (int i = 0; i < Map::ITERS; ++i) {
        if (!Map::exists(tid, i)) break;
        const int row = row0 + i * Map::ROW_STEP;
        const uint32_t dst = Map::dst(dst0, row0, col, i);
        CHECK(dst == Tile::offset(row, col), "chunk %d of thread %d: LINEAR shortcut %u != offset %u", i, tid, dst,
              Tile::offset(row, col));
        CHECK(dst % 16 == 0 && dst + 16 <= static_cast<uint32_t>(Tile::BYTES), "chunk outside its tile: %u", dst);
        if (dst % 16 || dst + 16 > static_cast<uint32_t>(Tile::BYTES)) continue;
        ++hits[dst / 16];
        const int valid = Map::valid(row, col, rows_valid, cols_valid);
        // The kernel's FULL copy (tile wholly inside the matrix) copies every chunk whole, unbounded.
        if (rows_valid >= Tile::ROWS && cols_valid >= Tile::COLS)
          CHECK(valid == 8, "chunk %d of thread %d of a whole tile has %d valid elements", i, tid, valid);
        const int64_t s = src[tid] + static_cast<int64_t>(i) * Map::ROW_STEP * ld;
        for (int e = 0; e < 8; ++e) {
          uint16_t v = 0;
          if (e < valid) {
            CHECK(s + e >= 0 && s + e < static_cast<int64_t>(g.size()), "global read out of bounds at %lld",
                  static_cast<long long>(s + e));
            v = g[s + e];
          }
          const uint32_t addr = tile_base + dst + 2 * e;
          smem[addr] = v & 0xff;
          smem[addr + 1] = v >> 8;
          stamp[addr] = stamp[addr + 1] = kt;
        }
      }
    }
    // Padded rows have 16 unused bytes at their end; every other chunk must be written exactly once.
    for (int c = 0; c < Tile::BYTES / 16; ++c) {
      const bool pad = Tile::LAYOUT == Smem::Padded && (c * 16) % Tile::ROW_BYTES >= Tile::COLS * 2;
      CHECK(hits[c] == (pad ? 0 : 1), "chunk %d of a tile written %d times", c, hits[c]);
    }
  }

  // ldmatrix.x4 (.trans) with the 32 lanes' row addresses; returns regs[lane][q].
  void ldmatrix(const uint32_t (&addr)[32], bool trans, uint32_t lo, uint32_t hi, int kt, uint32_t (&regs)[32][4]) {
    for (int l = 0; l < 32; ++l) {
      CHECK(addr[l] % 16 == 0, "ldmatrix address %u not 16-byte aligned", addr[l]);
      CHECK(addr[l] >= lo && addr[l] + 16 <= hi, "ldmatrix row address %u outside [%u, %u)", addr[l], lo, hi);
      for (int b = 0; b < 16; ++b)
        CHECK(addr[l] + b < stamp.size() && stamp[addr[l] + b] == kt, "ldmatrix reads a byte not written for k tile %d", kt);
    }
    for (int q = 0; q < 4; ++q) {  // bank conflicts of the 8 rows of matrix q (one 128-byte phase)
      int count[8] = {0};
      int worst = 0;
      for (int r = 0; r < 8; ++r) worst = std::max(worst, ++count[(addr[8 * q + r] / 16) % 8]);
      worst_conflict = std::max(worst_conflict, worst);
    }
    for (int l = 0; l < 32; ++l)
      for (int q = 0; q < 4; ++q) {
        uint16_t e0, e1;
        if (!trans) {  // row l/4, columns 2(l%4), 2(l%4)+1
          const uint32_t row = addr[8 * q + l / 4];
          e0 = load_h(row + 4 * (l % 4));
          e1 = load_h(row + 4 * (l % 4) + 2);
        } else {  // rows 2(l%4), 2(l%4)+1, column l/4
          e0 = load_h(addr[8 * q + 2 * (l % 4)] + 2 * (l / 4));
          e1 = load_h(addr[8 * q + 2 * (l % 4) + 1] + 2 * (l / 4));
        }
        regs[l][q] = e0 | (static_cast<uint32_t>(e1) << 16);
      }
  }

  // D = A B + C for one m16n8k(8|16) MMA of the warp, from the registers' documented layouts.
  // acc[l][0..3]: the lane's f32 accumulators (f16 accumulation rounds D to f16 per instruction).
  static void mma(int kdim, const uint32_t (&a)[32][4], int a_first, const uint32_t (&b)[32][2], int b_first,
                  float (&acc)[32][4], bool acc_f16) {
    float A[16][16] = {}, B[16][8] = {}, C[16][8];
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      auto lo = [](uint32_t r) { return h2f(static_cast<uint16_t>(r & 0xffff)); };
      auto hi = [](uint32_t r) { return h2f(static_cast<uint16_t>(r >> 16)); };
      // A: reg a_first+0 = (g, 2t..), +1 = (g+8, 2t..); k16 adds +2 = (g, 2t+8..), +3 = (g+8, 2t+8..)
      A[g][2 * t] = lo(a[l][a_first]), A[g][2 * t + 1] = hi(a[l][a_first]);
      A[g + 8][2 * t] = lo(a[l][a_first + 1]), A[g + 8][2 * t + 1] = hi(a[l][a_first + 1]);
      B[2 * t][g] = lo(b[l][b_first]), B[2 * t + 1][g] = hi(b[l][b_first]);
      if (kdim == 16) {
        A[g][2 * t + 8] = lo(a[l][2]), A[g][2 * t + 9] = hi(a[l][2]);
        A[g + 8][2 * t + 8] = lo(a[l][3]), A[g + 8][2 * t + 9] = hi(a[l][3]);
        B[2 * t + 8][g] = lo(b[l][1]), B[2 * t + 9][g] = hi(b[l][1]);
      }
      C[g][2 * t] = acc[l][0], C[g][2 * t + 1] = acc[l][1];
      C[g + 8][2 * t] = acc[l][2], C[g + 8][2 * t + 1] = acc[l][3];
    }
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        double s = C[i][j];
        for (int kk = 0; kk < kdim; ++kk) s += static_cast<double>(A[i][kk]) * B[kk][j];
        C[i][j] = acc_f16 ? round_half(static_cast<float>(s)) : static_cast<float>(s);
      }
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      acc[l][0] = C[g][2 * t], acc[l][1] = C[g][2 * t + 1], acc[l][2] = C[g + 8][2 * t], acc[l][3] = C[g + 8][2 * t + 1];
    }
  }

  // The whole GEMM, block by block. Returns C (row-major, ldc), NaN where never written.
  std::vector<float> run() {
    constexpr int MI = Cfg::MI, NI = Cfg::NI;
    const int tiles_m = (P.m + Cfg::BM - 1) / Cfg::BM, tiles_n = (P.n + Cfg::BN - 1) / Cfg::BN;
    std::vector<float> c(static_cast<size_t>(P.m) * P.ldc, std::nanf(""));
    std::vector<int> c_writes(c.size(), 0), tile_visits(tiles_m * tiles_n, 0);
    const int k_tiles = (P.k + Cfg::BK - 1) / Cfg::BK;
    for (int pid = 0; pid < tiles_m * tiles_n; ++pid) {
      int tile_m, tile_n;
      raster<Cfg::GROUP>(pid, tiles_m, tiles_n, tile_m, tile_n);
      CHECK(tile_m >= 0 && tile_m < tiles_m && tile_n >= 0 && tile_n < tiles_n, "raster: pid %d -> tile (%d, %d)", pid,
            tile_m, tile_n);
      if (tile_m < 0 || tile_m >= tiles_m || tile_n < 0 || tile_n >= tiles_n) continue;
      ++tile_visits[tile_m * tiles_n + tile_n];
      const int m0 = tile_m * Cfg::BM, n0 = tile_n * Cfg::BN;

      // The copiers' per-thread source offsets (elements), advanced after every tile as in the kernel.
      std::vector<int64_t> src_a(Cfg::THREADS), src_b(Cfg::THREADS);
      for (int tid = 0; tid < Cfg::THREADS; ++tid) {
        src_a[tid] = static_cast<int64_t>(m0) * P.lda + CopyA::row0(tid) * P.lda + CopyA::col(tid);
        const int64_t b_tile = Cfg::B_COL ? static_cast<int64_t>(n0) * P.ldb : n0;
        src_b[tid] = b_tile + CopyB::row0(tid) * P.ldb + CopyB::col(tid);
      }
      const int64_t b_next = Cfg::B_COL ? Cfg::BK : Cfg::BK * P.ldb;

      static float acc[Cfg::WARPS][MI][NI][32][4];
      std::memset(acc, 0, sizeof acc);
      int k_left = P.k;
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int stage = kt % Cfg::STAGES;  // tile t lives in stage t % STAGES
        const uint32_t base = smem0 + stage * Cfg::STAGE_BYTES;
        copy_tile<CopyA, TileA>(base, P.a, src_a, P.lda, P.m - m0, k_left, kt);
        if (Cfg::B_COL) {
          copy_tile<CopyB, TileB>(base + TileA::BYTES, P.b, src_b, P.ldb, P.n - n0, k_left, kt);
        } else {
          copy_tile<CopyB, TileB>(base + TileA::BYTES, P.b, src_b, P.ldb, k_left, P.n - n0, kt);
        }
        for (auto& s : src_a) s += Cfg::BK;
        for (auto& s : src_b) s += b_next;
        k_left -= Cfg::BK;

        for (int warp = 0; warp < Cfg::WARPS; ++warp) {
          int warp_m, warp_n;
          Cfg::warp_coords(warp, warp_m, warp_n);
          for (int kk = 0; kk < Cfg::KS; ++kk) {
            uint32_t fa[MI][32][4], fb[NI][32][2];
            for (int mi = 0; mi < MI; ++mi) {
              uint32_t addr[32], regs[32][4];
              for (int l = 0; l < 32; ++l) {
                addr[l] = Cfg::a_step(base + Cfg::frag_a_offset(warp_m, l, mi), kk);
                // The kernel's affine shortcut: the first fragment's stepped address plus a stride.
                if (Cfg::A_AFFINE)
                  CHECK(addr[l] == Cfg::a_step(base + Cfg::frag_a_offset(warp_m, l, 0), kk) + mi * Cfg::A_FRAG_STRIDE,
                        "A fragment %d of lane %d at k step %d is not at the affine address", mi, l, kk);
              }
              ldmatrix(addr, false, base, base + TileA::BYTES, kt, regs);
              std::memcpy(fa[mi], regs, sizeof regs);
            }
            for (int q = 0; q < NI / 2; ++q) {
              uint32_t addr[32], regs[32][4];
              for (int l = 0; l < 32; ++l) {
                addr[l] = Cfg::b_step(base + TileA::BYTES + Cfg::frag_b_offset(warp_n, l, q), kk);
                if (Cfg::B_AFFINE)
                  CHECK(addr[l] == Cfg::b_step(base + TileA::BYTES + Cfg::frag_b_offset(warp_n, l, 0), kk) +
                                       q * Cfg::B_FRAG_STRIDE,
                        "B fragment pair %d of lane %d at k step %d is not at the affine address", q, l, kk);
              }
              ldmatrix(addr, !Cfg::B_COL, base + TileA::BYTES, base + Cfg::STAGE_BYTES, kt, regs);
              for (int l = 0; l < 32; ++l) {
                fb[2 * q][l][0] = regs[l][0], fb[2 * q][l][1] = regs[l][1];
                fb[2 * q + 1][l][0] = regs[l][2], fb[2 * q + 1][l][1] = regs[l][3];
              }
            }
            for (int mi = 0; mi < MI; ++mi)
              for (int ni = 0; ni < NI; ++ni) {
                if (Cfg::MMA_K == 16) {
                  mma(16, fa[mi], 0, fb[ni], 0, acc[warp][mi][ni], Cfg::ACC_F16);
                } else {
                  uint32_t a2[32][4];
                  for (int l = 0; l < 32; ++l) a2[l][0] = fa[mi][l][2], a2[l][1] = fa[mi][l][3];
                  mma(8, fa[mi], 0, fb[ni], 0, acc[warp][mi][ni], Cfg::ACC_F16);
                  mma(8, a2, 0, fb[ni], 1, acc[warp][mi][ni], Cfg::ACC_F16);
                }
              }
          }
        }
      }

      // Epilogue, as the kernel: acc_coords, bias + ReLU, masks on M and N.
      for (int warp = 0; warp < Cfg::WARPS; ++warp) {
        int warp_m, warp_n;
        Cfg::warp_coords(warp, warp_m, warp_n);
        for (int l = 0; l < 32; ++l)
          for (int ni = 0; ni < NI; ++ni)
            for (int mi = 0; mi < MI; ++mi)
              for (int h = 0; h < 2; ++h) {
                int row, col, row0, col0;
                Cfg::acc_coords(warp_m, warp_n, l, mi, ni, h, row, col);
                // The kernel's interior path steps from element (0, 0, 0) by compile-time offsets.
                Cfg::acc_coords(warp_m, warp_n, l, 0, 0, 0, row0, col0);
                CHECK(row == row0 + mi * 16 + 8 * h && col == col0 + ni * 8, "acc_coords is not affine in (mi, ni, h)");
                row += m0;
                col += n0;
                float v[2] = {acc[warp][mi][ni][l][2 * h], acc[warp][mi][ni][l][2 * h + 1]};
                for (int j = 0; j < 2; ++j) {
                  if (P.bias_relu) {
                    v[j] += (col + j < P.n) ? P.bias[col + j] : 0.f;
                    v[j] = v[j] < 0.f ? 0.f : v[j];
                  }
                  if (row < P.m && col + j < P.n) {
                    const size_t idx = static_cast<size_t>(row) * P.ldc + col + j;
                    c[idx] = v[j];
                    ++c_writes[idx];
                  }
                }
              }
      }
    }
    for (int t = 0; t < tiles_m * tiles_n; ++t) CHECK(tile_visits[t] == 1, "tile %d visited %d times", t, tile_visits[t]);
    for (int i = 0; i < P.m; ++i)
      for (int j = 0; j < P.ldc; ++j) {
        const int w = c_writes[static_cast<size_t>(i) * P.ldc + j];
        CHECK(w == (j < P.n ? 1 : 0), "C(%d, %d) written %d times", i, j, w);
      }
    return c;
  }
};

// Small integers in [-range, range]: every product and partial sum is exact in FP32, and in FP16 too
// while |partial sums| stay below 2048 (range 1 for the FP16-accumulate configurations).
Problem make_problem(int m, int n, int k, bool b_col, bool aligned_ld, bool bias_relu, int range, unsigned seed) {
  Problem p;
  p.m = m, p.n = n, p.k = k, p.bias_relu = bias_relu;
  auto up8 = [](int64_t v) { return (v + 7) / 8 * 8; };
  p.lda = aligned_ld ? up8(k) : k;
  const int64_t b_row = b_col ? k : n;
  p.ldb = aligned_ld ? up8(b_row) : b_row;
  p.ldc = n + 3;  // columns n..n+2 must stay untouched
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-range, range);
  p.a.assign(static_cast<size_t>(m) * p.lda, f2h(99.f));  // padding columns hold 99: they must never be read
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk) p.a[static_cast<size_t>(i) * p.lda + kk] = f2h(static_cast<float>(d(rng)));
  const int64_t b_rows = b_col ? n : k;
  p.b.assign(static_cast<size_t>(b_rows) * p.ldb, f2h(99.f));
  for (int r = 0; r < b_rows; ++r)
    for (int cc = 0; cc < b_row; ++cc) p.b[static_cast<size_t>(r) * p.ldb + cc] = f2h(static_cast<float>(d(rng)));
  p.bias.resize(n);
  for (int j = 0; j < n; ++j) p.bias[j] = static_cast<float>(d(rng) * 4);
  return p;
}

template <class Cfg>
void check_config(const char* name) {
  const int before = g_failures;
  int worst = 1;
  const int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  // Ragged in all three dimensions, and exact multiples; K spanning several stages; K shorter than BK.
  const int shapes[][3] = {
      {BM + 17, BN + 9, 3 * BK + 5}, {BM, BN, 2 * BK}, {13, 7, BK - 3}, {2 * BM + 1, 3 * BN - 5, (Cfg::STAGES + 2) * BK + 1},
  };
  int idx = 0;
  for (const auto& s : shapes) {
    for (int aligned_ld = 0; aligned_ld < 2; ++aligned_ld) {
      const bool bias = Cfg::EPI == Epi::BiasRelu;
      Problem p = make_problem(s[0], s[1], s[2], Cfg::B_COL, aligned_ld, bias, Cfg::ACC_F16 ? 1 : 3, 1234u + idx++);
      Emulator<Cfg> emu(p);
      std::vector<float> c = emu.run();
      worst = std::max(worst, emu.worst_conflict);
      int bad = 0;
      for (int i = 0; i < p.m; ++i)
        for (int j = 0; j < p.n; ++j) {
          double ref = 0;
          for (int kk = 0; kk < p.k; ++kk) {
            const double av = h2f(p.a[static_cast<size_t>(i) * p.lda + kk]);
            const double bv = Cfg::B_COL ? h2f(p.b[static_cast<size_t>(j) * p.ldb + kk]) : h2f(p.b[static_cast<size_t>(kk) * p.ldb + j]);
            ref += av * bv;
          }
          if (bias) {
            ref += p.bias[j];
            ref = ref < 0 ? 0 : ref;
          }
          const float got = c[static_cast<size_t>(i) * p.ldc + j];
          if (!(got == static_cast<float>(ref)) && bad++ < 3)
            std::printf("  FAIL %s %dx%dx%d: C(%d, %d) = %g, expected %g\n", name, p.m, p.n, p.k, i, j, got, ref);
        }
      if (bad) g_failures += bad;
    }
  }
  if (Cfg::SMEM != Smem::Row) CHECK(worst == 1, "%s: %d-way ldmatrix bank conflicts", name, worst);
  std::printf("%-4s %s  ldmatrix conflicts: %d-way\n", g_failures == before ? "ok" : "FAIL", name, worst);
}

uint16_t bits(__nv_bfloat16 v) {
  uint16_t u;
  std::memcpy(&u, &v, 2);
  return u;
}

// The epilogue's conversions to bf16, against bit patterns worked out by hand (bf16: 8 bits of mantissa).
void check_bf16_stores() {
  const int before = g_failures;
  const float inf = INFINITY;
  const struct { float in; uint16_t out; const char* what; } cases[] = {
      {1.0f, 0x3F80, "1"},
      {-2.5f, 0xC020, "-2.5"},
      {1.0f + 1.0f / 256, 0x3F80, "1 + 2^-8: a tie, to the even 1"},
      {1.0f + 3.0f / 256, 0x3F82, "1 + 3 2^-8: a tie, to the even 1 + 2^-6"},
      {1.0f + 1.0f / 256 + 1.0f / 65536, 0x3F81, "just above a tie: up"},
      {1.0f + 1.0f / 512, 0x3F80, "below a tie: down"},
      {-0.0f, 0x8000, "-0"},
      {inf, 0x7F80, "+inf"},
      {-inf, 0xFF80, "-inf"},
      {3.4e38f, 0x7F80, "above the largest bf16 (3.39e38), rounds to inf"},
      {1e-40f, 0x0001, "a subnormal kept (no flush to zero)"},
  };
  for (const auto& c : cases) {
    __nv_bfloat16 one;
    store1(&one, c.in);
    CHECK(bits(one) == c.out, "store1(bf16, %s) = 0x%04X, expected 0x%04X", c.what, bits(one), c.out);
    __nv_bfloat16 two[2];
    store2(two, c.in, 2.0f);
    CHECK(bits(two[0]) == c.out && bits(two[1]) == 0x4000, "store2(bf16, %s, 2) = {0x%04X, 0x%04X}", c.what,
          bits(two[0]), bits(two[1]));
  }
  __nv_bfloat16 nan;
  store1(&nan, std::nanf(""));
  CHECK((bits(nan) & 0x7F80) == 0x7F80 && (bits(nan) & 0x007F) != 0, "store1(bf16, NaN) = 0x%04X, not a NaN", bits(nan));
  float f[2];
  store2(f, 1.5f, -3.0f);
  CHECK(f[0] == 1.5f && f[1] == -3.0f, "store2(f32) = {%g, %g}", f[0], f[1]);
  std::printf("bf16 epilogue stores: %s\n", g_failures == before ? "ok" : "FAIL");
}

}  // namespace

#define CONFIG(BM, BN, BK, WM, WN, ST, SM, GR, MK, F16, EPI, BCOL) \
  check_config<Config<BM, BN, BK, WM, WN, ST, Smem::SM, GR, MK, F16, Epi::EPI, BCOL>>(                       \
      #BM "x" #BN "x" #BK " w" #WM "x" #WN " s" #ST " " #SM " g" #GR " k" #MK " " #F16 " " #EPI " " #BCOL)

int main() {
  check_bf16_stores();
  for (int bcol = 0; bcol < 2; ++bcol) {
    if (bcol) {
      CONFIG(128, 256, 64, 64, 64, 3, Swizzle, 8, 16, false, Plain, true);
      CONFIG(128, 256, 32, 64, 64, 4, Swizzle, 8, 16, false, Plain, true);
      CONFIG(256, 128, 32, 64, 64, 3, Padded, 1, 16, false, Plain, true);
      CONFIG(128, 128, 32, 64, 64, 2, Row, 2, 16, false, Plain, true);
      CONFIG(128, 128, 16, 64, 64, 3, Swizzle, 8, 16, false, Plain, true);
      CONFIG(128, 128, 128, 64, 64, 2, Swizzle, 8, 16, false, Plain, true);
      CONFIG(64, 64, 32, 32, 32, 1, Swizzle, 3, 16, false, Plain, true);
      CONFIG(128, 256, 64, 64, 64, 4, Swizzle, 8, 8, false, Plain, true);
      CONFIG(128, 256, 64, 64, 64, 3, Swizzle, 8, 16, true, Plain, true);
      CONFIG(128, 256, 64, 64, 64, 3, Swizzle, 8, 16, false, BiasRelu, true);
      CONFIG(64, 128, 64, 32, 64, 3, Padded, 4, 8, true, BiasRelu, true);
    } else {
      CONFIG(128, 256, 64, 64, 64, 3, Swizzle, 8, 16, false, Plain, false);
      CONFIG(128, 256, 32, 64, 64, 4, Swizzle, 8, 16, false, Plain, false);
      CONFIG(256, 128, 32, 64, 64, 3, Padded, 1, 16, false, Plain, false);
      CONFIG(128, 128, 32, 64, 64, 2, Row, 2, 16, false, Plain, false);
      CONFIG(128, 128, 16, 64, 64, 3, Swizzle, 8, 16, false, Plain, false);
      CONFIG(128, 32, 64, 32, 32, 3, Swizzle, 8, 16, false, Plain, false);
      CONFIG(64, 64, 32, 32, 32, 1, Swizzle, 3, 16, false, Plain, false);
      CONFIG(128, 256, 64, 64, 64, 4, Swizzle, 8, 8, false, Plain, false);
      CONFIG(128, 256, 64, 64, 64, 3, Swizzle, 8, 16, true, Plain, false);
      CONFIG(128, 256, 64, 64, 64, 3, Swizzle, 8, 16, false, BiasRelu, false);
      CONFIG(64, 128, 64, 32, 64, 3, Padded, 4, 8, true, BiasRelu, false);
    }
  }
  std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "PASSED", g_failures);
  return g_failures ? 1 : 0;
}
