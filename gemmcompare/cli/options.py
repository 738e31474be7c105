"""Options that several commands share, defined once so that a flag means the same in every command, and
each command's exit codes (printed under its --help)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..store import DEFAULT_STORE

# exit code -> meaning, the same in every command; each command lists the ones it can return
EXIT_MEANINGS = {
    0: "success",
    1: "a failure: failed rows, build errors, a regression, or tool errors (the output says which)",
    2: "invalid spec, arguments or input file (the message names it)",
    3: "no CUDA device (the spec was valid and what could be built was built)",
    130: "interrupted (Ctrl-C); finished rows are kept",
    141: "the reader of the output went away (a closed pipe)",
}


def exit_codes(*codes: int, **meanings: str) -> str:
    """The 'exit codes:' block of a command's --help: the codes given, with a command's own wording of a
    meaning (`c1="..."`) where it says more than the shared one."""
    lines = ["exit codes:"]
    for code in codes:
        lines.append(f"  {code:<4} {meanings.get(f'c{code}', EXIT_MEANINGS[code])}")
    return "\n".join(lines)


def parser_args(help_text: str, epilog: str, description: str | None = None) -> dict:
    """Keyword arguments of add_parser that keep the exit-code block's layout."""
    return dict(help=help_text, description=description or help_text, epilog=epilog,
                formatter_class=argparse.RawDescriptionHelpFormatter)


def add_store(p, help_text: str = "SQLite store", default: str | None = DEFAULT_STORE, shown: str | None = None) -> None:
    """shown: what the help says of the default, where the command decides it (history: ./gemmcompare.db only
    when no --runs is given either)."""
    shown = shown or (f"default ./{default}" if default else "none unless given")
    p.add_argument("--store", default=default, metavar="DB", help=f"{help_text} ({shown})")


def arch(text: str) -> str:
    """An --arch value (sm_90a, sm_80, 90), checked here so that a typo is an argument error (exit 2)."""
    from ..arch import parse_arch

    try:
        parse_arch(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_arch(p, help_text: str = "compile target when there is no device, e.g. sm_90a or sm_80", **kw) -> None:
    p.add_argument("--arch", type=arch, metavar="ARCH", help=help_text, **kw)


def add_build_options(p) -> None:
    """Where builds are cached, what they target without a device, how many run at once, progress bars."""
    p.add_argument("--cache-dir", default=None, help="build cache (default $GEMMCOMPARE_CACHE_DIR or ~/.cache/gemmcompare)")
    add_arch(p, default=None)
    p.add_argument("--jobs", type=positive_int, default=None, help="parallel builds (default: CPU count)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def add_no_progress(p) -> None:
    """--no-progress of the commands that say each step as it ends (progress.py): lines, never a bar."""
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bars: a line on stderr as each step ends (as when stderr is not a terminal)")


def progress_of(args):
    """The command's Progress: bars where stderr is a terminal and --no-progress is not given, else lines."""
    from ..progress import Progress

    return Progress.for_command(bars=not getattr(args, "no_progress", False))


def threshold_arg(text: str) -> float:
    """A --threshold value: a fraction such as 0.03, or a percent such as 3%."""
    t = text.strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        value = 0.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"threshold {text!r}: expected a fraction in (0, 1) such as 0.03, or 3%")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def add_run_storage(p) -> None:
    add_store(p)
    p.add_argument("--runs-dir", default="runs", help="where run folders go (default ./runs)")


def add_narrowing(p, shapes_default: str | None = None) -> None:
    shown = f" (default {shapes_default})" if shapes_default else ""
    p.add_argument("--shapes", default=shapes_default, help=f"replace the spec's problems: MxNxK[,MxNxK...]{shown}")
    p.add_argument("--only", default=None, metavar="REGEX", help="only the implementations whose name matches")


def add_contracts(p) -> None:
    p.add_argument("--contract", dest="contracts", default=None, metavar="NAME[,NAME...]",
                   help="only this (or these, comma-separated) of the spec's contracts, each with its own baseline")


def add_l2(p, for_build: bool = False) -> None:
    """--l2: the spec's timing.l2 replaced, as if the spec said it (plan.narrow checks the value: exit 2)."""
    from ..contracts.timing import L2_POLICIES  # no torch: --help stays quick

    policies = ", ".join(L2_POLICIES)
    if for_build:
        what = (f"accepted ({policies}) so that a run's command line builds as it is; no build depends on the "
                f"L2 policy, so it changes nothing here")
    else:
        what = (f"time under this L2 policy instead of the spec's timing.l2: {policies} (docs/timing.md); the "
                f"spec hash, receipt, rows and tuning picks then read it as if the spec said it")
    p.add_argument("--l2", default=None, metavar="POLICY", help=what)


def add_energy(p, for_build: bool = False) -> None:
    """--energy: energy per GEMM measured, as if the spec said `timing: {energy: true}` (docs/timing.md, "Energy")."""
    what = ("accepted so that a run's command line builds as it is; it changes nothing here" if for_build else
            "measure each timed row's energy per GEMM too (NVML's energy counter; a few seconds a row), as if the "
            "spec said timing: {energy: true}; the spec hash and receipt say so")
    p.add_argument("--energy", action="store_true", help=what)


def add_oracle(p, for_build: bool = False) -> None:
    """--oracle: every tuned row's candidates measured in full, as if the spec said `timing: {oracle: true}`."""
    what = ("accepted so that a run's command line builds as it is; it changes nothing here" if for_build else
            "tuned rows: after each pick, measure every candidate that passes its check with the full protocol, "
            "so that the receipt shows how far the pick is from the true best (docs/tuning.md); as if the spec "
            "said timing: {oracle: true}; the spec hash and receipt say so")
    p.add_argument("--oracle", action="store_true", help=what)


def add_threshold(p, whose: str) -> None:
    from ..receipt import DEFAULT_COMPARE_THRESHOLD  # receipt.py imports no pandas: --help stays quick

    p.add_argument("--threshold", type=threshold_arg, default=None, metavar="T",
                   help=f"smallest change that counts, as a fraction or percent (default: {whose} setting when its "
                        f"receipt has one, else {DEFAULT_COMPARE_THRESHOLD:g})")


def add_json(p) -> None:
    p.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE",
                   help="also write the result as JSON to FILE (no FILE, or '-': standard output)")


def add_out(p, what: str, default: str) -> None:
    p.add_argument("--out", metavar="DIR", default=None, help=f"folder to write {what} in (default {default})")


def write_json(target: str | None, text: str) -> None:
    """--json's output: FILE, or standard output for '-'."""
    if target is None:
        return
    if target == "-":
        print(text)
    else:
        Path(target).write_text(text + "\n")


def run_options(args):
    from ..runner.parent import RunOptions

    bars = progress_of(args).bars  # a terminal and no --no-progress: bars; else a line per build and row
    return RunOptions(
        store=Path(getattr(args, "store", None) or DEFAULT_STORE), runs_dir=Path(getattr(args, "runs_dir", "runs")),
        cache_dir=Path(args.cache_dir) if args.cache_dir else None, arch=args.arch,
        resume=getattr(args, "resume", None), jobs=args.jobs, progress=bars, lines=not bars,
        isolate=not getattr(args, "in_process", False),
        gpus=getattr(args, "gpus", None), cluster=getattr(args, "cluster", None), shard=getattr(args, "shard", None),
        report_after=not getattr(args, "no_report", True),  # `run` without --no-report
    )


def load_spec(path: str):
    from ..spec import load_spec as load

    return load(path)
