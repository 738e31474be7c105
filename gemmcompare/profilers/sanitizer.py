"""compute-sanitizer over a spec: each tool (memcheck, racecheck, synccheck) runs the spec narrowed to
small shapes, correctness only, in one process (`run --shapes ... --check-only --in-process`); each error
the tool prints names a kernel, which is mapped back to the implementation that owns it (ptxas report)."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..progress import SILENT, Progress
from .tools import find_tool

TOOLS = ("memcheck", "racecheck", "synccheck")


@dataclass(frozen=True)
class SanitizerRow:
    tool: str
    implementation: str
    errors: int  # -1: the tool printed no summary
    first: str  # the first error reported, or why there is no summary


def kernel_owners(exp, builds) -> dict[str, list[str]]:
    """Kernel name (demangled, unqualified) -> the implementations whose builds hold it (ptxas reports)."""
    owners: dict[str, list[str]] = {}
    impls = {i.name: i for i in exp.implementations}
    for name, ext in builds.by_impl.items():
        resources = getattr(ext, "resources", [])  # a BuildFailure has none
        pattern = impls[name].kernel_filter
        rx = re.compile(pattern) if pattern else None
        for r in resources:
            label = r.get("demangled") or r["function"]
            if rx is None or rx.search(r["function"]) or rx.search(label):
                key = label.split("(")[0].split("<")[0].strip().split("::")[-1]
                owners.setdefault(key, [])
                if name not in owners[key]:
                    owners[key].append(name)
    return owners


def parse_sanitizer(text: str) -> tuple[int, list[dict]]:
    """(error count from the summary, one dict per reported error with its kernel)."""
    m = re.search(r"ERROR SUMMARY:\s+(\d+) error", text) or re.search(r"SUMMARY:.*?\((\d+) errors?", text)
    count = int(m.group(1)) if m else -1
    errors, current = [], None
    for line in text.splitlines():
        body = line.replace("=========", "").strip()
        if not body:
            continue
        if re.match(r"(Invalid|Error|Race|Barrier|Program hit|Uninitialized|Divergent|Misaligned|Out-of-range)", body):
            current = {"what": body, "kernel": None}
            errors.append(current)
        elif current is not None and current["kernel"] is None:
            k = re.search(r"(?:in|at)\s+([A-Za-z_][\w:<>, ]*?)\(", body)
            if k:
                current["kernel"] = k.group(1).split("::")[-1].split("<")[0].strip()
    return count, errors


def tool_names(tools: str) -> list[str]:
    """--tools as a list; a UsageError (exit 2) for a name that is not one of TOOLS."""
    names = tools.split(",")
    unknown = [tool for tool in names if tool not in TOOLS]
    if unknown:
        raise UsageError(f"--tools: unknown tool {unknown[0]!r}; expected {list(TOOLS)}")
    return names


def sanitize(spec: str, shapes: str, tools: str, owners: dict[str, list[str]], only: str | None = None,
             timeout: float = 1800, log_dir: str | None = None, *, sanitizer: str | None = None,
             cache_dir: Path | None = None, progress: Progress = SILENT) -> tuple[list[SanitizerRow], int]:
    """Every tool over the spec; (a row per tool and implementation, the worst error count). `sanitizer`: the
    compute-sanitizer found (looked for here unless given); `cache_dir`: the build cache the runs use (the one
    the command built into); `progress` hears of each tool as it finishes."""
    sanitizer = sanitizer or find_tool("compute-sanitizer")
    rows: list[SanitizerRow] = []
    worst = 0
    with progress.items(len(tool_names(tools)), "sanitizing", unit="tool") as items:
        for tool in tool_names(tools):
            t0 = time.monotonic()
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [sanitizer, "--tool", tool, "--error-exitcode", "99", "--print-limit", "50",
                       sys.executable, "-m", "gemmcompare", "run", spec, "--shapes", shapes, "--check-only",
                       "--in-process", "--no-report", "--no-progress", "--store", f"{tmp}/s.db", "--runs-dir", tmp]
                if only:
                    cmd += ["--only", only]
                if cache_dir:
                    cmd += ["--cache-dir", str(cache_dir)]
                progress.say(f"  [{tool}] {' '.join(cmd[:6])} ... run {spec} --shapes {shapes}")
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            text = res.stdout + res.stderr
            count, errors = parse_sanitizer(text)
            rows += _tool_rows(tool, owners, errors)
            if count < 0:
                rows.append(SanitizerRow(tool, "(run)", -1, f"no sanitizer summary; exit {res.returncode}: {text[-500:]}"))
            worst = max(worst, count if count >= 0 else 1)
            if log_dir:
                Path(log_dir).mkdir(parents=True, exist_ok=True)
                (Path(log_dir) / f"sanitize_{tool}.log").write_text(text)
            items.done(f"{tool}: " + (f"{count} error(s)" if count >= 0 else f"no summary (exit {res.returncode})"),
                       time.monotonic() - t0)
    return rows, worst


def _tool_rows(tool: str, owners: dict[str, list[str]], errors: list[dict]) -> list[SanitizerRow]:
    """A row per implementation (errors charged to every implementation that owns the kernel)."""
    per_impl: dict[str, list[str]] = {}
    for e in errors:
        for impl in owners.get(e["kernel"] or "", [f"(kernel {e['kernel'] or 'unknown'})"]):
            per_impl.setdefault(impl, []).append(e["what"])
    rows = []
    for impl in sorted({i for names in owners.values() for i in names}):
        found = per_impl.pop(impl, [])
        rows.append(SanitizerRow(tool, impl, len(found), found[0] if found else ""))
    for other, found in per_impl.items():
        rows.append(SanitizerRow(tool, other, len(found), found[0]))
    return rows
