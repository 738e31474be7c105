"""`validate`, `run` and `build`: a spec checked, measured, or only built."""

from __future__ import annotations

import sys
from pathlib import Path

from .options import (add_build_options, add_contracts, add_energy, add_l2, add_narrowing, add_oracle, add_run_storage,
                      exit_codes, load_spec, parser_args, progress_of, run_options)


def cmd_validate(args) -> int:
    from ..errors import SpecError
    from ..plan import make_plan

    bad = 0
    for path in args.specs:
        try:
            exp = load_spec(path)
        except SpecError as exc:
            bad += 1
            print(f"INVALID {path}:", file=sys.stderr)
            for issue in exc.problems:
                print(f"  {issue}", file=sys.stderr)
            continue
        plan = make_plan(exp)
        skips = plan.skips()
        derived = sum(impl.derived_for is not None for impl in exp.implementations)
        print(f"valid   {path}: '{exp.name}': {len(exp.problems)} problems x {len(exp.contracts)} contracts x "
              f"{len(exp.implementations)} implementations"
              + (f" ({derived} of them only under the contracts whose element types they take)" if derived else "")
              + f" = {plan.row_count} rows, {sum(skips.values())} will be SKIP")
        if args.verbose:
            for key, count in sorted(skips.items()):
                print(f"    skip x{count}: {key}")
    return 2 if bad else 0


