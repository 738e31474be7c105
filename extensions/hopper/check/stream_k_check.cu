// Host-only check of hopper.stream_k's schedule (stream_k_walk.cuh, the kernel's own code; no GPU): for many
// problems (M, N, K not multiples of the 128x256x64 tile, one tile, fewer tiles than SMs, exactly full waves,
// the prefill shapes), SM counts 132, 114 and 78 and every schedule mode, walking every CTA as the kernel does:
//   * every (tile, k iteration) is computed exactly once, and nothing outside the problem;
//   * every tile split over CTAs has exactly one finisher (the segment at k = 0), and the CTAs it adds are exactly
//     the tile's other segments, in k order (the fixed order that makes the sum deterministic);
//   * a CTA contributes at most once (one workspace slot each) and only in its first segment; a finisher of a
//     split tile waits only in its last stream-K segment (so no wait waits on a waiting CTA: no deadlock);
//   * the grid is at most the SM count (all resident: the cooperative launch), stream-K ranges differ by at most one
//     iteration, and AUTO picks data-parallel at whole waves and the hybrid at a part-empty last wave.
// Then five planted wrong schedules must each be caught, so the check can fail. Prints "PASSED".
#include <algorithm>
#include <cstdio>
#include <vector>

#include "hopper/stream_k_walk.cuh"

using namespace gc::hopper::stream_k;

constexpr int BM = 128, BN = 256, BK = 64;

enum Plant { NONE, OVERLAP, GAP, REVERSED_ORDER, GRID_PAST_SMS, WAIT_FIRST };
static const char* plant_name[] = {"none", "overlapping ranges", "a dropped data-parallel tile",
                                   "partials added in reverse order", "a grid larger than the SM count",
                                   "a finisher waiting before its contribution"};

struct Seg {
  Segment s;
  bool sk;  // a stream-K segment (else data-parallel)
};

static int errors = 0;      // within one check_problem call
static bool quiet = false;  // the plants' violations are expected: counted, not printed
static void fail(const char* what, int tiles, int k_tiles, int sms, int mode, int cta) {
  if (errors++ < 5 && !quiet) printf("  FAIL %s (tiles %d, k tiles %d, sms %d, mode %d, cta %d)\n", what, tiles, k_tiles, sms,
                           mode, cta);
}

// Every CTA's walk (with a plant applied), then the properties above. Returns the number of violations.
static int check_problem(int tiles, int k_tiles, int sms, int mode, Plant plant) {
  errors = 0;
  Plan plan = make_plan(tiles, k_tiles, sms, mode);
  if (plant == GRID_PAST_SMS && plan.sk_tiles > 0) plan.grid = sms + 1;
  if (plan.grid > sms) fail("grid larger than the SM count", tiles, k_tiles, sms, mode, -1);
  if (plan.grid < 1 || plan.sk_tiles < 0 || plan.sk_tiles > tiles) fail("bad plan", tiles, k_tiles, sms, mode, -1);
  const int kt = plan.k_tiles;
  std::vector<std::vector<Seg>> walks(plan.grid);
  for (int b = 0; b < plan.grid; ++b) {
    Walk w(plan, b);
    Segment s;
    while (w.next(s)) walks[b].push_back({s, s.tile < plan.sk_tiles});
    // the plants: what a wrong schedule would do
    if (plant == OVERLAP && b == 1 && !walks[b].empty() && walks[b][0].sk && walks[b][0].s.kb > 0) walks[b][0].s.kb--;
    if (plant == GAP && b == plan.grid - 1 && !walks[b].empty() && !walks[b].back().sk) walks[b].pop_back();
    if (plant == WAIT_FIRST && walks[b].size() >= 2 && walks[b][0].sk && walks[b][1].sk)
      std::reverse(walks[b].begin(), walks[b].end());
  }
  std::vector<int> hits(static_cast<size_t>(tiles) * kt, 0);
  std::vector<std::vector<int>> cover(tiles);  // the CTAs with a segment of each tile, in walk order
  std::vector<int64_t> sk_len(plan.grid, 0);
  for (int b = 0; b < plan.grid; ++b) {
    int contributions = 0;
    for (size_t i = 0; i < walks[b].size(); ++i) {
      const Segment& s = walks[b][i].s;
      if (s.tile < 0 || s.tile >= tiles || s.kb < 0 || s.ke > kt || s.kb >= s.ke) {
        fail("segment outside the problem", tiles, kt, sms, mode, b);
        continue;
      }
      for (int k = s.kb; k < s.ke; ++k) ++hits[static_cast<size_t>(s.tile) * kt + k];
      cover[s.tile].push_back(b);
      if (walks[b][i].sk) sk_len[b] += s.ke - s.kb;
      if (!s.finisher()) {
        ++contributions;
        if (i != 0) fail("a contribution that is not the CTA's first segment", tiles, kt, sms, mode, b);
      } else if (!s.whole(kt)) {
        const bool last_sk = i + 1 == walks[b].size() || !walks[b][i + 1].sk;
        if (!last_sk) fail("a finisher that waits before the end of its stream-K range", tiles, kt, sms, mode, b);
      }
    }
    if (contributions > 1) fail("two contributions from one CTA (one slot each)", tiles, kt, sms, mode, b);
  }
  for (size_t i = 0; i < hits.size(); ++i)
    if (hits[i] != 1) {
      fail(hits[i] ? "a (tile, k) computed twice" : "a (tile, k) never computed", tiles, kt, sms, mode,
           static_cast<int>(i / kt));
      break;
    }
  // Each split tile: its finisher and the CTAs it adds, in the kernel's order.
  for (int t = 0; t < tiles; ++t) {
    if (cover[t].size() <= 1) continue;
    int fin = -1;
    for (int b : cover[t])
      for (const Seg& g : walks[b])
        if (g.s.tile == t && g.s.kb == 0) fin = (fin == -1 ? b : -2);
    if (fin < 0) {
      fail("a split tile without exactly one finisher", tiles, kt, sms, mode, -1);
      continue;
    }
    std::vector<int> order;
    for (int c = next_contributor(plan, t, fin + 1); c >= 0; c = next_contributor(plan, t, c + 1)) order.push_back(c);
    if (plant == REVERSED_ORDER) std::reverse(order.begin(), order.end());
    std::vector<int> expect;  // the other CTAs of the tile, by the k iteration their segment starts at
    std::vector<std::pair<int, int>> by_k;
    for (int b : cover[t])
      for (const Seg& g : walks[b])
        if (g.s.tile == t && b != fin) by_k.push_back({g.s.kb, b});
    std::sort(by_k.begin(), by_k.end());
    for (auto& e : by_k) expect.push_back(e.second);
    if (order != expect) fail("the finisher adds other CTAs than the tile's, or not in k order", tiles, kt, sms, mode, fin);
    for (int c : order)  // a waited-for CTA must contribute first thing, before any wait of its own
      if (walks[c].empty() || walks[c][0].s.tile != t || walks[c][0].s.kb == 0)
        fail("waits on a CTA whose contribution is not its first segment", tiles, kt, sms, mode, c);
  }
  if (plan.sk_tiles > 0) {
    const auto mm = std::minmax_element(sk_len.begin(), sk_len.end());
    if (*mm.second - *mm.first > 1) fail("unbalanced stream-K ranges", tiles, kt, sms, mode, -1);
  }
  return errors;
}

