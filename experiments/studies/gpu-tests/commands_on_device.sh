#!/usr/bin/env bash
# The long commands on a GPU machine as a user meets them (issue 40): their first line and each step's line,
# and that what they measure still agrees. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/gpu-tests/commands_on_device.sh
# Logs: $OUT/<step>.log, each line stamped with the seconds since its command started ($OUT/stamp.py).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
cat >"$W/stamp.py" <<'PY'
import subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
for line in p.stdout:
    sys.stdout.write(f"{time.monotonic() - t0:7.2f} {line}")
sys.exit(p.wait())
PY
GC="python3 $W/stamp.py python3 -m gemmcompare"  # a command, not a function: step runs it under timeout
Q=experiments/quickstart.yaml L=experiments/lab_ladder.yaml
step run 200 $GC run $Q --no-progress --store "$W/g.db" --runs-dir "$W/runs"
step profile_flush 150 $GC profile $L --shapes 1024x1024x1024,4096x4096x4096 --only 'cublas|mma_sync|register_2d' --no-progress --json "$W/profile_flush.json"
step sanitize 150 $GC sanitize $L --only 'shared_16x16|mma_sync' --tools memcheck --no-progress --store "$W/s.db" --runs-dir "$W/sruns"
step report 60 $GC report latest --store "$W/g.db" --out "$W/report" --no-progress
step profile_warm 100 $GC profile $L --shapes 1024x1024x1024 --only 'cublas|mma_sync|register_2d' --l2 warm --no-progress --json "$W/profile_warm.json"
for s in run profile_flush sanitize report profile_warm; do
  [ -f "$OUT/$s.log" ] && { echo "== $s: first line, last lines"; head -n 1 "$OUT/$s.log"; tail -n 4 "$OUT/$s.log"; }
done
