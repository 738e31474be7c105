#!/usr/bin/env bash
# The measuring worker's start-up timeline (issue 27), in the least device time: the quickstart built cold, then
# run on the warm cache until LIMIT_S (default 100 s) is spent; each run's phase line and the worker's timeline
# (each start-up step's end, in seconds from its spawn) printed. OUT/timeline.txt keeps the same.
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/first-contact/first_answer_timeline_on_device.sh
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
export GEMMCOMPARE_CACHE_DIR=$W-cache  # empty (a cold build), outside W (not packed)
rm -rf "$GEMMCOMPARE_CACHE_DIR"
: >"$OUT/timeline.txt"
python3 -m gemmcompare build experiments/quickstart.yaml --no-progress >"$W/build.log" 2>&1
started=$(date +%s)
while [ $(( $(date +%s) - started )) -lt "${LIMIT_S:-100}" ]; do
  t0=$(date +%s.%N)
  python3 -m gemmcompare run experiments/quickstart.yaml --store "$W/g.db" --runs-dir "$W/runs" --no-progress >"$W/run.log" 2>&1
  echo "run: exit $?, $(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')") s wall" >>"$OUT/timeline.txt"
  grep -h "phases:" "$W/run.log" | head -1 >>"$OUT/timeline.txt"
  python3 - "$W/runs" >>"$OUT/timeline.txt" <<'PY'
import json, sys
from pathlib import Path
last = sorted(Path(sys.argv[1]).iterdir())[-1]
for gpu in json.loads((last / "receipt.json").read_text()).get("gpus", []):
    timeline = (gpu.get("worker_startup_s") or {}).get("timeline_s") or {}
    print("  timeline:", json.dumps({k: round(v, 3) for k, v in sorted(timeline.items(), key=lambda kv: kv[1])}))
PY
done
cat "$OUT/timeline.txt"
