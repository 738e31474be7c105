"""Options that several commands share, defined once so that a flag means the same in every command."""

from __future__ import annotations

from pathlib import Path

from ..store import DEFAULT_STORE


def add_store(p, help_text: str = "SQLite store") -> None:
    p.add_argument("--store", default=DEFAULT_STORE, help=f"{help_text} (default ./{DEFAULT_STORE})")


def add_build_options(p) -> None:
    """Where builds are cached, what they target without a device, how many run at once, progress bars."""
    p.add_argument("--cache-dir", default=None, help="build cache (default $GEMMCOMPARE_CACHE_DIR or ~/.cache/gemmcompare)")
    p.add_argument("--arch", default=None, help="compile target when there is no device, e.g. sm_90a or sm_80")
    p.add_argument("--jobs", type=int, default=None, help="parallel builds (default: CPU count)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def add_run_storage(p) -> None:
    add_store(p)
    p.add_argument("--runs-dir", default="runs", help="where run folders go (default ./runs)")


def add_narrowing(p, shapes_default: str | None = None) -> None:
    p.add_argument("--shapes", default=shapes_default, help="replace the spec's problems: MxNxK[,MxNxK...]")
    p.add_argument("--only", default=None, metavar="REGEX", help="only the implementations whose name matches")


def run_options(args):
    from ..run.parent import RunOptions

    return RunOptions(
        store=Path(getattr(args, "store", None) or DEFAULT_STORE), runs_dir=Path(getattr(args, "runs_dir", "runs")),
        cache_dir=Path(args.cache_dir) if args.cache_dir else None, arch=args.arch,
        resume=getattr(args, "resume", None), jobs=args.jobs, progress=not args.no_progress,
        isolate=not getattr(args, "in_process", False),
        gpus=getattr(args, "gpus", None), cluster=getattr(args, "cluster", None), shard=getattr(args, "shard", None),
    )


def load_spec(path: str):
    from ..spec import load_spec as load

    return load(path)
