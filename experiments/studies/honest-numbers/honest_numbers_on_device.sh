#!/usr/bin/env bash
# Issue 14 ("honest numbers at the edges") on one GPU machine, in one call of at most ~9 minutes.
#
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/honest-numbers/honest_numbers_on_device.sh
#
# from the repository root (nvidia-cutlass carried as a wheel in .whl/, as for run_on_device.sh). Steps, in
# order of priority, each under `timeout` and logged; a failing step does not stop the others:
#   builds        every extension of the specs below, in parallel processes, before anything is timed
#   small         experiments/studies/honest-numbers/small_kernel_timing.py: cuBLAS 256^3..4096^3 (L2 flushed and warm) and the
#                 %globaltimer spin kernel (20 us, 100 us, 1 ms) by events, CUPTI, graph replays, do_bench,
#                 against ncu gpu__time_duration (--clock-control none --cache-control none)
#   alignment     experiments/studies/honest-numbers/alignment_study.yaml: 3 odd shapes x {tight, aligned} x every library and
#                 hand-written row, CUTLASS SM90 and SM80 among them
#   twice         experiments/studies/timing/timing_check.yaml run twice, then compared: expected exit 0
#   planted       experiments/studies/regressions/planted_slowdown/{base,slow}.yaml, then compared: expected exit 1
#   profile       `gemmcompare profile` (cuBLAS 1024^3..4096^3): the do_bench column beside events and ncu
#   lvh           experiments/library_vs_handwritten.yaml rerun (the README's plot), if time is left
#   gpu_tests     tests/test_gpu_honest.py, if time is left
# Everything lands in $OUT/honest_numbers_on_device.tgz (the runner packs the work folder W on exit, also when the
# call is cut short; unpack it into experiments/studies/honest-numbers/h200/); $OUT/summary.txt is the short
# table, printed last; $OUT/steps.txt what each step did (a copy in W for the summary).
# Budget: HONEST_BUDGET_S, else the runner's BUDGET_S, else 540 s for the whole script; each step is cut 20 s
# short of what is left (for the summary), and not started with under 20 s.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
T0=$(date +%s)
# the runner's END (BUDGET_S) where BUDGET_S is given and HONEST_BUDGET_S not; `left` counts down to END
if [ -n "${HONEST_BUDGET_S:-}" ] || [ -z "${BUDGET_S:-}" ]; then END=$(( T0 + ${HONEST_BUDGET_S:-540} )); fi
mkdir -p "$W/logs"

# run_step NAME MAX_SECONDS CMD...: CMD under timeout (MAX_SECONDS, or what the budget leaves less 20 s), its log
# W/logs/NAME.log (where honest_summary.py reads it), a line in steps.txt; returns CMD's exit
run_step() {
  local name=$1 want=$2 t rc start
  shift 2
  t=$(( $(left) - 20 ))
  (( t > want )) && t=$want
  if (( t < 20 )); then note "$name: SKIPPED (budget spent)"; return 99; fi
  start=$(date +%s)
  timeout -k 10 "$t" "$@" >"$W/logs/$name.log" 2>&1
  rc=$?
  note "$name: exit $rc in $(( $(date +%s) - start )) s (limit $t s)"
  return $rc
}

export PATH=$PATH:/usr/local/cuda/bin
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
GC="python3 -m gemmcompare"
note "ncu $NCU; budget $(left) s"
timeout 30 python3 -m pip list 2>/dev/null | grep -i -E "^(torch|triton|nvidia-cutlass) " >"$W/versions.txt"

# -- builds first, in parallel processes (one builder per extension across processes: the cache's lock), and
# all done before anything is timed: until 642893c they ran beside the small-kernel timing and the library-vs-
# handwritten build beside the timed runs, which put 16 nvcc processes on the host's CPUs while it launched
# the kernels being timed ------------------------------------------------------------------------------------
BUILD_PIDS=()
for spec in experiments/studies/honest-numbers/alignment_study.yaml experiments/studies/regressions/planted_slowdown/base.yaml \
            experiments/studies/regressions/planted_slowdown/slow.yaml experiments/library_vs_handwritten.yaml; do
  name=build_$(basename "$(dirname "$spec")")_$(basename "$spec" .yaml)
  ( timeout -k 10 360 $GC build "$spec" --no-progress >"$W/logs/$name.log" 2>&1
    echo "exit $?" >>"$W/logs/$name.log" ) &
  BUILD_PIDS+=($!)
