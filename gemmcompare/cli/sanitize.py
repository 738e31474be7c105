"""`sanitize SPEC`: the spec's implementations on small shapes under compute-sanitizer (memcheck,
racecheck, synccheck), one row per tool and implementation."""

from __future__ import annotations

import json
from dataclasses import asdict

from .options import (add_build_options, add_json, add_narrowing, add_run_storage, exit_codes, load_spec,
                      parser_args, run_options, write_json)


def cmd_sanitize(args) -> int:
    from ..device import probe_device
    from ..plan import narrow
    from ..profilers.sanitizer import kernel_owners, sanitize
    from ..runner.parent import build_for

    exp = narrow(load_spec(args.spec), args.shapes, True, args.only)
    owners = kernel_owners(exp, build_for(exp, probe_device(), run_options(args)))
    rows, worst = sanitize(args.spec, args.shapes, args.tools, owners, args.only, args.timeout, args.log_dir)
    print(f"{'tool':<10} {'implementation':<52} {'errors':>6}  first")
    for r in rows:
        print(f"{r.tool:<10} {r.implementation[:52]:<52} {r.errors:>6}  {r.first[:90]}")
    write_json(args.json, json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if worst else 0


def register(subparsers) -> None:
    from ..profilers.sanitizer import TOOLS

    p = subparsers.add_parser("sanitize", **parser_args(
        "the spec's implementations under compute-sanitizer, per implementation",
        exit_codes(0, 1, 2, c0="no tool found an error", c1="a tool found an error or could not run")))
    p.add_argument("spec", metavar="SPEC")
    add_narrowing(p, shapes_default="31x29x37,611x613x617")
    p.add_argument("--tools", default=",".join(TOOLS), help="comma-separated: memcheck,racecheck,synccheck")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per tool run")
    add_json(p)
    p.add_argument("--log-dir", default=None, help="keep each tool's full output here")
    add_run_storage(p)
    add_build_options(p)
    p.set_defaults(func=cmd_sanitize)
