#!/usr/bin/env bash
# Issue 27's storage and profile checks on a GPU machine, from the repository root:
#   OUT=... GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/first-contact/storage_and_profile_on_device.sh
# 1. builds experiments/studies/first-contact/storage_check.yaml (every build done before anything is timed), then runs it:
#    every Hopper step and a Python callable under tight and aligned FP16/BF16 contracts at K = 1, 33, 1025;
# 2. `gemmcompare profile` of cuBLAS 256^3-2048^3 under a warm and a flushed L2 policy (harness / ncu).
# $OUT/storage.tgz holds the run (store, run folder, report) and $OUT/profile_{warm,flush}.json the profiles.
set -u
out=${OUT:-/tmp/storage-check}
mkdir -p "$out/work"
PIP_LOG="$out/pip.log" source experiments/studies/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
python3 -m gemmcompare build experiments/studies/first-contact/storage_check.yaml --no-progress >"$out/work/build.log" 2>&1
echo "build exit $? in $(( $(date +%s) - t0 )) s"
python3 -m gemmcompare run experiments/studies/first-contact/storage_check.yaml --store "$out/work/gemmcompare.db" \
  --runs-dir "$out/work/runs" --no-progress >"$out/work/storage_check.log" 2>&1
echo "run exit $? at $(( $(date +%s) - t0 )) s"
for policy in warm flush; do
  timeout 240 python3 -m gemmcompare profile "experiments/studies/timing/profile_l2/cublas_$policy.yaml" --launches 10 \
    --json "$out/profile_$policy.json" >"$out/work/profile_$policy.log" 2>&1
  echo "profile $policy exit $? at $(( $(date +%s) - t0 )) s"
done
tar czf "$out/storage.tgz" -C "$out/work" .
python3 - "$out/work/gemmcompare.db" <<'PY'
import collections, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select implementation, contract, status, count(*) from results group by 1, 2, 3").fetchall()
print("storage check (implementation, contract: statuses)")
for impl, contract, status, n in rows:
    print(f"  {impl[:40]:<40} {contract:<32} {status} x{n}")
bad = db.execute("select implementation, contract, problem, status, reason from results "
                 "where status not in ('PASS')").fetchall()
for r in bad:
    print("  not PASS:", r[:4], (r[4] or "")[:160])
PY
for policy in warm flush; do echo "== profile $policy"; grep -v "^profile:" "$out/work/profile_$policy.log" | tail -6; done
