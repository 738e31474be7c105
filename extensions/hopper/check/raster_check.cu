// Host-only check of the tile walks (no GPU): for many grid shapes, every CTA tile of C is computed by
// exactly one CTA, in each step's iteration scheme -- one CTA per tile (steps 1-3), persistent
// (step 4), persistent over cluster tiles with CLUSTER_M CTAs each (steps 5-6; tiles past M allowed, as
// padding, but no real tile twice or never). Uses the kernels' own grouped_raster. Prints "PASSED".
#include <cstdio>
#include <vector>

#include "hopper/hopper_common.cuh"

using gc::hopper::grouped_raster;

static int failures = 0;

static void check(const char* what, int tiles_m, int tiles_n, const std::vector<int>& hits) {
  for (int tm = 0; tm < tiles_m; ++tm)
    for (int tn = 0; tn < tiles_n; ++tn) {
      const int h = hits[tm * tiles_n + tn];
      if (h != 1) {
        if (failures < 20) printf("FAIL %s: tile (%d, %d) computed %d times\n", what, tm, tn, h);
        ++failures;
      }
    }
}

int main() {
  const int groups[] = {1, 2, 3, 8, 16};
  for (int tiles_m = 1; tiles_m <= 37; tiles_m += 3)
    for (int tiles_n = 1; tiles_n <= 29; tiles_n += 4)
      for (int group : groups) {
        char what[128];
        // steps 1-3: blockIdx.x over every tile
        std::vector<int> hits(tiles_m * tiles_n, 0);
        for (int t = 0; t < tiles_m * tiles_n; ++t) {
          int tm, tn;
          grouped_raster(t, tiles_m, tiles_n, group, tm, tn);
          if (tm < 0 || tm >= tiles_m || tn < 0 || tn >= tiles_n) {
            printf("FAIL raster out of range\n");
            ++failures;
            continue;
          }
          ++hits[tm * tiles_n + tn];
        }
        snprintf(what, sizeof what, "one CTA per tile %dx%d g%d", tiles_m, tiles_n, group);
        check(what, tiles_m, tiles_n, hits);
        // step 4: persistent, grid = min(tiles, sms)
        for (int sms : {1, 7, 132}) {
          const int tiles = tiles_m * tiles_n, grid = tiles < sms ? tiles : sms;
          std::vector<int> h2(tiles, 0);
          for (int b = 0; b < grid; ++b)
            for (int t = b; t < tiles; t += grid) {
              int tm, tn;
              grouped_raster(t, tiles_m, tiles_n, group, tm, tn);
              ++h2[tm * tiles_n + tn];
            }
          snprintf(what, sizeof what, "persistent %dx%d g%d grid %d", tiles_m, tiles_n, group, grid);
          check(what, tiles_m, tiles_n, h2);
        }
        // steps 5-6: clusters of cm along M, persistent over cluster tiles
        for (int cm : {1, 2, 4})
          for (int fit : {1, 3, 66}) {
            const int ctiles_m = (tiles_m + cm - 1) / cm, ctiles = ctiles_m * tiles_n;
            const int clusters = ctiles < fit ? ctiles : fit;
            std::vector<int> h3(tiles_m * tiles_n, 0);
            for (int block = 0; block < clusters * cm; ++block) {
              const int rank = block % cm, cluster_id = block / cm;
              for (int ct = cluster_id; ct < ctiles; ct += clusters) {
                int ctm, tn;
                grouped_raster(ct, ctiles_m, tiles_n, group, ctm, tn);
                const int tm = ctm * cm + rank;
                if (tm < tiles_m) ++h3[tm * tiles_n + tn];  // tm >= tiles_m: a padding CTA (loads zeros, stores nothing)
              }
            }
            snprintf(what, sizeof what, "cluster %d %dx%d g%d clusters %d", cm, tiles_m, tiles_n, group, clusters);
            check(what, tiles_m, tiles_n, h3);
          }
      }
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
