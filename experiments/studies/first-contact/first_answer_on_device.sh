#!/usr/bin/env bash
# Issue 27 (fast first answers) on a GPU machine, in one call of about 3 minutes. From the repository root:
#   bash experiments/studies/first-contact/first_answer_on_device.sh [OUT]       (OUT defaults to $OUT, the device tool's folder)
# On a build cache of its own, empty at first (so the first builds are cold), most important first (a call
# cut short still brings back what it did, in OUT/steps.txt and OUT/first_answer.tgz):
#   0. `python3 -m compileall gemmcompare`: the bytecode a pip install writes (the device image runs with
#      PYTHONDONTWRITEBYTECODE=1, so without it every import compiles its module, every time);
#   1. `build experiments/quickstart.yaml`, cold, timed;
#   2. `run experiments/quickstart.yaml` three times on that warm cache, each timed (wall), each printing its
#      one-line phases (also in its receipt, `phases_s`);
#   3. the GPU tests of this change (tests/test_first_answer.py, tests/test_counter_random.py);
#   4. `build experiments/lab_ladder.yaml` cold, then three times fully cached, each timed;
#   5. where CUPTI's first start spends its time (experiments/studies/first-contact/cupti_start_diag.py), and torch's import time.
# It prints a summary table last. The issue's goal: each warm-cache quickstart run <= 12 s wall; a cached
# lab-ladder build <= 1 s. QUICK=1 does steps 0-3 only (about 2 minutes, for a call shared with other work).
set -u
out=${1:-${OUT:?give OUT}}
mkdir -p "$out"
work=$(mktemp -d /tmp/first-answer.XXXXXX)
logs=$work/logs
mkdir -p "$logs"
PIP_LOG="$logs/pip.log" source experiments/studies/device_env.sh
# empty, so the first build of each spec is cold (FIRST_ANSWER_CACHE: a filled one, for a trial elsewhere)
export GEMMCOMPARE_CACHE_DIR=${FIRST_ANSWER_CACHE:-$work/cache}
gc="python3 -m gemmcompare"
declare -A wall

pack() {  # everything so far into OUT (also when the call is cut short)
  cp -r "$work/runs" "$logs/runs" 2>/dev/null
  cp "$work/gemmcompare.db" "$logs/" 2>/dev/null
  tar czf "$out/first_answer.tgz" -C "$logs" . 2>/dev/null
}
trap 'pack; exit 143' TERM INT

# timed NAME CMD...: run CMD (log NAME.log), keep its wall seconds in wall[NAME]
timed() {
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  timeout --kill-after=10 300 "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  wall[$name]=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
  echo "$name: exit $rc, ${wall[$name]} s wall: $*" | tee -a "$out/steps.txt"
}

{
  echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)  cores $(nproc)"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
  echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}"
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

timed compileall python3 -m compileall -q gemmcompare
run_args=(--store "$work/gemmcompare.db" --runs-dir "$work/runs" --no-progress)
timed quickstart_build_cold $gc build experiments/quickstart.yaml --no-progress
timed quickstart_run_1 $gc run experiments/quickstart.yaml "${run_args[@]}"
timed quickstart_run_2 $gc run experiments/quickstart.yaml "${run_args[@]}"
timed quickstart_run_3 $gc run experiments/quickstart.yaml "${run_args[@]}"
for i in 1 2 3; do grep -h "phases:" "$logs/quickstart_run_$i.log" | head -1 >>"$out/steps.txt"; done
timed gpu_tests python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_first_answer.py tests/test_counter_random.py tests/test_gpu_cuda_driver.py \
  tests/test_timing_methods.py
tail -n 3 "$logs/gpu_tests.log" >>"$out/steps.txt"
if [ "${QUICK:-0}" != 1 ]; then
timed lab_build_cold $gc build experiments/lab_ladder.yaml --no-progress
for i in 1 2 3; do
  timed lab_build_cached_$i $gc build experiments/lab_ladder.yaml --no-progress
done
timed cupti_diag python3 experiments/studies/first-contact/cupti_start_diag.py
timed torch_import python3 -c "import torch"
python3 -X importtime -m gemmcompare build experiments/lab_ladder.yaml --no-progress 2>&1 >/dev/null \
  | grep "import time" | sort -t'|' -k2 -n | tail -15 >"$logs/importtime_cached_build.txt"
timed build_probe_diag python3 experiments/studies/first-contact/build_probe_diag.py experiments/lab_ladder.yaml
fi

for i in 1 2 3; do
  echo "--- quickstart run $i"
  grep -E "^run |PASS|FAIL|CRASH|TIMEOUT|phases:|measured|report" "$logs/quickstart_run_$i.log" | tail -n 20
done
echo "--- the cached build's costliest imports (us: self | cumulative)"
cat "$logs/importtime_cached_build.txt"
[ -f "$logs/build_probe_diag.log" ] && { echo "--- the cached build's probe and profile"; head -n 45 "$logs/build_probe_diag.log"; }
echo "--- CUPTI's first start, by order (s)"
tail -n 30 "$logs/cupti_diag.log"

# each run's receipt: its phases (seconds), worker start-up steps and the groups' phases
python3 - "$work/runs" >"$logs/phases.txt" <<'PY'
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
cat "$logs/phases.txt"

{
  echo
  echo "| step | wall s | goal |"
  echo "|---|---:|---|"
  echo "| compileall gemmcompare | ${wall[compileall]} | |"
  echo "| quickstart build, cold | ${wall[quickstart_build_cold]} | |"
  echo "| quickstart run 1, warm cache | ${wall[quickstart_run_1]} | <= 12 |"
  echo "| quickstart run 2, warm cache | ${wall[quickstart_run_2]} | <= 12 |"
  echo "| quickstart run 3, warm cache | ${wall[quickstart_run_3]} | <= 12 |"
  if [ "${QUICK:-0}" != 1 ]; then
  echo "| lab_ladder build, cold | ${wall[lab_build_cold]} | |"
  echo "| lab_ladder build, cached (3 tries) | ${wall[lab_build_cached_1]} ${wall[lab_build_cached_2]} ${wall[lab_build_cached_3]} | <= 1 |"
  echo "| python3 -c 'import torch' | ${wall[torch_import]} | (reference) |"
  fi
  echo "| pytest -m gpu (first answer, counter RNG) | ${wall[gpu_tests]} | $(tail -n 1 "$logs/gpu_tests.log") |"
  for i in 1 2 3; do
    line=$(grep -h "phases:" "$logs/quickstart_run_$i.log" | head -1 | sed 's/^ *//')
    echo "run $i: ${line:-phases: n/a (no phase line at this commit)}"
  done
} | tee "$out/summary.txt"
cp "$out/summary.txt" "$out/machine.txt" "$logs/"
pack
rm -rf "$work"
