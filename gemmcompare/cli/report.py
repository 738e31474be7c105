"""`report`, `compare` and `history`: reading runs back as tables, plots and verdicts.

A RUN is any source of store/sources.py (README, "Naming runs"): a run folder, a results file, a run id, unique
prefix or 'latest' in the store, a store (its latest run), STORE.db:RUN, a folder with one run below it;
history reads every run of its sources. Exit codes: report and history 0;
compare 1 when a row regressed, else 0; 2 when an input cannot be found or read (the message names it).
`report` writes under reports/ unless asked (--out, --in-place): a committed run folder stays untouched.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import GemmCompareError
from ..files import slug
from ..receipt import compare_threshold
from ..report.kinds import PLOT_NAMES
from ..store.sources import DEFAULT_STORE, SourceError, load_source
from .options import add_no_progress, add_out, add_store, add_threshold, exit_codes, parser_args, progress_of


def _name(text: str) -> str:
    return slug(text, 60, "run")


def _fail(command: str, exc: Exception) -> int:
    print(f"gemmcompare {command}: error: {exc}", file=sys.stderr)
    return getattr(exc, "exit_code", 2)


def _tell(note: str, command: str) -> None:
    """Which run a source gave, where it chose one (a store's latest), on stderr beside the output."""
    if note:
        print(f"gemmcompare {command}: {note}", file=sys.stderr)


def _output(out: Path, explicit: bool) -> Path:
    """The output folder, checked before anything is written (a file, or not writable: exit 2)."""
    from ..files import writable_dir

    return writable_dir(out, "--out" if explicit else "the output folder (--out names another)")


def _write_failed(command: str, out: Path | None, exc: OSError) -> int:
    return _fail(command, SourceError(f"cannot write into {out}: {exc.strerror or exc} (--out names another folder)"))


# -- handlers -------------------------------------------------------------------------------------------------

def cmd_report(args) -> int:
    from ..report import import_in_background, rendering  # not build_report: it loads pandas and matplotlib

    unknown = [k for k in args.plots or () if k not in PLOT_NAMES]
    if unknown:
        return _fail("report", SourceError(f"--plots: unknown plot kind(s) {unknown}; expected some of {list(PLOT_NAMES)}"))
    if args.out and args.in_place:
        return _fail("report", SourceError("give --out DIR or --in-place, not both"))
    progress = progress_of(args)
    progress.say(f"report {args.run}: loading the run, then its summary, plots and pages")
    out = None
    warming = import_in_background()  # and the figure-saving pool, while the results load
    try:
        with progress.step("loading") as step:
            src = load_source(args.run, args.store)
            _tell(src.note, "report")
            contracts = sorted(set(src.pair[1]["contract"])) if "contract" in src.pair[1] else []
            if args.across and args.across not in contracts:
                raise SourceError(f"--across {args.across}: the run has no rows under that contract; its contracts: "
                                  f"{', '.join(contracts) or 'none'}")
            # a committed run folder is part of the tree: its report/ is rewritten only when asked
            target = Path(args.out) if args.out else src.home if args.in_place else Path("reports") / _name(src.label)
            out = _output(target, bool(args.out))
            warming.join()
            step.done = f"loaded {len(src.rows)} rows of {src.label} and the plotting libraries; writing into {out}"
        from ..report import build_report  # loaded by now (`warming`): after the first line, not before it

        report = build_report(src.pair, out, plots=args.plots, across=args.across, progress=progress)
    except GemmCompareError as exc:
        return _fail("report", exc)
    except OSError as exc:
        return _write_failed("report", out, exc)
    finally:
        warming.join()
        rendering.shutdown()
    print(report.text_summary())
    return 0


def cmd_compare(args) -> int:
    runs = list(args.runs)
    if args.baseline:
        if len(runs) != 1:
            return _fail("compare", SourceError(f"with --baseline give one candidate run, got {len(runs)}: {runs}"))
        runs = [args.baseline] + runs
    elif len(runs) != 2:
        return _fail("compare", SourceError(f"give BASE and CAND (or --baseline PATH CAND), got {len(runs)}: {runs}"))
    progress = progress_of(args)
    progress.say(f"compare {runs[0]} -> {runs[1]}: loading both runs, then every row judged, a plot and a table")
    try:
        loaded = []
        for name in runs:
            with progress.step("loading") as step:
                loaded.append(load_source(name, args.store))
                _tell(loaded[-1].note, "compare")
                step.done = f"loaded {len(loaded[-1].rows)} rows of {loaded[-1].label}"
        base, cand = loaded
        for name, src in ((runs[0], base), (runs[1], cand)):
            if src.rows.empty:  # else every row of the other side would read NEW or GONE, and exit 0
                raise SourceError(f"{name}: holds no result rows; there is nothing to compare")
        out = Path(args.out) if args.out else Path("reports") / f"compare_{_name(base.label)}_vs_{_name(cand.label)}"
        _output(out, bool(args.out))
    except GemmCompareError as exc:
        return _fail("compare", exc)
    with progress.step("judging") as step:
        from ..verdicts import compare, write_comparison

        threshold = compare_threshold(cand.receipt, args.threshold)
        comp = compare(base.pair, cand.pair, threshold, base_label=base.label, cand_label=cand.label)
        step.done = f"judged {len(comp.table)} rows"
    try:
        files = write_comparison(comp, out, progress=progress)
    except OSError as exc:
        return _write_failed("compare", out, exc)
    print(comp.summary_text())
    print(f"table and plot: {files[2]}")
    return comp.exit_code


def cmd_history(args) -> int:
    import sqlite3

    sources = list(args.runs or [])
    if args.store:
        sources.append(args.store)
    elif not sources:
        if not Path(DEFAULT_STORE).exists():
            return _fail("history", SourceError(f"no store at ./{DEFAULT_STORE}: name runs with --runs PATH... "
                                                f"(run folders, e.g. experiments/studies) or a store with --store"))
        sources.append(DEFAULT_STORE)
    progress = progress_of(args)
    progress.say(f"history {args.implementation}: reading every run of {', '.join(map(str, sources))[:120]}, "
                 "then a table and a plot")
    from ..history import history, write_history  # pandas: after the first line

    try:
        with progress.step("reading") as step:
            h = history(sources, args.implementation, problem=args.problem, contract=args.contract,
                        store=args.store or DEFAULT_STORE)
            step.done = f"read {h.table['run_id'].nunique()} run(s) of {', '.join(h.implementations)[:100]}"
    except GemmCompareError as exc:
        return _fail("history", exc)
    except (sqlite3.Error, ValueError) as exc:  # a damaged database, a JSON column that is not JSON
        return _fail("history", SourceError(f"cannot read {', '.join(map(str, sources))}: {str(exc)[:300]}"))
    out = Path(args.out) if args.out else Path("reports") / f"history_{_name(h.implementation)}"
    try:
        _output(out, bool(args.out))
        with progress.step("writing") as step:
            files = write_history(h, out)
            step.done = f"wrote the table and plot into {out}"
    except GemmCompareError as exc:
        return _fail("history", exc)
    except OSError as exc:
        return _write_failed("history", out, exc)
    print(h.text())
    print(f"table and plot: {files[2]}")
    return 0


# -- registration -------------------------------------------------------------------------------------------

def register(subparsers) -> None:
    run_help = ("a run folder, results.json/.csv (maybe .gz/.xz), a run id, unique prefix or 'latest' in the store, "
                "a store file (its latest run), STORE.db:RUN_ID, or a folder with one run below it (README: Naming runs)")
    store_help = "SQLite store to read runs from"

    p = subparsers.add_parser("report", **parser_args(
        "tables, plots and an HTML page of a run",
        exit_codes(0, 2, c2="RUN cannot be found or read, or an unknown --plots kind"),
        "Write the report of a run: report.md, report.html (self-contained; opens on a summary), summary.csv and "
        "the plots as PNG and SVG, under reports/RUN unless --out or --in-place says otherwise."))
    p.add_argument("run", metavar="RUN", help=run_help)
    add_store(p, store_help)
    add_out(p, "the report", "reports/RUN")
    p.add_argument("--in-place", action="store_true",
                   help="write into the run folder's report/ (for a committed run: it rewrites files in the tree)")
    p.add_argument("--plots", nargs="+", metavar="KIND",
                   help="plots to draw (default: those the run's spec names in `report: {plots: [...]}`, else all: "
                        + ", ".join(PLOT_NAMES) + ")")
    p.add_argument("--across", metavar="CONTRACT",
                   help="set every contract's rows beside this contract's (the speed-up over it and the error against "
                        "the original inputs; default: the spec's report.across)")
    add_no_progress(p)
    p.set_defaults(func=cmd_report)

    c = subparsers.add_parser("compare", **parser_args(
        "noise-aware comparison of two runs; exit 1 on a regression",
        "examples: gemmcompare compare 20250101-ab 20250102-cd\n"
        "          gemmcompare compare --baseline experiments/studies/quickstart/h200 latest\n"
        "The rule: docs/reports.md\n\n"
        + exit_codes(0, 1, 2, c0="no row regressed", c1="a row is SLOWER or a REGRESSION",
                     c2="a run cannot be found or read, or bad arguments"),
        "Compare CAND with BASE row by row (problem, contract, implementation): SAME / FASTER / SLOWER / UNKNOWN "
        "from the sample distributions and the threshold, REGRESSION for PASS -> FAIL, NEW, GONE. Runs from "
        "different GPUs are judged on % of baseline and % of peak."))
    c.add_argument("runs", nargs="+", metavar="RUN", help="BASE CAND, or only CAND with --baseline; each " + run_help)
    c.add_argument("--baseline", metavar="PATH", help="the base run: a committed results file or run folder (or id)")
    add_threshold(c, "the candidate spec's")
    add_store(c, store_help)
    add_out(c, "the comparison", "reports/compare_BASE_vs_CAND")
    add_no_progress(c)
    c.set_defaults(func=cmd_compare)

    h = subparsers.add_parser("history", **parser_args(
        "implementations' figures over many runs (store or run folders)",
        "example: gemmcompare history 'cutlass3x_sm90.*128x256x64_2x1x1' --runs experiments/studies\n\n"
        + exit_codes(0, 2, c2="nothing matches, the pattern matches too many implementations, or a run cannot be "
                              "read (the message lists the candidates)"),
        "TFLOP/s (with its 95% CI band) and % of baseline of one or a few implementations over every run found, "
        "by date and git commit: a table and a plot. Runs come from run folders (--runs) and stores (--store) "
        "alike; without either, ./gemmcompare.db."))
    h.add_argument("implementation", metavar="IMPL",
                   help="a name, a part of one, or a regular expression; each implementation it matches (at most 6) "
                        "is its own series")
    h.add_argument("--runs", nargs="+", metavar="PATH",
                   help="run folders, folders of runs at any depth (e.g. experiments/studies), results files, store "
                        "files (all their runs), STORE.db:RUN_ID or run ids in --store (README: Naming runs)")
    h.add_argument("--problem", metavar="MxNxK", help="only this problem")
    h.add_argument("--contract", metavar="C", help="only this contract")
    add_store(h, store_help, default=None, shown=f"default: ./{DEFAULT_STORE} when no --runs is given either")
    add_out(h, "the table and plot", "reports/history_IMPL")
    add_no_progress(h)
    h.set_defaults(func=cmd_history)
