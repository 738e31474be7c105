#!/usr/bin/env bash
# Issue 25's study on an H200, in one device call of about 9 minutes:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/llm-shapes/llm_shapes_on_device.sh
# 1. `gemmcompare build experiments/llm_shapes.yaml`, cold: every candidate of every tuned row (timed).
# 2. `gemmcompare run experiments/llm_shapes.yaml`: each tuned row races its candidates per problem and is then
#    measured afresh; its receipt's phases_s has the tuning seconds (`tuning_s`).
# 3. The same run again on the warm pick cache: no tuning seconds; the rows should land within 3 points.
# Each step has a time limit, so that a slow step still leaves the call time to pack what it did. The three share
# the runner's BUDGET_S (560 s; TOTAL_S, its old name here, still sets it): the build gets BUILD_LIMIT_S (200),
# run 1 what is left but RUN2_MIN_S (100), run 2 the rest, so time a step does not use goes to the next. Estimated from the partial receipt and compile times measured on
# CPU (experiments/studies/llm-shapes/h200/partial-4e01d11/picks.md, "Build cost"): cold build about 180 s, run 1
# (every race fresh) about 290 s, run 2 (every pick reused) about 145 s: about 55 s more than the call holds, so
# run 2 is expected to rerun about two thirds of the problems. Each limit can be set as before (RUN1_LIMIT_S...).
# Comes back: OUT/llm_shapes_on_device.tgz (both runs' folders with receipts and reports, the store, logs) and
# OUT/summary.txt (printed last): per implementation and run, % of cuBLAS (geometric mean, prefill and decode
# minimum), and each decode row's HBM bandwidth.
# The whole study does not fit one call (experiments/studies/llm-shapes/h200/study-1c2b5a0: run 1 reached 45 of
# the 48 problems in 301 s, run 2 39 in 100 s). SHARD=0/3, then 1/3 and 2/3 in the calls after it, runs a third
# of the plan (whole problems, balanced by `gemmcompare run --shard`) in each: both runs of a third fit one call
# with the spec's tighter timing (50-300 samples a row), and `gemmcompare merge` joins the thirds' runs into one. Made
# back to back (the next call within the ~30 s the machine stays warm), the later calls find the builds in
# LLM_CACHE_DIR and skip the cold build.
# The pick cache comes back too (OUT/picks.sqlite, and in the tarball): PICKS_FROM=<a picks.sqlite>
# seeds a call's cache with it (a committed file travels with the checkout), and RUNS=2 then runs only the
# rerun on it (RUNS=1: only the fresh run; default both), for a rerun in a later call on the same GPU model and
# driver (the cache's key; a pick whose key differs is raced again, and its row says so). EXTRA_SHAPES (the run's
# --shapes, e.g. a problem an earlier call did not reach) runs those problems last, in a run folder of their own
# (extra_runs/; not a shard: `gemmcompare merge` does not join it), with the time that is left.
# A variant of the study in one call: L2=evict (or rotate, warm) runs the spec with that `timing.l2` instead of
# flush (`gemmcompare build|run --l2 $L2`; the pick cache keys picks by policy), ONLY=<regex> builds and runs only the
# implementations it matches (`--only`), SHAPES=<MxNxK,...> only those problems (`--shapes`); e.g. the decode
# problems evicted, the goal's rows only:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> L2=evict RUNS=1 ONLY='cublas|cutlass|decode|gemv|split_k' \
#     SHAPES=1x4096x4096,... bash experiments/studies/llm-shapes/llm_shapes_on_device.sh
# ENERGY=1 adds each timed row's energy per GEMM (`gemmcompare run --energy`: 5-20 s a row on the H200, so
# narrow it with ONLY/SHAPES; issue 42's energy columns). A SHARD alone is not narrow enough: SHARD=0/3 with
# ENERGY=1 finished no problem of its 16 in 274 s at f0b7480 (its first is the decode problem 1x6144x4096).
# Prefill problems and a few rows, e.g. SHAPES=2048x4096x4096,8192x4096x4096 ONLY='cublas|cutlass|hopper\.best'.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
[ -n "${TOTAL_S:-}" ] && END=$(( $(date +%s) + TOTAL_S ))  # TOTAL_S: this script's old name for BUDGET_S
SPEC=experiments/llm_shapes.yaml
select_args=(${ONLY:+--only "$ONLY"} ${SHAPES:+--shapes "$SHAPES"} ${L2:+--l2 "$L2"})
# The build cache lives outside $W, so that a call that finds the machine still warm from the one before (the
# device tool keeps it about 30 s) reuses its builds instead of spending ~200 s on them again. The pick cache
# beside it starts empty in every call (run 1 races afresh) unless PICKS_FROM seeds it.
export GEMMCOMPARE_CACHE_DIR=${LLM_CACHE_DIR:-/tmp/llm-shapes-cache}
mkdir -p "$GEMMCOMPARE_CACHE_DIR"; rm -f "$GEMMCOMPARE_CACHE_DIR/picks.sqlite"
run_args=(--store "$W/g.db" --runs-dir "$W/runs" --no-progress ${SHARD:+--shard "$SHARD"} ${ENERGY:+--energy})
save_picks() {  # the pick cache into W (packed) and OUT
  cp "$GEMMCOMPARE_CACHE_DIR/picks.sqlite" "$W/" 2>/dev/null
  cp "$W/picks.sqlite" "$OUT/" 2>/dev/null
}
# the runner's packing on exit, the pick cache saved first (also when the call is cut short)
trap 'save_picks; pack' EXIT
trap 'save_picks; pack; exit 143' TERM INT
if [ -n "${PICKS_FROM:-}" ]; then cp "$PICKS_FROM" "$GEMMCOMPARE_CACHE_DIR/picks.sqlite"; fi
left_but() { echo $(( $(left) - $1 )); }  # seconds of the budget left, less a reserve
t0=$(date +%s); timeout --kill-after=10 ${BUILD_LIMIT_S:-200} python3 -m gemmcompare build "$SPEC" \
  "${select_args[@]}" --no-progress >"$W/build.log" 2>&1
