#!/usr/bin/env bash
# Runs specs on a GPU machine and packs what they produced: the way every receipt under
# experiments/studies was made. Usage, from the repository root:
#   bash experiments/studies/run_on_device.sh OUT_DIR SPEC [SPEC ...]
# Each spec's run goes to OUT_DIR/gemmcompare.db and OUT_DIR/runs/<run_id>/ (with its report);
# OUT_DIR/results.tgz holds them all. If a .whl/ folder is present (wheels carried to a machine that
# cannot download), they are installed into .pydeps/ first.
set -u
out=$1
shift
mkdir -p "$out"
source experiments/studies/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
for spec in "$@"; do
  name=$(basename "$spec" .yaml)
  echo "=== $spec"
  python3 -m gemmcompare run "$spec" --store "$out/gemmcompare.db" --runs-dir "$out/runs" --no-progress \
    >"$out/$name.log" 2>&1
  echo "exit $?"
  grep -v "^  *[a-z_.]*: " "$out/$name.log" | tail -n 60
done
tar czf "$out/results.tgz" -C "$out" runs gemmcompare.db $(cd "$out" && ls *.log)
