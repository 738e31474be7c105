"""`cutlass list` (the named configurations of cutlass_configs/) and `cutlass enumerate` (proposals from
CUTLASS's own kernel generator)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..cutlass.kernel_templates import TEMPLATES
from ..arch import parse_arch
from .options import add_arch, exit_codes, parser_args

ENUMERABLE = (80, 86, 89, 90)  # the architectures cutlass_library's generator is asked about


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "cutlass", help="CUTLASS/CuTe configurations: list them, or propose new ones from CUTLASS's generator",
        description="CUTLASS/CuTe configurations of cutlass_configs/ (see docs/cutlass.md).")
    commands = parser.add_subparsers(dest="cutlass_command", metavar="{list,enumerate}")
    commands.required = True

    ls = commands.add_parser("list", **parser_args("the named configurations and their procedural names",
                                                   exit_codes(0, 2, c2="a configuration file is invalid")))
    ls.add_argument("--template", choices=list(TEMPLATES), help="only this kernel template")
    ls.add_argument("--fields", action="store_true", help="list each kernel template's fields instead")
    ls.set_defaults(func=cmd_list)

    en = commands.add_parser("enumerate", **parser_args(
        "propose configurations from cutlass_library's kernel generator, as YAML",
        exit_codes(0, 1, 2, c1="cutlass_library's generator is missing or failed"),
        "Runs cutlass_library's GEMM generator for one architecture (the kernels the CUTLASS profiler would "
        "instantiate), keeps what gemmcompare can render and writes it as an editable cutlass_configs/ file."))
    add_arch(en, "sm_80, sm_86, sm_89 (CUTLASS 2.x kernel template sm80) or sm_90 (CUTLASS 3.x, sm90)", required=True)
    en.add_argument("--dtype", required=True, choices=["f16", "bf16", "tf32", "f32"], help="input type")
    en.add_argument("--layout", default="tn", choices=["tn", "tt", "nn", "nt", "all"], help="A/B layout (default tn)")
    en.add_argument("--out-dtype", choices=["f16", "bf16", "f32"], help="keep only this output type")
    en.add_argument("--kernels", default="all", choices=["all", "default"],
                    help="all: every kernel the generator can emit; default: CUTLASS's default build set")
    en.add_argument("--out", metavar="FILE", help="write the YAML here (default: standard output)")
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

    cc = parse_arch(args.arch)[0]
    if cc not in ENUMERABLE:
        print(f"gemmcompare cutlass enumerate: error: --arch {args.arch}: expected one of "
              f"{', '.join(f'sm_{c}' for c in ENUMERABLE)}", file=sys.stderr)
        return 2
    result = enumerate_configs(cc, args.dtype, args.layout, args.out_dtype, args.kernels)
    command = " ".join(["gemmcompare cutlass enumerate", f"--arch {args.arch}", f"--dtype {args.dtype}",
                        f"--layout {args.layout}", f"--kernels {args.kernels}"]
                       + ([f"--out-dtype {args.out_dtype}"] if args.out_dtype else []))
    text = to_yaml(result, command)
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {len(result.configs)} configuration(s) to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
