#!/usr/bin/env bash
# The device half of `gemmcompare bisect` (issue 28), about 4-5 minutes on the lent H200. From the repository root:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/regressions/bisect_on_device.sh
# 1. experiments/studies/regressions/bisect_demo/make_history.py makes a scratch repository of a user's kernel (tiled_gemm.cu, a
#    shared-memory tiled GEMM, ~1 ms at 2048^3) and its spec, with two histories of 8 commits from the tag
#    `good`: `regressed`, whose 6th commit (tag `culprit`) makes the kernel ~15% slower, and `steady`;
# 2. `gemmcompare bisect` on each: `regressed` must name the culprit measuring at most 3 commits between the
#    two ends; `steady` must report no regression (exit 0) after measuring the two ends.
# Each new kernel source is one build (~25 s, the generated torch binding's share); a commit that changes
# only the README or the spec is a cache hit, and so is `good` in the second bisect (one repository, one
# scratch worktree path). Writes to $OUT: setup.txt (the history, git), regressed.log, steady.log,
# regressed_bisect.md/.json, steady_bisect.md/.json, bisect_on_device.tgz (the scratch repository and every
# step's run folder, log and the store); prints the check last.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
setup="$OUT/setup.txt"
if ! command -v git >/dev/null; then
  echo "git is not installed on this machine: bisect checks commits out with it" | tee "$setup"
  exit 1
fi
git --version > "$setup"
python3 experiments/studies/regressions/bisect_demo/make_history.py "$W/repo" >> "$setup" || exit 1
git -C "$W/repo" log --oneline --graph --all >> "$setup"
spec="$W/repo/kernel/bisect_demo.yaml"

t0=$(date +%s)
timeout 420 python3 -m gemmcompare bisect "$spec" --good good --bad regressed --out "$W/regressed" \
  > "$OUT/regressed.log" 2>&1
echo "exit $?  ($(( $(date +%s) - t0 )) s)" >> "$OUT/regressed.log"
t1=$(date +%s)
timeout 170 python3 -m gemmcompare bisect "$spec" --good good --bad steady --out "$W/steady" \
  > "$OUT/steady.log" 2>&1
echo "exit $?  ($(( $(date +%s) - t1 )) s)" >> "$OUT/steady.log"

for h in regressed steady; do
  for f in bisect.md bisect.json; do
    [ -f "$W/$h/$f" ] && cp "$W/$h/$f" "$OUT/${h}_$f"
  done
done

echo "== regressed (gemmcompare bisect SPEC --good good --bad regressed)"
grep -E "^step |first bad|could be|nothing to bisect|commits measured|^exit" "$OUT/regressed.log"
echo "== steady (gemmcompare bisect SPEC --good good --bad steady)"
grep -E "^step |first bad|could be|nothing to bisect|commits measured|^exit" "$OUT/steady.log"
python3 - "$OUT" "$(git -C "$W/repo" rev-parse culprit)" <<'PY'
import json, sys
from pathlib import Path

out, culprit = Path(sys.argv[1]), sys.argv[2]
checks = []
try:
    r = json.loads((out / "regressed_bisect.json").read_text())
    middle = sum(1 for s in r["steps"] if s["role"] == "middle")
    checks.append(((r["first_bad"] or {}).get("sha") == culprit and middle <= 3 and r["exit_code"] == 1,
                   f"regressed: first bad {(r['first_bad'] or {}).get('sha', 'none')[:10]} (culprit {culprit[:10]}), "
                   f"{middle} commits measured between the ends (at most 3), exit {r['exit_code']}"))
except (OSError, ValueError, KeyError) as exc:
    checks.append((False, f"regressed: no result ({exc})"))
try:
    s = json.loads((out / "steady_bisect.json").read_text())
    checks.append((s["status"] == "none" and s["exit_code"] == 0 and len(s["steps"]) == 2,
                   f"steady: {s['status']}, {len(s['steps'])} commits measured, exit {s['exit_code']}"))
except (OSError, ValueError, KeyError) as exc:
    checks.append((False, f"steady: no result ({exc})"))
for ok, text in checks:
    print(("PASS " if ok else "FAIL ") + text)
PY
