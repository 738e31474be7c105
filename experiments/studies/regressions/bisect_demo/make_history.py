"""Make a scratch git repository with a user's kernel and its spec, for `gemmcompare bisect` to search.

    python experiments/studies/regressions/bisect_demo/make_history.py DIR

DIR (new, or empty) becomes a repository with two histories of `kernel/tiled_gemm.cu` (a shared-memory
tiled GEMM, FP16 in, FP32 out, through the capstone ABI: about 1 ms at 2048^3 on an H200) and
`kernel/bisect_demo.yaml` (that kernel and cuBLAS, the baseline, at 2048^3):

  regressed  8 commits from the tag `good`; the 6th (tag `culprit`) makes the kernel do its first 15% of K
             twice (a first launch over those K tiles, then the full GEMM, which overwrites C: the result is
             bit for bit the same, the time ~15% longer); the others touch comments, the README and the spec
  steady     8 commits from `good` too, none of which changes the kernel's speed

Commit dates and authors are fixed, so the hashes are the same on every machine. Used by
experiments/studies/regressions/bisect_on_device.sh (on the GPU) and tests/test_bisect.py (with a fake measurer, which reads
EXTRA_K_PERCENT from the checked-out kernel).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SPEC = """\
name: bisect-demo
description: {description}
problems:
  - {{m: 2048, n: 2048, k: 2048}}
contracts: [f16_f32acc_tn]
implementations:
  - library.cublas
  - custom: {{name: tiled_gemm, sources: [tiled_gemm.cu], entry: solve, abi: capstone, arch: sm_80}}
baseline: library.cublas
correctness: {{fixtures: [uniform]}}
timing: {{l2: flush}}
"""

KERNEL = """\
// A shared-memory tiled GEMM through the capstone ABI:
//   void solve(const __half* a, const __half* b, float* c, size_t m, size_t n, size_t k, cudaStream_t stream)
// A m x k row-major, B k x n column-major, C m x n row-major; FP16 in, FP32 accumulate and out.
// Each 256-thread block computes a 64 x 64 tile of C, each thread a 4 x 4 patch, from K tiles of depth
// {tile_k} staged in shared memory as FP32.
{notes}#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define EXTRA_K_PERCENT {extra}  // > 0: the first EXTRA_K_PERCENT% of K is computed twice

namespace {{

constexpr int kTile = 64;
constexpr int kTileK = {tile_k};
constexpr int kThreads = 256;

// C = A[:, :k_len] * B[:k_len, :]; `ld` is the row length of A and the column length of B (the whole K)
__global__ void __launch_bounds__(kThreads) tiled_gemm_kernel(const __half* __restrict__ a,
                                                              const __half* __restrict__ b, float* __restrict__ c,
                                                              int m, int n, int k_len, int ld) {{
  __shared__ float As[kTileK][kTile + 1];  // As[kk][row]: +1 pads away bank conflicts on the transposed store
  __shared__ float Bs[kTileK][kTile + 1];  // Bs[kk][col]
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {{}};

  for (int k0 = 0; k0 < k_len; k0 += kTileK) {{
    // {zero_fill}
    for (int i = threadIdx.x; i < kTile * kTileK; i += kThreads) {{
      const int r = i / kTileK, kk = i % kTileK;
      const int gr = row0 + r, gc = col0 + r, gk = k0 + kk;
      As[kk][r] = (gr < m && gk < k_len) ? __half2float(a[static_cast<size_t>(gr) * ld + gk]) : 0.0f;
      Bs[kk][r] = (gc < n && gk < k_len) ? __half2float(b[static_cast<size_t>(gc) * ld + gk]) : 0.0f;
    }}
    __syncthreads();  // tiles written before anyone reads them
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {{
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }}
    __syncthreads();  // everyone done reading before the next tiles overwrite them
  }}
#pragma unroll
  for (int i = 0; i < 4; ++i) {{
    const int r = row0 + ty + 16 * i;
#pragma unroll
    for (int j = 0; j < 4; ++j) {{
      const int col = col0 + tx + 16 * j;
      if (r < m && col < n) c[static_cast<size_t>(r) * n + col] = acc[i][j];
    }}
  }}
}}

}}  // namespace