static int tiles_of(int m, int n) { return ((m + BM - 1) / BM) * ((n + BN - 1) / BN); }
static int k_tiles_of(int k) { return (k + BK - 1) / BK; }

int main() {
  int failures = 0, problems = 0;
  const int sms_list[] = {132, 114, 78};
  // Problems by (M, N, K): ragged M, N and K, one tile, K shorter than a tile, the LLM prefill shapes.
  const int ms[] = {1, 100, 128, 129, 2048, 2000, 4096, 8192, 8191};
  const int ns[] = {1, 255, 256, 257, 4096, 5120, 6144, 14336, 28672};
  const int ks[] = {1, 63, 64, 65, 200, 4096, 4099, 14336};
  for (int sms : sms_list)
    for (int mode = AUTO; mode <= STREAM_K; ++mode) {
      for (int m : ms)
        for (int n : ns)
          for (int k : ks) {
            ++problems;
            failures += check_problem(tiles_of(m, n), k_tiles_of(k), sms, mode, NONE) > 0;
          }
      // tile counts around the waves: fewer than the SMs, exactly full waves, one past, one short
      for (int tiles : {1, 2, sms - 1, sms, sms + 1, 2 * sms - 1, 2 * sms, 2 * sms + 1, 5 * sms + 7, 10 * sms})
        for (int kt : {1, 2, 3, 7, 64, 65, 224}) {
          ++problems;
          failures += check_problem(tiles, kt, sms, mode, NONE) > 0;
        }
    }
  // AUTO's choice: whole waves stay data-parallel, a part-empty last wave goes hybrid, a nearly full one does not.
  struct Expect { int tiles, k_tiles, sms; bool sk; };
  const Expect expects[] = {{264, 64, 132, false}, {tiles_of(8192, 5120), 64, 132, true}, {130, 64, 132, false},
                            {10, 64, 132, true}, {1, 64, 132, true}, {10, 1, 132, false}};
  for (const Expect& e : expects) {
    const Plan p = make_plan(e.tiles, e.k_tiles, e.sms, AUTO);
    if ((p.sk_tiles > 0) != e.sk) {
      printf("  FAIL AUTO at %d tiles x %d k on %d SMs: %s\n", e.tiles, e.k_tiles, e.sms,
             p.sk_tiles ? "stream-K" : "data-parallel");
      ++failures;
    }
  }
  const Plan prefill = make_plan(tiles_of(8192, 5120), k_tiles_of(4096), 132, AUTO);
  printf("8192x5120x4096 on 132 SMs: %d tiles, %d stream-K (%lld k iterations per CTA), %d CTAs\n", prefill.tiles,
         prefill.sk_tiles, static_cast<long long>(prefill.end(0) - prefill.begin(0)), prefill.grid);

  // The plants: each must be caught at a problem where it changes something.
  quiet = true;
  for (int plant = OVERLAP; plant <= WAIT_FIRST; ++plant) {
    int caught = 0;
    for (int sms : sms_list)
      for (int tiles : {10, sms + 5, 2 * sms + 40, tiles_of(8192, 5120)})
        for (int mode : {HYBRID, STREAM_K}) caught += check_problem(tiles, 64, sms, mode, static_cast<Plant>(plant)) > 0;
    printf("plant '%s': %s (%d problems)\n", plant_name[plant], caught ? "caught" : "NOT CAUGHT", caught);
    if (!caught) ++failures;
  }
  printf("%s: %d problems x modes checked, %d failure(s)\n", failures ? "FAILED" : "PASSED", problems, failures);
  return failures ? 1 : 0;
}
