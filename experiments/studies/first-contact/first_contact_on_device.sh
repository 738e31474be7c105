#!/usr/bin/env bash
# One device call for experiments/first_contact.yaml: cuBLAS and a CUTLASS SM90 configuration that names
# no dtype (so a BF16 kernel under bf16_bf16out_f32acc_tn and an FP16 one under f16_f32acc_tn_aligned)
# at m = n = 256, K in {1, 33, 1025}. From the repository root on an sm_90a machine:
#   bash experiments/studies/first-contact/first_contact_on_device.sh OUT_DIR
# Prints the plan (0 SKIP expected), the run's rows, and last a verdict line: "first-contact: N rows,
# N PASS" and exit 0 when every row PASSes, else the rows that did not and exit 1.
set -u
out=$1
mkdir -p "$out/runs"
source experiments/studies/device_env.sh
gc="python3 -m gemmcompare"
$gc validate -v experiments/first_contact.yaml | tee "$out/validate.txt"
# two SM90 kernel TUs (~2 min each on one core; in parallel here), the entries and cuBLAS's binding
timeout 420 $gc build experiments/first_contact.yaml --no-progress > "$out/build.log" 2>&1
echo "build exit $?" | tee "$out/summary.txt"
timeout 150 $gc run experiments/first_contact.yaml --store "$out/gemmcompare.db" --runs-dir "$out/runs" --no-progress \
  --no-report > "$out/run.log" 2>&1
echo "run exit $?" | tee -a "$out/summary.txt"
grep -E "^run |^  " "$out/run.log" | cut -c1-200
python3 - "$out/gemmcompare.db" <<'PY'
import sys
import gemmcompare
rows, _ = gemmcompare.load(sys.argv[1])
bad = rows[rows["status"] != "PASS"]
print(f"first-contact: {len(rows)} rows, {int((rows['status'] == 'PASS').sum())} PASS")
for _, r in bad.iterrows():
    print(f"  NOT PASS {r['problem']} {r['contract']} {r['implementation']}: {r['status']} {r['reason']}")
sys.exit(1 if len(bad) or not len(rows) else 0)
PY
