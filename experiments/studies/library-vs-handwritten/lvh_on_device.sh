#!/usr/bin/env bash
# The README's library-vs-handwritten rerun, in one device call:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/library-vs-handwritten/lvh_on_device.sh
# Lands in $OUT/lvh_on_device.tgz (the run folder and store) and $OUT/run.log; prints the run's table last.
# Nothing else uses the GPU meanwhile (until 0e6424b the honest-numbers GPU tests ran beside the run's build
# phase; the GPU tests now have experiments/studies/gpu-tests/gpu_tests_on_device.sh).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
step run 500 python3 -m gemmcompare run experiments/library_vs_handwritten.yaml --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress
tail -n 45 "$OUT/run.log" | cut -c1-130
