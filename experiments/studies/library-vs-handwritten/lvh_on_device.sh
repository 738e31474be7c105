#!/usr/bin/env bash
# The README's library-vs-handwritten rerun, in one device call:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<sha> bash experiments/studies/library-vs-handwritten/lvh_on_device.sh
# Lands in $OUT/lvh.tgz (the run folder and run.log); prints the run's table last. Nothing else uses the
# GPU meanwhile (until 0e6424b the honest-numbers GPU tests ran beside the run's build phase; the GPU
# tests now have experiments/studies/gpu-tests/gpu_tests_on_device.sh).
set -u
OUT=${OUT:?set OUT}
W=/tmp/lvh-work; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/studies/device_env.sh
timeout 500 python3 -m gemmcompare run experiments/library_vs_handwritten.yaml --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress >"$W/run.log" 2>&1
echo "run exit $?" >>"$W/run.log"
tar czf "$OUT/lvh.tgz" -C "$W" runs run.log
tail -n 45 "$W/run.log" | cut -c1-130
