#!/usr/bin/env bash
# Issue 27's storage and profile checks on a GPU machine, from the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/first-contact/storage_and_profile_on_device.sh
# 1. builds experiments/studies/first-contact/storage_check.yaml (every build done before anything is timed), then runs it:
#    every Hopper step and a Python callable under tight and aligned FP16/BF16 contracts at K = 1, 33, 1025;
# 2. `gemmcompare profile` of cuBLAS 256^3-2048^3 under a warm and a flushed L2 policy (harness / ncu).
# $OUT/storage_and_profile_on_device.tgz holds the run (store, run folder, report), $OUT/profile_{warm,flush}.json
# the profiles, $OUT/*.log each step's output.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
step build 300 python3 -m gemmcompare build experiments/studies/first-contact/storage_check.yaml --no-progress
step storage_check 240 python3 -m gemmcompare run experiments/studies/first-contact/storage_check.yaml \
  --store "$W/gemmcompare.db" --runs-dir "$W/runs" --no-progress
for policy in warm flush; do
  step "profile_$policy" 240 python3 -m gemmcompare profile "experiments/studies/timing/profile_l2/cublas.yaml" --l2 "$policy" \
    --launches 10 --json "$OUT/profile_$policy.json"
done
python3 - "$W/gemmcompare.db" <<'PY'
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
for policy in warm flush; do echo "== profile $policy"; grep -v "^profile:" "$OUT/profile_$policy.log" | tail -6; done
