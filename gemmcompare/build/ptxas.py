"""Parses `ptxas -v` reports (registers, shared memory, stack, spills per kernel and arch), and the
"Potential Performance Loss" notes ptxas prints for a kernel whose wgmma pipeline it had to serialize
(C7510 and kin): a kernel can be correct and still lose a large part of its speed to one, so the rows
carry them."""

from __future__ import annotations

import re
import shutil
import subprocess

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")
_PERF_LOSS = re.compile(r"\((C\d+)\) Potential Performance Loss: (.*?)(?: in the function '([^']+)')?\.?\s*$")


def parse_ptxas(log: str) -> list[dict]:
    """One dict per compiled entry function: function, demangled, arch, registers, smem_bytes (static),
    stack_bytes, spill_stores, spill_loads, perf_warnings ("C7510: wgmma.mma_async instructions are
    serialized due to ...", one per distinct note)."""
    kernels: dict[tuple[str, str], dict] = {}
    notes: list[tuple[str | None, tuple[str, str] | None, str]] = []  # (named function, entry then, note)
    current = None
    props_for = None
    for line in log.splitlines():
        m = _PERF_LOSS.search(line)
        if m:  # ptxas prints these before the entry's "Compiling entry function" line
            code, text, function = m.groups()
            notes.append((function, current, f"{code}: {text}"))
            continue
        m = _ENTRY.search(line)
        if m:
            current = (m.group(1), m.group(2))
            kernels.setdefault(current, {"function": m.group(1), "arch": m.group(2), "registers": None,
                                         "smem_bytes": 0, "stack_bytes": 0, "spill_stores": 0, "spill_loads": 0,
                                         "perf_warnings": []})
            continue
        m = _PROPS.search(line)
        if m:
            props_for = m.group(1)
            continue
        m = _FRAME.search(line)
        if m and props_for:
            for key, rec in kernels.items():
                if key[0] == props_for:
                    rec["stack_bytes"], rec["spill_stores"], rec["spill_loads"] = map(int, m.groups())
            continue
        m = _USED.search(line)
        if m and current:
            kernels[current]["registers"] = int(m.group(1))
            kernels[current]["smem_bytes"] = int(m.group(2) or 0)
    entries = list(kernels)
    for function, then, note in notes:
        if function:  # every arch's entry of the function it names
            targets = [key for key in entries if key[0] == function]
        else:  # unnamed: the entry compiled next after it was printed
            after = entries.index(then) + 1 if then in entries else 0
            targets = entries[after:after + 1]
        for key in targets:
            if note not in kernels[key]["perf_warnings"]:
                kernels[key]["perf_warnings"].append(note)
    out = list(kernels.values())
    for rec, name in zip(out, demangle([r["function"] for r in out])):
        rec["demangled"] = name
    return out


def demangle(names: list[str]) -> list[str]:
    tool = shutil.which("c++filt")
    if not tool or not names:
        return list(names)
    try:
        res = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, timeout=30)
        lines = res.stdout.splitlines()
        return lines if len(lines) == len(names) else list(names)
    except (OSError, subprocess.SubprocessError):
        return list(names)


def summarize_for(resources: list[dict], pattern: str) -> dict:
    """The resources of the kernels whose (mangled or demangled) name matches pattern: the worst case
    over them (max registers, smem, stack, spills; every distinct performance note). Empty when nothing
    matches."""
    rx = re.compile(pattern) if pattern else None
    hits = [r for r in resources if rx is None or rx.search(r["function"]) or rx.search(r.get("demangled", ""))]
    if not hits:
        return {}
    return {
        "registers": max((r["registers"] or 0) for r in hits),
        "smem_bytes": max(r["smem_bytes"] for r in hits),
        "stack_bytes": max(r["stack_bytes"] for r in hits),
        "spill_stores": max(r["spill_stores"] for r in hits),
        "spill_loads": max(r["spill_loads"] for r in hits),
        "perf_warnings": sorted({w for r in hits for w in r.get("perf_warnings", ())}),
        "kernels": [r.get("demangled") or r["function"] for r in hits],
    }
