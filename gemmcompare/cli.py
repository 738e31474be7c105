"""The `gemmcompare` command line.

Exit codes: 0 success; 1 a failure (build errors, regressions, failed rows); 2 invalid spec or
arguments; 3 no CUDA device; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .errors import GemmCompareError, SpecError


def _spec(path: str):
    from .spec import load_spec

    return load_spec(path)


def cmd_validate(args) -> int:
    from .implementations.base import Skip

    bad = 0
    for path in args.specs:
        try:
            exp = _spec(path)
        except SpecError as exc:
            bad += 1
            print(f"INVALID {path}:", file=sys.stderr)
            for issue in exc.problems:
                print(f"  {issue}", file=sys.stderr)
            continue
        skips: dict[str, int] = {}
        for entry in exp.problems:
            for c in exp.contracts:
                for impl in exp.implementations:
                    s = impl.supports(entry.problem, c)
                    if isinstance(s, Skip):
                        key = f"{impl.name} under {c.name}: {s.reason}"
                        skips[key] = skips.get(key, 0) + 1
        print(f"valid   {path}: '{exp.name}': {len(exp.problems)} problems x {len(exp.contracts)} contracts x "
              f"{len(exp.implementations)} implementations = {exp.row_count} rows, {sum(skips.values())} will be SKIP")
        if args.verbose:
            for key, count in sorted(skips.items()):
                print(f"    skip x{count}: {key}")
    return 2 if bad else 0


def _run_options(args):
    from .runner import RunOptions

    return RunOptions(
        store=Path(args.store), runs_dir=Path(args.runs_dir), cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        arch=args.arch, resume=getattr(args, "resume", None), jobs=args.jobs, progress=not args.no_progress,
        isolate=not getattr(args, "in_process", False),
    )


def narrow(exp, shapes: str | None = None, check_only: bool = False, only: str | None = None):
    """The spec with other problem shapes, without timing, or with fewer implementations (for quick
    checks, sanitizers and profilers). Shapes are 'MxNxK[,MxNxK...]'."""
    import dataclasses
    import re

    from .errors import GemmCompareError
    from .problems import GemmProblem
    from .spec import ProblemEntry

    if shapes:
        entries = []
        for text in shapes.split(","):
            m = re.fullmatch(r"\s*(\d+)x(\d+)x(\d+)\s*", text)
            if not m or min(map(int, m.groups())) < 1:
                raise GemmCompareError(f"--shapes: {text!r} is not MxNxK with positive integers")
            entry = ProblemEntry(GemmProblem(*map(int, m.groups())))
            if entry.label not in {e.label for e in entries}:
                entries.append(entry)
        exp = dataclasses.replace(exp, problems=tuple(entries))
    if check_only:
        exp = dataclasses.replace(exp, problems=tuple(dataclasses.replace(e, time=False) for e in exp.problems))
    if shapes or check_only or only:  # a different experiment: its own hash, so --resume cannot mix them
        import hashlib

        tag = f"{exp.spec_hash}|shapes={shapes}|check_only={check_only}|only={only}"
        exp = dataclasses.replace(exp, spec_hash=hashlib.sha256(tag.encode()).hexdigest())
    if only:
        rx = re.compile(only)
        kept = tuple(i for i in exp.implementations if rx.search(i.name))
        if not kept:
            raise GemmCompareError(f"--only {only!r} matches none of {[i.name for i in exp.implementations]}")
        exp = dataclasses.replace(exp, implementations=kept,
                                  baseline=exp.baseline if exp.baseline in {i.name for i in kept} else None)
    return exp


def cmd_run(args) -> int:
    from .runner import Runner

    exp = narrow(_spec(args.spec), args.shapes, args.check_only, args.only)
    outcome = Runner(exp, _run_options(args)).run()
    rows = outcome.rows
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    print(f"run {outcome.run_id} ({outcome.status}): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print(f"  store: {args.store}   folder: {outcome.run_dir}")
    _print_rows(rows)
    if not args.no_report:
        try:
            from .report import build_report
        except ImportError:
            build_report = None
        if build_report is not None:
            try:
                out = build_report(outcome.run_id, store=args.store, out_dir=outcome.run_dir / "report",
                                   plots=list(exp.report.plots))
                print(f"  report: {out}")
            except Exception as exc:  # noqa: BLE001 - a report failure must not hide the results
                print(f"  report failed: {exc}", file=sys.stderr)
    if outcome.status != "complete":
        return 130 if outcome.status == "interrupted" else 1
    return 1 if any(r.status.value in ("FAIL", "CRASH", "TIMEOUT", "BUILD_ERROR") for r in rows) else 0


def _print_rows(rows) -> None:
    if not rows:
        return
    print(f"  {'problem':<16} {'contract':<22} {'implementation':<48} {'status':<11} {'median ms':>10} {'TFLOP/s':>9} {'% base':>7}")
    for r in rows:
        med = f"{r.median_ms:.4f}" if r.median_ms else ""
        tf = f"{r.tflops:.1f}" if r.tflops else ""
        pct = f"{r.pct_of_baseline:.1f}" if r.pct_of_baseline else ""
        print(f"  {r.problem:<16} {r.contract:<22} {r.implementation[:48]:<48} {r.status.value:<11} {med:>10} {tf:>9} {pct:>7}")
        if r.reason and r.status.value != "PASS":
            print(f"      {r.reason[:300]}")


def cmd_build(args) -> int:
    from .build.extension import BuildFailure
    from .device import probe_device
    from .runner import build_for

    exp = _spec(args.spec)
    outcome = build_for(exp, probe_device(), _run_options(args))
    filters = {impl.name: getattr(impl, "kernel_filter", "") for impl in exp.implementations}
    failed = 0
    for name, result in outcome.by_impl.items():
        if isinstance(result, BuildFailure):
            failed += 1
            print(f"BUILD_ERROR {name} ({result.seconds:.1f} s):\n{result.message}\n")
        else:
            how = "cached" if result.cache_hit else f"built in {result.build_seconds:.1f} s"
            print(f"ok          {name} [{result.plan.arch}, {how}] {result.plan.module_name}")
            for warning in result.resources_for(filters.get(name, "")).get("perf_warnings", ()):
                print(f"            ptxas performance loss: {warning}")
    print(f"{len(outcome.by_impl) - failed} built, {failed} failed (target sm_{outcome.target_cc})")
    return 1 if failed else 0


def cmd_list(args) -> int:
    from .contracts.precision import BUILTIN_CONTRACTS
    from .implementations import FAMILIES, FIXED

    if args.contracts:
        for name, c in sorted(BUILTIN_CONTRACTS.items()):
            print(c.describe())
        return 0
    print(f"{'implementation':<28} {'family':<9} {'arch':<9} contracts / constraints")
    for name in sorted(FIXED):
        impl = FIXED[name]()
        print(f"{name:<28} {impl.family:<9} {impl.required_arch():<9} {impl.contracts_summary()}")
        cons = impl.constraints_summary()
        if cons:
            print(f"{'':<48} {cons}")
    for name, fam in sorted(FAMILIES.items()):
        from .implementations import instantiate

        try:
            impl = instantiate(fam, {})
            print(f"{name + ' (family)':<28} {impl.family:<9} {impl.required_arch():<9} {impl.contracts_summary()}")
        except ValueError:  # a family with required parameters (custom): describe it instead
            print(f"{name + ' (family)':<28} {name.split('.')[0]:<9} {'':<9} {fam.description}")
        for p in fam.params:
            extra = f" one of {list(p.choices)}" if p.choices else ""
            print(f"{'':<48} {p.name}: {p.kind}, default {p.default!r}{extra}{(' - ' + p.help) if p.help else ''}")
    if args.resources:
        return _list_resources(args)
    return 0


def _list_resources(args) -> int:
    from .build.extension import BuildFailure, build_extensions, plan_extensions
    from .device import parse_arch, probe_device
    from .implementations import FAMILIES, FIXED, instantiate

    dev = probe_device()
    cc = dev.cc_int if dev else parse_arch(args.arch or "sm_90")[0]
    impls = [f() for f in FIXED.values()]
    for fam in FAMILIES.values():
        try:
            impls.append(instantiate(fam, {}))
        except ValueError:  # needs parameters (custom): nothing to show by default
            pass
    reqs = [(i, i.build_request(i.target_arch(cc))) for i in impls if i.min_cc <= cc]
    reqs = [(i, r) for i, r in reqs if r is not None]
    built = build_extensions(plan_extensions([r for _, r in reqs]), progress=not args.no_progress)
    print(f"\n{'implementation':<48} {'arch':<8} {'regs':>5} {'smem B':>8} {'spill st/ld':>12}")
    for impl, req in reqs:
        ext = next((b for b in built.values() if b.plan.group == req.group and b.plan.arch == req.arch), None)
        if ext is None or isinstance(ext, BuildFailure):
            print(f"{impl.name[:48]:<48} {req.arch:<8} BUILD_ERROR")
            continue
        r = ext.resources_for(getattr(impl, "kernel_filter", ""))
        if r:
            print(f"{impl.name[:48]:<48} {req.arch:<8} {r['registers']:>5} {r['smem_bytes']:>8} "
                  f"{r['spill_stores']:>5}/{r['spill_loads']:<6}")
            for warning in r.get("perf_warnings", ()):
                print(f"{'':<48} ptxas performance loss: {warning}")
    return 0


def cmd_env(args) -> int:
    from .device import probe_device
    from .receipt import environment
    from .telemetry import Telemetry

    dev = probe_device()
    tel = Telemetry(dev.index) if dev else None
    rec = environment(dev, tel.driver_version() if tel else None)
    if dev is None:
        rec["gpu"] = "none: no CUDA device visible to torch"
    if tel and tel.available:
        rec["telemetry_now"] = tel.sample()
    if args.json:
        print(json.dumps(rec, indent=2, default=str))
    else:
        for k, v in rec.items():
            print(f"{k:<20} {v}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gemmcompare", description="Compare GEMM kernels honestly.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="check experiment specs without running anything")
    p.add_argument("specs", nargs="+")
    p.add_argument("-v", "--verbose", action="store_true", help="list the rows that will be SKIP and why")
    p.set_defaults(func=cmd_validate)

    def run_args(p):
        p.add_argument("spec")
        p.add_argument("--store", default="gemmcompare.db", help="SQLite store (default ./gemmcompare.db)")
        p.add_argument("--runs-dir", default="runs", help="where run folders go (default ./runs)")
        p.add_argument("--cache-dir", default=None, help="build cache (default $GEMMCOMPARE_CACHE_DIR or ~/.cache/gemmcompare)")
        p.add_argument("--arch", default=None, help="compile target when there is no device, e.g. sm_90a or sm_80")
        p.add_argument("--jobs", type=int, default=None, help="parallel builds (default: CPU count)")
        p.add_argument("--no-progress", action="store_true")

    p = sub.add_parser("run", help="build, check and time a spec; store the rows; write a report")
    run_args(p)
    p.add_argument("--resume", default=None, metavar="RUN", help="continue run RUN, skipping rows it has")
    p.add_argument("--no-report", action="store_true")
    p.add_argument("--shapes", default=None, help="replace the spec's problems: MxNxK[,MxNxK...]")
    p.add_argument("--check-only", action="store_true", help="correctness only, no timing")
    p.add_argument("--only", default=None, metavar="REGEX", help="only the implementations whose name matches")
    p.add_argument("--in-process", action="store_true",
                   help="measure in this process (debugging); by default a worker process is replaced after a crash or hang")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("build", help="build a spec's extensions and show compiler errors")
    run_args(p)
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("list", help="implementations with their contracts, constraints and architectures")
    p.add_argument("--contracts", action="store_true", help="list the built-in precision contracts")
    p.add_argument("--resources", action="store_true", help="build and show ptxas registers/smem/spills")
    p.add_argument("--arch", default=None)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("env", help="the receipt fields of this machine")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_env)

    for module, fn in (("report_cli", "add_report_commands"), ("cutlass.cli", "add_cutlass_commands"),
                       ("integrity_cli", "add_integrity_commands"), ("custom_cli", "add_custom_commands")):
        try:
            mod = __import__(f"gemmcompare.{module}", fromlist=[fn])
        except ImportError as exc:
            if exc.name and exc.name.startswith("gemmcompare."):
                continue
            raise
        getattr(mod, fn)(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SpecError as exc:
        print("invalid spec:", file=sys.stderr)
        for issue in exc.problems:
            print(f"  {issue}", file=sys.stderr)
        return exc.exit_code
    except GemmCompareError as exc:
        print(f"gemmcompare: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("gemmcompare: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`gemmcompare cutlass list | head`): stop quietly, as
        # Unix tools do. Point stdout at /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
