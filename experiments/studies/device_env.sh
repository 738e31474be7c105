# Sourced (from the repository root) by every experiments/*_on_device.sh: the wheels carried in .whl/
# (nvidia-cutlass, and what a script needs beyond the device's image) installed into .pydeps/, this
# checkout first on PYTHONPATH, unbuffered output, 16 build jobs, one build cache. PIP_LOG names the file
# for pip's output (default: standard error).
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  timeout 120 python3 -m pip install -q --no-index --no-deps --target .pydeps .whl/*.whl >"${PIP_LOG:-/dev/stderr}" 2>&1
  export PYTHONPATH=$PWD/.pydeps:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16} GEMMCOMPARE_CACHE_DIR=${GEMMCOMPARE_CACHE_DIR:-/tmp/gemmcompare-cache}

# step NAME LIMIT CMD...: CMD under min(LIMIT, the seconds left until $END), SIGINT first (a run cut short keeps
# its rows), its output in $OUT/NAME.log; its exit, wall seconds and limit appended to $OUT/steps.txt. A step with
# under 20 s left is not started. For scripts that fit several steps into one device call (END: a deadline in
# epoch seconds, set by the script).
step() {
  local name=$1 limit=$2; shift 2
  local l=$(( END - $(date +%s) )); [ "$limit" -gt "$l" ] && limit=$l
  if [ "$limit" -lt 20 ]; then echo "$name: not run (${l} s left)" | tee -a "$OUT/steps.txt"; return; fi
  local t0; t0=$(date +%s.%N)
  timeout -s INT -k 15 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')") s (limit $limit s): $*" | tee -a "$OUT/steps.txt"
}
