#!/usr/bin/env bash
# Issue 43's CuTe Hopper row and mma_sync, in one device call:
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/cutlass-sm90/cute_mma_sync_on_device.sh
# 1. `gemmcompare run cute_sm90_mma_sync_probe.yaml` (RUN_LIMIT_S, default 380 s: the cold build of 8 CuTe TUs,
#    the CUTLASS and mma_sync extensions, then 36 rows); the table in OUT/run.log.
# 2. `gemmcompare profile --stalls-only` of mma_sync and cuBLAS at 4096^3 BF16 (PROFILE_LIMIT_S, default 150 s):
#    what limits mma_sync (ncu's issue, pipe and stall sections), in OUT/stalls.log.
[ -n "${STUDY_RUNNER:-}" ] || exec bash experiments/studies/run_on_device.sh "$0" "$@"
SPEC=experiments/studies/cutlass-sm90/cute_sm90_mma_sync_probe.yaml
step run "${RUN_LIMIT_S:-380}" python3 -m gemmcompare run "$SPEC" --store "$W/g.db" --runs-dir "$W/runs" --no-progress
step stalls "${PROFILE_LIMIT_S:-150}" python3 -m gemmcompare profile "$SPEC" --shapes 4096x4096x4096 \
  --only '^(library\.cublas|mma_sync)' --stalls-only --no-progress --json "$W/stalls.json"
tail -n 30 "$OUT/stalls.log" | cut -c1-170
tail -n 45 "$OUT/run.log" | cut -c1-170
