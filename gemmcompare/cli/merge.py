"""`merge`: runs made apart (the shards of a job array, or runs on several hosts) joined into one."""

from __future__ import annotations

from pathlib import Path

from .options import add_no_progress, add_store, exit_codes, parser_args, progress_of


def cmd_merge(args) -> int:
    progress = progress_of(args)
    progress.say(f"merge {len(args.sources)} source(s) into {args.out}: each read, checked as one run, then written")
    from ..store.merge import merge  # pandas: after the first line

    run_id, rows, partial = merge(Path(args.out), args.sources, Path(args.store), allow_partial=args.allow_partial,
                                  progress=progress)
    print(f"run {run_id} ({'partial' if partial else 'complete'}): {rows} rows from {len(args.sources)} source(s)")
    for what in partial:
        print(f"  partial: {what}")
    print(f"  store: {args.store}   folder: {args.out}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("merge", **parser_args(
        "join shard stores or run folders of one spec into one run",
        exit_codes(0, 2, c2="the sources do not make one run (another spec, a row twice, a shard missing), or cannot be read")))
    p.add_argument("out", help="the merged run's folder (results.csv, results.json, receipt.json)")
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="a store (all its runs), a run folder or a results.json")
    add_store(p, "SQLite store the merged run is added to")
    p.add_argument("--allow-partial", action="store_true",
                   help="merge even when a shard is missing or incomplete (the run is marked partial)")
    add_no_progress(p)
    p.set_defaults(func=cmd_merge)
