#!/usr/bin/env bash
# Issue 27 (fast first answers) on a GPU machine, in one call of about 3 minutes. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/first-contact/first_answer_on_device.sh
# On a build cache of its own, empty at first (so the first builds are cold), most important first (a call
# cut short still brings back what it did, in OUT/steps.txt and OUT/first_answer_on_device.tgz); the runner
# (experiments/studies/run_on_device.sh) has already compiled gemmcompare's bytecode, as a pip install would (the
# device image runs with PYTHONDONTWRITEBYTECODE=1, so without it every import compiles its module, every time):
#   1. `build experiments/quickstart.yaml`, cold, timed;
#   2. `run experiments/quickstart.yaml` three times on that warm cache, each timed (wall), each printing its
#      one-line phases (also in its receipt, `phases_s`);
#   3. the GPU tests of this change (tests/test_first_answer.py, tests/test_counter_random.py);
#   4. `build experiments/lab_ladder.yaml` cold, then three times fully cached, each timed;
#   5. where CUPTI's first start spends its time (experiments/studies/first-contact/cupti_start_diag.py), and torch's import time.
# It prints a summary table last. The issue's goal: each warm-cache quickstart run <= 12 s wall; a cached
# lab-ladder build <= 1 s. QUICK=1 does steps 1-3 only (about 2 minutes, for a call shared with other work).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
# empty, so the first build of each spec is cold (FIRST_ANSWER_CACHE: a filled one, for a trial elsewhere); outside
# W, so that the builds are not packed
export GEMMCOMPARE_CACHE_DIR=${FIRST_ANSWER_CACHE:-$W-cache}
[ -n "${FIRST_ANSWER_CACHE:-}" ] || rm -rf "$GEMMCOMPARE_CACHE_DIR"
declare -A wall

# timed NAME CMD...: run CMD (log W/NAME.log), keep its wall seconds in wall[NAME]
timed() {
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  timeout --kill-after=10 300 "$@" >"$W/$name.log" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  wall[$name]=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
  note "$name: exit $rc, ${wall[$name]} s wall: $*"
}

{
  echo "cores $(nproc)"
  python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
  echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}"
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

run_args=(--store "$W/gemmcompare.db" --runs-dir "$W/runs" --no-progress)
timed quickstart_build_cold python3 -m gemmcompare build experiments/quickstart.yaml --no-progress
timed quickstart_run_1 python3 -m gemmcompare run experiments/quickstart.yaml "${run_args[@]}"
timed quickstart_run_2 python3 -m gemmcompare run experiments/quickstart.yaml "${run_args[@]}"
timed quickstart_run_3 python3 -m gemmcompare run experiments/quickstart.yaml "${run_args[@]}"
for i in 1 2 3; do grep -h "phases:" "$W/quickstart_run_$i.log" | head -1 >>"$OUT/steps.txt"; done
timed gpu_tests python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_first_answer.py tests/test_counter_random.py tests/test_gpu_cuda_driver.py \
  tests/test_timing_methods.py
tail -n 3 "$W/gpu_tests.log" >>"$OUT/steps.txt"
if [ "${QUICK:-0}" != 1 ]; then
timed lab_build_cold python3 -m gemmcompare build experiments/lab_ladder.yaml --no-progress
for i in 1 2 3; do
  timed lab_build_cached_$i python3 -m gemmcompare build experiments/lab_ladder.yaml --no-progress
done
timed cupti_diag python3 experiments/studies/first-contact/cupti_start_diag.py
timed torch_import python3 -c "import torch"
python3 -X importtime -m gemmcompare build experiments/lab_ladder.yaml --no-progress 2>&1 >/dev/null \
  | grep "import time" | sort -t'|' -k2 -n | tail -15 >"$W/importtime_cached_build.txt"
timed build_probe_diag python3 experiments/studies/first-contact/build_probe_diag.py experiments/lab_ladder.yaml
fi

for i in 1 2 3; do
  echo "--- quickstart run $i"
  grep -E "^run |PASS|FAIL|CRASH|TIMEOUT|phases:|measured|report" "$W/quickstart_run_$i.log" | tail -n 20
done
echo "--- the cached build's costliest imports (us: self | cumulative)"
cat "$W/importtime_cached_build.txt" 2>/dev/null
[ -f "$W/build_probe_diag.log" ] && { echo "--- the cached build's probe and profile"; head -n 45 "$W/build_probe_diag.log"; }
echo "--- CUPTI's first start, by order (s)"
tail -n 30 "$W/cupti_diag.log" 2>/dev/null

# each run's receipt: its phases (seconds), worker start-up steps and the groups' phases
python3 - "$W/runs" >"$W/phases.txt" <<'PY'
import json, sys
from pathlib import Path
runs = Path(sys.argv[1])
for folder in sorted(runs.iterdir()) if runs.is_dir() else ():  # none where no run got as far as its folder
    receipt = json.loads((folder / "receipt.json").read_text())
    print(folder.name, json.dumps({k: round(v, 3) for k, v in (receipt.get("phases_s") or {}).items()}))
    for gpu in receipt.get("gpus", []):
        startup = dict(gpu.get("worker_startup_s") or {})
        timeline = startup.pop("timeline_s", None) or {}
        print("  worker start-up", json.dumps({k: round(v, 3) for k, v in startup.items()}),
              "waited", gpu.get("worker_waited_s"))
        print("  worker timeline (s from its spawn)",
              json.dumps({k: round(v, 3) for k, v in sorted(timeline.items(), key=lambda kv: kv[1])}))
PY
cat "$W/phases.txt"

{
  echo
  echo "| step | wall s | goal |"
  echo "|---|---:|---|"
  echo "| quickstart build, cold | ${wall[quickstart_build_cold]} | |"
  echo "| quickstart run 1, warm cache | ${wall[quickstart_run_1]} | <= 12 |"
  echo "| quickstart run 2, warm cache | ${wall[quickstart_run_2]} | <= 12 |"
  echo "| quickstart run 3, warm cache | ${wall[quickstart_run_3]} | <= 12 |"
  if [ "${QUICK:-0}" != 1 ]; then
  echo "| lab_ladder build, cold | ${wall[lab_build_cold]} | |"
  echo "| lab_ladder build, cached (3 tries) | ${wall[lab_build_cached_1]} ${wall[lab_build_cached_2]} ${wall[lab_build_cached_3]} | <= 1 |"
  echo "| python3 -c 'import torch' | ${wall[torch_import]} | (reference) |"
  fi
  echo "| pytest -m gpu (first answer, counter RNG) | ${wall[gpu_tests]} | $(tail -n 1 "$W/gpu_tests.log") |"
  for i in 1 2 3; do
    line=$(grep -h "phases:" "$W/quickstart_run_$i.log" | head -1 | sed 's/^ *//')
    echo "run $i: ${line:-phases: n/a (no phase line at this commit)}"
  done
} | tee "$OUT/summary.txt"
cp "$OUT/summary.txt" "$OUT/machine.txt" "$W/"