def cmd_run(args) -> int:
    import time

    from ..plan import narrow
    from ..runner.parent import Runner
    from ..runner.phases import phase_line, process_age_s

    phases = {"start_s": process_age_s()}  # the interpreter's start and imports, until this command began
    t0 = time.monotonic()
    exp = narrow(load_spec(args.spec), args.shapes, args.check_only, args.only, l2=args.l2, energy=args.energy,
                 oracle=args.oracle, contracts=args.contracts)
    phases["spec_s"] = time.monotonic() - t0
    runner = Runner(exp, run_options(args), phases={k: v for k, v in phases.items() if v is not None})
    # after the options are checked (a bad --gpus is the first line), before minutes of building
    progress_of(args).say(f"run {args.spec}: '{exp.name}', {exp.row_count} rows: its kernels built (or found in the "
                          "cache), then every row checked and timed on the GPU, stored and reported")
    outcome = runner.run()
    rows = outcome.rows
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    print(f"run {outcome.run_id} ({outcome.status}): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print(f"  store: {args.store}   folder: {outcome.run_dir}")
    print_rows(rows)
    t0 = time.monotonic()
    if not args.no_report:
        _report(outcome, args.store)
    print(f"  {phase_line(runner.finish_phases(report_s=time.monotonic() - t0 if not args.no_report else None))}")
    if outcome.status != "complete":
        return 130 if outcome.status == "interrupted" else 1
    return 1 if any(r.status.value in ("FAIL", "CRASH", "TIMEOUT", "BUILD_ERROR") for r in rows) else 0


def _report(outcome, store) -> None:
    from ..report import build_report, rendering

    try:  # the plots the spec names (the receipt's report_plots), and the energy plot if energy was measured
        out = build_report(outcome.run_id, store=store, out_dir=outcome.run_dir / "report")
        print(f"  report: {out}")
    except Exception as exc:  # noqa: BLE001 - a report failure must not hide the results
        print(f"  report failed: {exc}", file=sys.stderr)
    finally:
        rendering.shutdown()


def print_rows(rows) -> None:
    if not rows:
        return
    energy = any(r.energy_j_per_gemm for r in rows)  # energy columns only for a run that measured it
    extra = f" {'J/GEMM':>9} {'J CI':>7} {'W':>5}" if energy else ""
    print(f"  {'problem':<16} {'contract':<22} {'implementation':<48} {'status':<11} {'median ms':>10} {'TFLOP/s':>9} "
          f"{'% base':>7}{extra}")
    for r in rows:
        med = f"{r.median_ms:.4f}" if r.median_ms else ""
        tf = f"{r.tflops:.1f}" if r.tflops else ""
        pct = f"{r.pct_of_baseline:.1f}" if r.pct_of_baseline else ""
        more = ""
        if energy:
            j = f"{r.energy_j_per_gemm:.4g}" if r.energy_j_per_gemm else ""
            ci = f"{100 * r.energy_ci_rel:.2f}%" if r.energy_j_per_gemm and r.energy_ci_rel is not None else ""
            w = f"{r.avg_power_w:.0f}" if r.avg_power_w else ""
            more = f" {j:>9} {ci:>7} {w:>5}"
        print(f"  {r.problem:<16} {r.contract:<22} {r.implementation[:48]:<48} {r.status.value:<11} {med:>10} {tf:>9} "
              f"{pct:>7}{more}")
        if r.reason and r.status.value != "PASS":
            print(f"      {r.reason[:300]}")


def cmd_build(args) -> int:
    # the build modules alone, not the runner's: a fully cached build is mostly imports (README, First answers)
    from ..build.experiment import build_experiment
    from ..build.extension import BuildFailure
    from ..device import probe_build_target
    from ..plan import narrow

    exp = narrow(load_spec(args.spec), args.shapes, False, args.only, l2=args.l2,  # --l2: checked, nothing else
                 contracts=args.contracts)
    cache_dir = Path(args.cache_dir) if args.cache_dir else None
    if args.objects_only:
        return _build_objects(exp, probe_build_target(), args, cache_dir)

    def log_finished(plan, result) -> None:
        # Without the bar (output to a log file), a line per extension as it finishes: a build cut short by a
        # time limit still says how far it got, where the summary below would never be printed.
        if isinstance(result, BuildFailure):
            print(f"failed      {plan.module_name} ({result.seconds:.1f} s)", flush=True)
        elif not result.cache_hit:
            print(f"built       {plan.module_name} ({result.build_seconds:.1f} s)", flush=True)

    outcome = build_experiment(exp, probe_build_target(), arch=args.arch, cache_dir=cache_dir, jobs=args.jobs,
                               progress=not args.no_progress, on_done=log_finished if args.no_progress else None)
    filters = {impl.name: impl.kernel_filter for impl in exp.implementations}
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


def _build_objects(exp, device, args, cache_dir) -> int:
    """`build --objects-only`: the kernel TUs alone into the object cache, a line for each as it is ready."""
    from ..build.experiment import compile_experiment_objects
    from ..build.kernel_objects import object_cache
    from ..progress import bar as progress_bar

    bars = []  # made once the TUs are counted

    def said(filename, result) -> None:
        if args.no_progress:
            state = "failed" if isinstance(result, str) else "cached" if result.cached else f"compiled ({result.seconds:.1f} s)"
            print(f"{state:<10} {filename}", flush=True)
        bars[0].update(1)

    try:
        outcome = compile_experiment_objects(
            exp, device, arch=args.arch, cache_dir=cache_dir, jobs=args.jobs, on_done=said,
            on_total=lambda n: bars.append(progress_bar(n, "compiling", "TU", enabled=not args.no_progress)))
    finally:
        for bar in bars:
            bar.close()
    for filename, message in sorted(outcome.failures.items()):
        print(f"BUILD_ERROR {filename}:\n{message}\n")
    print(f"{outcome.compiled} kernel TUs compiled, {outcome.cached} cached, {len(outcome.failures)} failed in "
          f"{outcome.seconds:.0f} s (target sm_{outcome.target_cc}), in {object_cache(cache_dir)}: a build links them "
          f"instead of compiling them (carried to another machine: GEMMCOMPARE_OBJECTS names the folder)")
    return 1 if outcome.failures else 0


def register(sub) -> None:
    p = sub.add_parser("validate", **parser_args(
        "check experiment specs without running anything",
        exit_codes(0, 2, c0="every spec is valid", c2="a spec is invalid (every problem is listed, with its line)")))
    p.add_argument("specs", nargs="+", metavar="SPEC")
    p.add_argument("-v", "--verbose", action="store_true", help="list the rows that will be SKIP and why")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("run", **parser_args(
        "build, check and time a spec; store the rows; write a report",
        exit_codes(0, 1, 2, 3, 130, c0="every row PASSed or was SKIP",
                   c1="a row FAILed, CRASHed, TIMEd OUT or did not build, or the run failed")))
    p.add_argument("spec", metavar="SPEC")
    add_run_storage(p)
    add_build_options(p)
    add_narrowing(p)
    add_contracts(p)
    add_l2(p)
    add_energy(p)
    add_oracle(p)
    p.add_argument("--resume", default=None, metavar="RUN", help="continue run RUN, skipping rows it has")
    p.add_argument("--no-report", action="store_true", help="no report at the end (gemmcompare report RUN writes it)")
    p.add_argument("--check-only", action="store_true", help="correctness only, no timing")
    p.add_argument("--in-process", action="store_true",
                   help="measure in this process (debugging); by default a worker process is replaced after a crash or hang")
    p.add_argument("--gpus", default=None, metavar="all|I,J",
                   help="one measuring worker per GPU (CUDA's numbering here); each group with its baseline on one GPU "
                        "(default: GPU 0)")
    p.add_argument("--cluster", default=None, metavar="ADDRESS|local",
                   help="measure on a Dask cluster's GPU workers (tcp://host:8786), or 'local': one Dask worker per "
                        "GPU of --gpus on this host; needs pip install 'gemmcompare[cluster]'")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="measure part I of N (from 0) of the plan: whole groups, the same split on every host; "
                        "join the parts with `gemmcompare merge`")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("build", **parser_args(
        "build a spec's extensions and show compiler errors",
        exit_codes(0, 1, 2, c1="an extension did not build (the compiler's errors are printed)")))
    p.add_argument("spec", metavar="SPEC")
    add_build_options(p)
    add_narrowing(p)
    add_contracts(p)
    add_l2(p, for_build=True)
    add_energy(p, for_build=True)
    add_oracle(p, for_build=True)
    p.add_argument("--objects-only", action="store_true",
                   help="compile the kernel TUs alone into the object cache (CACHE/objects), no torch binding: "
                        "what a build links instead of compiling them, here or on a GPU machine the folder is "
                        "carried to (GEMMCOMPARE_OBJECTS); with --arch where there is no GPU")
    p.set_defaults(func=cmd_build)
