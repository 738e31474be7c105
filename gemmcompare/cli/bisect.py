"""`bisect`: the first commit of a repository's history that made a watched kernel slower or broke it.

Each commit is checked out into a scratch worktree (never the user's own), its spec's watched rows are
run in a `gemmcompare run` process of their own, and judged against the good commit by `compare`'s rule.
"""

from __future__ import annotations

from pathlib import Path

from .options import add_build_options, add_narrowing, add_threshold, exit_codes, parser_args


def cmd_bisect(args) -> int:
    from ..bisect.driver import bisect_repository
    from ..bisect.measure import RunCommand, Watch
    from ..bisect.output import header, step_line, summary, write
    from ..bisect.search import Search
    from ..files import slug, writable_dir

    out = Path(args.out) if args.out else Path("reports") / f"bisect_{slug(args.good, 40, 'rev')}_{slug(args.bad, 40, 'rev')}"
    writable_dir(out, "--out" if args.out else "the output folder (--out names another)")
    out = out.absolute()
    measurer = RunCommand(out, cache_dir=args.cache_dir, arch=args.arch, jobs=args.jobs)

    def started(result) -> None:
        print(header(result))
        between = Search([c.sha for c in result.candidates]).steps_left()
        print(f"measuring the two ends, then about {between} commits between them; runs and logs under {out}/steps/")

    def stepped(step, result) -> None:
        print(step_line(step, result), flush=True)

    result = bisect_repository(Path(args.spec), args.good, args.bad, measurer,
                               Watch(only=args.only, shapes=args.shapes), threshold=args.threshold,
                               on_step=stepped, on_start=started)
    files = write(result, out)
    print(summary(result))
    print(f"table: {files[0]}")
    return result.exit_code


def register(sub) -> None:
    p = sub.add_parser("bisect", **parser_args(
        "the first commit that made a watched kernel slower (or broke it)",
        "example: gemmcompare bisect kernels/spec.yaml --good v1.2 --bad HEAD --only my_gemm --shapes 2048x2048x2048\n"
        "Each commit is checked out into a scratch worktree (the working tree, index and branch are left alone);\n"
        "builds go through the build cache; a commit whose spec or kernels do not build is skipped, as\n"
        "`git bisect skip`; FAIL, CRASH and TIMEOUT count as bad. docs/regressions.md says more.\n\n"
        + exit_codes(0, 1, 2, 3, 130, c0="no regression: the bad commit is not (clearly) slower than the good one",
                     c1="a regression: the first bad commit is named (or the range skipped commits leave)",
                     c2="bad input: not a git repository, an unknown commit, good not an ancestor of bad, a spec "
                        "not in the repository or invalid, --only matching nothing, or an end that cannot be "
                        "measured"),
        "Find the first commit between GOOD and BAD of the git repository that holds SPEC (and its custom "
        "kernels) whose watched rows are SLOWER than at GOOD, or FAIL: the ends are measured first, then "
        "about log2(N) commits between them, each judged against GOOD by compare's noise-aware rule, the "
        "spec's baseline measured in every run."))
    p.add_argument("spec", metavar="SPEC", help="the spec, as a path in your checkout of the repository")
    p.add_argument("--good", required=True, metavar="REV", help="a commit where the watched rows are good")
    p.add_argument("--bad", default="HEAD", metavar="REV", help="a later commit where they are slower (default HEAD)")
    add_narrowing(p)
    add_threshold(p, "the spec's")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="folder for bisect.md, bisect.json, the store and each step's run and log "
                        "(default reports/bisect_GOOD_BAD)")
    add_build_options(p)
    p.set_defaults(func=cmd_bisect)
