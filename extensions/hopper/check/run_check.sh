#!/usr/bin/env bash
# Build and run the Hopper GEMM ladder device check (extensions/hopper/check/hopper_check.cu) on an
# sm_90a GPU (H100/H200). Usage, from anywhere:
#
#   extensions/hopper/check/run_check.sh [--quick] [--steps a,b] [--samples N]
#
# Uses the nvcc on PATH (or $NVCC); no -lcuda (the tensor-map encoder is fetched from the driver at run
# time) and no cuBLAS link (cuBLAS, for the reference column, is dlopen-ed: set GC_CUBLAS_LIB to its path
# if the search below does not find it). Builds in $BUILD_DIR (default /tmp/hopper_check), compiling the
# six instantiation TUs and the check program in parallel; fails on any ptxas "Potential Performance Loss"
# note. Copies the logs to $OUT when that is set. The table is printed last.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
NVCC="${NVCC:-nvcc}"
BUILD_DIR="${BUILD_DIR:-/tmp/hopper_check}"
mkdir -p "$BUILD_DIR"
flags=(-O3 -DNDEBUG -std=c++17 --expt-relaxed-constexpr -lineinfo -Xptxas=-v
       -gencode=arch=compute_90a,code=sm_90a -I"$root/extensions/include" -I"$root/extensions")

echo "== build ($("$NVCC" --version | grep -o 'release [0-9.]*'), $(nproc) cores) in $BUILD_DIR"
t0=$(date +%s)
pids=()
srcs=("$root"/extensions/hopper/instances/*.cu "$here/hopper_check.cu")
for src in "${srcs[@]}"; do
  name="$(basename "$src" .cu)"
  ( "$NVCC" "${flags[@]}" -c "$src" -o "$BUILD_DIR/$name.o" > "$BUILD_DIR/$name.log" 2>&1; echo $? > "$BUILD_DIR/$name.rc" ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
status=0
for src in "${srcs[@]}"; do
  name="$(basename "$src" .cu)"
  if [ "$(cat "$BUILD_DIR/$name.rc")" != 0 ]; then
    echo "BUILD FAILED: $name"; tail -40 "$BUILD_DIR/$name.log"; status=1
  fi
  if grep -q "Potential Performance Loss" "$BUILD_DIR/$name.log"; then
    echo "PTXAS PERFORMANCE NOTE in $name:"; grep "Potential Performance Loss" "$BUILD_DIR/$name.log" | sort -u; status=1
  fi
  if grep -Eq "[1-9][0-9]* bytes spill (stores|loads)" "$BUILD_DIR/$name.log"; then
    echo "SPILLS in $name:"; grep -B2 -E "[1-9][0-9]* bytes spill" "$BUILD_DIR/$name.log" | head -20
  fi
done
[ $status = 0 ] || exit $status
"$NVCC" -o "$BUILD_DIR/hopper_check" "$BUILD_DIR"/*.o -ldl || exit 1
echo "built in $(( $(date +%s) - t0 )) s"
grep -h "Used [0-9]* registers" "$BUILD_DIR"/hopper_*.log | sort | uniq -c | sed 's/^/  ptxas:/'

# cuBLAS for the reference column: the loader's path, the toolkit, or a Python wheel (torch's).
if [ -z "${GC_CUBLAS_LIB:-}" ]; then
  for cand in $(ldconfig -p 2>/dev/null | awk '/libcublas\.so/{print $NF}') \
              "$(dirname "$(command -v "$NVCC")")"/../lib64/libcublas.so* /usr/local/cuda/lib64/libcublas.so*; do
    if [ -f "$cand" ]; then export GC_CUBLAS_LIB="$cand"; break; fi
  done
fi
if [ -z "${GC_CUBLAS_LIB:-}" ] && command -v python3 >/dev/null; then
  cand="$(python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
roots = [p for p in sys.path if os.path.isdir(p)]
for r in roots:
    hits = sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib", "libcublas.so*")) + glob.glob(os.path.join(r, "nvidia", "cublas", "lib", "libcublas.so*")))
    if hits:
        print(hits[-1]); break
PY
)"
  [ -n "$cand" ] && export GC_CUBLAS_LIB="$cand"
fi
echo "cuBLAS library: ${GC_CUBLAS_LIB:-none found}"
# libcublas needs its sibling libcublasLt; make that directory visible to the loader.
[ -n "${GC_CUBLAS_LIB:-}" ] && export LD_LIBRARY_PATH="$(dirname "$GC_CUBLAS_LIB")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

if [ -n "${OUT:-}" ]; then
  cp "$BUILD_DIR"/*.log "$OUT"/ 2>/dev/null || true
  "$BUILD_DIR/hopper_check" "$@" 2>&1 | tee "$OUT/hopper_check.txt"
  exit "${PIPESTATUS[0]}"
fi
exec "$BUILD_DIR/hopper_check" "$@"
