// Host-only check of hopper.grouped's tile walk (grouped_walk.cuh; no GPU): for many lists of group Ms (empty
// groups first, between and last; one group; 256 groups with skew; 1024 tiny groups; Ms not a multiple of BM),
// tile tile widths, raster groups and grid sizes, every CTA walks flat tiles b, b + grid, ... with the kernel's own
// TileWalk, and
//   * every (group, tile row, tile column) of every group is visited exactly once, empty groups never;
//   * no visited tile lies outside its group: its group index, first row and row count are the group's own, its
//     tile row and column are inside the group's tile grid, and the rows its epilogue stores,
//     [row0 + tm * BM, min(row0 + tm * BM + BM, row0 + rows)), lie inside [offsets[g], offsets[g+1]);
//   * the walk ends exactly after the last tile, and the host's tile count (which sizes the grid) agrees.
// The checker is itself checked: planted wrong walks (ragged tails dropped, empty groups given a tile row, an
// off-by-one at group boundaries, the previous group's first row, the raster over the whole stack) must each be
// caught, or the check fails. Prints "PASSED".
#include <cmath>
#include <cstdio>
#include <vector>

#include "hopper/grouped_walk.cuh"

using gc::hopper::grouped_raster;
using gc::hopper::grouped::group_tiles;
using gc::hopper::grouped::GroupTile;
using gc::hopper::grouped::TileWalk;
using gc::hopper::grouped::total_tiles;

enum Bug { NONE, FLOOR_TILES, EMPTY_GETS_A_ROW, BOUNDARY_OFF_BY_ONE, PREVIOUS_ROW0, RASTER_OVER_STACK, BUGS };
static const char* BUG_NAMES[] = {"none", "ragged tails dropped", "empty groups given a tile row",
                                  "off-by-one at group boundaries", "previous group's first row",
                                  "raster over the whole stack"};

// A planted wrong walk: the same cursor with one mistake (BUG != NONE). Never used by a kernel.
template <int BM, int RG, int BUG>
struct MutantWalk {
  const int64_t* offsets;
  int groups, tiles_n, m;
  int g = -1;
  int64_t first = 0, count = 0;
  int row0 = 0, rows = 0, prev_row0 = 0;
  MutantWalk(const int64_t* o, int gs, int tn, int m_) : offsets(o), groups(gs), tiles_n(tn), m(m_) {}
  bool seek(int64_t t, GroupTile& out) {
    while (BUG == BOUNDARY_OFF_BY_ONE ? t > first + count : t >= first + count) {
      if (g + 1 >= groups) return false;
      first += count;
      ++g;
      prev_row0 = row0;
      row0 = static_cast<int>(offsets[g]);
      rows = static_cast<int>(offsets[g + 1] - offsets[g]);
      const int64_t tm = BUG == FLOOR_TILES ? rows / BM : BUG == EMPTY_GETS_A_ROW && rows == 0 ? 1 : (rows + BM - 1) / BM;
      count = tm * tiles_n;
    }
    int tiles_m = BUG == RASTER_OVER_STACK ? (m + BM - 1) / BM : (rows + BM - 1) / BM;
    if (tiles_m < 1) tiles_m = 1;  // an empty group given a tile (EMPTY_GETS_A_ROW): keep the raster's division defined
    out.group = g;
    out.row0 = BUG == PREVIOUS_ROW0 ? prev_row0 : row0;
    out.rows = rows;
    const int local = static_cast<int>(t - first);
    if (local >= tiles_m * tiles_n) {  // past the group's tiles: a tile row the group does not have (the raster
      out.tm = tiles_m;                // itself divides by zero there)
      out.tn = 0;
    } else {
      grouped_raster(local, tiles_m, tiles_n, RG, out.tm, out.tn);
    }
    return true;
  }
};

template <int BM, int RG, int BUG>
struct WalkOf {
  using type = MutantWalk<BM, RG, BUG>;
};
template <int BM, int RG>
struct WalkOf<BM, RG, NONE> {
  using type = TileWalk<BM, RG>;  // the kernel's own
};

