"""`profile SPEC`: Nsight Compute's gpu__time_duration of each row next to the harness's event and CUPTI
timing and triton's do_bench (timed in a process of their own, not under ncu); with --stalls, the
kernel's name, registers, occupancy, tensor-pipe use and warp stall
reasons."""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

from .options import (add_build_options, add_json, add_l2, add_narrowing, exit_codes, load_spec, parser_args,
                      progress_of, write_json)

CACHE_ENV = "GEMMCOMPARE_CACHE_DIR"  # build/extension.py's default_cache_dir reads it


def cmd_profile(args) -> int:
    from ..build.experiment import build_in_steps
    from ..device import probe_device
    from ..errors import NoDeviceError
    from ..plan import make_plan, narrow
    from ..profilers.driver import L2_HOW, ncu_l2
    from ..profilers.ncu import stall_profile, timing_profile
    from ..profilers.tools import find_tool

    exp = narrow(load_spec(args.spec), args.shapes, False, args.only, l2=args.l2)  # bad arguments first (exit 2)
    # what makes the command impossible, before minutes of building: ncu, then a GPU to profile on
    ncu = find_tool("ncu")
    device = probe_device()
    if device is None:
        raise NoDeviceError("profile runs the spec's kernels under Nsight Compute: there is no CUDA device here")
    cells = [cell for cell in make_plan(exp).cells if cell.support]
    progress = progress_of(args)
    progress.say(f"profile {args.spec} on {device.name}: the extensions built, then {len(cells)} row(s) each timed "
                 f"and profiled under ncu in processes of their own")
    l2 = ncu_l2(exp.timing.l2)
    whose = "--l2" if args.l2 else "the spec's L2 policy"
    print(f"profile: {whose} is {exp.timing.l2}; ncu's launches run with {L2_HOW[l2]}")
    cache_dir = Path(args.cache_dir).resolve() if args.cache_dir else None
    # each implementation alone, as each driver process builds its one (driver._prepare): they find it cached
    build_in_steps(exp, device, progress, arch=args.arch, cache_dir=cache_dir, jobs=args.jobs, merge=False)
    out_rows = []
    with progress.items(len(cells), "profiling", unit="row") as items, _children_cache(cache_dir):
        for cell in cells:
            t0 = time.monotonic()
            row = (args.spec, cell.implementation.name, cell.entry.problem.label, cell.contract.name)
            rec = {"problem": row[2], "contract": row[3], "implementation": row[1]}
            if not args.stalls_only:
                rec.update(timing_profile(ncu, *row, args.launches, args.timeout, l2, l2_override=args.l2))
            if args.stalls or args.stalls_only:
                rec["stalls"] = stall_profile(ncu, *row, args.timeout, l2, l2_override=args.l2)
            out_rows.append(rec)
            items.done(f"{row[2]} {row[3]} {row[1]}: {_outcome(rec)}", time.monotonic() - t0)
    if not args.stalls_only:
        print_timings(out_rows)
    if args.stalls or args.stalls_only:
        print_stalls(out_rows)
    write_json(args.json, json.dumps(out_rows, indent=1))
    timed = args.stalls_only or all(r.get("ncu_median_ms") for r in out_rows)
    profiled = not (args.stalls or args.stalls_only) or all("error" not in k for r in out_rows for k in r["stalls"])
    return 0 if timed and profiled else 1


@contextmanager
def _children_cache(cache_dir):
    """The driver processes find each row's extension in the cache the command built into (--cache-dir)."""
    previous = os.environ.get(CACHE_ENV)
    if cache_dir:
        os.environ[CACHE_ENV] = str(cache_dir)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = previous


