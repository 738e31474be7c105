#!/usr/bin/env bash
# Issue 41's MoE study on an H100 or H200, one or more parts per device call:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> SHARD=0/4 bash experiments/studies/moe-shapes/moe_shapes_on_device.sh
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> SHARD="0/8 5/8 6/8 7/8" bash .../moe_shapes_on_device.sh
# (on the H200 at f0b7480 a BF16 part of 8 took 42 s to build cold, then 59-160 s to run; on the H100 at 92f7279
# 79 s cold, then 50-143 s a part, all 8 in about 760 s, of which the races took 310 s)
# PICKS=.picks/<file>.sqlite (carry [".whl", ".picks"]) seeds the pick cache with an earlier call's picks
# (run_on_device.sh's seed_picks): an unchanged candidate set on the same GPU model and driver reuses its pick, a
# changed kernel races again. The call's cache comes back as picks.sqlite in the tgz.
# SPEC: experiments/moe_shapes.yaml (BF16, the default) or experiments/studies/moe-shapes/moe_shapes_fp8.yaml (FP8
# blockwise). SHARD=i/N runs part i of N of the plan (whole problems: `gemmcompare run --shard`); `gemmcompare merge`
# joins the parts' run folders. Made back to back, a call finds the builds of the one before in MOE_CACHE_DIR (the
# machine stays warm about 30 s) and skips the cold build (every CUTLASS grouped candidate and hopper.grouped tile).
# ONLY=<regex> and SHAPES=... narrow it (`--only`, `--shapes`). The build gets BUILD_LIMIT_S (240 s), the run the
# rest of the runner's BUDGET_S. Comes back: OUT/moe_shapes_on_device.tgz (run folders with receipts, logs) and
# OUT/table.md (experiments/studies/moe-shapes/moe_shapes_table.py on this call's run, printed last).
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
SPEC=${SPEC:-experiments/moe_shapes.yaml}
select_args=(${ONLY:+--only "$ONLY"} ${SHAPES:+--shapes "$SHAPES"})
export GEMMCOMPARE_CACHE_DIR=${MOE_CACHE_DIR:-/tmp/moe-shapes-cache}
mkdir -p "$GEMMCOMPARE_CACHE_DIR"
seed_picks  # PICKS= (run_on_device.sh), into this cache
step build "${BUILD_LIMIT_S:-240}" python3 -m gemmcompare build "$SPEC" "${select_args[@]}" --no-progress
# SHARD may name several parts, run one after another in this call ("0/8 5/8 6/8"), each a run folder of its own
# (run.log for one part; run_0of8.log, ... for several), so that a warm machine's call is not spent on one part
parts=(${SHARD:-})
for part in "${parts[@]:-}"; do
  name=run; [ ${#parts[@]} -gt 1 ] && name="run_${part/\//of}"
  step "$name" "$(left)" python3 -m gemmcompare run "$SPEC" --store "$W/g.db" --runs-dir "$W/runs" --no-progress \
    --no-report ${part:+--shard "$part"} "${select_args[@]}"
done
cp "$GEMMCOMPARE_CACHE_DIR/picks.sqlite" "$W/" 2>/dev/null
python3 experiments/studies/moe-shapes/moe_shapes_table.py "$W"/runs/* | tee "$OUT/table.md"
