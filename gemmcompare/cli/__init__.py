"""The `gemmcompare` command line: one module per command group, each with a `register(subparsers)`.

  run.py         validate, run, build
  listing.py     list, env
  report.py      report, compare, history
  sanitize.py    sanitize (compute-sanitizer)
  profile.py     profile (Nsight Compute)
  new_kernel.py  new-kernel
  cutlass.py     cutlass list, cutlass enumerate
  analyze.py     analyze (predictions without a GPU)
  merge.py       merge (runs made apart, e.g. shards, into one)
  bisect.py      bisect (the first commit that made a kernel slower)
  dashboard.py   dashboard (a static site of many runs: latest verdicts, series, steps)
  options.py     the flags several commands share (not a command group)

Command modules import heavy libraries (torch, pandas, matplotlib) inside their handlers only, so that
`--help` and the quick commands answer at once; no command module imports another.

Exit codes are the same in every command (options.EXIT_MEANINGS); each command's --help lists the ones it
can return, and the top-level --help all of them.
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from ..errors import GemmCompareError, SpecError
from ..interrupts import first_interrupt_only
from . import analyze, bisect, cutlass, dashboard, listing, merge, new_kernel, profile, report, run, sanitize
from .options import EXIT_MEANINGS, exit_codes

COMMAND_GROUPS = (run, listing, report, sanitize, profile, new_kernel, cutlass, analyze, merge, bisect, dashboard)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gemmcompare", description="Compare GEMM kernels honestly.",
        epilog=exit_codes(*EXIT_MEANINGS) + "\n(each command's --help lists the codes it returns)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"gemmcompare {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with first_interrupt_only():
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
