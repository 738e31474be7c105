"""`dashboard`: a static site (HTML + PNG) of every run under some folders and stores: GPUs x specs with each
latest verdict, and every implementation's series per (GPU, contract, problem) with its flagged steps."""

from __future__ import annotations

import sys

from ..errors import GemmCompareError
from .options import add_no_progress, add_threshold, exit_codes, parser_args, progress_of

NORMALIZE = {"none": "tflops", "peak": "pct_of_peak", "energy": "gflop_per_j"}


def cmd_dashboard(args) -> int:
    progress_of(args).say(f"dashboard {' '.join(args.runs)[:120]}: every run found read, then the pages whose inputs "
                          f"changed drawn into {args.out}")
    from ..dashboard import build_dashboard  # pandas, the runs' readers: after the first line
    from ..files import writable_dir

    try:
        out = writable_dir(args.out, "--out")
        d = build_dashboard(args.runs, out, metric=NORMALIZE[args.normalize], threshold=args.threshold,
                            progress=not args.no_progress)
    except GemmCompareError as exc:
        print(f"gemmcompare dashboard: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(f"gemmcompare dashboard: error: cannot write into {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    removed = f", {len(d.removed)} files of pages no longer drawn removed" if d.removed else ""
    print(f"{len(d.runs)} runs, {len(d.series_pages)} series pages, {len(d.pages)} pages in all ({len(d.drawn)} drawn, "
          f"{len(d.unchanged)} unchanged since the last build{removed}): {d.index}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("dashboard", **parser_args(
        "a static site of every run found: latest verdicts and every implementation's series",
        "example: gemmcompare dashboard experiments/studies --out site\n"
        "More: docs/regressions.md\n\n"
        + exit_codes(0, 2, c2="a RUNS path is missing or holds no run, a run cannot be read, or --out cannot be "
                              "written"),
        "Find every run under RUNS (run folders at any depth, results.json/csv, SQLite stores) and write a static "
        "site into --out: index.html (GPUs x specs and purposes, each cell the latest run's verdict against the "
        "previous run of that spec and purpose on that GPU: a probe or a narrowed run is not compared with the "
        "spec's full runs), a page per (GPU, spec, purpose), and a page per (GPU, contract, problem) with every "
        "implementation's series over commits and dates: CI bands, the baseline's own drift, the SM clock, "
        "THROTTLED rows, and the steps between consecutive runs that compare's verdict flags. A second build into "
        "the same --out draws only the pages whose inputs changed (dashboard-manifest.json there)."))
    p.add_argument("runs", nargs="+", metavar="RUNS", help="run folders, folders of them (searched at any depth), "
                                                          "results files, store files (all their runs), STORE.db:RUN_ID "
                                                          "or run ids in ./gemmcompare.db (README: Naming runs)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write the site in (index.html there)")
    p.add_argument("--normalize", choices=sorted(NORMALIZE), default="none",
                   help="'peak': plot %% of each GPU's datasheet peak for the contract's math (for views across "
                        "GPUs); 'energy': GFLOP per joule (rows run with timing: {energy: true}); default raw TFLOP/s")
    add_threshold(p, "each later run's spec's")
    add_no_progress(p)
    p.set_defaults(func=cmd_dashboard)
