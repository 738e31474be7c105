// stream_k_walk.cuh: hopper.stream_k's schedule (which CTA computes which k iterations of which tile) and the
// walk each CTA makes over it. Host and device code: the kernel's producer and consumers walk it, the entry
// sizes the grid and the workspace with it, and check/stream_k_check.cu proves the cover on the host.
//
// Data-parallel + stream-K (the Stream-K paper's "DP + two-tile SK", CUTLASS's hybrid): of `tiles` output tiles
// of k_tiles k iterations each, in the grouped raster order,
//   * tiles [0, sk_tiles) are stream-K: their sk_tiles * k_tiles (tile, k) iterations, tile-major, are cut into
//     `grid` contiguous ranges of near-equal length, one per CTA; a range may start and end inside a tile;
//   * tiles [sk_tiles, tiles) are data-parallel: CTA b takes sk_tiles + b, sk_tiles + b + grid, ... whole.
// Every CTA does its stream-K range first (all ranges are of one length, so every CTA reaches its end at about
// the same time, and a tile's finisher waits little), then its data-parallel tiles.
//
// Roles inside a range: a segment that starts at k iteration 0 of its tile is the tile's *finisher* (it adds the
// other CTAs' partial sums and stores C); one that starts later is a *contributor* (it stores f32 partial sums
// into its CTA's workspace slot and raises its flag). Only a range's first segment can start past k = 0, and
// only its last can end before the tile's end, so a CTA contributes at most once (one slot per CTA) and waits
// at most once, after all its other stream-K work; a contributor never waits. The CTAs a finisher waits for
// are the next ones, and their contribution is the first thing each of them does: no wait depends on another.
#pragma once

#include <stdint.h>

namespace gc {
namespace hopper {
namespace stream_k {

// The `schedule` parameter (the Python family's names; the run<> template's MODE).
enum Schedule : int {
  AUTO = 0,           // HYBRID when the last wave of whole tiles would be less than FILL_PERCENT full, else DP
  DATA_PARALLEL = 1,  // no stream-K tiles: the persistent step's walk (a baseline inside the same kernel)
  HYBRID = 2,         // the partial wave's tiles plus one full wave are stream-K, the rest data-parallel
  STREAM_K = 3,       // every tile is stream-K
};

constexpr int FILL_PERCENT = 80;  // AUTO: a last wave at least this full costs too little to be worth the fixups
// Stream-K iterations per CTA at least (when every tile is stream-K the grid shrinks to keep it): a contributor's
// partial sums cost its finisher a 4-byte load per accumulator, about the time of a few k iterations of math.
constexpr int MIN_ITERS = 8;

struct Plan {
  int grid;      // CTAs launched (<= SMs: all resident at once)
  int sk_tiles;  // tiles [0, sk_tiles) are stream-K
  int k_tiles;
  int tiles;
  __host__ __device__ int64_t sk_iters() const { return static_cast<int64_t>(sk_tiles) * k_tiles; }
  // CTA b's stream-K range [begin, end) of (tile * k_tiles + k) iterations; ranges of consecutive CTAs abut.
  __host__ __device__ int64_t begin(int b) const { return sk_iters() * b / grid; }
  __host__ __device__ int64_t end(int b) const { return sk_iters() * (b + 1) / grid; }
};

// The schedule of a problem of `tiles` tiles and k_tiles k iterations each on `sms` SMs. Pure: the host entry,
// the workspace query and the check compute the same plan.
__host__ __device__ inline Plan make_plan(int tiles, int k_tiles, int sms, int mode) {
  Plan p{1, 0, k_tiles < 1 ? 1 : k_tiles, tiles};
  if (sms < 1) sms = 1;
  if (tiles <= 0) return p;
  const int waves = tiles / sms, left = tiles % sms;
  if (mode == AUTO) mode = (left != 0 && static_cast<int64_t>(left) * 100 < static_cast<int64_t>(FILL_PERCENT) * sms)
                               ? HYBRID : DATA_PARALLEL;
  if (mode == HYBRID && left == 0) mode = DATA_PARALLEL;  // whole waves: nothing to balance
  if (mode == HYBRID && waves == 0) mode = STREAM_K;      // one part-empty wave: all of it is stream-K
  if (mode == DATA_PARALLEL || p.k_tiles == 1) {          // one k iteration a tile: nothing to split
    p.grid = tiles < sms ? tiles : sms;
    return p;
  }
  if (mode == HYBRID) {
    p.sk_tiles = left + sms;  // one full wave beside the leftover: each CTA gets 1 + left / sms tiles of k
    p.grid = sms;
    return p;
  }
  // STREAM_K: as many CTAs as keep MIN_ITERS iterations each, but never fewer than tiles (nor than one).
  p.sk_tiles = tiles;
  const int64_t by_iters = p.sk_iters() / MIN_ITERS;
  int64_t g = by_iters > tiles ? by_iters : tiles;
  if (g > sms) g = sms;
  p.grid = g < 1 ? 1 : static_cast<int>(g);
  return p;
}

// One piece of a CTA's work: k iterations [kb, ke) of tile `tile` (raster index).
struct Segment {
  int tile, kb, ke;
  __host__ __device__ bool whole(int k_tiles) const { return kb == 0 && ke == k_tiles; }
  __host__ __device__ bool finisher() const { return kb == 0; }  // adds the others' partials, stores C
};

// The walk of CTA b: its stream-K segments in order, then its data-parallel tiles. Producer and consumers each
// keep one and call next() in lockstep with their own loops (no shared state).
struct Walk {
  const Plan* plan;
  int b;
  int64_t x, x_end;  // stream-K cursor
  int dp;            // next data-parallel tile
  __host__ __device__ Walk(const Plan& p, int cta) : plan(&p), b(cta), x(p.begin(cta)), x_end(p.end(cta)),
                                                     dp(p.sk_tiles + cta) {}
  __host__ __device__ bool next(Segment& s) {
    const int kt = plan->k_tiles;
    if (x < x_end) {
      s.tile = static_cast<int>(x / kt);
      s.kb = static_cast<int>(x - static_cast<int64_t>(s.tile) * kt);
      const int64_t left = x_end - x;
      s.ke = left < kt - s.kb ? s.kb + static_cast<int>(left) : kt;
      x += s.ke - s.kb;
      return true;
    }
    if (dp < plan->tiles && plan->grid > 0) {
      s.tile = dp;
      s.kb = 0;
      s.ke = kt;
      dp += plan->grid;
      return true;
    }
    return false;
  }
};

// The CTAs whose partial sums finisher CTA b adds for its stream-K segment of `tile`: c = b + 1, b + 2, ... while
// CTA c's range starts inside the tile (an empty range, possible when iterations are fewer than CTAs, is
// skipped: it never raises its flag). In this order -- the order of their k ranges -- on every run.
__host__ __device__ inline int next_contributor(const Plan& p, int tile, int c) {
  const int64_t tile_end = static_cast<int64_t>(tile + 1) * p.k_tiles;
  for (; c < p.grid; ++c) {
    const int64_t bc = p.begin(c);
    if (bc >= tile_end) return -1;
    if (bc < p.end(c)) return c;
  }
  return -1;
}

}  // namespace stream_k
}  // namespace hopper
}  // namespace gc
