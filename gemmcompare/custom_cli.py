"""`gemmcompare new-kernel NAME`: a starting .cu file with the chosen ABI and a spec that runs it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .build import toolchain

_BYO = toolchain.PACKAGE_ROOT / "experiments" / "byo_kernel" / "my_gemm.cu"

GENERAL_TEMPLATE = """\
// {name}.cu: a GEMM behind the gemmcompare C ABI (extensions/include/gemmcompare/gemm_abi.h).
// C = alpha * A B + beta * C for the contract named in {name}.yaml ({contract}: FP16 A row-major,
// B column-major, FP32 C row-major). Replace the kernel; keep the entry point's signature.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemmcompare/gemm_abi.h"

namespace {{

__global__ void {name}_kernel(const __half* a, const __half* b, float* c, int64_t m, int64_t n, int64_t k,
                              int64_t lda, int64_t ldb, int64_t ldc, float alpha, float beta) {{
  const int64_t row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int64_t kk = 0; kk < k; ++kk) acc += __half2float(a[row * lda + kk]) * __half2float(b[col * ldb + kk]);
  float* out = c + row * ldc + col;
  *out = alpha * acc + (beta != 0.0f ? beta * *out : 0.0f);
}}

}}  // namespace

extern "C" int {name}(const gc_gemm_args* args, char* err, size_t err_len) {{
  if (args->order_a != GC_ROW || args->order_b != GC_COL || args->order_c != GC_ROW)
    return gc_fail(err, err_len, "{name}: A row-major, B column-major, C row-major only");
  const dim3 block(32, 8), grid((args->n + 31) / 32, (args->m + 7) / 8);
  {name}_kernel<<<grid, block, 0, args->stream>>>(
      static_cast<const __half*>(args->a), static_cast<const __half*>(args->b), static_cast<float*>(args->c), args->m,
      args->n, args->k, args->lda, args->ldb, args->ldc, static_cast<float>(args->alpha), static_cast<float>(args->beta));
  return gc_check_launch(err, err_len, "{name}_kernel");
}}
"""

SPEC_TEMPLATE = """\
name: {name}
description: {name} against cuBLAS under {contract}, on the capstone's correctness gate and one timed shape.
problems:
  - {{name: unit, m: 16, n: 16, k: 16, fixtures: [exact_integers], time: false}}
  - {{name: odd, m: 611, n: 613, k: 617, fixtures: [uniform], time: false}}
  - {{name: adversarial, m: 256, n: 256, k: 256, fixtures: [adversarial], time: false}}
  - {{name: perf, m: 4096, n: 4096, k: 4096, fixtures: [uniform]}}
contracts: [{contract}]
implementations:
  - library.cublas
  - custom: {{name: {name}, sources: [{name}.cu], entry: {entry}, abi: {abi}, contract: {contract}, arch: sm_80}}
baseline: library.cublas
timing: {{l2: flush}}
"""


def cmd_new_kernel(args) -> int:
    name = args.name
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        print(f"gemmcompare: kernel name must be a C identifier, got {name!r}", file=sys.stderr)
        return 2
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    cu, spec = out / f"{name}.cu", out / f"{name}.yaml"
    for path in (cu, spec):
        if path.exists() and not args.force:
            print(f"gemmcompare: {path} exists (use --force to overwrite)", file=sys.stderr)
            return 1
    contract = "f16_f32acc_tn"
    if args.abi == "capstone":
        source = _BYO.read_text().replace("my_gemm_kernel", f"{name}_kernel")
        source = source.replace('A small, correct GEMM of "my own"', f"{name}: a small, correct starting GEMM")
        entry = "solve"
    else:
        source = GENERAL_TEMPLATE.format(name=name, contract=contract)
        entry = name
    cu.write_text(source)
    spec.write_text(SPEC_TEMPLATE.format(name=name, contract=contract, entry=entry, abi=args.abi))
    print(f"wrote {cu} ({args.abi} ABI) and {spec}\nnext: gemmcompare run {spec}")
    return 0


def add_custom_commands(subparsers) -> None:
    p = subparsers.add_parser("new-kernel", help="write a starting .cu file and a spec that runs it")
    p.add_argument("name", help="C identifier: names the files and the implementation custom.<name>")
    p.add_argument("--abi", choices=("capstone", "general"), default="capstone")
    p.add_argument("--dir", default=".", help="where to write NAME.cu and NAME.yaml (default: here)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(func=cmd_new_kernel)
