// grouped_walk.cuh: the tile space of a grouped GEMM (hopper.grouped) and the walk a persistent CTA makes over it.
//
// A grouped problem is `groups` GEMMs with one N and K and a row count M_g each, stored contiguously (gemm_abi.h,
// ABI 4): group g owns rows offsets[g] .. offsets[g+1] - 1 of the stacked A and C. Its tiles are the
// ceil(M_g / BM) x tiles_n tiles of its own C; an empty group has none. The flat tile index space is the
// concatenation of every group's tiles in group order:
//
//   flat t  ->  group g with first(g) <= t < first(g) + count(g),  first(g) = sum over h < g of count(h)
//           ->  local index t - first(g)  ->  (tile row, tile column) by the grouped raster inside the group
//
// Where the prefix sums come from: the kernel computes them itself, from the DEVICE offsets, as it walks. The
// ABI's source of truth is the device array (group_m_host may be NULL, and the harness may change the counts
// between launches without a host round trip), so a host-side prefix would need a copy to the device inside every
// timed launch (a pageable host-to-device copy, or a workspace) or could go stale. The walk needs none: a CTA
// takes flat tiles b, b + grid, ... in increasing order, so the group of its next tile is never before the group
// of its last one, and a cursor (current group, its first flat tile, its tile count) only moves forward. Over the
// whole launch each walker reads each offset at most twice (two independent int64 loads per group crossed, hitting
// L1/L2 after the first walker), and the prefix sum is the cursor's running `first`. Producer and consumers walk
// the same pure function of the same read-only offsets, so they agree on every tile without talking.
//
// The offsets are trusted only as far as it costs nothing: a group's rows are clipped to [0, m) of the stack, so
// a bad offset array can drop or repeat work but never make a tile that stores outside its own group's rows.
//
// Host and device code (no PTX): extensions/hopper/check/grouped_walk_check.cu runs this very code on the CPU.
#pragma once

#include <stdint.h>

#include "hopper_common.cuh"  // grouped_raster

namespace gc {
namespace hopper {
namespace grouped {

// One tile of the walk: its group, the group's first row in the stack and its row count (the epilogue stores
// rows [row0 + tm * BM, min(row0 + tm * BM + BM, row0 + rows)) only), and the tile's row and column in the group.
struct GroupTile {
  int group;
  int row0, rows;
  int tm, tn;
};

// Tiles of one group of `rows` rows (0 for an empty group).
template <int BM>
__host__ __device__ __forceinline__ int64_t group_tiles(int64_t rows, int tiles_n) {
  return rows > 0 ? ((rows + BM - 1) / BM) * static_cast<int64_t>(tiles_n) : 0;
}

// The forward-only cursor. offsets: groups + 1 cumulative row offsets (gemm_abi.h group_offsets); m: rows of the
// stack (every group's rows are clipped to it).
template <int BM, int RASTER_GROUP>
struct TileWalk {
  const int64_t* offsets;
  int groups, tiles_n, m;
  int g = -1;          // current group (-1: before the first)
  int64_t first = 0;   // flat index of group g's first tile
  int64_t count = 0;   // group g's tiles
  int row0 = 0, rows = 0;

  __host__ __device__ __forceinline__ TileWalk(const int64_t* offsets_, int groups_, int tiles_n_, int m_)
      : offsets(offsets_), groups(groups_), tiles_n(tiles_n_), m(m_) {}

  // The tile at flat index t (t never smaller than at the last call). False: t is past the last group's tiles.
  __host__ __device__ __forceinline__ bool seek(int64_t t, GroupTile& out) {
    while (t >= first + count) {
      if (g + 1 >= groups) return false;
      first += count;
      ++g;
      // Clip the group's rows to the stack: [lo, hi) within [0, m).
      int64_t lo = offsets[g], hi = offsets[g + 1];
      lo = lo < 0 ? 0 : (lo > m ? m : lo);
      hi = hi < lo ? lo : (hi > m ? m : hi);
      row0 = static_cast<int>(lo);
      rows = static_cast<int>(hi - lo);
      count = group_tiles<BM>(rows, tiles_n);
    }
    const int local = static_cast<int>(t - first);
    const int tiles_m = (rows + BM - 1) / BM;
    out.group = g;
    out.row0 = row0;
    out.rows = rows;
    grouped_raster(local, tiles_m, tiles_n, RASTER_GROUP, out.tm, out.tn);
    return true;
  }
};

// The host's count of every tile, from the host row counts (gemm_abi.h group_m_host): it sizes the persistent grid
// (min(tiles, SMs) CTAs). Negative counts count as empty (the entry refuses them before this).
template <int BM>
inline int64_t total_tiles(const int64_t* group_m, int64_t groups, int tiles_n) {
  int64_t total = 0;
  for (int64_t g = 0; g < groups; ++g) total += group_tiles<BM>(group_m[g], tiles_n);
  return total;
}

// An upper bound of the tiles of any grouped problem with `m` rows in `groups` groups, for when there are no host
// counts: sum ceil(M_g / BM) <= sum floor(M_g / BM) + (groups with a remainder) <= floor(m / BM) + groups.
template <int BM>
inline int64_t tiles_bound(int64_t m, int64_t groups, int tiles_n) {
  return (m / BM + groups) * static_cast<int64_t>(tiles_n);
}

}  // namespace grouped
}  // namespace hopper
}  // namespace gc
