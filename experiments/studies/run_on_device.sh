#!/usr/bin/env bash
# The one way a study runs on a GPU machine. From the repository root of a copy of the tree (the device machine's
# copy has no .git, so name the commit it is):
#
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/run_on_device.sh STUDY_SCRIPT [ARGS...]
#   OUT=/path GEMMCOMPARE_GIT_COMMIT=<commit> bash experiments/studies/run_on_device.sh SPEC.yaml [SPEC.yaml ...]
#
# e.g. `... run_on_device.sh experiments/studies/llm-shapes/llm_shapes_on_device.sh`, or plain runs of specs
# (`gemmcompare run SPEC` each, plus any options in GC_ARGS, e.g. GC_ARGS='--l2 evict'). A study script run by
# itself (`bash experiments/studies/<study>/<script>.sh`) comes back here first, so both forms are the same.
#
# What every study shares, done here once:
#   - the wheels carried in .whl/ (nvidia-cutlass, and what a study needs beyond the device's image) installed into
#     .pydeps/, this checkout first on PYTHONPATH, unbuffered Python, MAX_JOBS=16, one build cache
#     (GEMMCOMPARE_CACHE_DIR, default /tmp/gemmcompare-cache: a call that finds the machine still warm reuses it);
#   - W, a fresh work folder (/tmp/study/<script name>), and OUT, the folder that comes back;
#   - END, the call's deadline in epoch seconds (BUDGET_S, default 560 s: a device call's 10 minutes less the
#     machine's start and the transfers), for `step`;
#   - $OUT/steps.txt opened with the commit, the date, the command and the GPU's state (nvidia-smi);
#   - on exit, also when the call is cut short (SIGTERM/SIGINT), everything in W packed into $OUT/<name>.tgz.
# Helpers for the study script: `step NAME LIMIT CMD...` (CMD under min(LIMIT, seconds left), SIGINT first so a
# cut run keeps its rows, its output in $OUT/NAME.log, a line in steps.txt), `note TEXT` (a line in steps.txt and
# on the screen), `left` (seconds until END), `gc` (python3 -m gemmcompare).
set -u
if [ $# -lt 1 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
STUDY_RUNNER=1  # not exported: a study script that starts another goes through here again
OUT=${OUT:?set OUT to the folder that comes back}
STUDY_NAME=$(basename "$1"); STUDY_NAME=${STUDY_NAME%.sh}; STUDY_NAME=${STUDY_NAME%.yaml}
W=/tmp/study/$STUDY_NAME
rm -rf "$W"; mkdir -p "$W" "$OUT"
END=$(( $(date +%s) + ${BUDGET_S:-560} ))

if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  timeout 120 python3 -m pip install -q --no-index --no-deps --target .pydeps .whl/*.whl >"$W/pip.log" 2>&1 \
    || { echo "installing .whl/ failed:"; tail -n 5 "$W/pip.log"; }
  export PYTHONPATH=$PWD/.pydeps:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16} GEMMCOMPARE_CACHE_DIR=${GEMMCOMPARE_CACHE_DIR:-/tmp/gemmcompare-cache}
# the bytecode a pip install would write (the device sets PYTHONDONTWRITEBYTECODE): start-up times stay honest
python3 -m compileall -q gemmcompare >/dev/null 2>&1

# .kcache, when the call carries it: kernel TU objects compiled on a machine without a GPU (build/kernel_objects.py),
# packed (25 MB of objects are under 1 MB of xz):
#   GEMMCOMPARE_CACHE_DIR=/tmp/kc gemmcompare build SPEC --arch sm_90a --objects-only
#   mkdir -p .kcache && tar -C /tmp/kc -cJf .kcache/objects.tar.xz objects      # then carry [".whl", ".kcache"]
# (or .kcache/objects as a folder). Every build here, whatever cache a study script picks, links those objects
# instead of compiling the TUs and compiles its torch binding alone; a TU whose object is missing or stale (another
# nvcc build, a changed source) is compiled as before.
if [ -f .kcache/objects.tar.xz ]; then
  mkdir -p /tmp/kcache && tar -C /tmp/kcache -xJf .kcache/objects.tar.xz && export GEMMCOMPARE_OBJECTS=/tmp/kcache/objects
elif [ -d .kcache/objects ]; then
  export GEMMCOMPARE_OBJECTS=$PWD/.kcache/objects
fi

gc() { python3 -m gemmcompare "$@"; }
# PICKS: picks.sqlite files of earlier calls (carried in the git-ignored .picks/, or a receipt's picks.sqlite.xz;
# space-separated), merged into this call's pick cache ($GEMMCOMPARE_CACHE_DIR: a study script that picks its own
# cache calls seed_picks after), so that a tuned row whose key matches (GPU model, driver, problem, contract, L2
# policy and every candidate's build: tuning/cache.py) reuses its pick instead of racing again, and says so
# (`cached`). A changed kernel has another build hash: its rows race again.
seed_picks() {
  local f
  for f in ${PICKS:-}; do
    python3 -c 'import sys; from gemmcompare.tuning.cache import PickCache
print(f"PICKS: {PickCache(sys.argv[1]).merge(sys.argv[2])} picks merged from {sys.argv[2]}")' \
      "$GEMMCOMPARE_CACHE_DIR" "$f" 2>&1 | tail -n 1 | tee -a "$OUT/steps.txt"
  done
}
left() { echo $(( END - $(date +%s) )); }
note() { echo "$*" | tee -a "$OUT/steps.txt"; }
step() {
  local name=$1 limit=$2; shift 2
  local l; l=$(left); [ "$limit" -gt "$l" ] && limit=$l
  if [ "$limit" -lt 20 ]; then note "$name: not run (${l} s left)"; return 0; fi
  local t0 rc; t0=$(date +%s.%N)
  timeout -s INT -k 15 "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  note "$name: exit $rc in $(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')") s (limit $limit s): $*"
  return 0
}
pack() {
  trap - EXIT TERM INT
  tar czf "$OUT/$STUDY_NAME.tgz.tmp" -C "$W" . 2>/dev/null && mv "$OUT/$STUDY_NAME.tgz.tmp" "$OUT/$STUDY_NAME.tgz"
}
trap pack EXIT
trap 'pack; exit 143' TERM INT

{
  echo "commit ${GEMMCOMPARE_GIT_COMMIT:-unknown}  $(date -u +%FT%TZ)  $*"
  nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1
  [ -z "${GEMMCOMPARE_OBJECTS:-}" ] || echo "objects: $(ls "$GEMMCOMPARE_OBJECTS" | wc -l) kernel TU objects carried in .kcache"
} >"$OUT/steps.txt"
[ -n "${GEMMCOMPARE_GIT_COMMIT:-}" ] || echo "warning: GEMMCOMPARE_GIT_COMMIT is not set: the receipts will not name the commit" >&2

case $1 in
  *.yaml)
    seed_picks
    for spec in "$@"; do
      name=$(basename "$spec" .yaml)
      # shellcheck disable=SC2086  # GC_ARGS is a list of options
      step "$name" "$(left)" python3 -m gemmcompare run "$spec" --store "$W/gemmcompare.db" --runs-dir "$W/runs" \
        --no-progress ${GC_ARGS:-}
      grep -v "^  *[a-z_.]*: " "$OUT/$name.log" | tail -n 40
    done
    ;;
  *)
    script=$1; shift
    # shellcheck disable=SC1090
    source "$script" "$@"
    ;;
esac
