"""`new-kernel NAME`: a starting .cu file with the chosen ABI (from extensions/starters/) and a spec that runs it."""

from __future__ import annotations

import re
import string
import sys
from pathlib import Path

from ..paths import STARTERS_DIR
from .options import exit_codes, parser_args

CONTRACT = "f16_f32acc_tn"  # what both starters compute: FP16 A row-major, B column-major, FP32 C


def _render(starter: str, **values: str) -> str:
    return string.Template((STARTERS_DIR / starter).read_text()).substitute(values)


def cmd_new_kernel(args) -> int:
    name = args.name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):  # not `$`: it accepts "x\n"
        print(f"gemmcompare: kernel name must be a C identifier, got {name!r}", file=sys.stderr)
        return 2
    out = Path(args.dir)
    cu, spec = out / f"{name}.cu", out / f"{name}.yaml"
    for path in (cu, spec):
        if path.exists() and not args.force:
            print(f"gemmcompare: {path} exists (use --force to overwrite)", file=sys.stderr)
            return 1
    entry = "solve" if args.abi == "capstone" else name
    try:
        out.mkdir(parents=True, exist_ok=True)
        cu.write_text(_render(f"{args.abi}.cu", name=name, contract=CONTRACT))
        spec.write_text(_render("spec.yaml", name=name, contract=CONTRACT, entry=entry, abi=args.abi))
    except OSError as exc:  # --dir is a file, or not writable
        print(f"gemmcompare: cannot write into --dir {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {cu} ({args.abi} ABI) and {spec}\nnext: gemmcompare run {spec}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("new-kernel", **parser_args(
        "write a starting .cu file and a spec that runs it",
        exit_codes(0, 1, 2, c1="a file exists (--force overwrites)", c2="NAME is not a C identifier")))
    p.add_argument("name", help="C identifier: names the files and the implementation custom.<name>")
    p.add_argument("--abi", choices=("capstone", "general"), default="capstone")
    p.add_argument("--dir", default=".", help="where to write NAME.cu and NAME.yaml (default: here)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(func=cmd_new_kernel)