// Failures of one walk of one problem; prints the first few when `loud`.
template <int BM, int RG, int BUG>
static int check_walk(const std::vector<int64_t>& ms, int tiles_n, int grid_cap, bool loud, const char* label) {
  const int groups = static_cast<int>(ms.size());
  std::vector<int64_t> offsets(groups + 1, 0);
  for (int g = 0; g < groups; ++g) offsets[g + 1] = offsets[g] + ms[g];
  const int m = static_cast<int>(offsets[groups]);
  std::vector<std::vector<int>> hits(groups);
  for (int g = 0; g < groups; ++g) hits[g].assign(static_cast<size_t>((ms[g] + BM - 1) / BM) * tiles_n, 0);
  const int64_t total = total_tiles<BM>(ms.data(), groups, tiles_n);
  const int grid = static_cast<int>(total < grid_cap ? (total > 0 ? total : 1) : grid_cap);

  int failures = 0;
  auto fail = [&](const char* what, int b, int64_t t, const GroupTile& x) {
    if (loud && failures < 10)
      printf("FAIL %s (BM %d, raster %d, tiles_n %d, grid %d): CTA %d flat tile %lld -> group %d row0 %d rows %d "
             "tile (%d, %d): %s\n", label, BM, RG, tiles_n, grid, b, static_cast<long long>(t), x.group, x.row0, x.rows,
             x.tm, x.tn, what);
    ++failures;
  };
  int64_t visited = 0;
  for (int b = 0; b < grid; ++b) {
    typename WalkOf<BM, RG, BUG>::type walk(offsets.data(), groups, tiles_n, m);
    GroupTile x;
    for (int64_t t = b; walk.seek(t, x); t += grid) {
      if (++visited > total + grid) {  // a walk that does not end
        fail("the walk goes on past every tile", b, t, x);
        break;
      }
      if (x.group < 0 || x.group >= groups) { fail("no such group", b, t, x); continue; }
      const int64_t lo = offsets[x.group], hi = offsets[x.group + 1];
      const int tiles_m = static_cast<int>((ms[x.group] + BM - 1) / BM);
      if (x.row0 != lo || x.rows != hi - lo) { fail("not the group's rows", b, t, x); continue; }
      if (x.tm < 0 || x.tm >= tiles_m || x.tn < 0 || x.tn >= tiles_n) { fail("tile outside its group", b, t, x); continue; }
      const int64_t first_row = x.row0 + static_cast<int64_t>(x.tm) * BM;
      const int64_t end_row = first_row + BM < x.row0 + x.rows ? first_row + BM : x.row0 + x.rows;
      if (first_row < lo || end_row > hi || first_row >= end_row) { fail("stores outside its group's rows", b, t, x); continue; }
      ++hits[x.group][static_cast<size_t>(x.tm) * tiles_n + x.tn];
    }
  }
  for (int g = 0; g < groups; ++g)
    for (size_t i = 0; i < hits[g].size(); ++i)
      if (hits[g][i] != 1) {
        if (loud && failures < 10)
          printf("FAIL %s (BM %d, raster %d, tiles_n %d, grid %d): group %d (M = %lld) tile (%zu, %zu) computed %d times\n",
                 label, BM, RG, tiles_n, grid, g, static_cast<long long>(ms[g]), i / tiles_n, i % tiles_n, hits[g][i]);
        ++failures;
      }
  if (BUG == NONE && visited != total) {
    if (loud) printf("FAIL %s: %lld tiles visited, the host counts %lld\n", label, static_cast<long long>(visited),
                     static_cast<long long>(total));
    ++failures;
  }
  return failures;
}

struct Case {
  const char* label;
  std::vector<int64_t> ms;
};

static std::vector<Case> cases() {
  std::vector<Case> out = {
      {"one empty group", {0}},
      {"all empty", {0, 0, 0, 0}},
      {"one row", {1}},
      {"one group, M = 5", {5}},
      {"one group, M = 64", {64}},
      {"one group, M = 127", {127}},
      {"one group, M = 128", {128}},
      {"one group, M = 129", {129}},
      {"one group, M = 1000", {1000}},
      {"empty first, between, last", {0, 300, 0, 1, 127, 128, 129, 0}},
      {"the planted grouped.yaml list", {64, 0, 5, 130, 12, 200, 1, 96}},
      {"only the last group", {0, 0, 0, 0, 0, 0, 0, 77}},
      {"only the first group", {77, 0, 0, 0, 0, 0, 0, 0}},
  };
  // 256 groups, Zipf-like skew (1 / rank^1.2 of 131072 rows, ranks permuted), every seventh empty.
  std::vector<int64_t> skew(256);
  double h = 0;
  for (int r = 1; r <= 256; ++r) h += 1.0 / std::pow(r, 1.2);
  for (int g = 0; g < 256; ++g) {
    const int rank = 1 + (g * 37 + 11) % 256;
    skew[g] = g % 7 == 3 ? 0 : static_cast<int64_t>(131072.0 / h / std::pow(rank, 1.2));
  }
  out.push_back({"256 groups, skewed", skew});
  out.push_back({"256 groups, balanced 512", std::vector<int64_t>(256, 512)});
  std::vector<int64_t> tiny(1024);
  for (int g = 0; g < 1024; ++g) tiny[g] = g % 4;  // 0, 1, 2, 3 rows
  out.push_back({"1024 groups of 0-3 rows", tiny});
  return out;
}

// Every case, tile width and grid size for one BM and raster group; returns failures.
template <int BM, int RG, int BUG>
static int run_all(bool loud) {
  int failures = 0;
  for (const Case& c : cases())
    for (int tiles_n : {1, 3, 16, 28})
      for (int grid : {1, 7, 132, 100000}) failures += check_walk<BM, RG, BUG>(c.ms, tiles_n, grid, loud, c.label);
  return failures;
}

template <int BUG>
static int run_sizes(bool loud) {
  return run_all<64, 1, BUG>(loud) + run_all<64, 8, BUG>(loud) + run_all<128, 8, BUG>(loud) + run_all<256, 4, BUG>(loud);
}

template <int BUG>
static int planted_caught() {
  const int found = run_sizes<BUG>(false);
  printf("planted walk '%s': %s (%d failures)\n", BUG_NAMES[BUG], found ? "caught" : "NOT CAUGHT", found);
  return found ? 0 : 1;
}

int main() {
  const int failures = run_sizes<NONE>(true);
  printf("the kernel's walk: %d failure(s)\n", failures);
  const int missed = planted_caught<FLOOR_TILES>() + planted_caught<EMPTY_GETS_A_ROW>() +
                     planted_caught<BOUNDARY_OFF_BY_ONE>() + planted_caught<PREVIOUS_ROW0>() +
                     planted_caught<RASTER_OVER_STACK>();
  const bool ok = failures == 0 && missed == 0;
  printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
