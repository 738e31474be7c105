"""`analyze`: everything that can be known about a spec without running it, for a named or detected GPU."""

from __future__ import annotations

import re
from pathlib import Path

from .options import add_no_progress, add_out, exit_codes, load_spec, parser_args, positive_int, progress_of


def _default_out(exp, device) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{exp.name}_{device.key}")
    return Path("analysis") / slug


def cmd_analyze(args) -> int:
    progress = progress_of(args)
    # said before pandas and the compiler start: a cold cache compiles for minutes
    progress.say(f"analyze {args.spec} for {args.device or 'the GPU here'}: each kernel compiled alone for its "
                 f"registers and shared memory (minutes on a cold cache), then every row predicted")
    with progress.step("reading the spec") as step:
        from ..analysis import PREDICTED, analyze, resolve_device, write_report

        exp = load_spec(args.spec)  # validates: an invalid spec exits 2 with every problem
        device = resolve_device(args.device)
        step.done = (f"read '{exp.name}': {len(exp.problems)} problems x {len(exp.contracts)} contracts x "
                     f"{len(exp.implementations)} implementations, for {device.name} ({device.arch})")
    result = analyze(exp, device, cache_dir=Path(args.cache_dir) if args.cache_dir else None, jobs=args.jobs,
                     progress=progress)
    out = Path(args.out) if args.out else _default_out(exp, device)
    with progress.step("writing the report") as step:
        report = write_report(result, exp, out, progress)
        step.done = f"wrote the report into {out}"
    counts = result.counts()
    print(f"analyze {exp.path} for {device.name} ({device.arch}): "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    for note in result.compile_notes:
        print(f"  {note}")
    for rec in result.rows:
        if rec["status"] == PREDICTED:
            print(f"  {rec['problem']:<16} {rec['contract']:<18} {rec['implementation'][:56]:<56} "
                  f"{rec['predicted_ms']:>10.4f} ms  {rec['predicted_bound']}")
        elif rec["status"] != "SKIP":
            print(f"  {rec['problem']:<16} {rec['contract']:<18} {rec['implementation'][:56]:<56} {rec['status']}: "
                  f"{rec['reason'][:200]}")
    print(f"  report: {report}")
    return 1 if counts.get("BUILD_ERROR") else 0


def register(sub) -> None:
    p = sub.add_parser("analyze", **parser_args(
        "predict a spec's rows for a GPU without running anything (no GPU needed)",
        exit_codes(0, 1, 2, c1="a kernel of the spec failed to compile (BUILD_ERROR rows)",
                   c2="invalid spec, arguments or input file, or an unknown --device")))
    p.add_argument("spec")
    p.add_argument("--device", default=None,
                   help="the GPU to predict for: h100, h200, a100, l4, rtx4090, b200 (default: the one present)")
    add_out(p, "the report", "./analysis/<spec name>_<device key>, e.g. ./analysis/quickstart_h200_sxm")
    p.add_argument("--cache-dir", default=None, help="build cache (default $GEMMCOMPARE_CACHE_DIR or ~/.cache/gemmcompare)")
    p.add_argument("--jobs", type=positive_int, default=None, help="parallel compiles (default: CPU count)")
    add_no_progress(p)
    p.set_defaults(func=cmd_analyze)
