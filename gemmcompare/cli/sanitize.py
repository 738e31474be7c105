"""`sanitize SPEC`: the spec's implementations on small shapes under compute-sanitizer (memcheck,
racecheck, synccheck), one row per tool and implementation."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .options import add_build_options, add_run_storage, load_spec, run_options


def cmd_sanitize(args) -> int:
    from ..device import probe_device
    from ..plan import narrow
    from ..profilers.sanitizer import kernel_owners, sanitize
    from ..run.parent import build_for

    exp = narrow(load_spec(args.spec), args.shapes, True, args.only)
    owners = kernel_owners(exp, build_for(exp, probe_device(), run_options(args)))
    rows, worst = sanitize(args.spec, args.shapes, args.tools, owners, args.only, args.timeout, args.log_dir)
    print(f"{'tool':<10} {'implementation':<52} {'errors':>6}  first")
    for r in rows:
        print(f"{r.tool:<10} {r.implementation[:52]:<52} {r.errors:>6}  {r.first[:90]}")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if worst else 0


def register(subparsers) -> None:
    from ..profilers.sanitizer import TOOLS

    p = subparsers.add_parser("sanitize", help="the spec's implementations under compute-sanitizer, per implementation")
    p.add_argument("spec")
    p.add_argument("--shapes", default="31x29x37,611x613x617", help="small shapes to check (MxNxK,...)")
    p.add_argument("--only", default=None, metavar="REGEX", help="only the implementations whose name matches")
    p.add_argument("--tools", default=",".join(TOOLS), help="comma-separated: memcheck,racecheck,synccheck")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per tool run")
    p.add_argument("--json", default=None, help="also write the table as JSON here")
    p.add_argument("--log-dir", default=None, help="keep each tool's full output here")
    add_run_storage(p)
    add_build_options(p)
    p.set_defaults(func=cmd_sanitize)
