#!/usr/bin/env bash
# The README's library-vs-handwritten rerun and the honest-numbers GPU tests, in one device call:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<sha> bash experiments/lvh_on_device.sh
# Lands in $OUT/lvh.tgz (the run folder, run.log, gpu_tests.log); prints the run's table last.
set -u
OUT=${OUT:?set OUT}
W=/tmp/lvh-work; rm -rf "$W"; mkdir -p "$W" "$OUT"
PIP_LOG="$W/pip.log" source experiments/device_env.sh
( timeout 150 python3 -m pytest -q -m gpu tests/test_gpu_honest.py -p no:cacheprovider >"$W/gpu_tests.log" 2>&1
  echo "exit $?" >>"$W/gpu_tests.log" ) &
timeout 280 python3 -m gemmcompare run experiments/library_vs_handwritten.yaml --store "$W/g.db" --runs-dir "$W/runs" \
  --no-progress >"$W/run.log" 2>&1
echo "run exit $?" >>"$W/run.log"
wait
tar czf "$OUT/lvh.tgz" -C "$W" runs run.log gpu_tests.log
tail -n 4 "$W/gpu_tests.log"
tail -n 45 "$W/run.log" | cut -c1-130