def _outcome(rec: dict) -> str:
    """A profiled row in a few words, for its progress line."""
    parts = []
    if "ncu_median_ms" in rec:
        parts.append(f"ncu {rec['ncu_median_ms']:.5f} ms" if rec["ncu_median_ms"] else "ncu timed nothing")
    if "stalls" in rec:
        failed = sum("error" in k for k in rec["stalls"])
        parts.append(f"stalls of {len(rec['stalls']) - failed} kernel(s)" + (", ncu failed" if failed else ""))
    return ", ".join(parts)


def print_timings(rows: list[dict]) -> None:
    def ms(r, key):
        return f"{r[key]:.5f}" if r.get(key) else "-"

    def ratio(r, num, den):
        return f"{r[num] / r[den]:.4f}" if r.get(num) and r.get(den) else "-"

    # CUPTI+w: the CUPTI span plus the device's launch window, the figure a run reports (launch_window.py)
    print(f"{'problem':<16} {'implementation':<36} {'events ms':>10} {'CUPTI ms':>10} {'CUPTI+w ms':>10} "
          f"{'ncu ms':>10} {'do_bench':>10} {'ev/ncu':>7} {'cupti/ncu':>9} {'+w/ncu':>7} {'db/ev':>7}")
    for r in rows:
        line = (f"{r['problem']:<16} {r['implementation'][:36]:<36} {ms(r, 'event_median_ms'):>10} "
                f"{ms(r, 'cupti_median_ms'):>10} {ms(r, 'cupti_reported_median_ms'):>10} {ms(r, 'ncu_median_ms'):>10} "
                f"{ms(r, 'do_bench_median_ms'):>10} {ratio(r, 'event_median_ms', 'ncu_median_ms'):>7} "
                f"{ratio(r, 'cupti_median_ms', 'ncu_median_ms'):>9} "
                f"{ratio(r, 'cupti_reported_median_ms', 'ncu_median_ms'):>7} "
                f"{ratio(r, 'do_bench_median_ms', 'event_median_ms'):>7}")
        problems = [r.get(k) for k in ("error", "timing_error") if r.get(k)]
        print(line + (f"  {' / '.join(p[:60] for p in problems)}" if problems else ""))


def print_stalls(rows: list[dict]) -> None:
    print()
    print("stalls: warps stalled per issued instruction, largest first (ncu WarpStateStats)")
    for r in rows:
        for k in r.get("stalls") or []:
            if "error" in k:
                print(f"{r['problem']:<16} {r['implementation'][:44]:<44} ncu: {k['error'][:80]}")
                continue
            top = ", ".join(f"{name} {v:.2f}" for name, v in list(k["stalls"].items())[:5])

            def show(field, fmt):  # a metric this ncu version did not report shows as '-'
                return format(k[field], fmt) if field in k else "-"

            print(f"{r['problem']:<16} {r['implementation'][:44]:<44} regs {show('registers', '.0f')} "
                  f"occ {show('achieved_occupancy_pct', '.1f')}% tensor {show('tensor_pipe_pct', '.1f')}% "
                  f"issue {show('issue_active_pct', '.1f')}% | {top}")
            print(f"{'':<16} kernel: {k['kernel'][:140]}")


def register(subparsers) -> None:
    p = subparsers.add_parser("profile", **parser_args(
        "ncu's gpu__time_duration next to the harness's event timing",
        exit_codes(0, 1, 2, 3, c1="a row could not be profiled (ncu's message is printed), or ncu is not installed",
                   c3="no CUDA device (found before anything is built)")))
    p.add_argument("spec", metavar="SPEC")
    add_narrowing(p)
    add_l2(p)
    p.add_argument("--launches", type=int, default=5, help="profiled launches per row")
    p.add_argument("--stalls", action="store_true",
                   help="also profile one launch per row with ncu's stall sections: kernel name, registers, "
                        "occupancy, tensor-pipe use, warp stall reasons")
    p.add_argument("--stalls-only", action="store_true", help="only the stall profile (no timing comparison)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per ncu run")
    add_json(p)
    add_build_options(p)
    p.set_defaults(func=cmd_profile)
