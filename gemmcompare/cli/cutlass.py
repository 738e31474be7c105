"""`cutlass list` (the named configurations of cutlass_configs/) and `cutlass enumerate` (proposals from
CUTLASS's own kernel generator)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..cutlass.kernel_templates import TEMPLATES


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "cutlass", help="CUTLASS/CuTe configurations: list them, or propose new ones from CUTLASS's generator",
        description="CUTLASS/CuTe configurations of cutlass_configs/ (see docs/cutlass.md).")
    commands = parser.add_subparsers(dest="cutlass_command", metavar="{list,enumerate}")
    commands.required = True

    ls = commands.add_parser("list", help="the named configurations and their procedural names")
    ls.add_argument("--template", choices=list(TEMPLATES), help="only this kernel template")
    ls.add_argument("--fields", action="store_true", help="list each kernel template's fields instead")
    ls.set_defaults(func=cmd_list)

    en = commands.add_parser(
        "enumerate", help="propose configurations from cutlass_library's kernel generator, as YAML",
        description="Runs cutlass_library's GEMM generator for one architecture (the kernels the CUTLASS "
                    "profiler would instantiate), keeps what gemmcompare can render and writes it as an "
                    "editable cutlass_configs/ file.")
    en.add_argument("--arch", type=int, required=True, choices=[80, 86, 89, 90],
                    help="80/86/89: CUTLASS 2.x kernel template sm80; 90: CUTLASS 3.x kernel template sm90")
    en.add_argument("--dtype", required=True, choices=["f16", "bf16", "tf32", "f32"], help="input type")
    en.add_argument("--layout", default="tn", choices=["tn", "tt", "nn", "nt", "all"], help="A/B layout (default tn)")
    en.add_argument("--out-dtype", choices=["f16", "bf16", "f32"], help="keep only this output type")
    en.add_argument("--kernels", default="all", choices=["all", "default"],
                    help="all: every kernel the generator can emit; default: CUTLASS's default build set")
    en.add_argument("--out", type=Path, help="write the YAML here (default: standard output)")
    en.set_defaults(func=cmd_enumerate)


def cmd_list(args) -> int:
    if args.fields:
        for name, fam in TEMPLATES.items():
            if args.template and name != args.template:
                continue
            cls = fam.config
            print(f"{name}: {cls.DESCRIPTION}")
            for f in cls.FIELDS:
                kind = f"one of {', '.join(map(str, f.choices))}" if f.kind == "choice" else (
                    f"[{', '.join(['int'] * f.length)}]" if f.kind == "shape" else "int")
                when = " (run time)" if f.runtime else ""
                print(f"  {f.name:<14} {kind}{when}\n  {'':<14} {f.help}")
            print()
        return 0
    from ..cutlass.catalog import catalog

    rows = [(e.name, e.config.TEMPLATE, f"{e.config.dtype}->{e.config.out} acc {e.config.acc} {e.config.layout}",
             e.config.procedural_name) for e in catalog().values()
            if not args.template or e.config.TEMPLATE == args.template]
    headers = ("NAME", "TEMPLATE", "CONTRACT", "PROCEDURAL NAME")
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(3)]
    for row in [headers] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row[:3], widths)) + "  " + row[3])
    print(f"\n{len(rows)} configuration(s); a spec names one with `cutlass: {{config: NAME}}`")
    return 0


def cmd_enumerate(args) -> int:
    from ..cutlass.enumerate import enumerate_configs, to_yaml

    result = enumerate_configs(args.arch, args.dtype, args.layout, args.out_dtype, args.kernels)
    command = " ".join(["gemmcompare cutlass enumerate", f"--arch {args.arch}", f"--dtype {args.dtype}",
                        f"--layout {args.layout}", f"--kernels {args.kernels}"]
                       + ([f"--out-dtype {args.out_dtype}"] if args.out_dtype else []))
    text = to_yaml(result, command)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {len(result.configs)} configuration(s) to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
