"""`new-kernel NAME`: a starting kernel (a .cu file with the chosen ABI, or a Python callable; from
extensions/starters/) and a spec that runs it beside the library baseline. `--fp8` writes an FP8 one: e4m3 in,
bf16 out, tn, the contract's scales applied, judged beside cuBLASLt under strict and `_fastacc` contracts.
`--grouped` (--abi python or general) writes a grouped one: a callable handed the group offsets, or a naive C
entry that reads the C ABI's grouped form (ABI 4: one thread per output, which finds its group by the offsets),
judged beside torch's grouped GEMM and the loop of cuBLAS calls (docs/grouped.md). `--grouped --fp8` (--abi general)
writes a grouped FP8 one: block scales, the grouped FP8 scales the C ABI defines, judged beside the loop of
cuBLASLt's calls and hopper.grouped_fp8."""

from __future__ import annotations

import keyword
import re
import string
import sys
from pathlib import Path

from ..paths import STARTERS_DIR
from .options import exit_codes, parser_args

CONTRACT = "f16_f32acc_tn"  # what the plain starters compute: FP16 A row-major, B column-major, FP32 C
FP8_CONTRACT = "e4m3_bf16out_f32acc_tn_tensor"  # the FP8 starters: e4m3 A row-major, B column-major, bf16 C
FP8_SCALINGS = "[tensor, rowcol, block]"  # what each FP8 starter applies (the Python one: no block scales)
# the grouped starter: BF16 in and out, what torch._grouped_mm takes and writes
GROUPED_CONTRACT = "bf16_bf16out_f32acc_tn"
# the grouped FP8 starter: DeepSeek-V3's recipe (1 x 128 / 128 x 128 block scales), the grouped scales gemm_abi.h defines
GROUPED_FP8_CONTRACT = "e4m3_bf16out_f32acc_tn_block"
ABIS = ("capstone", "general", "python")


def _render(starter: str, **values: str) -> str:
    return string.Template((STARTERS_DIR / starter).read_text()).substitute(values)


def starter_files(name: str, abi: str, fp8: bool, grouped: bool = False) -> tuple[str, str, str, str]:
    """(kernel file suffix, its starter, the spec's starter, the spec's implementation entry)."""
    if grouped and fp8:  # general ABI only (cmd_new_kernel refuses the others)
        entry = (f"custom: {{name: {name}, sources: [{name}.cu], entry: {name}, abi: general, "
                 f"contract: {GROUPED_FP8_CONTRACT}, arch: sm_89, grouped: true, scalings: [block], "
                 f"accumulation: promote}}")
        return ".cu", "general_grouped_fp8.cu", "spec_grouped_fp8.yaml", entry
    if grouped and abi == "general":
        entry = (f"custom: {{name: {name}, sources: [{name}.cu], entry: {name}, abi: general, "
                 f"contract: {GROUPED_CONTRACT}, arch: sm_80, grouped: true}}")
        return ".cu", "general_grouped.cu", "spec_grouped.yaml", entry
    if grouped:
        entry = f'python: {{name: {name}, callable: "{name}.py:{name}", contract: {GROUPED_CONTRACT}, grouped: true}}'
        return ".py", "python_grouped.py.tmpl", "spec_grouped.yaml", entry
    contract = FP8_CONTRACT if fp8 else CONTRACT
    spec = "spec_fp8.yaml" if fp8 else "spec.yaml"
    if abi == "python":
        scalings = ", scalings: [tensor, rowcol]" if fp8 else ""
        entry = f'python: {{name: {name}, callable: "{name}.py:{name}", contract: {contract}{scalings}}}'
        return ".py", "python_fp8.py.tmpl" if fp8 else "python.py.tmpl", spec, entry
    if fp8:
        entry = (f"custom: {{name: {name}, sources: [{name}.cu], entry: {name}, abi: general, contract: {contract}, "
                 f"arch: sm_89, scalings: {FP8_SCALINGS}, accumulation: promote}}")
        return ".cu", "general_fp8.cu", spec, entry
    symbol = "solve" if abi == "capstone" else name
    entry = (f"custom: {{name: {name}, sources: [{name}.cu], entry: {symbol}, abi: {abi}, contract: {contract}, "
             f"arch: sm_80}}")
    return ".cu", f"{abi}.cu", spec, entry


