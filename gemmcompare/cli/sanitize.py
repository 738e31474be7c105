"""`sanitize SPEC`: the spec's implementations on small shapes under compute-sanitizer (memcheck,
racecheck, synccheck), one row per tool and implementation."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .options import (add_build_options, add_json, add_narrowing, add_run_storage, exit_codes, load_spec,
                      parser_args, progress_of, write_json)


def cmd_sanitize(args) -> int:
    from ..build.experiment import build_in_steps
    from ..device import probe_device
    from ..errors import NoDeviceError
    from ..plan import narrow
    from ..profilers.sanitizer import kernel_owners, sanitize, tool_names
    from ..profilers.tools import find_tool

    exp = narrow(load_spec(args.spec), args.shapes, True, args.only)
    tool_names(args.tools)  # a bad --tools exits 2 here, not after the build
    # what makes the command impossible, before minutes of building: the tool, then a GPU to run it on
    sanitizer = find_tool("compute-sanitizer")
    device = probe_device()
    if device is None:
        raise NoDeviceError("sanitize runs the spec's kernels under compute-sanitizer: there is no CUDA device here")
    progress = progress_of(args)
    progress.say(f"sanitize {args.spec} on {device.name}: the extensions built, then {args.tools.replace(',', ', ')} "
                 f"each run over shapes {args.shapes} (minutes each)")
    cache_dir = Path(args.cache_dir).resolve() if args.cache_dir else None
    builds = build_in_steps(exp, device, progress, arch=args.arch, cache_dir=cache_dir, jobs=args.jobs)
    rows, worst = sanitize(args.spec, args.shapes, args.tools, kernel_owners(exp, builds), args.only, args.timeout,
                           args.log_dir, sanitizer=sanitizer, cache_dir=cache_dir, progress=progress)
    print(f"{'tool':<10} {'implementation':<52} {'errors':>6}  first")
    for r in rows:
        print(f"{r.tool:<10} {r.implementation[:52]:<52} {r.errors:>6}  {r.first[:90]}")
    write_json(args.json, json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if worst else 0


def register(subparsers) -> None:
    from ..profilers.sanitizer import TOOLS

    p = subparsers.add_parser("sanitize", **parser_args(
        "the spec's implementations under compute-sanitizer, per implementation",
        exit_codes(0, 1, 2, 3, c0="no tool found an error",
                   c1="a tool found an error or could not run, or compute-sanitizer is not installed",
                   c3="no CUDA device (found before anything is built)")))
    p.add_argument("spec", metavar="SPEC")
    add_narrowing(p, shapes_default="31x29x37,611x613x617")
    p.add_argument("--tools", default=",".join(TOOLS), help="comma-separated: memcheck,racecheck,synccheck")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per tool run")
    add_json(p)
    p.add_argument("--log-dir", default=None, help="keep each tool's full output here")
    add_run_storage(p)
    add_build_options(p)
    p.set_defaults(func=cmd_sanitize)
