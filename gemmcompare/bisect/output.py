"""What `gemmcompare bisect` prints and writes: a line per step as it is measured, the table of steps,
the first bad commit with its evidence, and bisect.md / bisect.json in the output folder."""

from __future__ import annotations

import json
from pathlib import Path

from ..files import atomic_write_text
from .driver import FOUND, RANGE, REFERENCE, BisectResult, Step
from .judge import RowChange


def _row_text(r: RowChange) -> str:
    what = r.verdict if r.status == "PASS" else r.status
    return f"{r.implementation} {r.problem}: {what} {r.change if r.ratio is not None else ''}".rstrip()


def changes(step: Step, baseline: bool = False) -> str:
    """The watched rows' changes against the good commit (the baseline's alone with baseline=True)."""
    rows = [r for r in step.rows if r.is_baseline == baseline]
    return "; ".join(_row_text(r) for r in rows)


def _subject(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def header(result: BisectResult) -> str:
    w = result.watch
    rows = ", ".join(f"{n} (baseline)" if n in w.baseline_names else n for n in w.implementations)
    lines = [f"bisect {result.spec} in {result.repo}: good {result.good.short}, bad {result.bad.short}, "
             f"{len(result.candidates)} commit{'s' if len(result.candidates) != 1 else ''} after the good one",
             f"watching: {rows}" + (f" on {w.shapes}" if w.shapes else "")]
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


def step_line(step: Step, result: BisectResult) -> str:
    n = len(result.steps)
    text = f"step {n}: {step.role:<8} {step.commit.short} {_subject(step.commit.subject, 40)!r}: {step.verdict}"
    if step.verdict == REFERENCE:
        text += f" ({step.rows_measured} rows, {step.seconds:.0f} s)"
    else:
        text += f" ({changes(step) or step.reason}; {step.seconds:.0f} s)"
    return text


def summary(result: BisectResult) -> str:
    """The result and its evidence, for the terminal and the top of bisect.md."""
    lines = [result.message]
    if result.status == FOUND:
        culprit = result.first_bad
        step = result.step_of(culprit)
        lines.append(f"  {culprit.sha}")
        if step is not None:
            for r in step.rows:
                lines.append(f"  {'baseline ' if r.is_baseline else ''}{r.implementation} {r.problem} {r.contract}: "
                             f"{r.verdict} against good {result.good.short}: {r.detail}")
        before = _commit_before(result, culprit)
        if before is not None:
            lines.append(f"  the commit before it, {before.commit.short} {_subject(before.commit.subject)!r}, is "
                         f"{'the good end' if before.verdict == REFERENCE else before.verdict}"
                         + (f": {changes(before)}" if before.verdict != REFERENCE else ""))
    elif result.status == RANGE:
        for c in result.could_be:
            lines.append(f"  {c.short} {c.subject}")
    lines.append(f"{len(result.steps)} commits measured ({result.intermediate_steps} between the two ends), "
                 f"threshold {100 * (result.threshold or 0):g}%")
    return "\n".join(lines)


def _commit_before(result: BisectResult, commit) -> Step | None:
    shas = [result.good.sha] + [c.sha for c in result.candidates]
    i = shas.index(commit.sha)
    return next((s for s in result.steps if s.commit.sha == shas[i - 1]), None) if i > 0 else None


def markdown(result: BisectResult) -> str:
    out = [f"# gemmcompare bisect: {result.spec}", "", "```", header(result), "```", "", "```", summary(result), "```",
           "", "| # | commit | subject | role | rows | change vs good (watched rows) | baseline | verdict |",
           "|---:|---|---|---|---:|---|---|---|"]
    for i, s in enumerate(result.steps, 1):
        cells = [str(i), f"`{s.commit.short}`", _subject(s.commit.subject), s.role, str(s.rows_measured),
                 changes(s) or ("" if s.verdict == REFERENCE else s.reason), changes(s, baseline=True),
                 f"**{s.verdict}**" if s.verdict in ("bad", "skip") else s.verdict]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out += ["", "Each commit's run is judged against the good commit's by `gemmcompare compare`'s rule "
            "(docs/reports.md): a row SLOWER, or PASS turned into FAIL/CRASH/TIMEOUT, makes a commit bad; a commit "
            "whose spec or kernels do not build, or whose rows cannot be told (UNKNOWN), is skipped, as "
            "`git bisect skip`; the baseline row shows how the machine moved and is not judged.", ""]
    for s in result.steps:
        if s.verdict == "skip":
            out.append(f"- `{s.commit.short}` skipped: {s.reason}")
    return "\n".join(out) + "\n"


def as_json(result: BisectResult) -> dict:
    def commit(c):
        return {"sha": c.sha, "subject": c.subject}

    return {
        "repo": str(result.repo), "spec": str(result.spec), "good": commit(result.good), "bad": commit(result.bad),
        "candidates": [commit(c) for c in result.candidates], "only": result.watch.only,
        "shapes": result.watch.shapes, "baseline": result.watch.baseline,
        "implementations": list(result.watch.implementations), "threshold": result.threshold,
        "status": result.status, "message": result.message, "exit_code": result.exit_code,
        "first_bad": commit(result.first_bad) if result.first_bad else None,
        "could_be": [commit(c) for c in result.could_be], "notes": result.notes,
        "steps": [{
            "commit": commit(s.commit), "role": s.role, "verdict": s.verdict, "reason": s.reason,
            "rows_measured": s.rows_measured, "seconds": s.seconds, "build_failed": s.build_failed,
            "run_dir": str(s.run_dir) if s.run_dir else None, "log": str(s.log) if s.log else None,
            "rows": [dict(r.__dict__, change=r.change) for r in s.rows],
        } for s in result.steps],
    }


def write(result: BisectResult, out: Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return [atomic_write_text(out / "bisect.md", markdown(result)),
            atomic_write_text(out / "bisect.json", json.dumps(as_json(result), indent=1) + "\n")]
