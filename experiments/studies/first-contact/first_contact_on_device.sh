#!/usr/bin/env bash
# One device call for experiments/first_contact.yaml: cuBLAS and a CUTLASS SM90 configuration that names
# no dtype (so a BF16 kernel under bf16_bf16out_f32acc_tn and an FP16 one under f16_f32acc_tn_aligned)
# at m = n = 256, K in {1, 33, 1025}. From the repository root on an sm_90a machine:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/first-contact/first_contact_on_device.sh
# Prints the plan (0 SKIP expected), the run's rows, and last a verdict line: "first-contact: N rows,
# N PASS" and exit 0 when every row PASSes, else the rows that did not and exit 1.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
gc validate -v experiments/first_contact.yaml | tee "$OUT/validate.txt"
# two SM90 kernel TUs (~2 min each on one core; in parallel here), the entries and cuBLAS's binding
step build 420 python3 -m gemmcompare build experiments/first_contact.yaml --no-progress
step run 150 python3 -m gemmcompare run experiments/first_contact.yaml --store "$W/gemmcompare.db" --runs-dir "$W/runs" \
  --no-progress --no-report
grep -E "^run |^  " "$OUT/run.log" | cut -c1-200
python3 - "$W/gemmcompare.db" <<'PY'
import sys
import gemmcompare
rows, _ = gemmcompare.load(sys.argv[1])
bad = rows[rows["status"] != "PASS"]
print(f"first-contact: {len(rows)} rows, {int((rows['status'] == 'PASS').sum())} PASS")
for _, r in bad.iterrows():
    print(f"  NOT PASS {r['problem']} {r['contract']} {r['implementation']}: {r['status']} {r['reason']}")
sys.exit(1 if len(bad) or not len(rows) else 0)
PY
