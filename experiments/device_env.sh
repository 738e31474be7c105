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