done
for pid in "${BUILD_PIDS[@]}"; do wait "$pid"; done
note "builds done at $(( $(date +%s) - T0 )) s"

# -- small kernels timed right (needs only cuBLAS and the spin kernel, which it builds first) ----------------
mkdir -p "$W/small"
run_step small_measure 240 python3 experiments/studies/honest-numbers/small_kernel_timing.py measure "$W/small"
run_step small_ncu 150 "$NCU" --clock-control none --cache-control none --profile-from-start off \
  --metrics gpu__time_duration.sum --csv --log-file "$W/small/ncu.csv" \
  python3 experiments/studies/honest-numbers/small_kernel_timing.py ncu "$W/small"
run_step small_report 60 python3 experiments/studies/honest-numbers/small_kernel_timing.py report "$W/small"


# -- the same problem for every row --------------------------------------------------------------------------
DB=$W/gemmcompare.db
run_step alignment 240 $GC run experiments/studies/honest-numbers/alignment_study.yaml --store "$DB" --runs-dir "$W/runs/alignment" --no-progress

# -- throttling in every verdict -----------------------------------------------------------------------------
run_step twice_1 120 $GC run experiments/studies/timing/timing_check.yaml --store "$DB" --runs-dir "$W/runs/twice_1" --no-progress
run_step twice_2 120 $GC run experiments/studies/timing/timing_check.yaml --store "$DB" --runs-dir "$W/runs/twice_2" --no-progress
first() { ls -d "$1"/*/ 2>/dev/null | head -n 1; }
if [ -n "$(first "$W/runs/twice_1")" ] && [ -n "$(first "$W/runs/twice_2")" ]; then
  run_step compare_twice 60 $GC compare "$(first "$W/runs/twice_1")" "$(first "$W/runs/twice_2")" --out "$W/compare_twice"
  rc=$?
  note "compare_twice: expected exit 0, got $rc: $([ $rc = 0 ] && echo as expected || echo NOT AS EXPECTED)"
fi
run_step planted_base 120 $GC run experiments/studies/regressions/planted_slowdown/base.yaml --store "$DB" --runs-dir "$W/runs/planted_base" --no-progress
run_step planted_slow 120 $GC run experiments/studies/regressions/planted_slowdown/slow.yaml --store "$DB" --runs-dir "$W/runs/planted_slow" --no-progress
if [ -n "$(first "$W/runs/planted_base")" ] && [ -n "$(first "$W/runs/planted_slow")" ]; then
  run_step compare_planted 60 $GC compare "$(first "$W/runs/planted_base")" "$(first "$W/runs/planted_slow")" --out "$W/compare_planted"
  rc=$?
  note "compare_planted: expected exit 1, got $rc: $([ $rc = 1 ] && echo as expected || echo NOT AS EXPECTED)"
fi

# -- profile's do_bench column, then what time allows --------------------------------------------------------
run_step profile 150 $GC profile experiments/studies/timing/timing_check.yaml --only '^library\.cublas$' \
  --shapes 1024x1024x1024,2048x2048x2048,4096x4096x4096 --launches 5 --json "$W/profile.json"
if (( $(left) > 140 )); then
  run_step lvh 120 $GC run experiments/library_vs_handwritten.yaml --store "$DB" --runs-dir "$W/runs/lvh" --no-progress
else
  note "lvh: SKIPPED ($(left) s left)"
fi
if (( $(left) > 110 )); then
  run_step gpu_tests 100 python3 -m pytest -q -m gpu tests/test_gpu_honest.py -p no:cacheprovider
else
  note "gpu_tests: SKIPPED ($(left) s left)"
fi

# -- summarize -----------------------------------------------------------------------------------------------
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$W/nvidia_smi_end.csv" 2>&1
note "total $(( $(date +%s) - T0 )) s"
cp "$OUT/steps.txt" "$W/steps.txt"
timeout 60 python3 experiments/studies/honest-numbers/honest_summary.py "$W" >"$OUT/summary.txt" 2>"$W/logs/summary.log" \
  || echo "summary failed: see logs/summary.log" >>"$OUT/summary.txt"
cp "$OUT/summary.txt" "$W/summary.txt"
cat "$OUT/summary.txt"