note "build exit $? in $(( $(date +%s) - t0 )) s"
for i in ${RUNS:-1 2}; do
  limit=$([ "$i" = 1 ] && echo "${RUN1_LIMIT_S:-$(left_but "${RUN2_MIN_S:-100}")}" || echo "${RUN2_LIMIT_S:-$(left_but 0)}")
  [ "$limit" -ge 10 ] || limit=10
  t0=$(date +%s); timeout -s INT --kill-after=15 "$limit" python3 -m gemmcompare run "$SPEC" \
    "${run_args[@]}" "${select_args[@]}" >"$W/run_$i.log" 2>&1
  note "run $i exit $? in $(( $(date +%s) - t0 )) s (limit $limit s)"
done
if [ -n "${EXTRA_SHAPES:-}" ] && [ "$(left_but 0)" -ge 20 ]; then
  limit=$(left_but 0); t0=$(date +%s)
  timeout -s INT --kill-after=15 "$limit" python3 -m gemmcompare run "$SPEC" --shapes "$EXTRA_SHAPES" ${L2:+--l2 "$L2"} \
    --store "$W/extra.db" --runs-dir "$W/extra_runs" --no-progress >"$W/run_extra.log" 2>&1
  note "run extra ($EXTRA_SHAPES) exit $? in $(( $(date +%s) - t0 )) s (limit $limit s)"
fi
save_picks
python3 - "$W" <<'PY' | tee "$OUT/summary.txt"
import glob, json, math, sys
import pandas as pd
for folder in sorted(glob.glob(f"{sys.argv[1]}/runs/*/")) + sorted(glob.glob(f"{sys.argv[1]}/extra_runs/*/")):
    df = pd.read_csv(folder + "results.csv")
    receipt = json.load(open(folder + "receipt.json"))
    phases = receipt.get("phases_s") or {}
    ok = df[df.status == "PASS"]
    print(f"== {folder.split('/')[-2]}: {len(df)} rows, {len(ok)} PASS, "
          f"{(df.status == 'FAIL').sum()} FAIL; tuning {phases.get('tuning_s', 0):.1f} s, total {phases.get('total_s', 0):.1f} s")
    for impl, g in ok.groupby("implementation"):
        pct = g.set_index(["m", "n", "k"]).pct_of_baseline.dropna()
        if pct.empty:
            continue
        pre, dec = pct[pct.index.get_level_values(0) >= 2048], pct[pct.index.get_level_values(0) < 2048]
        geo = math.exp(sum(math.log(v) for v in pct if v > 0) / len(pct))
        print(f"  {impl[:60]:<60} geomean {geo:6.1f}%  prefill min {pre.min() if len(pre) else float('nan'):6.1f}%"
              f"  decode min {dec.min() if len(dec) else float('nan'):6.1f}%  ({len(pct)} problems)")
    dec = ok[ok.m < 2048].copy()
    dec["gb_s"] = dec.unique_bytes / (dec.median_ms * 1e-3) / 1e9
    best = dec.sort_values("median_ms").groupby(["m", "n", "k"]).head(1)
    print("  fastest row per decode problem (HBM GB/s = unique bytes / median):")
    for _, r in best.sort_values(["m", "n", "k"]).iterrows():
        base = dec[(dec.m == r.m) & (dec.n == r.n) & (dec.k == r.k) & (dec.implementation == "library.cublas")]
        cb = base.gb_s.iloc[0] if len(base) else float("nan")
        print(f"    {r.m:>4}x{r.n}x{r.k:<6} {r.implementation[:44]:<44} {r.median_ms * 1e3:8.2f} us "
              f"{r.pct_of_baseline:6.1f}%  {r.gb_s:6.0f} GB/s (cuBLAS {cb:6.0f})")
PY