void solve(const __half* a, const __half* b, float* c, size_t m, size_t n, size_t k, cudaStream_t stream) {{
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>((m + kTile - 1) / kTile));
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const int extra = ki * EXTRA_K_PERCENT / 100 / kTileK * kTileK;
  if (extra > 0)  // the same work over the first K tiles; the full pass below overwrites C
    tiled_gemm_kernel<<<grid, kThreads, 0, stream>>>(a, b, c, mi, ni, extra, ki);
  tiled_gemm_kernel<<<grid, kThreads, 0, stream>>>(a, b, c, mi, ni, ki, ki);
}}
"""

README = "# my kernels\n\nA tiled GEMM of my own and the spec that compares it with cuBLAS.\n{more}"


def kernel(notes: list[str], extra: int = 0, zero_fill: str = "64 x 16 elements of each operand, 4 per thread") -> str:
    lines = "".join(f"// {n}\n" for n in notes)
    return KERNEL.format(tile_k=16, notes=lines, extra=extra, zero_fill=zero_fill)


# (subject, files changed) per commit after the first; a file's text is the whole new content
def _histories() -> dict[str, list[tuple[str, dict[str, str]]]]:
    spec = SPEC.format(description="my tiled GEMM against cuBLAS")
    first = [("tiled_gemm: first version, with its spec",
              {"kernel/tiled_gemm.cu": kernel([]), "kernel/bisect_demo.yaml": spec, "README.md": README.format(more="")})]
    regressed = [
        ("tiled_gemm: say where the padding goes", {"kernel/tiled_gemm.cu": kernel(["history: padding explained"])}),
        ("README: how to run it", {"README.md": README.format(more="\n    gemmcompare run kernel/bisect_demo.yaml\n")}),
        ("tiled_gemm: name the zero fill", {"kernel/tiled_gemm.cu": kernel(
            ["history: padding explained"], zero_fill="zero-filled past every edge, so any m, n, k works")}),
        ("spec: describe the comparison", {"kernel/bisect_demo.yaml": SPEC.format(
            description="my tiled GEMM against cuBLAS at 2048^3, where one launch takes about 1 ms")}),
        ("tiled_gemm: a first pass over the leading K tiles", {"kernel/tiled_gemm.cu": kernel(
            ["history: padding explained", "history: a first pass over 15% of K"], extra=15,
            zero_fill="zero-filled past every edge, so any m, n, k works")}),
        ("README: note the timing", {"README.md": README.format(more="\nOne launch takes about a millisecond.\n")}),
        ("tiled_gemm: comment the epilogue", {"kernel/tiled_gemm.cu": kernel(
            ["history: padding explained", "history: a first pass over 15% of K", "history: epilogue commented"],
            extra=15, zero_fill="zero-filled past every edge, so any m, n, k works")}),
    ]
    steady = [
        ("tiled_gemm: explain the block shape", {"kernel/tiled_gemm.cu": kernel(["steady: block shape explained"])}),
        ("README: how to run it", {"README.md": README.format(more="\n    gemmcompare run kernel/bisect_demo.yaml\n")}),
        ("spec: describe the comparison", {"kernel/bisect_demo.yaml": SPEC.format(
            description="my tiled GEMM against cuBLAS at 2048^3")}),
        ("tiled_gemm: name the zero fill", {"kernel/tiled_gemm.cu": kernel(
            ["steady: block shape explained"], zero_fill="zero-filled past every edge, so any m, n, k works")}),
        ("README: note the timing", {"README.md": README.format(more="\nOne launch takes about a millisecond.\n")}),
        ("tiled_gemm: say why the K tile is 16 deep", {"kernel/tiled_gemm.cu": kernel(
            ["steady: block shape explained", "steady: K tile depth explained"],
            zero_fill="zero-filled past every edge, so any m, n, k works")}),
        ("tiled_gemm: comment the epilogue", {"kernel/tiled_gemm.cu": kernel(
            ["steady: block shape explained", "steady: K tile depth explained", "steady: epilogue commented"],
            zero_fill="zero-filled past every edge, so any m, n, k works")}),
    ]
    return {"first": first, "regressed": regressed, "steady": steady}


CULPRIT_INDEX = 5  # the 6th commit of `regressed` (0 = the tag `good`)


def _git(repo: Path, *args: str, when: int = 0) -> str:
    stamp = f"2026-01-01T00:{when // 60:02d}:{when % 60:02d}+00:00"
    env = {**os.environ, "GIT_AUTHOR_NAME": "Kernel Author", "GIT_AUTHOR_EMAIL": "author@example.com",
           "GIT_COMMITTER_NAME": "Kernel Author", "GIT_COMMITTER_EMAIL": "author@example.com",
           "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp, "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo: Path, subject: str, files: dict[str, str], when: int) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        _git(repo, "add", name)
    _git(repo, "commit", "-q", "-m", subject, when=when)
    return _git(repo, "rev-parse", "HEAD")


def make_history(repo: Path) -> dict[str, str]:
    """Create the repository; returns {'good', 'culprit', 'regressed', 'steady'} -> commit hash."""
    repo = Path(repo)
    repo.mkdir(parents=True, exist_ok=True)
    if any(repo.iterdir()):
        raise SystemExit(f"{repo} is not empty")
    hist = _histories()
    _git(repo, "init", "-q")
    _git(repo, "symbolic-ref", "HEAD", "refs/heads/regressed")  # `init -b` needs git 2.28
    _git(repo, "config", "user.name", "Kernel Author")
    _git(repo, "config", "user.email", "author@example.com")
    (subject, files), = hist["first"]
    out = {"good": _commit(repo, subject, files, 0)}
    _git(repo, "tag", "good")
    for i, (subject, files) in enumerate(hist["regressed"], 1):
        sha = _commit(repo, subject, files, i)
        if i == CULPRIT_INDEX:
            out["culprit"] = sha
            _git(repo, "tag", "culprit")
    out["regressed"] = sha
    _git(repo, "checkout", "-q", "-b", "steady", "good")
    for i, (subject, files) in enumerate(hist["steady"], 1):
        out["steady"] = _commit(repo, subject, files, 100 + i)
    _git(repo, "checkout", "-q", "regressed")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[2].strip())
    for name, sha in make_history(Path(sys.argv[1])).items():
        print(f"{name:<10} {sha}")