def cmd_new_kernel(args) -> int:
    name = args.name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):  # not `$`: it accepts "x\n"
        print(f"gemmcompare: kernel name must be a C identifier, got {name!r}", file=sys.stderr)
        return 2
    if args.abi == "python" and keyword.iskeyword(name):
        print(f"gemmcompare: {name!r} is a Python keyword: it cannot name the callable", file=sys.stderr)
        return 2
    if args.fp8 and args.abi == "capstone":
        print("gemmcompare: --fp8 needs --abi general or --abi python (the capstone solve() takes no scales)",
              file=sys.stderr)
        return 2
    if args.grouped and args.abi == "capstone":
        print("gemmcompare: --grouped needs --abi python or --abi general (the capstone solve() takes one GEMM)",
              file=sys.stderr)
        return 2
    if args.grouped and args.fp8 and args.abi != "general":
        print("gemmcompare: --grouped --fp8 needs --abi general (the grouped FP8 starter is a C entry; a Python "
              "grouped callable is handed scale_a= and scale_b= too: docs/grouped.md)", file=sys.stderr)
        return 2
    suffix, kernel_starter, spec_starter, entry = starter_files(name, args.abi, args.fp8, args.grouped)
    out = Path(args.dir)
    kernel, spec = out / f"{name}{suffix}", out / f"{name}.yaml"
    for path in (kernel, spec):
        if path.exists() and not args.force:
            print(f"gemmcompare: {path} exists (use --force to overwrite)", file=sys.stderr)
            return 1
    contract = (GROUPED_FP8_CONTRACT if args.grouped and args.fp8 else GROUPED_CONTRACT if args.grouped else
                FP8_CONTRACT if args.fp8 else CONTRACT)
    try:
        out.mkdir(parents=True, exist_ok=True)
        kernel.write_text(_render(kernel_starter, name=name, contract=contract))
        spec.write_text(_render(spec_starter, name=name, contract=contract, implementation=entry))
    except OSError as exc:  # --dir is a file, or not writable
        print(f"gemmcompare: cannot write into --dir {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    what = "Python callable" if args.abi == "python" else f"{args.abi} ABI"
    kind = "grouped FP8 " if args.grouped and args.fp8 else "FP8 " if args.fp8 else "grouped " if args.grouped else ""
    print(f"wrote {kernel} ({kind}{what}) and {spec}\nnext: gemmcompare run {spec}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("new-kernel", **parser_args(
        "write a starting kernel (.cu or .py) and a spec that runs it",
        exit_codes(0, 1, 2, c1="a file exists (--force overwrites)",
                   c2="NAME is not a C identifier (or a Python keyword with --abi python), --fp8 with --abi capstone, "
                      "--grouped with --abi capstone, or --grouped --fp8 without --abi general")))
    p.add_argument("name", help="C identifier: names the files and the implementation custom.<name> (python.<name>)")
    p.add_argument("--abi", choices=ABIS, default="capstone",
                   help="capstone: solve(a, b, c, m, n, k, stream); general: gemm_abi.h; python: a callable fn(a, b, c, ...)")
    p.add_argument("--fp8", action="store_true",
                   help=f"an FP8 kernel (general or python): e4m3 in, bf16 out, the contract's scales; "
                        f"judged beside library.cublaslt_fp8 under {FP8_CONTRACT} and its twins")
    p.add_argument("--grouped", action="store_true",
                   help=f"a grouped GEMM (python: called with m_offsets= and masked_counts=; general: reads gemm_abi.h's "
                        f"grouped form, contiguous layout), under {GROUPED_CONTRACT}, "
                        f"judged beside library.torch_grouped_mm and library.cublas_loop (docs/grouped.md)")
    p.add_argument("--dir", default=".", help="where to write NAME.cu (NAME.py) and NAME.yaml (default: here)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(func=cmd_new_kernel)
